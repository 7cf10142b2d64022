"""broker_fenced (KRaft): the active controller fenced a broker whose heartbeats stopped arriving.

The KRaft form of a ZooKeeper session expiry (post-mortems 4 and 5; Kafka's
metadata/src/main/java/org/apache/kafka/controller/ReplicationControlManager.java and
BrokerHeartbeatManager.java, core's BrokerLifecycleManager.scala). A fenced broker that is still
running logs nothing at INFO and its BrokerState stays 3 (RUNNING): the fencing shows on the
controllers. Signals (silver.kafka_events):
- `broker_fenced`: the active controller's "Fencing broker N because its session has timed out" (3.3+,
  controller.log; server.log in 3.3.0/3.3.1) - who fenced whom, and when;
- `broker_fencing_replayed` to_state fenced: every controller replaying the fence record (3.3.0-3.3.1,
  3.6+; the standbys' copy when the active controller's log did not arrive). A replayed fence within
  `broker_fenced.shutdown_grace_s` after the broker's controlled shutdown began (the controller's
  `enterControlledShutdown[N]`, the broker's PENDING_CONTROLLED_SHUTDOWN / SHUTTING_DOWN) is that
  shutdown's, not a fault;
- unfencing: `broker_unfenced` ("The request from broker N to unfence has been granted ...") and replayed
  unfences; a running broker's next heartbeat unfences it, so fence -> unfence -> fence is a flapping broker.
Fence signals of one broker closer than `broker_fenced.episode_gap_s` are one fence (the active
controller's line and the standbys' replays). At least `broker_fenced.flapping_fences` fences within
`broker_fenced.flapping_window_minutes` make it flapping (`broker_fenced.flapping_severity`), a single one
`broker_fenced.severity`. Why, in the evidence (signals within episode_gap_s before each fence): the
broker's own heartbeat send failures (`broker_heartbeat_failed`: network, controller unreachable), the
controller's "Timed out heartbeat from broker N" on an overloaded event queue (`broker_heartbeat_timed_out`,
3.5+), and the controllers' JMX (FencedBrokerCount, ActiveBrokerCount, TimedOutBrokerHeartbeatCount 3.6+,
EventQueueTimeMs); per fence, what followed: the partitions the controller changed ("handleBrokerFenced:
changing N partition(s)": ISR shrinks and leader moves) and, of them, the leaders that moved away
(gold.leader_elections' window of the fence, the count leader_election_storm gives). One finding per
broker-hour.
"""
from __future__ import annotations

from pyspark.sql import functions as F

from fleethealth.fleet import entities
from fleethealth.gold.detectors.base import finding
from fleethealth.gold.facts.kraft import controller_jmx, fences, seconds, unfence_signals

KIND = "broker_fenced"
LOOKBACK = True   # episodes straddling an hour end: see fleethealth.gold.detectors
# the cluster's gold.kraft_quorum rows of its hours (the table counts fences as this detector does; it
# links each fence to its causes itself)
REPORT = {"chart": "chart-quorum", "table": "kraft_quorum",
          "columns": ["hour", "fences", "fenced_brokers", "unfences", "fenced_at_end", "fenced_broker_count_max"]}
HMS = "HH:mm:ss'Z'"


def _before(events, fence, event_type: str, who, gap_s: int):
    """Per fence, joined with the rows of `event_type` about its broker (`who` names it) in the gap_s before it."""
    e = events.where(F.col("event_type") == event_type).select(
        "cluster", "hour", who.alias("e_broker"), F.col("ts").alias("e_ts"), "reason", "error")
    near = ((F.col("f.cluster") == F.col("e.cluster")) & (F.col("f.hour") == F.col("e.hour"))
            & (F.col("f.broker") == F.col("e.e_broker")) & (F.col("e.e_ts") <= F.col("f.fence_ts"))
            & (F.col("e.e_ts") >= F.col("f.fence_ts") - seconds(gap_s)))
    return fence.alias("f").join(e.alias("e"), near)


