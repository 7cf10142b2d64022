"""KRaft roles of the inventory's hosts as gold reads them, and the quorum's and the fencing's signals:
shared by gold.kraft_quorum and the detectors of KRaft clusters (one place for each fact).

A KRaft node id names one process of its cluster: a broker (combined nodes too) or a dedicated
controller; silver's `broker_id` of a controller's rows is its node id. Which it is, the cluster's mode
and the process's name are columns of the hosts frame (silver.tables.HOSTS_NAMED_FIELDS), read here;
a detector whose entity is a node id leaves its naming to the detectors' runner
(gold.detectors.run, `node=` of gold.detectors.base.finding).
"""
from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from fleethealth.fleet import mbeans
from fleethealth.fleet.kafka import KRAFT_BROKER_METRICS, KRAFT_SIGNS, ZOOKEEPER_SIGNS

KRAFT = "kraft"
SHUTDOWN_STATES = ("PENDING_CONTROLLED_SHUTDOWN", "SHUTTING_DOWN")


def roles(hosts: DataFrame) -> DataFrame:
    """(cluster, broker_id, role, kraft, runs_controller, process) of every Kafka host (no hour): `kraft`
    when its cluster is in KRaft mode, `process` its entity name: the hosts frame's columns."""
    return (hosts.where(F.col("role").isin("kafka", "controller") & F.col("broker_id").isNotNull())
            .select("cluster", "broker_id", "role", (F.col("mode") == KRAFT).alias("kraft"),
                    F.col("controller").alias("runs_controller"), F.col("entity").alias("process"))
            .distinct())


def modes_shown(kafka_events: DataFrame, jmx: DataFrame | None = None) -> DataFrame:
    """(cluster, mode) of the clusters whose log lines (silver.kafka_events, every event type: the
    snapshot line is `other`; fleet.kafka.KRAFT_SIGNS, ZOOKEEPER_SIGNS) or JMX (silver.jmx_samples) show
    their mode: kraft when any shows KRaft, else zookeeper when any shows ZooKeeper; a cluster showing
    neither has no row."""
    text = F.concat_ws("\n", F.col("message"), F.col("detail"))
    signs = [kafka_events.select("cluster", F.when(text.rlike(KRAFT_SIGNS), 2)
                                 .when(text.rlike(ZOOKEEPER_SIGNS), 1).alias("sign"))]
    if jmx is not None:
        signs.append(jmx.where((F.col("domain") == "kafka.server") & (F.col("props")["type"] == KRAFT_BROKER_METRICS))
                     .select("cluster", F.lit(2).alias("sign")))
    out = signs[0] if len(signs) == 1 else signs[0].unionByName(signs[1])
    return (out.where(F.col("sign").isNotNull()).groupBy("cluster").agg(F.max("sign").alias("sign"))
            .select("cluster", F.when(F.col("sign") == 2, F.lit(KRAFT)).otherwise(F.lit("zookeeper")).alias("mode")))


def node_names(hosts: DataFrame) -> DataFrame:
    """(cluster, broker_id, process): the entity name of each Kafka node id of the hosts frame."""
    return roles(hosts).select("cluster", "broker_id", "process")


def kraft_clusters(hosts: DataFrame | None) -> DataFrame | None:
    """(cluster) of the clusters in KRaft mode (None without hosts)."""
    if hosts is None:
        return None
    return roles(hosts).where("kraft").select("cluster").distinct()


def is_controller_host(hosts: DataFrame | None) -> DataFrame | None:
    """(cluster, broker_id) of the hosts that run a KRaft controller (None without hosts)."""
    if hosts is None:
        return None
    return roles(hosts).where("runs_controller").select("cluster", "broker_id").distinct()


def seconds(s) -> F.Column:
    return F.make_dt_interval(secs=F.lit(float(s)))


# --- the Raft quorum (controller_quorum_unstable, gold.kraft_quorum) --------------------------------

