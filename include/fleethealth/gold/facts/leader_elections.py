"""gold.leader_elections: one row per leader-change window (a lost broker's failure callback or, KRaft, its
fencing or, without the controllers' logs, the brokers taking over its partitions; or a partition going
offline) and the partitions whose leader moved in it.

Signals and limits: fleethealth.gold.detectors.leader_election_storm, the detector that reads it.
"""
from __future__ import annotations

from pyspark.sql import Window
from pyspark.sql import functions as F

from fleethealth.fleet.kafka import OFFSETS_TOPIC

THRESHOLDS = "leader_election_storm"  # the detector whose thresholds this fact applies
ONLINE, OFFLINE = "OnlinePartition", "OfflinePartition"


def leader_changes(kafka_events):
    """(cluster, hour, ts, topic, partition, new_leader or NULL, signal) of every leader change logged."""
    ev = kafka_events
    state = F.col("event_type") == "partition_state_change"
    went_offline = state & (F.col("from_state") == ONLINE) & (F.col("to_state") == OFFLINE)
    came_online = state & (F.col("from_state") == OFFLINE) & (F.col("to_state") == ONLINE)
    epoch = (F.col("event_type") == "leader_epoch_start") & (F.col("role") == "leader")
    elected = F.col("event_type") == "leader_elected"
    sent = (F.col("event_type") == "leader_and_isr_sent") & (F.col("transition") == "become-leader")
    # KRaft: the controller logs clean elections at DEBUG only; an unclean one at INFO
    unclean = F.col("event_type") == "unclean_partition_change"
    signal = (F.when(went_offline, F.lit("Online->Offline")).when(came_online, F.lit("Offline->Online"))
              .when(epoch, F.lit("starts at Leader Epoch")).when(elected, F.lit("leader selected"))
              .when(sent, F.lit("become-leader sent")).when(unclean, F.lit("UNCLEAN partition change")))
    new_leader = (F.when(went_offline, F.lit(None).cast("int"))
                  .when(epoch, F.coalesce(F.col("leader"), F.col("broker"))).otherwise(F.col("leader")))
    return (ev.where(went_offline | came_online | epoch | elected | sent | unclean)
            .select("cluster", "hour", "ts", "topic", "partition", new_leader.alias("new_leader"),
                    signal.alias("signal")))


def triggers(kafka_events, window_ms: int):
    """(cluster, hour, trigger_ts, lost_broker or NULL, controller, trigger) that may start a storm: a
    controller's failure callback or (KRaft) fencing of the lost broker, or a partition going offline."""
    ev = kafka_events
    callbacks = (ev.where(F.col("event_type") == "broker_failure_callback")
                 .select("cluster", "hour", F.col("ts").alias("trigger_ts"), F.explode("brokers").alias("lost_broker"),
                         F.coalesce("controller", "broker_id").alias("controller"),
                         F.lit("'Broker failure callback'").alias("trigger")))
    # KRaft: the active controller fenced the broker ("Fencing broker N because its session has timed out")
    fenced = (ev.where(F.col("event_type") == "broker_fenced")
              .select("cluster", "hour", F.col("ts").alias("trigger_ts"), F.col("broker").alias("lost_broker"),
                      F.coalesce("controller", "broker_id").alias("controller"),
                      F.lit("'Fencing broker' (session timed out)").alias("trigger")))
    callbacks = callbacks.unionByName(fenced)
    callbacks = callbacks.unionByName(moved_off(ev, callbacks, window_ms))
    offline = (ev.where((F.col("event_type") == "partition_state_change") & (F.col("from_state") == ONLINE)
                       & (F.col("to_state") == OFFLINE))
               .select("cluster", "hour", F.col("ts").alias("trigger_ts"), F.lit(None).cast("int").alias("lost_broker"),
                       F.coalesce("controller", "broker_id").alias("controller"),
                       F.lit("partition Online -> Offline").alias("trigger")))
    # an Offline transition inside a failure callback's window belongs to that callback
    cb = callbacks.select("cluster", "hour", F.col("trigger_ts").alias("cb_ts"))
    covered = (F.col("trigger_ts") >= F.col("cb_ts")) & (
        F.col("trigger_ts") < F.col("cb_ts") + F.make_dt_interval(secs=F.lit(window_ms / 1000.0)))
    offline = offline.alias("o").join(cb.alias("c"), (F.col("o.cluster") == F.col("c.cluster"))
                                      & (F.col("o.hour") == F.col("c.hour")) & covered, "left_anti")
    return callbacks.unionByName(offline)


