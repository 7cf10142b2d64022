"""controller_quorum_unstable (KRaft): the controllers' Raft quorum keeps electing leaders, or a voter
cannot fetch from its leader.

The KRaft form of a ZooKeeper follower reset (post-mortem 2; Kafka's
raft/src/main/java/org/apache/kafka/raft/QuorumState.java, KafkaRaftClient.java, LeaderState.java;
check-quorum KAFKA-15489, Pre-Vote KIP-996). Signals (silver.kafka_events of the cluster's nodes,
server.log `[RaftManager id=N]` and controller.log):
- leader elections: a Raft epoch in which a leader emerged, each counted once however many nodes log
  it: `raft_state_changed` to Leader (the new leader) or to Follower with a leader (voters and the
  brokers observing), a standby controller's `quorum_leader_changed` ("In the new epoch E, the leader is L");
- a voter that lost its leader or cannot win: `raft_fetch_timeout` ("Become candidate due to fetch
  timeout" 3.x, "Transitioning to Prospective state due to fetch timeout" 4.0+), `raft_election_failed`
  (election timed out, insufficient votes), and the leader's `raft_check_quorum_failed` ("Did not receive
  fetch request from the majority of the voters", 3.7+: it resigns).
The evidence adds the controllers the brokers' channels recorded ("Recorded new KRaft controller, from now on
will use node N", `controller_recorded`): what a cluster listed without its controllers shows of a failover.
A graceful shutdown is no instability: elections and voter timeouts within
`controller_quorum_unstable.shutdown_grace_s` after a node's "Beginning graceful shutdown" (`raft_shutdown`)
are left out (they are counted in the evidence). An incident when, within
`controller_quorum_unstable.window_minutes`, the cluster has at least `controller_quorum_unstable.min_elections`
elections or `controller_quorum_unstable.min_voter_timeouts` voter timeouts; first_seen is the first signal
of the first such window. The evidence names each epoch's leader, the voters that timed out, Raft fetches the
leader refused and logs truncated, and the JMX of the hour: raft-metrics current-epoch rise, current-leader
values, current-state, election-latency, ActiveControllerCount summed over the controllers (1 in a healthy
quorum: only the controllers register it) and NewActiveControllersCount (3.6+).
Entity: `quorum` (the cluster's). Clusters in ZooKeeper mode are left out.
"""
from __future__ import annotations

from pyspark.sql import functions as F

from fleethealth.fleet import entities, mbeans
from fleethealth.gold.detectors.base import finding
from fleethealth.gold.facts.kraft import active_controllers, elections

KIND = "controller_quorum_unstable"
LOOKBACK = True   # episodes straddling an hour end: see fleethealth.gold.detectors
MODES = ("kraft",)   # a ZooKeeper-mode cluster has no Raft quorum
# the cluster's gold.kraft_quorum rows of its hours (the table counts elections as this detector does; it
# windows them with the voter timeouts itself)
REPORT = {"chart": "chart-quorum", "table": "kraft_quorum",
          "columns": ["hour", "epoch", "leader", "elections", "leaders", "active_controller_count_max"]}
HMS = "HH:mm:ss'Z'"
TIMEOUTS = ("raft_fetch_timeout", "raft_election_failed", "raft_check_quorum_failed")


def signals(events, grace_s: int):
    """(cluster, hour, ts, signal, node, epoch, leader, graceful) of every election and voter timeout;
    `graceful` within grace_s after a node's graceful shutdown."""
    elected = elections(events).select("cluster", "hour", "ts", F.lit("election").alias("signal"),
                                       F.col("leader").alias("node"), "epoch", "leader")
    timeouts = (events.where(F.col("event_type").isin(*TIMEOUTS))
                .select("cluster", "hour", "ts", F.col("event_type").alias("signal"),
                        F.coalesce("node", "broker_id").alias("node"), F.lit(None).cast("int").alias("epoch"),
                        F.lit(None).cast("int").alias("leader")))
    sig = elected.unionByName(timeouts)
    shut = events.where(F.col("event_type") == "raft_shutdown").select(
        "cluster", "hour", F.col("ts").alias("shut_ts"), F.coalesce("node", "broker_id").alias("shut_node"))
    s, d = sig.alias("s"), shut.alias("d")
    after = ((F.col("s.cluster") == F.col("d.cluster")) & (F.col("s.hour") == F.col("d.hour"))
             & (F.col("s.ts") >= F.col("d.shut_ts"))
             & (F.col("s.ts") <= F.col("d.shut_ts") + F.make_dt_interval(secs=F.lit(float(grace_s)))))
    return (s.join(d, after, "left")
            .groupBy(*[F.col(f"s.{c}") for c in sig.columns])
            .agg(F.max(F.col("d.shut_ts").isNotNull()).alias("graceful"),
                 F.min_by("d.shut_node", "d.shut_ts").alias("shut_node")))


