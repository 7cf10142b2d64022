"""How far each KRaft node's applied metadata is behind the quorum's, from JMX and the MetadataLoader's log.

Signals and limits: fleethealth.gold.detectors.metadata_lag, the detector that reads these (the beans
of Kafka's BrokerServerMetrics.scala, 4.x server/.../metrics/BrokerServerMetrics.java, QuorumControllerMetrics.java
and raft/.../internals/KafkaRaftMetrics.java: fleet/mbeans.yaml).
"""
from __future__ import annotations

from pyspark.sql import Window
from pyspark.sql import functions as F

from fleethealth.fleet import mbeans

NODE = ["cluster", "broker_id", "hour"]


def _last_per_minute(jmx, beans, name: str):
    """(cluster, broker_id, hour, minute, <name>): each node's last sample of a minute of any of `beans`."""
    cond = beans[0].matches()
    for b in beans[1:]:
        cond = cond | b.matches()
    return (jmx.where(cond & F.col("value").isNotNull())
            .groupBy(*NODE, F.date_trunc("minute", "ts").alias("minute"))
            .agg(F.max_by("value", "ts").alias(name), F.max("ts").alias(f"{name}_ts")))


def lag_samples(jmx, max_lag_records: int, min_lag_ms: int):
    """(cluster, broker_id, hour, minute, ts, applied, committed, lag_records, applied_lag_ms, lagging) per
    node-minute with an applied offset: a broker's last-applied-record-offset or a controller's
    LastAppliedRecordOffset, against the quorum's committed offset - the largest of the controllers'
    LastCommittedRecordOffset in that minute and the node's own raft-metrics high-watermark. A sample lags
    when it is more than max_lag_records behind, or its last applied record is at least min_lag_ms old
    (last-applied-record-lag-ms / LastAppliedRecordLagMs: NoOpRecords every 500 ms keep it low when healthy)."""
    applied = _last_per_minute(jmx, [mbeans.bean("broker_metadata_applied_offset"),
                                     mbeans.bean("controller_last_applied_offset")], "applied")
    age = _last_per_minute(jmx, [mbeans.bean("broker_metadata_applied_lag"),
                                 mbeans.bean("controller_last_applied_lag")], "applied_lag_ms")
    hwm = _last_per_minute(jmx, [mbeans.bean("raft_high_watermark")], "hwm").drop("hwm_ts")
    committed = (_last_per_minute(jmx, [mbeans.bean("controller_last_committed_offset")], "committed")
                 .groupBy("cluster", "hour", "minute").agg(F.max("committed").alias("quorum_committed")))
    key = [*NODE, "minute"]
    df = (applied.join(age, key, "full").join(hwm, key, "left")
          .join(committed, ["cluster", "hour", "minute"], "left"))
    reference = F.greatest("quorum_committed", "hwm")
    lag = F.when(F.col("applied").isNotNull() & reference.isNotNull(),
                 F.greatest(reference - F.col("applied"), F.lit(0.0)))
    return df.select(
        *NODE, "minute", F.greatest("applied_ts", "applied_lag_ms_ts").alias("ts"),
        F.col("applied").cast("long").alias("applied"), reference.cast("long").alias("committed"),
        lag.cast("long").alias("lag_records"), F.col("applied_lag_ms").cast("long").alias("applied_lag_ms"),
        (F.coalesce(lag > max_lag_records, F.lit(False))
         | F.coalesce(F.col("applied_lag_ms") >= min_lag_ms, F.lit(False))).alias("lagging"))


