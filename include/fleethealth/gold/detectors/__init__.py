"""Incident detectors: one module per kind, each `detect(facts, thresholds) -> findings`.

A finding row: cluster, kind, severity, entity, first_seen, last_seen (UTC), evidence, known_bug,
hour. Entities: `broker-<id>`, `zk-<myid>`, `<topic>-<partition>@broker-<id>`, `<host>:<source>`.
"""
from __future__ import annotations

from functools import reduce

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from fleethealth.gold.detectors import (
    broker_deadlock,
    broker_flapping,
    broker_isolated,
    data_missing,
    fd_exhaustion,
    known_bug_exposure,
    leader_election_storm,
    log_cleaner_dead,
    metadata_divergence,
    offsets_partition_bloat,
    request_queue_saturation,
    slow_group_load,
    zk_follower_disconnect,
    zk_session_expired,
)

DETECTORS = {m.KIND: m for m in (log_cleaner_dead, offsets_partition_bloat, data_missing, known_bug_exposure,
                                 broker_deadlock, broker_isolated, fd_exhaustion, slow_group_load,
                                 zk_follower_disconnect, zk_session_expired, leader_election_storm,
                                 broker_flapping, metadata_divergence, request_queue_saturation)}
FINDING_COLUMNS = ["cluster", "kind", "severity", "entity", "first_seen", "last_seen", "evidence", "known_bug", "hour"]


def finding(df: DataFrame, kind: str, severity: str, entity: Column, first_seen: Column, last_seen: Column,
            evidence: Column, hour: Column, known_bug: Column | None = None) -> DataFrame:
    """Shape detector output into finding rows (the one place that names their columns)."""
    return df.select(F.col("cluster"), F.lit(kind).alias("kind"), F.lit(severity).alias("severity"),
                     entity.alias("entity"), first_seen.alias("first_seen"),
                     F.greatest(first_seen, last_seen).alias("last_seen"), evidence.alias("evidence"),
                     (known_bug if known_bug is not None else F.lit(None)).cast("string").alias("known_bug"),
                     hour.alias("hour"))


def detect_all(facts, thresholds: dict) -> DataFrame:
    found = [module.detect(facts, thresholds) for module in DETECTORS.values()]
    return reduce(DataFrame.unionByName, found).select(*FINDING_COLUMNS)
