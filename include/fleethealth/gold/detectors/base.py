"""The shape of a finding: what every detector returns (one place that names its columns)."""
from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from fleethealth.fleet import entities

FINDING_COLUMNS = ["cluster", "kind", "severity", "entity", "first_seen", "last_seen", "evidence", "known_bug", "hour"]


NODE = "_node"   # the node id a finding's entity names (`node=`), named by the detectors' runner


def finding(df: DataFrame, kind: str, severity: str, entity: Column | None, first_seen: Column, last_seen: Column,
            evidence: Column, hour: Column, known_bug: Column | None = None, node: Column | None = None) -> DataFrame:
    """Shape detector output into finding rows (the one place that names their columns). A finding about a
    Kafka node gives its node id as `node` (no entity): gold.detectors.run names the node's process from
    the hosts frame (a dedicated KRaft controller's differs from a broker's: fleet.entities)."""
    if node is not None:
        entity = entities.broker_col(node)
    cols = [F.col("cluster"), F.lit(kind).alias("kind"), F.lit(severity).alias("severity"),
            entity.alias("entity"), first_seen.alias("first_seen"),
            F.greatest(first_seen, last_seen).alias("last_seen"), evidence.alias("evidence"),
            (known_bug if known_bug is not None else F.lit(None)).cast("string").alias("known_bug"),
            hour.alias("hour")]
    return df.select(*cols, *([node.alias(NODE)] if node is not None else []))


def file_problems(health: DataFrame) -> Column:
    """broker_health_hourly's file_problems ("<source>: <file> (<status>): <reason>"), empty for a frame
    written before it had them."""
    return F.col("file_problems") if "file_problems" in health.columns else F.array().cast("array<string>")
