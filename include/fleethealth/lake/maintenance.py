"""Table maintenance: compact small files (OPTIMIZE) and remove unreferenced ones (VACUUM).

Hourly replaceWhere writes leave a few small files per hour and table, and every rewrite leaves
the replaced files behind for time travel; run this daily (DAG `fleet_health_maintenance`). The
Data Docs (24-odd pages an hour) are pruned with the same retention (quality.docs.prune_data_docs).
"""
from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass

from fleethealth.lake import locks
from fleethealth.lake import tables as lake
from fleethealth.lake.catalog import Lakehouse

# Delta's own safety floor: VACUUM below 7 days can break readers of older versions (and time
# travel the quality gates' tests rely on); Delta refuses less unless its check is disabled.
DEFAULT_RETAIN_HOURS = 168


@dataclass(frozen=True)
class Maintained:
    table: str
    files_before: int
    files_after: int
    files_compacted: int  # small files rewritten by OPTIMIZE


def _num_files(spark, path: str) -> int:
    return spark.sql(f"DESCRIBE DETAIL delta.`{path}`").first()["numFiles"]


def maintain(spark, lakehouse: Lakehouse, retain_hours: float = DEFAULT_RETAIN_HOURS,
             tables: list[str] | None = None) -> list[Maintained]:
    """OPTIMIZE then VACUUM every existing table of the catalog (or `tables`)."""
    from delta.tables import DeltaTable

    if retain_hours < 0:
        raise ValueError(f"retain_hours must be >= 0, got {retain_hours}")
    done = []
    for name in tables or sorted(lake.TABLES):
        if not lake.exists(spark, name, lakehouse):
            continue
        path = lake.table(name).path(lakehouse)
        # a table written whole (the notifications outbox) is rewritten under its lock: not beside it
        with locks.table_lock(name, lakehouse, "maintenance") if not lake.table(name).hourly else nullcontext():
            before = _num_files(spark, path)
            metrics = DeltaTable.forPath(spark, path).optimize().executeCompaction().first()["metrics"]
            DeltaTable.forPath(spark, path).vacuum(retain_hours)
            done.append(Maintained(name, before, _num_files(spark, path), int(metrics["numFilesRemoved"])))
    return done

