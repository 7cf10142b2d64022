"""The ground truth's shape: one expected incident, and the default thresholds scenarios are built around."""
from __future__ import annotations

from .clock import iso_z
from .model import GIB

BLOAT_THRESHOLD_BYTES = GIB          # default offsets_partition_bloat threshold (1 GiB)
SLOW_LOAD_THRESHOLD_MS = 60_000      # default slow_group_load threshold
NO_CONTROLLER_MIN_MS = 30_000        # default no_active_controller.min_duration_s, in ms


def incident(cluster: str, kind: str, entity: str, first_seen_ms: int, note: str, known_bug: str | None = None,
             caused_by: list[tuple[str, str]] = ()) -> dict:
    """An expected incident; `known_bug`: the catalogued bugs (ids, comma-separated, sorted) its event shows
    (gold.known_bugs.with_known_bugs, a deadlock's by its threads), when any; `caused_by`: the (kind, entity)
    of each expected incident that explains it (gold.incidents.caused_by), none for a root."""
    out = {"cluster": cluster, "kind": kind, "entity": entity, "first_seen": iso_z(first_seen_ms), "note": note,
           "caused_by": sorted(f"{k} {e}" for k, e in caused_by)}
    return out | ({"known_bug": known_bug} if known_bug else {})