def lag_runs(samples):
    """One row per run of consecutive lagging samples of a node: (cluster, broker_id, hour, start_ts,
    end_ts, lag_ms, max_lag_records, max_applied_lag_ms, committed, applied, caught_up_ts). lag_ms is the
    run's span, or the age of its oldest applied record when that is longer; caught_up_ts the first sample
    after the run that did not lag (NULL: still behind at the end of the hour)."""
    w = Window.partitionBy(*NODE).orderBy("ts")
    runs = (samples.withColumn("run", F.sum(F.when(F.col("lagging") != F.coalesce(
                F.lag("lagging").over(w), ~F.col("lagging")), 1).otherwise(0)).over(
                    w.rowsBetween(Window.unboundedPreceding, 0)))
            .withColumn("next_ts", F.lead("ts").over(w)))
    return (runs.where("lagging").groupBy(*NODE, "run")
            .agg(F.min("ts").alias("start_ts"), F.max("ts").alias("end_ts"),
                 F.max("lag_records").alias("max_lag_records"), F.max("applied_lag_ms").alias("max_applied_lag_ms"),
                 F.max_by("committed", "ts").alias("committed"), F.max_by("applied", "ts").alias("applied"),
                 F.max_by("next_ts", "ts").alias("caught_up_ts"))
            .withColumn("lag_ms", F.greatest(F.unix_millis("end_ts") - F.unix_millis("start_ts"),
                                             F.coalesce("max_applied_lag_ms", F.lit(0))))
            .drop("run"))


def error_rises(jmx):
    """(cluster, broker_id, hour, load_errors, apply_errors, controller_errors, first_error_ts): how much
    each node's metadata error counters rose between its samples (a restart resets them: a fall is no rise)."""
    beans = {"load_errors": mbeans.bean("broker_metadata_load_errors"),
             "apply_errors": mbeans.bean("broker_metadata_apply_errors"),
             "controller_errors": mbeans.bean("controller_metadata_errors")}
    name = F.lit(None).cast("string")
    for n, bean in beans.items():
        name = F.when(bean.matches(), F.lit(n)).otherwise(name)
    rows = jmx.withColumn("name", name).where(F.col("name").isNotNull() & F.col("value").isNotNull())
    w = Window.partitionBy(*NODE, "name").orderBy("ts")
    rises = rows.withColumn("rise", F.greatest(F.col("value") - F.lag("value").over(w), F.lit(0.0)))
    return (rises.groupBy(*NODE)
            .agg(*[F.sum(F.when(F.col("name") == n, F.col("rise"))).cast("long").alias(n) for n in beans],
                 F.min(F.when(F.col("rise") > 0, F.col("ts"))).alias("first_error_ts"),
                 F.max(F.when(F.col("rise") > 0, F.col("ts"))).alias("last_error_ts")))


def catch_up_episodes(events):
    """(cluster, broker_id, hour, start_ts, end_ts, caught_up_ts, lag_records) of the MetadataLoader's
    "still catching up" lines of a node, up to its "finished catching up" line (NULL: not in the hour);
    lag_records the largest high water mark - loaded offset the lines give."""
    ev = events.where(F.col("event_type").isin("metadata_catching_up", "metadata_caught_up"))
    w = Window.partitionBy(*NODE).orderBy("ts")
    done = F.col("event_type") == "metadata_caught_up"
    # an episode: the catching-up lines after the previous caught-up line (and that line)
    ep = ev.withColumn("episode", F.sum(F.when(done, 1).otherwise(0)).over(w.rowsBetween(Window.unboundedPreceding, -1)))
    ep = ep.withColumn("episode", F.coalesce("episode", F.lit(0)))
    return (ep.groupBy(*NODE, "episode")
            .agg(F.min(F.when(~done, F.col("ts"))).alias("start_ts"), F.max(F.when(~done, F.col("ts"))).alias("last_ts"),
                 F.min(F.when(done, F.col("ts"))).alias("caught_up_ts"),
                 F.max(F.col("high_watermark") - F.col("offset")).alias("lag_records"))
            .where(F.col("start_ts").isNotNull())
            .select(*NODE, "start_ts", F.coalesce("caught_up_ts", "last_ts").alias("end_ts"), "caught_up_ts",
                    "lag_records"))