def moved_off(kafka_events, decided, window_ms: int):
    """KRaft, seen by the brokers alone (a cluster listed without its controllers, whose fences only they
    log): (cluster, hour, trigger_ts, lost_broker, controller NULL, trigger) where new leaders took over
    partitions from a broker left out of their ISR - "Leader t-p ... ISR [3,1] ... Previous leader Some(2)"
    (state-change.log, 3.x+): the controller fenced or lost it; a preferred election keeps the old leader
    in the ISR. One trigger per run of such lines less than window_ms apart; none where `decided` (the
    controllers' triggers) has one for that broker within window_ms, nor after the broker announced its
    controlled shutdown (`broker_state_changed` to PENDING_CONTROLLED_SHUTDOWN or SHUTTING_DOWN)."""
    ev = kafka_events
    window = F.make_dt_interval(secs=F.lit(window_ms / 1000.0))
    lines = (ev.where((F.col("event_type") == "leader_epoch_start") & (F.col("role") == "leader")
                      & F.col("prev_leader").isNotNull() & F.col("isr").isNotNull()
                      & (F.col("prev_leader") != F.col("broker")) & ~F.array_contains("isr", F.col("prev_leader")))
             .select("cluster", "hour", "ts", F.col("prev_leader").alias("lost_broker")))
    before = F.lag("ts").over(Window.partitionBy("cluster", "hour", "lost_broker").orderBy("ts"))
    first = (lines.withColumn("before", before)
             .where(F.col("before").isNull() | (F.col("ts") >= F.col("before") + window))
             .select("cluster", "hour", F.col("ts").alias("trigger_ts"), "lost_broker"))
    shutdown = (ev.where((F.col("event_type") == "broker_state_changed")
                         & F.col("to_state").isin("PENDING_CONTROLLED_SHUTDOWN", "SHUTTING_DOWN"))
                .select("cluster", "hour", F.col("ts").alias("x_ts"), F.col("broker").alias("x_broker")))
    known = decided.where(F.col("lost_broker").isNotNull()).select(
        "cluster", "hour", F.col("trigger_ts").alias("x_ts"), F.col("lost_broker").alias("x_broker"))
    t, x = first.alias("t"), shutdown.unionByName(known).alias("x")
    near = ((F.col("t.cluster") == F.col("x.cluster")) & (F.col("t.hour") == F.col("x.hour"))
            & (F.col("t.lost_broker") == F.col("x.x_broker"))
            & (F.col("x.x_ts") > F.col("t.trigger_ts") - window) & (F.col("x.x_ts") < F.col("t.trigger_ts") + window))
    return (t.join(x, near, "left_anti")
            .select("cluster", "hour", "trigger_ts", "lost_broker", F.lit(None).cast("int").alias("controller"),
                    F.lit("leaders moved off it (brokers' state-change.log)").alias("trigger")))


