"""gold.zk_sessions: per broker-hour, its ZooKeeper session expiries from its log, the ZooKeeper server's and JMX.

Signals and limits: fleethealth.gold.detectors.zk_session_expired, the detector that reads it.
"""
from __future__ import annotations

from pyspark.sql import Window
from pyspark.sql import functions as F

from fleethealth.fleet import mbeans

THRESHOLDS = "zk_session_expired"  # the detector whose thresholds this fact applies



def _log_expiries(kafka_events, zk_events):
    """(cluster, broker_id, hour) -> expiry lines of the broker log, with the ZooKeeper server's expiry time, and
    its client timeouts and re-registrations (a row for each broker with any of these lines)."""
    ev = kafka_events.where(F.col("event_type").isin("zk_session_expired", "zk_session_timeout",
                                                      "zk_reregistering", "broker_registered"))
    server = (zk_events.where((F.col("event_type") == "session_expired") & F.col("session_id").isNotNull())
              .groupBy("cluster", "hour", "session_id")
              .agg(F.min("ts").alias("server_expired_ts"), F.max("duration_ms").alias("server_timeout_ms")))
    exp = (ev.where(F.col("event_type") == "zk_session_expired")
           .join(server, ["cluster", "hour", "session_id"], "left"))
    per_broker = exp.groupBy("cluster", "broker_id", "hour").agg(
        F.min("ts").alias("log_expired_ts"), F.max("ts").alias("log_expired_last_ts"),
        F.count(F.lit(1)).alias("expiry_lines"),
        F.array_sort(F.collect_set("session_id")).alias("sessions"),
        F.min("server_expired_ts").alias("server_expired_ts"),
        F.max("server_timeout_ms").alias("server_timeout_ms"))
    corroboration = ev.groupBy("cluster", "broker_id", "hour").agg(
        F.count(F.when(F.col("event_type") == "zk_session_timeout", 1)).alias("timeouts"),
        F.max(F.when(F.col("event_type") == "zk_session_timeout", F.col("duration_ms"))).alias("not_heard_ms"),
        F.count(F.when(F.col("event_type").isin("zk_reregistering", "broker_registered"), 1)).alias("registrations"))
    return corroboration.join(per_broker, ["cluster", "broker_id", "hour"], "left")


def _jmx_expiries(jmx):
    """(cluster, broker_id, hour) -> increase of the ZooKeeperExpiresPerSec Count within the hour."""
    s = jmx.where(mbeans.ZK_EXPIRES.matches()).select("cluster", "broker_id", "hour", "ts", "value")
    w = Window.partitionBy("cluster", "broker_id", "hour").orderBy("ts")
    s = s.withColumn("prev_ts", F.lag("ts").over(w)).withColumn("delta", F.col("value") - F.lag("value").over(w))
    up = F.col("delta") > 0
    return s.groupBy("cluster", "broker_id", "hour").agg(
        F.sum(F.when(up, F.col("delta")).otherwise(0)).cast("long").alias("jmx_expiries"),
        F.min(F.when(up, F.col("prev_ts"))).alias("jmx_after_ts"),
        F.min(F.when(up, F.col("ts"))).alias("jmx_seen_ts"),
        F.max(F.when(up, F.col("ts"))).alias("jmx_last_ts"))


def zk_sessions(facts, thresholds):
    """gold.zk_sessions: one row per (cluster, broker_id, hour) of a broker with any ZooKeeper-session
    signal in the hour (a zk_session_expired / zk_session_timeout / zk_reregistering / broker_registered
    line of its log, or a ZooKeeperExpiresPerSec sample).

    Columns: cluster, broker_id, host (inventory, else the broker log's host; NULL if neither), hour,
    expiries (the detector's count: distinct expired session ids of the broker log, or its expiry lines
    when none names a session, or the JMX Count increase if larger), expiry_lines, sessions (sorted
    session ids), log_expired_ts / log_expired_last_ts (first/last expiry line), server_expired_ts /
    server_timeout_ms (the ZooKeeper server's "Expiring session" for one of those ids, its timeout),
    client_timeouts / not_heard_ms ("Client session timed out, have not heard from server in Nms": count,
    largest N), registrations (zk_reregistering + broker_registered lines), jmx_expiries (increase of the
    Count within the hour; NULL = no sample), jmx_after_ts / jmx_seen_ts (the samples around the first
    increase), jmx_last_ts (the last increasing sample).

    Limits: the server time needs the ZooKeeper log and a session id in the broker's line (Kafka's own
    "Session expired." has none); the JMX Count dates an expiry only between two samples, needs two
    samples in the hour, and a restart resets it (decreases are ignored); a broker whose log and JMX
    did not arrive has no row.
    """
    key = ["cluster", "broker_id", "hour"]
    logs = _log_expiries(facts.kafka_events, facts.zk_events)
    jmx = _jmx_expiries(facts.jmx)
    df = logs.join(jmx, key, "full")
    log_expiries = F.coalesce(F.when(F.size("sessions") > 0, F.size("sessions")).otherwise(F.col("expiry_lines")),
                              F.lit(0))
    df = df.withColumn("log_host", F.lit(None).cast("string"))
    if "host" in facts.kafka_events.columns:
        hosts = facts.kafka_events.groupBy(*key).agg(F.min("host").alias("event_host"))
        df = df.join(hosts, key, "left").withColumn("log_host", F.col("event_host"))
    if facts.hosts is not None:
        inventory = (facts.hosts.where(F.col("role") == "kafka").groupBy(*key)
                     .agg(F.min("host").alias("inventory_host")))
        df = df.join(inventory, key, "left").withColumn("log_host", F.coalesce("inventory_host", "log_host"))
    ts = [F.col(c).cast("timestamp").alias(c) for c in ("log_expired_ts", "log_expired_last_ts", "server_expired_ts")]
    jmx_ts = [F.col(c).cast("timestamp").alias(c) for c in ("jmx_after_ts", "jmx_seen_ts", "jmx_last_ts")]
    return df.select(
        F.col("cluster").cast("string"), F.col("broker_id").cast("int"), F.col("log_host").cast("string").alias("host"),
        "hour",
        F.greatest(log_expiries, F.coalesce("jmx_expiries", F.lit(0))).cast("int").alias("expiries"),
        F.coalesce("expiry_lines", F.lit(0)).cast("int").alias("expiry_lines"),
        F.coalesce("sessions", F.array().cast("array<string>")).alias("sessions"),
        *ts, F.col("server_timeout_ms").cast("long"),
        F.coalesce("timeouts", F.lit(0)).cast("int").alias("client_timeouts"),
        F.col("not_heard_ms").cast("long"),
        F.coalesce("registrations", F.lit(0)).cast("int").alias("registrations"),
        F.col("jmx_expiries").cast("long"), *jmx_ts)
