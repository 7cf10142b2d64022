"""partitions_offline: partitions without a leader, unreadable and unwritable until a replica returns or an
unclean election runs (issue 63).

Signal: JMX kafka.controller:type=KafkaController,name=OfflinePartitionsCount at or above
`partitions_offline.min_partitions` (ZooKeeper mode: every broker registers it, the active controller counts;
KRaft: each controller counts them from the metadata image). One finding per cluster-hour, entity
`partitions`: first_seen the first sample over, last_seen the last, the peak and the nodes that counted them.
What explains it (a broker silent, isolated or fenced) is its caused_by (gold/causes.yaml).
"""
from __future__ import annotations

from pyspark.sql import functions as F

from fleethealth.fleet import mbeans
from fleethealth.gold.detectors.base import finding

KIND = "partitions_offline"
ENTITY = "partitions"
REPORT = {"chart": None, "table": "cluster_availability_hourly",
          "columns": ["hour", "broker_id", "max_offline", "max_active_controller", "max_under_replicated", "samples"]}


def detect(facts, thresholds):
    least = thresholds[f"{KIND}.min_partitions"]
    over = facts.jmx.where(mbeans.OFFLINE_PARTITIONS.matches() & (F.col("value") >= least))
    per_cluster = over.groupBy("cluster", "hour").agg(
        F.min("ts").alias("first_ts"), F.max("ts").alias("last_ts"), F.max("value").cast("long").alias("peak"),
        F.min_by("ts", F.struct(-F.col("value"), F.col("ts"))).alias("peak_ts"), F.count(F.lit(1)).alias("samples"),
        F.array_sort(F.collect_set("broker_id")).alias("nodes"))
    evidence = F.format_string(
        "OfflinePartitionsCount %d at its peak (%s), %d sample(s) at or over %d from %s to %s, counted by node(s) %s",
        F.col("peak"), F.date_format("peak_ts", "HH:mm:ss'Z'"), F.col("samples"), F.lit(int(least)),
        F.date_format("first_ts", "HH:mm:ss'Z'"), F.date_format("last_ts", "HH:mm:ss'Z'"),
        F.array_join(F.transform("nodes", lambda n: n.cast("string")), ", "))
    return finding(per_cluster, KIND, thresholds[f"{KIND}.severity"], entity=F.lit(ENTITY),
                   first_seen=F.col("first_ts"), last_seen=F.col("last_ts"), evidence=evidence, hour=F.col("hour"))