def epochs(events: DataFrame) -> DataFrame:
    """(cluster, hour, epoch, ts, leader_logged, leader): each Raft epoch a node logged in the hour, first
    seen at ts; its leader the node that logged the transition to Leader, else the one the others name
    (NULL when none does)."""
    ev = events.withColumn("node_id", F.coalesce("node", "controller", "broker_id"))
    to_leader = (F.col("event_type") == "raft_state_changed") & (F.col("to_state") == "Leader")
    sighting = F.col("event_type").isin("raft_state_changed", "quorum_leader_changed")
    return (ev.where(sighting & F.col("controller_epoch").isNotNull())
            .groupBy("cluster", "hour", F.col("controller_epoch").alias("epoch"))
            .agg(F.min("ts").alias("ts"), F.max(to_leader).alias("leader_logged"),
                 F.coalesce(F.max(F.when(to_leader, F.col("node_id"))), F.max("leader")).alias("leader")))


def elections(events: DataFrame) -> DataFrame:
    """(cluster, hour, epoch, leader, ts): one row per Raft epoch in which a leader emerged in the hour,
    first seen at ts. An epoch counts when its leader logged the transition to Leader, or when it is newer
    than an epoch seen before it in the hour: a node (re)starting into the current epoch elects nobody."""
    earlier = Window.partitionBy("cluster", "hour").orderBy("ts", "epoch").rowsBetween(Window.unboundedPreceding, -1)
    newer = F.col("epoch") > F.max("epoch").over(earlier)
    return (epochs(events).withColumn("elected", F.col("leader_logged") | F.coalesce(newer, F.lit(False)))
            .where(F.col("elected") & F.col("leader").isNotNull())
            .select("cluster", "hour", "epoch", "leader", "ts"))


def active_controllers(jmx: DataFrame) -> DataFrame:
    """(cluster, hour, active_not_one, active_min, active_max): ActiveControllerCount summed over the
    controllers, per minute (each controller's last sample of it): 1 when exactly one is active."""
    active = mbeans.bean("active_controller_count")
    minute = F.date_trunc("minute", "ts")
    return (jmx.where(active.matches())
            .groupBy("cluster", "hour", "broker_id", minute.alias("minute"))
            .agg(F.max_by("value", "ts").alias("v"))
            .groupBy("cluster", "hour", "minute").agg(F.sum("v").alias("active"))
            .groupBy("cluster", "hour")
            .agg(F.count(F.when(F.col("active") != 1, 1)).alias("active_not_one"),
                 F.min("active").cast("int").alias("active_min"),
                 F.max("active").cast("int").alias("active_max")))


# --- fencing (broker_fenced, gold.kraft_quorum) -------------------------------------------------------

def fence_signals(events: DataFrame, shutdown_grace_s: int) -> DataFrame:
    """(cluster, broker, hour, ts, controller, active): every sign that a controller fenced a broker;
    `active` for the active controller's own decision. A replayed fence within shutdown_grace_s after
    the broker's controlled shutdown began is that shutdown's, left out."""
    active = (events.where(F.col("event_type") == "broker_fenced")
              .select("cluster", "broker", "hour", "ts", F.coalesce("controller", "broker_id").alias("controller"),
                      F.lit(True).alias("active")))
    replayed = (events.where((F.col("event_type") == "broker_fencing_replayed") & (F.col("to_state") == "fenced"))
                .select("cluster", "broker", "hour", "ts", F.coalesce("controller", "broker_id").alias("controller"),
                        F.lit(False).alias("active")))
    shutdown = (events.where(((F.col("event_type") == "partitions_changed")
                              & F.col("reason").startswith("enterControlledShutdown"))
                             | ((F.col("event_type") == "broker_state_changed")
                                & F.col("to_state").isin(*SHUTDOWN_STATES)))
                .select("cluster", F.coalesce("broker", "broker_id").alias("broker"), "hour",
                        F.col("ts").alias("shutdown_ts")))
    r, s = replayed.alias("r"), shutdown.alias("s")
    of_shutdown = ((F.col("r.cluster") == F.col("s.cluster")) & (F.col("r.broker") == F.col("s.broker"))
                   & (F.col("r.hour") == F.col("s.hour")) & (F.col("s.shutdown_ts") <= F.col("r.ts"))
                   & (F.col("s.shutdown_ts") >= F.col("r.ts") - seconds(shutdown_grace_s)))
    return active.unionByName(r.join(s, of_shutdown, "left_anti")).where(F.col("broker").isNotNull())