def _causes(events, fence, gap_s: int, elections):
    """Per fence: heartbeats the broker failed to send, heartbeats the controller timed out, partitions
    the controller changed for it (ISR shrinks and leader moves: handleBrokerFenced), and of them the
    leaders that moved away (gold.leader_elections' window of the fence: the storm's own count)."""
    key = ["cluster", "broker", "hour", "fence"]
    sent = (_before(events, fence, "broker_heartbeat_failed", F.coalesce("broker", "broker_id"), gap_s)
            .groupBy(*[F.col(f"f.{k}") for k in key])
            .agg(F.count(F.lit(1)).alias("heartbeat_failures"),
                 F.array_join(F.array_sort(F.collect_set(F.coalesce("e.reason", "e.error"))), ", ").alias("hb_why")))
    overloaded = (_before(events, fence, "broker_heartbeat_timed_out", F.col("broker"), gap_s)
                  .groupBy(*[F.col(f"f.{k}") for k in key]).agg(F.count(F.lit(1)).alias("timed_out")))
    # handleBrokerFenced names no broker: the one fenced within the gap before it
    moved = (events.where((F.col("event_type") == "partitions_changed") & (F.col("reason") == "handleBrokerFenced"))
             .select("cluster", "hour", F.col("ts").alias("m_ts"), F.col("count").alias("m_count")).alias("m")
             .join(fence.alias("f"), (F.col("f.cluster") == F.col("m.cluster")) & (F.col("f.hour") == F.col("m.hour"))
                   & (F.col("m.m_ts") >= F.col("f.fence_ts")) & (F.col("m.m_ts") <= F.col("f.fence_end_ts")
                                                                  + seconds(gap_s)))
             .groupBy(*[F.col(f"f.{k}") for k in key]).agg(F.sum("m.m_count").alias("partitions_moved")))
    led = (elections.select("cluster", "hour", F.col("lost_broker").alias("l_broker"), F.col("trigger_ts").alias("l_ts"),
                            F.col("partitions").alias("l_partitions")).alias("l")
           .join(fence.alias("f"), (F.col("f.cluster") == F.col("l.cluster")) & (F.col("f.hour") == F.col("l.hour"))
                 & (F.col("f.broker") == F.col("l.l_broker")) & (F.col("l.l_ts") >= F.col("f.fence_ts") - seconds(gap_s))
                 & (F.col("l.l_ts") <= F.col("f.fence_end_ts") + seconds(gap_s)))
           .groupBy(*[F.col(f"f.{k}") for k in key]).agg(F.max("l.l_partitions").alias("leaders_moved")))
    return (fence.join(sent, key, "left").join(overloaded, key, "left").join(moved, key, "left")
            .join(led, key, "left")
            .fillna(0, ["heartbeat_failures", "timed_out", "partitions_moved", "leaders_moved"]))


