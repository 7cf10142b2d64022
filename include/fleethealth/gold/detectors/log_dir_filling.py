"""log_dir_filling: the disk under a broker's log dirs fills: at the hour's rate it is full within hours, or
little of it is left. A full log dir takes the broker down (ZooKeeper mode) or offline for that dir (JBOD, KRaft
2.x+ failure handling), with its partitions (issue 63).

Signal: gold.cluster_availability_hourly's disk columns: node_exporter's filesystem series of the broker's host
read through the prometheus transport (Kafka has no disk-free MBean), the filesystem under its log dirs (from
the hour's log-dir snapshot) that fills first. A finding when its free bytes, falling at the hour's rate
(least squares over its samples), reach 0 within `log_dir_filling.max_hours_to_full`, or when their share of
the disk is at or below `log_dir_filling.min_free_ratio`. One finding per broker-hour: first_seen and
last_seen its disk's first and last samples of the hour. What fills it (a dead cleaner letting compacted
partitions grow) is its caused_by (gold/causes.yaml). A broker whose disk series are not read (Jolokia, or
no log-dir snapshot in the hour) has none.
"""
from __future__ import annotations

from pyspark.sql import functions as F

from fleethealth.gold.detectors.base import finding

KIND = "log_dir_filling"
REPORT = {"chart": None, "table": "cluster_availability_hourly",
          "columns": ["hour", "broker_id", "disk_mountpoint", "disk_free_bytes", "disk_size_bytes",
                      "disk_free_change_per_hour", "disk_hours_to_full", "log_dir_bytes"]}
GIB = float(2**30)


def detect(facts, thresholds):
    hours = float(thresholds[f"{KIND}.max_hours_to_full"])
    ratio = float(thresholds[f"{KIND}.min_free_ratio"])
    disk = facts.table("gold.cluster_availability_hourly", thresholds).where(F.col("disk_free_bytes").isNotNull())
    share = F.col("disk_free_bytes") / F.col("disk_size_bytes")
    filling = disk.where((F.col("disk_hours_to_full") <= hours) | (share <= ratio))
    size = F.when(F.col("disk_size_bytes").isNotNull(),
                  F.format_string(" of %.1f GiB", F.col("disk_size_bytes") / GIB)).otherwise(F.lit(""))
    rate = F.when(F.col("disk_free_change_per_hour") < 0, F.format_string(
        ", falling %.2f GiB/h: full in about %.1f h", -F.col("disk_free_change_per_hour") / GIB,
        F.col("disk_hours_to_full"))).otherwise(F.lit(", not falling this hour"))
    held = F.when(F.col("log_dir_bytes").isNotNull(), F.format_string(
        "; its log dirs hold %.1f GiB", F.col("log_dir_bytes") / GIB)).otherwise(F.lit(""))
    evidence = F.concat(F.format_string("%.1f GiB free%s on %s (under its log dirs, node_exporter)",
                                        F.col("disk_free_bytes") / GIB, size, F.col("disk_mountpoint")), rate, held)
    return finding(filling, KIND, thresholds[f"{KIND}.severity"], entity=None, node=F.col("broker_id"),
                   first_seen=F.col("disk_first_ts"), last_seen=F.col("disk_last_ts"), evidence=evidence,
                   hour=F.col("hour"))
