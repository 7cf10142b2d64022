"""metadata_lag (KRaft): a node's metadata lags the quorum's, or fails to load or apply.

The KRaft form of post-mortem 5's leader-epoch divergence (Kafka's
metadata/src/main/java/org/apache/kafka/image/loader/MetadataLoader.java, core's
BrokerServerMetrics, server-common's fault/LoggingFaultHandler.java). Signals, per node (a broker,
or a controller: its entity names its process):
- lag (JMX, gold.facts.metadata_lag.lag_samples): the node's applied offset (a broker's
  broker-metadata-metrics last-applied-record-offset, a controller's LastAppliedRecordOffset) more than
  `metadata_lag.max_lag_records` behind the quorum's committed offset (the controllers'
  LastCommittedRecordOffset, or the node's own raft-metrics high-watermark), or its last applied record
  at least `metadata_lag.min_lag_ms` old (last-applied-record-lag-ms, LastAppliedRecordLagMs); an incident
  once such samples last `metadata_lag.min_lag_ms` in a row;
- lag (logs): the MetadataLoader's "still catching up ... loaded up to offset N, but the high water mark
  is M" lines for at least `metadata_lag.min_lag_ms` before "finished catching up" (or the hour's end);
- faults: at least `metadata_lag.min_errors` rises of the node's metadata-load-error-count,
  metadata-apply-error-count or MetadataErrorCount, or "Encountered metadata loading / metadata
  publishing / quorum controller fault" lines (a non-fatal fault leaves the broker running on a metadata
  image that may differ from the controllers'). ("Not emitting ... because snapshots are disabled", which such
  a fault brings, is metadata_snapshots_disabled's.)
Where the logs say which partitions it affected: NotLeaderOrFollower errors involving the node during the
lag (peers fetching from it or it from them), and the consumer groups of the __consumer_offsets partitions
among them. One finding per node-hour; first_seen is the start of the first lag or fault.
"""
from __future__ import annotations

from pyspark.sql import functions as F

from fleethealth.fleet import entities
from fleethealth.fleet.kafka import OFFSETS_TOPIC
from fleethealth.gold.detectors.base import finding
from fleethealth.gold.facts.kraft import node_names
from fleethealth.gold.facts.metadata_lag import NODE, catch_up_episodes, error_rises, lag_runs, lag_samples

KIND = "metadata_lag"
LOOKBACK = True   # episodes straddling an hour end: see fleethealth.gold.detectors
REPORT = None     # no fact table behind it: JMX offsets and the MetadataLoader's lines are its evidence
HMS = "HH:mm:ss'Z'"
METADATA_FAULTS = ("metadata loading", "metadata publishing", "initial broker metadata loading", "quorum controller")


def _lags(facts, max_lag_records: int, min_lag_ms: int):
    """(cluster, broker_id, hour, start_ts, end_ts, signal) of every lag long enough to count."""
    jmx = (lag_runs(lag_samples(facts.jmx, max_lag_records, min_lag_ms))
           .where(F.col("lag_ms") >= min_lag_ms)
           .select(*NODE, "start_ts", F.coalesce("caught_up_ts", "end_ts").alias("end_ts"), F.format_string(
               "JMX: applied metadata behind for %.1f minutes from %s (%s; max_lag_records %d, min_lag_ms %d), %s",
               F.col("lag_ms") / 60_000, F.date_format("start_ts", HMS), F.concat_ws(", ",
                   F.when(F.col("max_lag_records").isNotNull(), F.format_string(
                       "up to %d records behind the committed offset", F.col("max_lag_records"))),
                   F.when(F.col("max_applied_lag_ms").isNotNull(), F.format_string(
                       "last applied record up to %d ms old", F.col("max_applied_lag_ms")))),
               F.lit(max_lag_records), F.lit(min_lag_ms),
               F.when(F.col("caught_up_ts").isNotNull(), F.format_string("caught up at %s",
                                                                          F.date_format("caught_up_ts", HMS)))
               .when(F.col("applied").isNotNull() & F.col("committed").isNotNull(), F.format_string(
                   "not caught up in the hour (applied %d of %d)", F.col("applied"), F.col("committed")))
               .otherwise(F.lit("not caught up in the hour")))
               .alias("signal")))
    span = F.unix_millis("end_ts") - F.unix_millis("start_ts")
    logs = (catch_up_episodes(facts.kafka_events).where(span >= min_lag_ms)
            .select(*NODE, "start_ts", "end_ts", F.format_string(
                "MetadataLoader still catching up for %.1f minutes from %s%s (min_lag_ms %d)%s", span / 60_000,
                F.date_format("start_ts", HMS),
                F.when(F.col("lag_records").isNotNull(), F.format_string(", up to %d records behind the high "
                                                                         "water mark", F.col("lag_records")))
                .otherwise(F.lit("")), F.lit(min_lag_ms),
                F.when(F.col("caught_up_ts").isNull(), F.lit(", not caught up in the hour")).otherwise(F.lit("")))
                .alias("signal")))
    return jmx.unionByName(logs)


