"""fd_exhaustion: a broker runs out of file descriptors, or holds far more than its peers.

Signals (JMX java.lang:type=OperatingSystem, both attributes of one sample):
- OpenFileDescriptorCount / MaxFileDescriptorCount at or above `fd_exhaustion.max_fd_ratio`;
- OpenFileDescriptorCount above `fd_exhaustion.median_factor` x the cluster median of the hour
  (the median of each broker's hourly median, so one runaway broker cannot drag it up), when at
  least `fd_exhaustion.min_brokers_for_median` brokers sent samples. KRaft controllers hold far fewer
  descriptors than brokers: they are compared with the cluster's controllers, brokers with its brokers.
One finding per broker-hour (a controller's: named as its process); first_seen is the first sample over either
threshold, last_seen the last.
"""
from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from fleethealth.fleet import mbeans
from fleethealth.gold.detectors.base import finding
from fleethealth.gold.facts.kraft import roles

KIND = "fd_exhaustion"
REPORT = {"chart": "chart-fd", "table": "fd",
          "columns": ["minute", "broker_id", "open_fds", "max_fds"]}


def fd_samples(jmx: DataFrame) -> DataFrame:
    """(cluster, broker_id, hour, ts, open_fds, max_fds) of brokers' JMX samples (max_fds null if not read)."""
    key = ["cluster", "broker_id", "hour", "ts"]

    def attr(mbean, name):
        return (jmx.where(mbean.matches() & F.col("broker_id").isNotNull())
                .groupBy(*key).agg(F.max("value").try_cast("long").alias(name)))
    return attr(mbeans.OPEN_FDS, "open_fds").join(attr(mbeans.MAX_FDS, "max_fds"), key, "left")


def detect(facts, thresholds):
    ratio = thresholds[f"{KIND}.max_fd_ratio"]
    factor = thresholds[f"{KIND}.median_factor"]
    min_brokers = thresholds[f"{KIND}.min_brokers_for_median"]
    samples = fd_samples(facts.jmx)
    if facts.hosts is not None:   # a dedicated KRaft controller is compared with the controllers
        controllers = (roles(facts.hosts).where(F.col("role") == "controller")
                       .select("cluster", "broker_id", F.lit("controllers").alias("peers")).distinct())
        samples = samples.join(F.broadcast(controllers), ["cluster", "broker_id"], "left")
    else:
        samples = samples.withColumn("peers", F.lit(None).cast("string"))
    samples = samples.withColumn("peers", F.coalesce(F.col("peers"), F.lit("brokers")))
    medians = (samples.groupBy("cluster", "peers", "broker_id", "hour").agg(F.median("open_fds").alias("broker_median"))
               .groupBy("cluster", "peers", "hour").agg(F.median("broker_median").alias("cluster_median"),
                                                        F.count(F.lit(1)).alias("brokers")))
    s = samples.join(medians, ["cluster", "peers", "hour"])
    near_max = F.col("open_fds") >= F.lit(ratio) * F.col("max_fds")
    far_above = (F.col("brokers") >= min_brokers) & (F.col("open_fds") > F.lit(factor) * F.col("cluster_median"))
    over = (s.withColumn("near_max", F.coalesce(near_max, F.lit(False)))
            .withColumn("far_above", F.coalesce(far_above, F.lit(False)))
            .where(F.col("near_max") | F.col("far_above")))
    per_broker = over.groupBy("cluster", "broker_id", "peers", "hour").agg(
        F.min("ts").alias("first_ts"), F.max("ts").alias("last_ts"), F.count(F.lit(1)).alias("samples"),
        F.max("open_fds").alias("peak"), F.max_by("max_fds", "open_fds").alias("max_fds"),
        F.first("cluster_median").alias("cluster_median"), F.first("brokers").alias("brokers"),
        F.max("near_max").alias("near_max"), F.max("far_above").alias("far_above"),
        F.min_by("open_fds", "ts").alias("first_open_fds"))
    evidence = F.concat_ws("; ",
        F.format_string("JMX OpenFileDescriptorCount %d at the first sample over, peak %d (%d sample(s) over)",
                        F.col("first_open_fds"), F.col("peak"), F.col("samples")),
        F.when(F.col("near_max"), F.format_string(
            "peak is %.1f%% of MaxFileDescriptorCount %d (threshold %.0f%%)",
            F.col("peak") * 100.0 / F.col("max_fds"), F.col("max_fds"), F.lit(ratio * 100))),
        F.when(F.col("far_above"), F.format_string(
            "> %.1fx the cluster median %.0f of %d %s this hour (peak %.1fx)", F.lit(float(factor)),
            F.col("cluster_median"), F.col("brokers"), F.col("peers"), F.col("peak") / F.col("cluster_median"))))
    return finding(per_broker, KIND, thresholds[f"{KIND}.severity"], entity=None, node=F.col("broker_id"),
                   first_seen=F.col("first_ts"), last_seen=F.col("last_ts"), evidence=evidence,
                   hour=F.col("hour"))
