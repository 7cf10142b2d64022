"""The shape of a finding: what every detector returns (one place that names its columns)."""
from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

FINDING_COLUMNS = ["cluster", "kind", "severity", "entity", "first_seen", "last_seen", "evidence", "known_bug", "hour"]


def finding(df: DataFrame, kind: str, severity: str, entity: Column, first_seen: Column, last_seen: Column,
            evidence: Column, hour: Column, known_bug: Column | None = None) -> DataFrame:
    """Shape detector output into finding rows (the one place that names their columns)."""
    return df.select(F.col("cluster"), F.lit(kind).alias("kind"), F.lit(severity).alias("severity"),
                     entity.alias("entity"), first_seen.alias("first_seen"),
                     F.greatest(first_seen, last_seen).alias("last_seen"), evidence.alias("evidence"),
                     (known_bug if known_bug is not None else F.lit(None)).cast("string").alias("known_bug"),
                     hour.alias("hour"))


def process_entity() -> Column:
    """How incidents name a host's process, from its role, broker_id and zk_myid columns: `broker-<id>`,
    `controller-<node id>` (a KRaft controller's node id is its broker_id) or `zk-<myid>`
    (fleet.inventory.Host.entity)."""
    return (F.when(F.col("role") == "kafka", F.format_string("broker-%d", F.col("broker_id")))
            .when(F.col("role") == "controller", F.format_string("controller-%d", F.col("broker_id")))
            .otherwise(F.format_string("zk-%d", F.col("zk_myid"))))