def unfence_signals(events: DataFrame) -> DataFrame:
    """(cluster, broker, hour, u_ts): every sign that a controller unfenced a broker (the active
    controller's grant, every controller's replay)."""
    return (events.where((F.col("event_type") == "broker_unfenced")
                         | ((F.col("event_type") == "broker_fencing_replayed") & (F.col("to_state") == "unfenced")))
            .select("cluster", "broker", "hour", F.col("ts").alias("u_ts")))


def episodes(signals: DataFrame, gap_s: int, ts: str = "ts") -> DataFrame:
    """`signals` (cluster, broker, hour, `ts`, ...) with `episode`: the number of its broker's episode in
    the hour, signals closer than gap_s being one (the active controller's line and the standbys' replays)."""
    w = Window.partitionBy("cluster", "broker", "hour").orderBy(ts)
    gap = F.unix_millis(ts) - F.unix_millis(F.lag(ts).over(w))
    return (signals.withColumn("new", F.when(gap.isNull() | (gap > gap_s * 1000), 1).otherwise(0))
            .withColumn("episode", F.sum("new").over(w.rowsBetween(Window.unboundedPreceding, 0))).drop("new"))


def fences(events: DataFrame, gap_s: int, shutdown_grace_s: int) -> DataFrame:
    """One row per fence: (cluster, broker, hour, fence, fence_ts, fence_end_ts, controller, by_active)."""
    sig = episodes(fence_signals(events, shutdown_grace_s), gap_s).withColumnRenamed("episode", "fence")
    return (sig.groupBy("cluster", "broker", "hour", "fence")
            .agg(F.min("ts").alias("fence_ts"), F.max("ts").alias("fence_end_ts"),
                 # the active controller's line names who fenced; a standby's replay names who saw it
                 F.min_by("controller", F.struct(~F.col("active"), "ts")).alias("controller"),
                 F.max("active").alias("by_active")))


def controller_jmx(jmx: DataFrame) -> DataFrame:
    """(cluster, hour, fenced_max, active_min, timed_out_heartbeats, queue_p99_max, fenced_sample_s) of the
    controllers' JMX; fenced_sample_s: the seconds between two FencedBrokerCount samples of the controller
    sampled most often (null from one sample), what a fence must outlast to be seen in the gauge."""
    fenced, active = mbeans.bean("fenced_broker_count"), mbeans.bean("active_broker_count")
    timed_out, queue = mbeans.bean("timed_out_heartbeats"), mbeans.bean("controller_event_queue_time")
    w = Window.partitionBy("cluster", "broker_id", "hour").orderBy("ts")
    rise = F.greatest(F.col("value") - F.lag("value").over(w), F.lit(0.0))   # a counter; a restart resets it
    counts = (jmx.where(timed_out.matches()).withColumn("rise", rise)
              .groupBy("cluster", "hour").agg(F.sum("rise").cast("long").alias("timed_out_heartbeats")))
    gauges = (jmx.where(fenced.matches() | active.matches() | queue.matches())
              .groupBy("cluster", "hour")
              .agg(F.max(F.when(fenced.matches(), F.col("value"))).try_cast("long").alias("fenced_max"),
                   F.min(F.when(active.matches(), F.col("value"))).try_cast("long").alias("active_min"),
                   F.max(F.when(queue.matches(), F.col("value"))).alias("queue_p99_max")))
    span = F.unix_seconds(F.max("ts")) - F.unix_seconds(F.min("ts"))
    spacing = (jmx.where(fenced.matches()).groupBy("cluster", "broker_id", "hour")
               .agg(F.try_divide(span, F.count(F.lit(1)) - 1).alias("spacing"))
               .groupBy("cluster", "hour").agg(F.round(F.min("spacing")).cast("long").alias("fenced_sample_s")))
    return gauges.join(spacing, ["cluster", "hour"], "left").join(counts, ["cluster", "hour"], "full")
