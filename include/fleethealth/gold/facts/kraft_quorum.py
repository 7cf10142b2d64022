"""gold.kraft_quorum: a KRaft cluster's Raft quorum (leader, epoch, elections) and fenced brokers, per hour."""
from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from fleethealth.fleet import mbeans
from fleethealth.gold.facts.kraft import (active_controllers, controller_jmx, elections, episodes, epochs,
                                          fence_signals, fences, kraft_clusters, unfence_signals)

# the lines of the Raft quorum and of fencing (silver.kafka_events; rules/kafka_events.yaml)
QUORUM_EVENTS = ("raft_state_changed", "quorum_leader_changed", "raft_fetch_timeout", "raft_election_failed",
                 "raft_check_quorum_failed", "raft_fetch_failed", "raft_fetch_offset_regressed",
                 "raft_response_error", "raft_log_truncated", "raft_shutdown", "broker_fenced", "broker_unfenced",
                 "broker_fencing_replayed", "broker_heartbeat_timed_out")
KEY = ["cluster", "hour"]


def kraft_quorum(facts, thresholds) -> DataFrame:
    """gold.kraft_quorum: one row per (cluster, hour) of each KRaft-mode cluster of the inventory
    (facts.hosts, gold.facts.kraft.kraft_clusters; ZooKeeper-mode clusters have none), from the Raft and
    fencing lines of its nodes (silver.kafka_events) and its controllers' JMX (silver.jmx_samples).

    Columns: cluster, hour,
    - log_lines: the quorum's and fencing's lines of the hour (QUORUM_EVENTS, any node); 0 = none
      arrived, and then every count is 0 and every array empty, leader and epoch NULL. A stable quorum
      logs none at INFO: 0 is "nothing seen", never "healthy" (gold.broker_health_hourly says whether
      the logs arrived);
    - epoch, leader: the last Raft epoch a node logged in the hour (a transition to Leader or Follower,
      a standby controller's "In the new epoch E, the leader is L") and its leader's node id; when the
      nodes' raft-metrics know a later epoch, or no line named one (a stable quorum logs none), the
      largest current-epoch sampled in the hour and the last current-leader sampled (-1, no leader, is
      NULL); NULL when neither tells: the leader at the end of the hour as far as gold can tell;
    - elections: epochs in which a leader emerged in the hour (kraft.elections, as
      controller_quorum_unstable counts them, graceful shutdowns' included);
    - leaders: the distinct leaders of the epochs logged in the hour, in the order first seen;
    - fences, fenced_brokers: fences of the hour (kraft.fences: a broker's signals closer than
      broker_fenced.episode_gap_s are one, a controlled shutdown's replayed fence is none, as broker_fenced
      counts them) and the brokers fenced, sorted;
    - unfences: unfences of the hour, counted the same way (the grant and its replays are one);
    - fenced_at_end: the brokers whose last fence signal of the hour is after their last unfence (still
      fenced at the end of the hour, as far as the logs tell), sorted;
    - fenced_broker_count_max: the controllers' largest FencedBrokerCount of the hour (NULL: no sample);
    - active_controller_count_max: the largest ActiveControllerCount summed over the controllers, per
      minute (1 in a healthy quorum, 2+ two active controllers; NULL: no sample);
    - controllers_listed: the inventory's hosts that run a controller (0: a cluster listed with its
      brokers only, whose fences and elections no listed host logs: fleet.inventory.NO_CONTROLLERS).

    Limits: a leader from raft-metrics is the last sample's, up to a sampling interval old; fences the active controller logged in
    the hour before and replays that arrive without it still count; a broker fenced across the hour's
    end counts in both hours.
    """
    ev, gap_s = facts.kafka_events, thresholds["broker_fenced.episode_gap_s"]
    hours = (facts.hosts.join(kraft_clusters(facts.hosts), "cluster", "left_semi").groupBy(*KEY)
             .agg(F.count_if("controller").alias("controllers_listed")))
    df = (hours.join(_quorum(ev), KEY, "left")
          .join(_fencing(ev, gap_s, thresholds["broker_fenced.shutdown_grace_s"]), KEY, "left")
          .join(controller_jmx(facts.jmx).select(*KEY, "fenced_max"), KEY, "left")
          .join(active_controllers(facts.jmx).select(*KEY, "active_max"), KEY, "left")
          .join(_raft_jmx(facts.jmx), KEY, "left"))
    # the logs' epoch and leader, unless raft-metrics saw a later epoch (or the logs none)
    logs_current = F.col("jmx_epoch").isNull() | (F.col("epoch") >= F.col("jmx_epoch"))
    leader = F.when(logs_current, F.coalesce("leader", "jmx_leader")).otherwise(F.col("jmx_leader"))

    def n(c, t="int"):
        return F.coalesce(F.col(c), F.lit(0)).cast(t).alias(c)

    def ids(c):
        return F.coalesce(F.col(c), F.array().cast("array<int>")).cast("array<int>").alias(c)

    return df.select(
        F.col("cluster").cast("string"), "hour", n("log_lines", "long"),
        F.greatest("epoch", "jmx_epoch").try_cast("int").alias("epoch"), leader.try_cast("int").alias("leader"), n("elections"), ids("leaders"), n("fences"), ids("fenced_brokers"),
        n("unfences"), ids("fenced_at_end"), F.col("fenced_max").cast("long").alias("fenced_broker_count_max"),
        F.col("active_max").cast("int").alias("active_controller_count_max"), n("controllers_listed"))


