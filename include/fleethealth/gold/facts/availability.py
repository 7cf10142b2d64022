"""gold.cluster_availability_hourly: per cluster-hour and node, what every SRE alerts on: partitions
under-replicated, offline and under min ISR, whether it was the active controller, its log dirs' size.

Read from JMX, whichever way it arrived (Jolokia files, jmx_exporter scrapes or the Prometheus
transport: silver holds one form), and from the hour's log-dir snapshots. The incidents on the same
signals are partitions_offline, partitions_under_min_isr and no_active_controller
(fleethealth.gold.detectors).
"""
from __future__ import annotations

from pyspark.sql import functions as F

from fleethealth.fleet import mbeans

KEY = ["cluster", "broker_id", "hour"]
# column -> the bean whose largest sample of the hour it holds
GAUGES = {"max_under_replicated": mbeans.UNDER_REPLICATED, "max_offline": mbeans.OFFLINE_PARTITIONS,
          "max_under_min_isr": mbeans.UNDER_MIN_ISR, "max_active_controller": mbeans.ACTIVE_CONTROLLER_COUNT}


def log_dir_bytes(partition_sizes):
    """(cluster, broker_id, hour, log_dirs, log_dir_bytes, log_dir_at): the size of the node's partitions
    (future replicas of a move between log dirs included: they take disk too) in the hour's last
    log-dir snapshot that lists it."""
    per_snapshot = (partition_sizes.where(F.col("broker_id").isNotNull())
                    .groupBy(*KEY, "captured_at")
                    .agg(F.sum("size_bytes").alias("bytes"), F.count_distinct("log_dir").alias("dirs")))
    return per_snapshot.groupBy(*KEY).agg(
        F.max_by("dirs", "captured_at").cast("int").alias("log_dirs"),
        F.max_by("bytes", "captured_at").cast("long").alias("log_dir_bytes"),
        F.max("captured_at").alias("log_dir_at"))


def availability(facts, thresholds):
    """gold.cluster_availability_hourly: one row per (cluster, broker_id, hour) of a node with a sample of
    any of GAUGES' beans or a log-dir snapshot. broker_id is the node id (a KRaft controller's too).

    Columns: cluster, broker_id, hour, samples (distinct sample times of GAUGES' beans), first_ts /
    last_ts (of those samples), max_under_replicated, max_offline, max_under_min_isr, max_active_controller
    (each the largest sample of its bean in the hour; NULL when the node registers no such bean or sent
    no sample of it), active_controller_samples (sample times at which the node was the active
    controller), log_dirs, log_dir_bytes, log_dir_at (the hour's last log-dir snapshot listing the node:
    its log dirs, their partitions' bytes, when it was taken; NULL without one).

    Limits: gauges sampled at scrape times (a failover or an offline minute between two scrapes is not
    seen); OfflinePartitionsCount is counted by the active controller only (the others give 0); a KRaft
    cluster listed without its controllers has no offline count or active controller here at all.
    """
    jmx = facts.jmx.where(F.col("cluster").isNotNull() & F.col("broker_id").isNotNull())
    any_bean = F.lit(False)
    for bean in GAUGES.values():
        any_bean = any_bean | bean.matches()
    samples = jmx.where(any_bean).select(*KEY, "ts", *[F.when(b.matches(), F.col("value")).alias(c)
                                                      for c, b in GAUGES.items()])
    per = samples.groupBy(*KEY).agg(
        F.count_distinct("ts").alias("samples"), F.min("ts").alias("first_ts"), F.max("ts").alias("last_ts"),
        *[F.max(c).alias(c) for c in GAUGES],
        F.count_distinct(F.when(F.col("max_active_controller") >= 1, F.col("ts"))).alias("active_controller_samples"))
    out = per.join(log_dir_bytes(facts.partition_sizes), KEY, "full")
    return out.select(
        F.col("cluster").cast("string"), F.col("broker_id").cast("int"), "hour",
        F.coalesce(F.col("samples"), F.lit(0)).cast("int").alias("samples"),
        F.col("first_ts").cast("timestamp"), F.col("last_ts").cast("timestamp"),
        *[F.col(c).cast("long").alias(c) for c in GAUGES],
        F.coalesce(F.col("active_controller_samples"), F.lit(0)).cast("int").alias("active_controller_samples"),
        F.col("log_dirs").cast("int"), F.col("log_dir_bytes").cast("long"), F.col("log_dir_at").cast("timestamp"))