def leader_elections(facts, thresholds):
    """gold.leader_elections: one row per leader-change window of the hour, below the storm threshold too.

    Key: (cluster, trigger_ts, trigger, controller, lost_broker) - a `triggers()` row: a controller's
    "Broker failure callback for N" (lost_broker N), or a partition Online -> Offline without a callback
    before it in the window (lost_broker NULL); a callback whose window moved nothing has partitions 0.
    Columns: partitions (distinct topic-partitions whose leader changed in [trigger_ts, trigger_ts +
    window_ms), not to the lost broker), offsets_partitions and offsets_partition_list (the
    __consumer_offsets ones among them), groups (the consumer groups those offsets partitions coordinate:
    their coordinator moved, they rebalance), signals (which `leader_changes` signals were seen), offline
    (Online->Offline lines), epochs ('starts at Leader Epoch' lines as leader), last_change_ts,
    window_ms (`leader_election_storm.window_ms`), storm (partitions >= `leader_election_storm.min_partitions`).
    Limits: from 2.6 state changes are TRACE-only, so partitions rest on the new leaders' epoch lines and
    the controller's become-leader requests; a window crossing the hour end counts only this hour's
    changes; groups are only those the hour's logs name (`Facts.offsets_groups`).
    """
    window_ms = thresholds[f"{THRESHOLDS}.window_ms"]
    min_partitions = thresholds[f"{THRESHOLDS}.min_partitions"]
    window = F.make_dt_interval(secs=F.lit(window_ms / 1000.0))
    groups = facts.offsets_groups.alias("g")
    changes = leader_changes(facts.kafka_events).alias("c")
    changes = (changes.join(groups, (F.col("c.topic") == OFFSETS_TOPIC) & (F.col("c.cluster") == F.col("g.cluster"))
                            & (F.col("c.hour") == F.col("g.hour")) & (F.col("c.partition") == F.col("g.partition")),
                            "left")
               .select("c.*", F.col("g.groups").alias("groups")).alias("l"))
    trig = triggers(facts.kafka_events, window_ms).alias("t")
    inside = ((F.col("l.cluster") == F.col("t.cluster")) & (F.col("l.hour") == F.col("t.hour"))
              & (F.col("l.ts") >= F.col("t.trigger_ts"))
              & (F.col("l.ts") < F.col("t.trigger_ts") + window)
              & (F.col("t.lost_broker").isNull() | F.col("l.new_leader").isNull()
                 | (F.col("l.new_leader") != F.col("t.lost_broker"))))
    # NULL for a trigger without changes (format_string would give "null-null")
    part = F.when(F.col("l.signal").isNotNull(), F.format_string("%s-%d", F.col("l.topic"), F.col("l.partition")))
    offsets = F.col("l.topic") == OFFSETS_TOPIC
    windows = (trig.join(changes, inside, "left")
               .groupBy(F.col("t.cluster").alias("cluster"), F.col("t.hour").alias("hour"), "trigger_ts", "trigger",
                        "controller", "lost_broker")
               .agg(F.count_distinct(part).alias("partitions"),
                    F.count_distinct(F.when(offsets, part)).alias("offsets_partitions"),
                    F.array_sort(F.collect_set(F.when(offsets, F.col("l.partition")))).alias("offsets_partition_list"),
                    F.array_sort(F.array_distinct(F.flatten(F.collect_list("l.groups")))).alias("groups"),
                    F.array_sort(F.collect_set(F.col("l.signal"))).alias("signals"),
                    F.count(F.when(F.col("l.signal") == "Online->Offline", 1)).alias("offline"),
                    F.count(F.when(F.col("l.signal") == "starts at Leader Epoch", 1)).alias("epochs"),
                    F.max("l.ts").alias("last_change_ts")))
    return windows.select(
        F.col("cluster").cast("string"), "hour", F.col("trigger_ts").cast("timestamp"),
        F.col("trigger").cast("string"), F.col("controller").cast("int"), F.col("lost_broker").cast("int"),
        F.col("partitions").cast("int"), F.col("offsets_partitions").cast("int"),
        F.col("offsets_partition_list").cast("array<int>"), F.col("groups").cast("array<string>"),
        F.col("signals").cast("array<string>"), F.col("offline").cast("int"), F.col("epochs").cast("int"),
        F.col("last_change_ts").cast("timestamp"), F.lit(window_ms).cast("long").alias("window_ms"),
        (F.col("partitions") >= min_partitions).alias("storm"))
