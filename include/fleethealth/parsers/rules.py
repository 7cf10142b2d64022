"""A small engine for event rules kept as data (rules/<source>_events.yaml).

Each rule: `event_type`, a regex `match` tried against the record body in order (first match
wins), optional `level`/`logger` filters, and `fields`: typed field name -> capture group.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

import yaml
from pyspark.sql import Column
from pyspark.sql import functions as F

# Every extracted field and its Spark type: one place, shared by the silver schemas.
FIELD_TYPES = {
    "topic": "string",
    "partition": "int",
    "group": "string",
    "thread_name": "string",
    "duration_ms": "bigint",
    "count": "bigint",
    "broker": "int",
    "peer_broker": "int",
    "leader_epoch": "int",
    "session_id": "string",
}


@dataclass(frozen=True)
class Rule:
    event_type: str
    match: str
    fields: dict[str, int] = field(default_factory=dict)
    logger: str | None = None


class RuleError(ValueError):
    pass


@lru_cache(maxsize=None)
def load_rules(source: str) -> tuple[Rule, ...]:
    name = f"{source}_events.yaml"
    doc = yaml.safe_load(resources.files("fleethealth.rules").joinpath(name).read_text())
    rules = []
    for i, raw in enumerate(doc.get("rules", [])):
        where = f"rules/{name}: rule {i} ({raw.get('event_type', '?')})"
        try:
            pattern = re.compile(raw["match"])
        except (KeyError, re.error) as exc:
            raise RuleError(f"{where}: bad or missing `match`: {exc}") from None
        fields = raw.get("fields") or {}
        for fname, group in fields.items():
            if fname not in FIELD_TYPES:
                raise RuleError(f"{where}: unknown field {fname!r} (known: {', '.join(FIELD_TYPES)})")
            if not isinstance(group, int) or not 1 <= group <= pattern.groups:
                raise RuleError(f"{where}: field {fname!r} names group {group!r}, "
                                f"the regex has {pattern.groups}")
        rules.append(Rule(raw["event_type"], raw["match"], dict(fields), raw.get("logger")))
    return tuple(rules)


def _condition(rule: Rule, body: Column, logger: Column) -> Column:
    cond = body.rlike(rule.match)
    if rule.logger:
        cond = (logger == rule.logger) & cond
    return cond


def event_type(rules: tuple[Rule, ...], body: Column, logger: Column) -> Column:
    """The first matching rule's event_type, else 'other'."""
    expr = None
    for rule in rules:
        cond = _condition(rule, body, logger)
        expr = F.when(cond, rule.event_type) if expr is None else expr.when(cond, rule.event_type)
    return F.lit("other") if expr is None else expr.otherwise("other")


def field_columns(rules: tuple[Rule, ...], body: Column, etype: Column) -> list[Column]:
    """One typed column per FIELD_TYPES entry; the regex runs only on rows of the rules that name it."""
    cols = []
    for fname, ftype in FIELD_TYPES.items():
        expr = None
        for rule in rules:
            if fname not in rule.fields:
                continue
            value = F.regexp_extract(body, rule.match, rule.fields[fname])
            cond = etype == rule.event_type
            expr = F.when(cond, value) if expr is None else expr.when(cond, value)
        col = F.lit(None) if expr is None else F.nullif(expr, F.lit(""))
        cols.append(col.cast(ftype).alias(fname))
    return cols
