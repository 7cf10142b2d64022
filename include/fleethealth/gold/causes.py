"""Which incident explains which: gold.incidents' `caused_by` (issue 62 item 4), by the rules of causes.yaml.

`caused_by` names each explaining incident by (kind, entity, first_seen) — with the cluster, a key that a
re-run keeps (an incident_id changes when a re-run moves the hour an episode opened) — sorted; empty for
a root. It is a function of the published incidents alone, recomputed for all of them by every run that
changes gold.incidents (gold.lifecycle), so the table equals a rebuild whatever order hours run in.
Importing this module needs no Spark (the report and the docs read the rules).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from typing import TYPE_CHECKING

import yaml

from fleethealth.fleet import entities

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

CAUSES = "causes.yaml"
CAUSED_BY_TYPE = "array<struct<kind:string,entity:string,first_seen:timestamp>>"
ENTITIES = ("process", "partition", "cluster")
WHEN = ("minutes", "open")


class CausesError(ValueError):
    """causes.yaml is malformed (a packaging or editing mistake: the tests catch it)."""


@dataclass(frozen=True)
class Rule:
    effect: str
    cause: str
    entity: str
    when: str
    slack_minutes: int


@lru_cache(maxsize=None)
def rules() -> tuple[Rule, ...]:
    from fleethealth.gold import runbooks

    kinds = set(runbooks.load())      # every kind has its runbook
    doc = yaml.safe_load(resources.files("fleethealth.gold").joinpath(CAUSES).read_text(encoding="utf-8"))
    out = []
    for effect, causes in (doc or {}).items():
        for raw in causes:
            rule = Rule(effect=effect, **raw)
            bad = [k for k in (rule.effect, rule.cause) if k not in kinds]
            if bad or rule.entity not in ENTITIES or rule.when not in WHEN or rule.slack_minutes < 0:
                raise CausesError(f"{CAUSES}: {effect} <- {raw}: unknown kind {bad} or entity/when/slack_minutes "
                                  f"not one of {ENTITIES} / {WHEN} / >= 0")
            out.append(rule)
    return tuple(out)


def explained_kinds() -> dict[str, tuple[str, ...]]:
    """effect kind -> the kinds that may explain it (the docs' table)."""
    out: dict[str, tuple[str, ...]] = {}
    for r in rules():
        out[r.effect] = out.get(r.effect, ()) + (r.cause,)
    return out


def _partition(entity: Column) -> Column:
    from pyspark.sql import functions as F

    return F.regexp_extract(entity, r"^(.+)@", 1)


def _matches(rule: Rule) -> Column:
    """Whether incident `e` is explained by incident `c` of the same cluster under `rule`."""
    from pyspark.sql import functions as F

    e, c = (lambda name: F.col(f"e.{name}")), (lambda name: F.col(f"c.{name}"))
    if rule.entity == "process":
        same = entities.process_of(e("entity")) == entities.process_of(c("entity"))
    elif rule.entity == "cluster":       # the join already pairs incidents of one cluster
        same = F.lit(True)
    else:
        same = (_partition(e("entity")) == _partition(c("entity"))) & (_partition(e("entity")) != "")
    slack = F.expr(f"INTERVAL {rule.slack_minutes} MINUTES")
    until = c("last_seen") if rule.when == "minutes" else c("resolved_at")   # open: until it resolved
    meets = (e("last_seen") >= c("first_seen") - slack) & (until.isNull() | (e("first_seen") <= until + slack))
    return (e("kind") == rule.effect) & (c("kind") == rule.cause) & same & meets


def caused_by(incidents: DataFrame) -> DataFrame:
    """(incident_id, caused_by) of every incident of `incidents` (gold.incidents rows)."""
    from pyspark.sql import functions as F

    cols = ("incident_id", "cluster", "kind", "entity", "first_seen", "last_seen", "resolved_at")
    e, c = incidents.select(*cols).alias("e"), incidents.select(*cols).alias("c")
    cond = F.lit(False)
    for rule in rules():
        cond = cond | _matches(rule)
    pairs = (e.where(F.col("kind").isin(list(explained_kinds())))
             .join(c, (F.col("e.cluster") == F.col("c.cluster")) & (F.col("e.incident_id") != F.col("c.incident_id")))
             .where(cond)
             .groupBy(F.col("e.incident_id").alias("incident_id"))
             .agg(F.array_sort(F.collect_set(F.struct(F.col("c.kind").alias("kind"), F.col("c.entity").alias("entity"),
                                                      F.col("c.first_seen").alias("first_seen")))).alias("found")))
    return (incidents.select("incident_id").join(pairs, "incident_id", "left")
            .select("incident_id", F.coalesce("found", F.array().cast(CAUSED_BY_TYPE))
                    .cast(CAUSED_BY_TYPE).alias("caused_by")))