def quorum_jmx(jmx):
    """(cluster, hour, ...) of the hour's raft-metrics and controller beans."""
    epoch, leader, state = mbeans.bean("raft_current_epoch"), mbeans.bean("raft_current_leader"), \
        mbeans.bean("raft_current_state")
    lat_avg, lat_max = mbeans.bean("raft_election_latency_avg"), mbeans.bean("raft_election_latency_max")
    new_active = mbeans.bean("new_active_controllers")
    per_node = (jmx.where(epoch.matches() | leader.matches() | state.matches() | lat_avg.matches()
                          | lat_max.matches() | new_active.matches())
                .groupBy("cluster", "hour", "broker_id")
                .agg((F.max(F.when(epoch.matches(), F.col("value")))
                      - F.min(F.when(epoch.matches(), F.col("value")))).alias("epoch_rise"),
                     F.collect_set(F.when(leader.matches() & (F.col("value") >= 0), F.col("value").try_cast("int")))
                     .alias("leaders"),
                     F.collect_set(F.when(state.matches(), F.col("value_text"))).alias("states"),
                     F.max(F.when(lat_avg.matches(), F.col("value"))).alias("latency_avg"),
                     F.max(F.when(lat_max.matches(), F.col("value"))).alias("latency_max"),
                     (F.max(F.when(new_active.matches(), F.col("value")))
                      - F.min(F.when(new_active.matches(), F.col("value")))).alias("new_active")))
    nodes = per_node.groupBy("cluster", "hour").agg(
        F.max("epoch_rise").cast("long").alias("epoch_rise"),
        F.array_sort(F.array_distinct(F.flatten(F.collect_list("leaders")))).alias("leaders"),
        F.array_sort(F.array_distinct(F.flatten(F.collect_list("states")))).alias("states"),
        F.max("latency_avg").alias("latency_avg"), F.max("latency_max").alias("latency_max"),
        F.sum("new_active").cast("long").alias("new_active"))
    return nodes.join(active_controllers(jmx), ["cluster", "hour"], "full")


