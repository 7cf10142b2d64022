"""Gold: facts/ → detectors/ (one module per kind) → incidents; thresholds, known bugs, runbooks.

In: the silver tables of an hour (or a window of hours) and the inventory. Out: the fact tables
(`facts/`: every gold.* fact table's builder), gold.incident_findings (`detectors/`: each reads facts
and only detects), gold.incidents (`incidents`: findings merged per incident). Data beside the code
that reads it: `thresholds.yaml`, `known_bugs.yaml`, `runbooks.yaml`. Each layer's job (`job`: read the
published silver, compute, gate, publish) is run by fleethealth.pipeline.
"""
from fleethealth.quality import suites


def _incident_kinds() -> list[str]:
    from fleethealth.gold.detectors import DETECTORS, RETIRED

    return sorted([*DETECTORS, *RETIRED])


suites.register_values("incident_kinds", _incident_kinds)
