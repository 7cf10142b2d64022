"""gold.metadata_divergence: the windows in which a broker lagged the leader epoch the controller gave it for a partition.

Signals and limits: fleethealth.gold.detectors.metadata_divergence, the detector that reads it.
"""
from __future__ import annotations

from pyspark.sql import functions as F

THRESHOLDS = "metadata_divergence"  # the detector whose thresholds this fact applies
PART = ["cluster", "hour", "topic", "partition"]
KEY = PART + ["broker"]


def controller_epochs(events):
    """(cluster, hour, topic, partition, broker, leader_epoch, ts, source): an epoch the controller gave `broker`."""
    ev = events.where(F.col("topic").isNotNull() & F.col("partition").isNotNull() & F.col("leader_epoch").isNotNull())
    receivers = (events.where(F.col("event_type") == "leader_and_isr_received")
                 .select("cluster", "hour", F.coalesce("broker", "broker_id").alias("broker")).distinct()
                 .withColumn("logs_requests", F.lit(True)))
    sent = (ev.where(F.col("event_type") == "leader_and_isr_sent")
            .join(receivers, ["cluster", "hour", "broker"], "left")
            .where((F.col("transition") == "become-leader") | F.col("logs_requests"))
            .select(*KEY, "leader_epoch", "ts", F.concat(F.lit("LeaderAndIsr "), "transition").alias("source")))
    elected = (ev.where(F.col("event_type").isin("partition_state_change", "leader_elected") & (F.col("leader") >= 0))
               .select(*PART, F.col("leader").alias("broker"), "leader_epoch", "ts",
                       F.lit("new leader").alias("source")))
    return sent.unionByName(elected)


def broker_epochs(events):
    """(cluster, hour, topic, partition, broker, leader_epoch, ts): an epoch a broker says it took."""
    return (events.where(F.col("event_type").isin("leader_epoch_start", "leader_and_isr_received")
                         & F.col("leader_epoch").isNotNull())
            .select(*PART, F.coalesce("broker", "broker_id").alias("broker"), "leader_epoch", "ts"))


def lags(events, min_lag_ms: int):
    """Per (partition, broker) that stayed behind longer than min_lag_ms: the lag window and its epochs."""
    given = controller_epochs(events).alias("g")
    taken = broker_epochs(events).alias("t")
    alive = events.groupBy("cluster", "hour", F.col("broker_id").alias("broker")).agg(F.max("ts").alias("as_of"))
    taken_at = (given.join(taken, [F.col(f"g.{k}") == F.col(f"t.{k}") for k in KEY]
                           + [F.col("t.leader_epoch") >= F.col("g.leader_epoch")], "left")
                .groupBy(*[F.col(f"g.{k}") for k in KEY], "g.leader_epoch", "g.ts", "g.source")
                .agg(F.min("t.ts").alias("taken_ts")))
    lag_end = F.coalesce("taken_ts", "as_of")
    behind = (taken_at.join(alive, ["cluster", "hour", "broker"])
              .withColumn("lag_end", lag_end)
              .where(F.unix_millis("lag_end") - F.unix_millis("ts") > min_lag_ms))
    per = (behind.groupBy(*KEY)
           .agg(F.min("ts").alias("first_behind_ts"), F.max("lag_end").alias("lag_end"),
                F.max_by("taken_ts", "ts").alias("caught_up_ts"),
                F.array_sort(F.collect_set("leader_epoch")).alias("epochs_not_taken")))
    # the broker's last epoch before it fell behind, and when the controller first went past it
    stuck = (per.join(broker_epochs(events), KEY)
             .where(F.col("ts") <= F.col("first_behind_ts"))
             .groupBy(*KEY).agg(F.max("leader_epoch").alias("stuck_epoch")))
    per = per.join(stuck, KEY, "left")
    timeline = controller_epochs(events).select(*PART, F.col("leader_epoch").alias("c_epoch"), F.col("ts").alias("c_ts"))
    began = (per.join(timeline, PART)
             .where((F.col("c_ts") <= F.col("lag_end"))
                    & (F.col("c_epoch") > F.coalesce("stuck_epoch", F.lit(-1))))
             .groupBy(*KEY)
             .agg(F.min(F.when(F.col("c_ts") <= F.col("first_behind_ts"), F.col("c_ts"))).alias("lag_start"),
                  F.min("c_epoch").alias("controller_min_epoch"), F.max("c_epoch").alias("controller_max_epoch")))
    return per.join(began, KEY)


def divergence(facts, thresholds):
    """gold.metadata_divergence: one row per (cluster, topic, partition, broker, hour) whose broker stayed
    behind an epoch the controller gave it for longer than `metadata_divergence.min_lag_ms`.

    Columns (`lags`): stuck_epoch (the broker's last epoch taken before it fell behind; NULL when none in
    the hour), controller_min_epoch / controller_max_epoch (the controller's epochs of the partition past
    stuck_epoch up to lag_end), epochs_not_taken (epochs given to the broker and not taken, nor a later
    one, within min_lag_ms), lag_start (the controller first went past stuck_epoch), lag_end (caught up,
    or the broker's last line of the hour), caught_up_ts (NULL: not caught up in the hour), lag_ms, and
    not_leader_errors (peers' NotLeaderForPartition errors fetching the partition from that broker
    between lag_start and lag_end).
    Limits: the controller's LeaderAndIsr lines are TRACE before 2.6 (then only new leaders' state changes
    and 0.10 `leader_elected` tell); a become-follower only counts for a broker that logs received
    requests; a broker with no line in the hour is not judged; a lag is measured within its hour.
    """
    min_lag_ms = thresholds[f"{THRESHOLDS}.min_lag_ms"]
    ev = facts.kafka_events
    df = lags(ev, min_lag_ms)
    nlp = (ev.where((F.col("event_type") == "not_leader_for_partition") & F.col("peer_broker").isNotNull())
           .select(*PART, F.col("peer_broker").alias("broker"), F.col("ts").alias("nl_ts")))
    errors = (df.select(*KEY, "lag_start", "lag_end").join(nlp, KEY)
              .where(F.col("nl_ts").between(F.col("lag_start"), F.col("lag_end")))
              .groupBy(*KEY).agg(F.count(F.lit(1)).alias("not_leader_errors")))
    df = df.join(errors, KEY, "left")
    return df.select(
        F.col("cluster").cast("string"), F.col("topic").cast("string"), F.col("partition").cast("int"),
        F.col("broker").cast("int"), "hour", F.col("stuck_epoch").cast("int"),
        F.col("controller_min_epoch").cast("int"), F.col("controller_max_epoch").cast("int"),
        F.col("epochs_not_taken").cast("array<int>"), F.col("lag_start").cast("timestamp"),
        F.col("lag_end").cast("timestamp"), F.col("caught_up_ts").cast("timestamp"),
        (F.unix_millis("lag_end") - F.unix_millis("lag_start")).cast("long").alias("lag_ms"),
        F.coalesce("not_leader_errors", F.lit(0)).cast("int").alias("not_leader_errors"))