def _faults(facts, min_errors: int):
    """(cluster, broker_id, hour, start_ts, end_ts, signal) of metadata faults."""
    ev = facts.kafka_events
    counters = (error_rises(facts.jmx)
                .withColumn("errors", F.coalesce("load_errors", F.lit(0)) + F.coalesce("apply_errors", F.lit(0))
                            + F.coalesce("controller_errors", F.lit(0)))
                .where(F.col("errors") >= min_errors)
                .select(*NODE, F.col("first_error_ts").alias("start_ts"), F.col("last_error_ts").alias("end_ts"),
                        F.format_string("JMX: metadata-load-error-count +%d, metadata-apply-error-count +%d, "
                                        "MetadataErrorCount +%d (>= min_errors %d)",
                                        F.coalesce("load_errors", F.lit(0)), F.coalesce("apply_errors", F.lit(0)),
                                        F.coalesce("controller_errors", F.lit(0)), F.lit(min_errors))
                        .alias("signal")))
    logged = (ev.where((F.col("event_type") == "server_fault") & F.col("fault").isin(*METADATA_FAULTS))
              .groupBy(*NODE)
              .agg(F.min("ts").alias("start_ts"), F.max("ts").alias("end_ts"), F.count(F.lit(1)).alias("n"),
                   F.array_join(F.array_sort(F.collect_set("fault")), ", ").alias("faults"),
                   F.max("offset").alias("offset"),
                   F.min_by(F.substring(F.regexp_extract("message", r"fault: ([^\n]*)", 1), 1, 160), "ts")
                   .alias("text"))
              .where(F.col("n") >= min_errors)
              .select(*NODE, "start_ts", "end_ts", F.format_string(
                  "%d metadata fault line(s) (%s) from %s%s%s (>= min_errors %d)", F.col("n"), F.col("faults"),
                  F.date_format("start_ts", HMS),
                  F.when(F.col("offset").isNotNull(), F.format_string(", at metadata offset %d", F.col("offset")))
                  .otherwise(F.lit("")),
                  F.when(F.coalesce(F.col("text"), F.lit("")) != "", F.format_string(": %s", F.col("text")))
                  .otherwise(F.lit("")), F.lit(min_errors)).alias("signal")))
    return counters.unionByName(logged)


def _affected(facts, spans):
    """(cluster, broker_id, hour, partitions, groups): the partitions NotLeaderOrFollower errors name that
    involve the node within its signals' span, and the consumer groups of the __consumer_offsets ones."""
    errs = (facts.kafka_events.where((F.col("event_type") == "not_leader_for_partition") & F.col("topic").isNotNull())
            .select("cluster", "hour", "ts", "topic", "partition", "broker_id", "peer_broker").alias("e"))
    s = spans.alias("s")
    involved = ((F.col("e.cluster") == F.col("s.cluster")) & (F.col("e.hour") == F.col("s.hour"))
                & ((F.col("e.peer_broker") == F.col("s.broker_id")) | (F.col("e.broker_id") == F.col("s.broker_id")))
                & F.col("e.ts").between(F.col("s.first_seen"), F.col("s.last_seen")))
    hit = s.join(errs, involved).select("s.cluster", "s.broker_id", "s.hour", "e.topic", "e.partition")
    groups = facts.offsets_groups.select("cluster", "hour", "partition", F.col("groups").alias("g")).alias("g")
    hit = (hit.alias("h").join(groups, (F.col("h.topic") == OFFSETS_TOPIC) & (F.col("h.cluster") == F.col("g.cluster"))
                                & (F.col("h.hour") == F.col("g.hour")) & (F.col("h.partition") == F.col("g.partition")),
                                "left")
           .select("h.*", "g.g"))
    return (hit.groupBy(*NODE)
            .agg(F.array_sort(F.collect_set(F.format_string("%s-%d", F.col("topic"), F.col("partition"))))
                 .alias("partitions"),
                 F.count(F.lit(1)).alias("errors"),
                 F.array_sort(F.array_distinct(F.flatten(F.collect_list(F.coalesce(
                     "g", F.array().cast("array<string>")))))).alias("groups")))


def detect(facts, thresholds):
    min_lag_ms = thresholds[f"{KIND}.min_lag_ms"]
    signals = (_lags(facts, thresholds[f"{KIND}.max_lag_records"], min_lag_ms)
               .unionByName(_faults(facts, thresholds[f"{KIND}.min_errors"]))
               .where(F.col("broker_id").isNotNull()))
    per_node = (signals.groupBy(*NODE)
                .agg(F.min("start_ts").alias("first_seen"), F.max(F.coalesce("end_ts", "start_ts")).alias("last_seen"),
                     F.array_join(F.array_sort(F.collect_list("signal")), "; ").alias("signals")))
    affected = _affected(facts, per_node)
    df = per_node.join(affected, NODE, "left")
    if facts.hosts is not None:   # the node's name (the hosts frame's), which its evidence gives too
        df = df.join(F.broadcast(node_names(facts.hosts)), ["cluster", "broker_id"], "left")
    else:
        df = df.withColumn("process", F.lit(None).cast("string"))
    df = df.withColumn("process", F.coalesce(F.col("process"), entities.broker_col(F.col("broker_id"))))
    evidence = F.concat_ws("; ",
        F.format_string("node %d (%s): %s", F.col("broker_id"), F.col("process"), F.col("signals")),
        F.when(F.col("errors") > 0, F.format_string(
            "%d NotLeaderOrFollower error(s) involving it meanwhile, partitions %s", F.col("errors"),
            F.array_join(F.slice("partitions", 1, 10), ", "))),
        F.when(F.size("groups") > 0, F.format_string(
            "consumer groups whose coordinator partitions they are: %s", F.array_join(F.slice("groups", 1, 10), ", "))))
    return finding(df, KIND, thresholds[f"{KIND}.severity"], entity=F.col("process"),
                   first_seen=F.col("first_seen"), last_seen=F.col("last_seen"), evidence=evidence,
                   hour=F.col("hour"))
