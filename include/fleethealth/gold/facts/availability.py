"""gold.cluster_availability_hourly: per cluster-hour and node, what every SRE alerts on: partitions
under-replicated, offline and under min ISR, whether it was the active controller, its log dirs' size.

Read from JMX, whichever way it arrived (Jolokia files, jmx_exporter scrapes or the Prometheus
transport: silver holds one form), from the hour's log-dir snapshots, and from node_exporter's filesystem
series where the Prometheus transport read them (Kafka has no disk-free MBean). The incidents on the same
signals are partitions_offline, partitions_under_min_isr, no_active_controller and log_dir_filling
(fleethealth.gold.detectors).
"""
from __future__ import annotations

from pyspark.sql import Window
from pyspark.sql import functions as F

from fleethealth.fleet import mbeans, namings
from fleethealth.silver.parsers.prometheus import mapping

KEY = ["cluster", "broker_id", "hour"]


def gauges() -> dict:
    """column -> the bean whose largest sample of the hour it holds."""
    return {"max_under_replicated": mbeans.UNDER_REPLICATED, "max_offline": mbeans.OFFLINE_PARTITIONS,
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


def filesystems(jmx):
    """(cluster, broker_id, hour, mountpoint, free, size, change_per_hour, disk_first_ts, disk_last_ts) of each
    filesystem node_exporter reported for the node (silver's node:type=Filesystem, from the prometheus
    transport): its last free bytes and size of the hour, and the free bytes' change per hour (least squares
    over the hour's samples; NULL with fewer than two)."""
    # the pseudo-bean silver's mapping keeps each series as (one place: jmx_prometheus_mapping.yaml)
    (domain, type_, available), (_, _, total) = (mapping().resolve(name) for name in namings.DISK_SERIES)
    fs = jmx.where((F.col("domain") == domain) & (F.col("props")["type"] == type_)
                   & F.col("props")[namings.DISK_LABEL].isNotNull() & F.col("value").isNotNull())
    mount = F.col("props")[namings.DISK_LABEL].alias("mountpoint")
    free = (fs.where(F.col("attribute") == available).groupBy(*KEY, mount).agg(
        F.max_by("value", "ts").alias("free"), F.min("ts").alias("disk_first_ts"), F.max("ts").alias("disk_last_ts"),
        (F.regr_slope("value", F.unix_micros("ts") / F.lit(1e6)) * F.lit(3600.0)).alias("change_per_hour")))
    size = (fs.where(F.col("attribute") == total).groupBy(*KEY, mount)
            .agg(F.max_by("value", "ts").alias("size")))
    return free.join(size, [*KEY, "mountpoint"], "left")


def log_dir_disk(partition_sizes, jmx):
    """(cluster, broker_id, hour, disk_* columns) of the filesystem under the node's log dirs that fills first:
    each log dir of the hour's snapshots is on the longest mount point that holds it; of those filesystems the
    one with the fewest hours to full (then the least free share)."""
    dirs = partition_sizes.where(F.col("broker_id").isNotNull()).select(*KEY, "log_dir").distinct()
    mp = F.col("mountpoint")
    under = (F.col("log_dir") == mp) | (mp == "/") | F.col("log_dir").startswith(F.concat(F.rtrim(mp), F.lit("/")))
    on = dirs.join(filesystems(jmx), KEY).where(under)
    longest = Window.partitionBy(*KEY, "log_dir").orderBy(F.length("mountpoint").desc())
    to_full = F.when(F.col("change_per_hour") < 0, F.col("free") / -F.col("change_per_hour"))
    first = Window.partitionBy(*KEY).orderBy(F.col("hours_to_full").asc_nulls_last(),
                                             (F.col("free") / F.col("size")).asc_nulls_last(), "mountpoint")
    return (on.withColumn("n", F.row_number().over(longest)).where(F.col("n") == 1).drop("n", "log_dir").distinct()
            .withColumn("hours_to_full", to_full)
            .withColumn("n", F.row_number().over(first)).where(F.col("n") == 1)
            .select(*KEY, F.col("mountpoint").alias("disk_mountpoint"), F.col("free").alias("disk_free_bytes"),
                    F.col("size").alias("disk_size_bytes"),
                    F.col("change_per_hour").alias("disk_free_change_per_hour"),
                    F.col("hours_to_full").alias("disk_hours_to_full"), "disk_first_ts", "disk_last_ts"))


def availability(facts, thresholds):
    """gold.cluster_availability_hourly: one row per (cluster, broker_id, hour) of a node with a sample of
    any of the gauges' beans or a log-dir snapshot. broker_id is the node id (a KRaft controller's too).

    Columns: cluster, broker_id, hour, samples (distinct sample times of the gauges' beans), first_ts /
    last_ts (of those samples), max_under_replicated, max_offline, max_under_min_isr, max_active_controller
    (each the largest sample of its bean in the hour; NULL when the node registers no such bean or sent
    no sample of it), active_controller_samples (sample times at which the node was the active
    controller), log_dirs, log_dir_bytes, log_dir_at (the hour's last log-dir snapshot listing the node:
    its log dirs, their partitions' bytes, when it was taken; NULL without one); disk_mountpoint,
    disk_free_bytes, disk_size_bytes (the last of the hour), disk_free_change_per_hour (least squares over the
    hour's samples: negative while the disk fills), disk_hours_to_full (free bytes over their fall per hour;
    NULL unless falling), disk_first_ts / disk_last_ts (its samples) of the filesystem under the node's log
    dirs that fills first (log_dir_disk): from node_exporter's series through the prometheus transport, so
    NULL for a node without them (Jolokia has no disk-free bean) or without a log-dir snapshot in the hour
    (which says where its log dirs are).

    Limits: gauges sampled at scrape times (a failover or an offline minute between two scrapes is not
    seen); OfflinePartitionsCount is counted by the active controller only (the others give 0); a KRaft
    cluster listed without its controllers has no offline count or active controller here at all.
    """
    peaks = gauges()
    jmx = facts.jmx.where(F.col("cluster").isNotNull() & F.col("broker_id").isNotNull())
    any_bean = F.lit(False)
    for bean in peaks.values():
        any_bean = any_bean | bean.matches()
    samples = jmx.where(any_bean).select(*KEY, "ts", *[F.when(b.matches(), F.col("value")).alias(c)
                                                      for c, b in peaks.items()])
    per = samples.groupBy(*KEY).agg(
        F.count_distinct("ts").alias("samples"), F.min("ts").alias("first_ts"), F.max("ts").alias("last_ts"),
        *[F.max(c).alias(c) for c in peaks],
        F.count_distinct(F.when(F.col("max_active_controller") >= 1, F.col("ts"))).alias("active_controller_samples"))
    out = (per.join(log_dir_bytes(facts.partition_sizes), KEY, "full")
           .join(log_dir_disk(facts.partition_sizes, facts.jmx), KEY, "left"))
    return out.select(
        F.col("cluster").cast("string"), F.col("broker_id").cast("int"), "hour",
        F.coalesce(F.col("samples"), F.lit(0)).cast("int").alias("samples"),
        F.col("first_ts").cast("timestamp"), F.col("last_ts").cast("timestamp"),
        *[F.col(c).cast("long").alias(c) for c in peaks],
        F.coalesce(F.col("active_controller_samples"), F.lit(0)).cast("int").alias("active_controller_samples"),
        F.col("log_dirs").cast("int"), F.col("log_dir_bytes").cast("long"), F.col("log_dir_at").cast("timestamp"),
        F.col("disk_mountpoint").cast("string"), F.col("disk_free_bytes").cast("long"),
        F.col("disk_size_bytes").cast("long"), F.col("disk_free_change_per_hour").cast("double"),
        F.col("disk_hours_to_full").cast("double"), F.col("disk_first_ts").cast("timestamp"),
        F.col("disk_last_ts").cast("timestamp"))
