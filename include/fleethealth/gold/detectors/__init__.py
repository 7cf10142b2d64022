"""Detectors: one module per incident kind, each `detect(facts, thresholds) -> findings`.

A finding row: cluster, kind, severity, entity, first_seen, last_seen (UTC), evidence, known_bug,
hour. Entities are named as fleet.entities formats them; a finding about a Kafka node gives its node id
(`node=` of base.finding) and `run` names its process from the hosts frame (a dedicated KRaft
controller's differs from a broker's).
A module with `LOOKBACK = True` detects episodes that may straddle an hour end: it reads each hour
with the end of the hour before it (`incidents.lookback_minutes`).
A module with `MODES` (beside LOOKBACK; fleet.inventory.MODES, default all) applies to clusters in
those modes only: `run` drops its findings of a cluster in another mode (by the hosts frame's `mode`).

Every module of this package but HELPERS is a detector, found here (DETECTORS: kind -> module, by
module name): it defines KIND (its module's name), `detect` and REPORT, what the HTML report shows of
its incidents as a literal `{"chart": <chart id or None>, "table": <gold fact table>, "columns": [...]}`
(None when no fact table is behind them). The report reads REPORT from the module's source
(fleethealth.report.html.incidents): it runs without Spark, which the detectors import.
"""
from __future__ import annotations

import importlib
import pkgutil
from functools import reduce
from types import ModuleType

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from fleethealth.fleet.inventory import MODES
from fleethealth.gold.detectors.base import FINDING_COLUMNS, NODE
from fleethealth.gold.facts.kraft import node_names
from fleethealth.gold.known_bugs import with_known_bugs

HELPERS = ("base",)   # the modules of the package that are not detectors
# kinds no detector finds any more, still valid in gold.incidents (rows from before; they resolve as any
# incident whose findings stop): known_bug_exposure became the table gold.known_bug_exposure
RETIRED = ("known_bug_exposure",)
REQUIRED = ("KIND", "detect", "REPORT")


class DetectorError(TypeError):
    pass


def discover() -> dict[str, ModuleType]:
    """kind -> module of every detector of the package, in the order of their modules' names."""
    found = {}
    for name in sorted(m.name for m in pkgutil.iter_modules(__path__)):
        if name in HELPERS:
            continue
        module = importlib.import_module(f"{__name__}.{name}")
        missing = [attr for attr in REQUIRED if not hasattr(module, attr)]
        if missing:
            raise DetectorError(f"{module.__name__}: a detector module defines {', '.join(REQUIRED)}; "
                                f"it has no {', '.join(missing)} (a helper module is listed in HELPERS)")
        if not set(getattr(module, "MODES", MODES)) <= set(MODES):
            raise DetectorError(f"{module.__name__}: MODES {module.MODES!r} are not of {MODES}")
        if module.KIND != name:
            raise DetectorError(f"{module.__name__}: KIND is {module.KIND!r}, not the module's name")
        found[module.KIND] = module
    return found


DETECTORS = discover()


def run(module: ModuleType, facts, thresholds: dict) -> DataFrame:
    """One detector's findings of the hours of `facts` (FINDING_COLUMNS). A detector of episodes that may
    straddle an hour end (`LOOKBACK = True` in its module) reads `facts.lookback` when there is one (each
    hour with the end of the hour before it) and keeps what has a signal in the hour itself: an episode
    wholly before the hour was found in the hour it happened in. Its findings of clusters in a mode it
    does not apply to (its MODES) are dropped, a finding about a node is named by its process, and its
    `known_bug` names the catalogued bugs its own event shows (known_bugs.with_known_bugs)."""
    read = facts.lookback if getattr(module, "LOOKBACK", False) and facts.lookback is not None else facts
    found = module.detect(read, thresholds)
    if read is not facts:
        found = found.where(F.col("last_seen") >= F.col("hour"))
    hosts = facts.hosts
    if hosts is not None:
        modes = getattr(module, "MODES", MODES)
        if set(modes) != set(MODES):
            elsewhere = hosts.where(~F.col("mode").isin(*modes)).select("cluster").distinct()
            found = found.join(F.broadcast(elsewhere), "cluster", "left_anti")
        if NODE in found.columns:
            names = node_names(hosts).select(F.col("cluster").alias("_cluster"), F.col("broker_id").alias("_id"),
                                             F.col("process").alias("_process"))
            on = (F.col("cluster") == F.col("_cluster")) & (F.col(NODE) == F.col("_id"))
            found = (found.join(F.broadcast(names), on, "left")
                     .withColumn("entity", F.coalesce(F.col("_process"), F.col("entity"))))   # unknown: broker-N
        found = with_known_bugs(found.select(*FINDING_COLUMNS), module.KIND, hosts, read.kafka_events)
    return found.select(*FINDING_COLUMNS)


def detect_each(facts, thresholds: dict) -> dict[str, DataFrame]:
    """Every detector's findings of the hours of `facts` (`run`), by kind."""
    return {kind: run(module, facts, thresholds) for kind, module in DETECTORS.items()}


def union(findings) -> DataFrame:
    """One frame of the findings frames `findings` (detect_each's values)."""
    return reduce(DataFrame.union, findings)


def detect_all(facts, thresholds: dict) -> DataFrame:
    """Every detector's findings of the hours of `facts` (detect_each), in one frame."""
    return union(detect_each(facts, thresholds).values())