def detect(facts, thresholds):
    gap_s = thresholds[f"{KIND}.episode_gap_s"]
    n = thresholds[f"{KIND}.flapping_fences"]
    window_min = thresholds[f"{KIND}.flapping_window_minutes"]
    ev = facts.kafka_events
    fence = fences(ev, gap_s, thresholds[f"{KIND}.shutdown_grace_s"])
    u = unfence_signals(ev).alias("u")
    f = fence.alias("f")
    unfenced = (f.join(u, (F.col("u.cluster") == F.col("f.cluster")) & (F.col("u.broker") == F.col("f.broker"))
                       & (F.col("u.hour") == F.col("f.hour")) & (F.col("u.u_ts") > F.col("f.fence_end_ts")), "left")
                .groupBy(*[F.col(f"f.{c}") for c in fence.columns]).agg(F.min("u.u_ts").alias("unfenced_ts")))
    later = fence.select("cluster", "broker", "hour", F.col("fence_ts").alias("l_ts")).alias("l")
    in_window = (unfenced.alias("x").join(
        later, (F.col("l.cluster") == F.col("x.cluster")) & (F.col("l.broker") == F.col("x.broker"))
        & (F.col("l.hour") == F.col("x.hour")) & (F.col("l.l_ts") >= F.col("x.fence_ts"))
        & (F.col("l.l_ts") <= F.col("x.fence_ts") + F.make_dt_interval(mins=F.lit(window_min))))
        .groupBy(*[F.col(f"x.{c}") for c in unfenced.columns]).agg(F.count(F.lit(1)).alias("in_window")))
    each = _causes(ev, in_window, gap_s, facts.table("gold.leader_elections", thresholds))
    fmt_one = F.format_string(
        "%s by controller %d (%s%s)", F.date_format("fence_ts", HMS), F.col("controller"),
        F.when(F.col("unfenced_ts").isNotNull(), F.format_string("unfenced %s", F.date_format("unfenced_ts", HMS)))
        .otherwise(F.lit("not unfenced in the hour")),
        F.when(F.col("partitions_moved") + F.col("leaders_moved") > 0, F.format_string(
            ": %d partition(s) changed, %d leader(s) moved", F.col("partitions_moved"), F.col("leaders_moved")))
        .otherwise(F.lit("")))
    fenced_for = F.unix_seconds("unfenced_ts") - F.unix_seconds("fence_ts")   # null: not unfenced in the hour
    per_broker = (each.groupBy("cluster", "broker", "hour")
                  .agg(F.count(F.lit(1)).alias("fences"), F.min("fence_ts").alias("first_seen"),
                       F.max(F.greatest("fence_end_ts", F.coalesce("unfenced_ts", "fence_end_ts"))).alias("last_seen"),
                       F.max("in_window").alias("most_in_window"), F.max("by_active").alias("by_active"),
                       F.array_join(F.array_sort(F.collect_list(fmt_one)), ", ").alias("fence_list"),
                       F.sum("heartbeat_failures").alias("heartbeat_failures"),
                       F.array_join(F.array_sort(F.array_distinct(F.flatten(F.collect_list(
                           F.split(F.nullif("hb_why", F.lit("")), ", "))))), ", ").alias("hb_why"),
                       F.sum("timed_out").alias("timed_out"), F.sum("partitions_moved").alias("partitions_moved"),
                       F.sum("leaders_moved").alias("leaders_moved"),
                       F.min(fenced_for).alias("fenced_min_s"), F.max(fenced_for).alias("fenced_max_s"))
                  .join(controller_jmx(facts.jmx), ["cluster", "hour"], "left"))
    flapping = F.col("most_in_window") >= n
    # the gauge saw none of the fences, each shorter than its sampling: not "up to 0"
    unseen = ((F.col("fenced_max") == 0) & (F.col("fenced_max_s") < F.col("fenced_sample_s"))).eqNullSafe(True)
    evidence = F.concat_ws("; ",
        F.format_string("broker %d fenced %d time(s) after its session timed out (no heartbeat within "
                        "broker.session.timeout.ms)%s: %s", F.col("broker"), F.col("fences"),
                        F.when(F.col("by_active"), F.lit("")).otherwise(F.lit(", seen in standby controllers' replays")),
                        F.col("fence_list")),
        F.when(flapping, F.format_string("flapping: %d fences within %d minutes (>= flapping_fences %d)",
                                         F.col("most_in_window"), F.lit(window_min), F.lit(n))),
        F.when(F.col("partitions_moved") + F.col("leaders_moved") > 0, F.format_string(
            "in all the controller changed %d partition(s) for it (handleBrokerFenced: ISR shrinks and leader "
            "moves) and %d leader(s) moved away from it (leader_election_storm's count)",
            F.col("partitions_moved"), F.col("leaders_moved"))),
        F.when(F.col("heartbeat_failures") > 0, F.format_string(
            "its own log: %d heartbeat(s) not sent within %d s before (%s)", F.col("heartbeat_failures"),
            F.lit(gap_s), F.coalesce(F.nullif("hb_why", F.lit("")), F.lit("retrying")))),
        F.when(F.col("timed_out") > 0, F.format_string(
            "the controller timed out %d of its heartbeat(s) on an overloaded event queue", F.col("timed_out"))),
        F.when(F.col("fenced_max").isNotNull() | F.col("active_min").isNotNull(), F.format_string(
            "controllers' JMX: FencedBrokerCount %s, ActiveBrokerCount down to %s",
            F.when(unseen, F.format_string(
                "sampled every %d s: the %s fence(s) fall between samples (0 in each)", F.col("fenced_sample_s"),
                F.when(F.col("fenced_min_s") == F.col("fenced_max_s"), F.format_string("%d s", F.col("fenced_min_s")))
                .otherwise(F.format_string("%d-%d s", F.col("fenced_min_s"), F.col("fenced_max_s")))))
            .otherwise(F.concat(F.lit("up to "), F.coalesce(F.col("fenced_max").cast("string"), F.lit("?")))),
            F.coalesce(F.col("active_min").cast("string"), F.lit("?")))),
        F.when(F.col("timed_out_heartbeats") > 0, F.format_string(
            "TimedOutBrokerHeartbeatCount +%d", F.col("timed_out_heartbeats"))),
        F.when(F.col("queue_p99_max").isNotNull(), F.format_string(
            "EventQueueTimeMs p99 up to %.0f ms", F.col("queue_p99_max"))))
    shaped = per_broker.withColumn("evidence", evidence)

    def of(rows, severity):
        return finding(rows, KIND, severity, entity=entities.broker_col(F.col("broker")),
                       first_seen=F.col("first_seen"), last_seen=F.col("last_seen"), evidence=F.col("evidence"),
                       hour=F.col("hour"))
    return (of(shaped.where(flapping), thresholds[f"{KIND}.flapping_severity"])
            .unionByName(of(shaped.where(~flapping), thresholds[f"{KIND}.severity"])))