def detect(facts, thresholds):
    window_min = thresholds[f"{KIND}.window_minutes"]
    min_elections = thresholds[f"{KIND}.min_elections"]
    min_timeouts = thresholds[f"{KIND}.min_voter_timeouts"]
    ev = facts.kafka_events
    sig = signals(ev, thresholds[f"{KIND}.shutdown_grace_s"])
    counted = sig.where(~F.col("graceful"))
    a, b = counted.alias("a"), counted.alias("b")
    in_window = ((F.col("a.cluster") == F.col("b.cluster")) & (F.col("a.hour") == F.col("b.hour"))
                 & (F.col("b.ts") >= F.col("a.ts"))
                 & (F.col("b.ts") <= F.col("a.ts") + F.make_dt_interval(mins=F.lit(window_min))))
    windows = (a.join(b, in_window)
               .groupBy("a.cluster", "a.hour", "a.ts")
               .agg(F.count_distinct(F.when(F.col("b.signal") == "election", F.col("b.epoch"))).alias("elections"),
                    F.count(F.when(F.col("b.signal") != "election", 1)).alias("timeouts"))
               .where((F.col("elections") >= min_elections) | (F.col("timeouts") >= min_timeouts)))
    first = windows.groupBy("cluster", "hour").agg(
        F.min("ts").alias("first_seen"), F.max("elections").alias("most_elections"),
        F.max("timeouts").alias("most_timeouts"))
    epoch_fmt = F.format_string("%d (leader %s at %s)", F.col("epoch"),
                                F.coalesce(F.col("leader").cast("string"), F.lit("?")), F.date_format("ts", HMS))
    timeout_fmt = F.format_string("%s %s", F.regexp_replace("signal", "^raft_", ""),
                                  F.coalesce(F.col("node").cast("string"), F.lit("?")))
    grace_fmt = F.format_string("%s after node %s's graceful shutdown", F.date_format("ts", HMS),
                                F.coalesce(F.col("shut_node").cast("string"), F.lit("?")))
    is_election = F.col("signal") == "election"
    agg = (sig.join(first, ["cluster", "hour"])
           .where(F.col("ts") >= F.col("first_seen"))
           .groupBy("cluster", "hour", "first_seen", "most_elections", "most_timeouts")
           .agg(F.max(F.when(~F.col("graceful"), F.col("ts"))).alias("last_seen"),
                F.array_join(F.array_sort(F.collect_list(F.when(is_election & ~F.col("graceful"), epoch_fmt))), ", ")
                .alias("epochs"),
                F.count(F.when(~is_election & ~F.col("graceful"), 1)).alias("timeouts"),
                F.array_join(F.array_sort(F.collect_set(F.when(~is_election & ~F.col("graceful"), timeout_fmt))), ", ")
                .alias("timeout_list"),
                F.array_join(F.array_sort(F.collect_list(F.when(F.col("graceful"), grace_fmt))), ", ")
                .alias("graceful_list")))
    refused = (ev.where((F.col("event_type") == "raft_fetch_failed") | (F.col("event_type") == "raft_log_truncated"))
               .groupBy("cluster", "hour")
               .agg(F.count(F.when(F.col("event_type") == "raft_fetch_failed", 1)).alias("fetch_refused"),
                    F.count(F.when(F.col("event_type") == "raft_log_truncated", 1)).alias("truncated")))
    followed = (ev.where((F.col("event_type") == "controller_recorded") & F.col("broker").isNotNull())
                .groupBy("cluster", "hour", "controller")
                .agg(F.min("ts").alias("ts"), F.count_distinct("broker").alias("n"))
                .groupBy("cluster", "hour")
                .agg(F.array_join(F.array_sort(F.collect_list(F.format_string(
                    "%s node %d (%d broker(s))", F.date_format("ts", HMS), F.col("controller"), F.col("n")))), ", ")
                     .alias("followed")))
    df = (agg.join(refused, ["cluster", "hour"], "left").join(followed, ["cluster", "hour"], "left")
          .join(quorum_jmx(facts.jmx), ["cluster", "hour"], "left"))
    evidence = F.concat_ws("; ",
        F.format_string("%d leader election(s) within %d minutes%s%s", F.col("most_elections"), F.lit(window_min),
                        F.when(F.col("most_elections") >= min_elections,
                               F.format_string(" (>= min_elections %d)", F.lit(min_elections))).otherwise(F.lit("")),
                        F.when(F.col("epochs") != "", F.concat(F.lit(": epochs "), F.col("epochs"))).otherwise(F.lit(""))),
        F.when(F.col("timeouts") > 0, F.format_string(
            "%d voter timeout(s) (%s)%s", F.col("timeouts"), F.col("timeout_list"),
            F.when(F.col("most_timeouts") >= min_timeouts, F.format_string(
                ", %d within %d minutes (>= min_voter_timeouts %d)", F.col("most_timeouts"), F.lit(window_min),
                F.lit(min_timeouts))).otherwise(F.lit("")))),
        F.when(F.col("graceful_list") != "", F.concat(F.lit("not counted (graceful shutdown): "), F.col("graceful_list"))),
        F.when(F.col("fetch_refused") > 0, F.format_string("%d Raft fetch(es) refused by the leader",
                                                           F.col("fetch_refused"))),
        F.when(F.col("truncated") > 0, F.format_string("%d voter log truncation(s) after a leader change",
                                                       F.col("truncated"))),
        F.when(F.col("followed").isNotNull(),
               F.concat(F.lit("brokers recorded a new controller: "), F.col("followed"))),
        F.when(F.col("epoch_rise") > 0, F.format_string("JMX raft-metrics current-epoch +%d", F.col("epoch_rise"))),
        F.when(F.size("leaders") > 1, F.format_string("current-leader took %s", F.array_join(F.col("leaders").cast("array<string>"), ", "))),
        F.when(F.col("latency_max") > 0, F.format_string("election-latency-max %.0f ms (avg %.0f ms)",
                                                         F.col("latency_max"), F.coalesce("latency_avg", F.lit(0.0)))),
        F.when(F.col("active_not_one") > 0, F.format_string(
            "ActiveControllerCount summed over the controllers was not 1 in %d minute(s) (%d..%d)",
            F.col("active_not_one"), F.col("active_min"), F.col("active_max"))),
        F.when(F.col("new_active") > 0, F.format_string("NewActiveControllersCount +%d", F.col("new_active"))),
        F.when(F.size("states") > 0, F.format_string("current-state seen: %s", F.array_join(F.col("states"), ", "))))
    return finding(df, KIND, thresholds[f"{KIND}.severity"], entity=F.lit(entities.QUORUM),
                   first_seen=F.col("first_seen"), last_seen=F.coalesce("last_seen", "first_seen"),
                   evidence=evidence, hour=F.col("hour"))
