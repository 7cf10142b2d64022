"""metadata_snapshots_disabled (KRaft): a node no longer writes metadata snapshots.

Kafka's SnapshotGenerator (metadata/src/main/java/org/apache/kafka/image/publisher/SnapshotGenerator.java,
3.4+) disables snapshots after a metadata fault (its reason: "metadata loading fault", "metadata
publishing fault") until the process restarts. Each snapshot it would have written is then logged as
"[SnapshotGenerator id=N] Not emitting <snapshot> despite the fact that <trigger> because snapshots are
disabled; <reason>" (`[SnapshotGenerator N]` in 3.4), silver's `metadata_snapshots_disabled`. Without
snapshots __cluster_metadata is no longer truncated: it grows without bound, and a restart or a new
node replays the whole log. Signal: any such line; one finding per node-hour, first_seen the first line,
last_seen the last. The fault that disabled snapshots is metadata_lag's (its "Encountered ... fault" line).
"""
from __future__ import annotations

from pyspark.sql import functions as F

from fleethealth.gold.detectors.base import finding

KIND = "metadata_snapshots_disabled"
REPORT = None     # the SnapshotGenerator's lines are its evidence
HMS = "HH:mm:ss'Z'"


def detect(facts, thresholds):
    df = (facts.kafka_events.where(F.col("event_type") == KIND)
          .groupBy("cluster", "broker_id", "hour")
          .agg(F.min("ts").alias("first_seen"), F.max("ts").alias("last_seen"), F.count(F.lit(1)).alias("lines"),
               F.min_by("reason", "ts").alias("reason")))
    evidence = F.format_string(
        "node %d: %d 'Not emitting ... because snapshots are disabled' line(s) from %s to %s (%s): "
        "__cluster_metadata is no longer snapshotted and grows until the node restarts",
        F.col("broker_id"), F.col("lines"), F.date_format("first_seen", HMS), F.date_format("last_seen", HMS),
        F.coalesce(F.col("reason"), F.lit("no reason given")))
    return finding(df, KIND, thresholds[f"{KIND}.severity"], entity=None, node=F.col("broker_id"),
                   first_seen=F.col("first_seen"), last_seen=F.col("last_seen"), evidence=evidence,
                   hour=F.col("hour"))