def _quorum(events) -> DataFrame:
    """(cluster, hour, log_lines, epoch, leader, elections, leaders) of the quorum's lines."""
    lines = events.where(F.col("event_type").isin(*QUORUM_EVENTS)).groupBy(*KEY).agg(
        F.count(F.lit(1)).alias("log_lines"))
    seen = epochs(events).groupBy(*KEY).agg(
        F.max_by(F.struct("epoch", "leader"), "epoch").alias("last"),
        F.array_distinct(F.transform(F.array_sort(F.collect_list(F.when(
            F.col("leader").isNotNull(), F.struct("ts", "leader")))), lambda s: s["leader"])).alias("leaders"))
    elected = elections(events).groupBy(*KEY).agg(F.count(F.lit(1)).alias("elections"))
    return (lines.join(seen, KEY, "full").join(elected, KEY, "full")
            .select(*KEY, "log_lines", F.col("last.epoch").alias("epoch"), F.col("last.leader").alias("leader"),
                    "elections", "leaders"))


def _raft_jmx(jmx) -> DataFrame:
    """(cluster, hour, jmx_epoch, jmx_leader): the largest raft-metrics current-epoch any node reported in
    the hour and the last current-leader reported (NULL when -1: no leader known to that node)."""
    epoch, leader = mbeans.bean("raft_current_epoch"), mbeans.bean("raft_current_leader")
    epochs_ = jmx.where(epoch.matches()).groupBy(*KEY).agg(F.max("value").alias("jmx_epoch"))
    leaders = (jmx.where(leader.matches() & (F.col("value") >= 0)).groupBy(*KEY)
               .agg(F.max_by("value", F.struct("ts", "value")).alias("jmx_leader")))
    return epochs_.join(leaders, KEY, "full")


def _fencing(events, gap_s: int, shutdown_grace_s: int) -> DataFrame:
    """(cluster, hour, fences, fenced_brokers, unfences, fenced_at_end) of the controllers' fencing lines."""
    fenced = fences(events, gap_s, shutdown_grace_s).groupBy(*KEY).agg(
        F.count(F.lit(1)).alias("fences"), F.array_sort(F.collect_set("broker")).alias("fenced_brokers"))
    unfenced = (episodes(unfence_signals(events), gap_s, ts="u_ts")
                .groupBy(*KEY).agg(F.count_distinct("broker", "episode").alias("unfences")))
    last = (fence_signals(events, shutdown_grace_s).select(*KEY, "broker", "ts", F.lit(True).alias("fence"))
            .unionByName(unfence_signals(events).select(*KEY, "broker", F.col("u_ts").alias("ts"),
                                                        F.lit(False).alias("fence")))
            # a fence and an unfence at one millisecond: the unfence (False sorts first) is the earlier
            .groupBy(*KEY, "broker").agg(F.max_by("fence", F.struct("ts", "fence")).alias("fenced"))
            .groupBy(*KEY).agg(F.array_sort(F.collect_list(F.when(F.col("fenced"), F.col("broker"))))
                               .alias("fenced_at_end")))
    return fenced.join(unfenced, KEY, "full").join(last, KEY, "full")
