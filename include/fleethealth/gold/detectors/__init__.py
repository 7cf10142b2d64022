"""Detectors: one module per incident kind, each `detect(facts, thresholds) -> findings`.

A finding row: cluster, kind, severity, entity, first_seen, last_seen (UTC), evidence, known_bug,
hour. Entities: `broker-<id>`, `controller-<node id>` (a KRaft controller: gold.facts.kraft.with_process
names a node id's process), `quorum` (a KRaft cluster's controller quorum), `zk-<myid>`,
`<topic>-<partition>@broker-<id>`, `<host>:<source>`.
A module with `LOOKBACK = True` detects episodes that may straddle an hour end: it reads each hour
with the end of the hour before it (`incidents.lookback_minutes`).

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

from fleethealth.gold.detectors.base import FINDING_COLUMNS

HELPERS = ("base",)   # the modules of the package that are not detectors
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
        if module.KIND != name:
            raise DetectorError(f"{module.__name__}: KIND is {module.KIND!r}, not the module's name")
        found[module.KIND] = module
    return found


DETECTORS = discover()


def detect_each(facts, thresholds: dict) -> dict[str, DataFrame]:
    """Every detector's findings of the hours of `facts`, by kind. A detector of episodes that may straddle
    an hour end (`LOOKBACK = True` in its module) reads `facts.lookback` when there is one (each hour with
    the end of the hour before it) and keeps what has a signal in the hour itself: an episode wholly
    before the hour was found in the hour it happened in."""
    found = {}
    for kind, module in DETECTORS.items():
        if getattr(module, "LOOKBACK", False) and facts.lookback is not None:
            found[kind] = module.detect(facts.lookback, thresholds).where(F.col("last_seen") >= F.col("hour"))
        else:
            found[kind] = module.detect(facts, thresholds)
        found[kind] = found[kind].select(*FINDING_COLUMNS)
    return found


def union(findings) -> DataFrame:
    """One frame of the findings frames `findings` (detect_each's values)."""
    return reduce(DataFrame.union, findings)


def detect_all(facts, thresholds: dict) -> DataFrame:
    """Every detector's findings of the hours of `facts` (detect_each), in one frame."""
    return union(detect_each(facts, thresholds).values())
