"""The ground truth's shape: one expected incident, and the default thresholds scenarios are built around."""
from __future__ import annotations

from .clock import iso_z
from .model import GIB

BLOAT_THRESHOLD_BYTES = GIB          # default offsets_partition_bloat threshold (1 GiB)
SLOW_LOAD_THRESHOLD_MS = 60_000      # default slow_group_load threshold


def incident(cluster: str, kind: str, entity: str, first_seen_ms: int, note: str, known_bug: str | None = None) -> dict:
    """An expected incident; `known_bug`: the catalogued bugs (ids, comma-separated, sorted) its event shows
    (gold.known_bugs.with_known_bugs, a deadlock's by its threads), when any."""
    out = {"cluster": cluster, "kind": kind, "entity": entity, "first_seen": iso_z(first_seen_ms), "note": note}
    return out | ({"known_bug": known_bug} if known_bug else {})
