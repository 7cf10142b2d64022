"""gold.zk_sessions: ZooKeeper-session signals per (cluster, broker_id, hour): broker log, ZooKeeper server, JMX."""
from __future__ import annotations

from datetime import datetime

import pytest
from pyspark.sql import types as T

from fleethealth.fleet import mbeans
from fleethealth.gold import thresholds
from fleethealth.gold.facts.core import Facts
from fleethealth.quality import suites as quality
from fleethealth.silver import tables as silver
from fleethealth.runtime.frames import local_frame

pytestmark = pytest.mark.spark

HOUR = datetime(2026, 11, 21, 6)
KAFKA = ("cluster string, host string, broker_id int, ts timestamp, event_type string, session_id string, "
         "duration_ms long")
ZK = "cluster string, host string, zk_myid int, ts timestamp, event_type string, session_id string, duration_ms long"
JMX = T.StructType([T.StructField(n, t) for n, t in [
    ("cluster", T.StringType()), ("host", T.StringType()), ("broker_id", T.IntegerType()), ("ts", T.TimestampType()),
    ("domain", T.StringType()), ("props", T.MapType(T.StringType(), T.StringType())),
    ("attribute", T.StringType()), ("value", T.DoubleType())]])
SCHEMA = [("cluster", "string"), ("broker_id", "int"), ("host", "string"), ("hour", "timestamp"),
          ("expiries", "int"), ("expiry_lines", "int"), ("sessions", "array<string>"),
          ("log_expired_ts", "timestamp"), ("log_expired_last_ts", "timestamp"), ("server_expired_ts", "timestamp"),
          ("server_timeout_ms", "bigint"), ("client_timeouts", "int"), ("not_heard_ms", "bigint"),
          ("registrations", "int"), ("jmx_expiries", "bigint"), ("jmx_after_ts", "timestamp"),
          ("jmx_seen_ts", "timestamp"), ("jmx_last_ts", "timestamp")]
SID, SID2 = "0x1000a1b2c3d4e5f", "0x1000a1b2c3d4e60"


def t(m, s=0, ms=0):
    return datetime(2026, 11, 21, 6, m, s, ms * 1000)


def host(broker, cluster="c1"):
    return (cluster, f"{cluster}-kafka-{broker}", "kafka", broker, None, "2.8.2", "UTC", 50, ["kafka", "jmx"])


def line(broker, ts, event_type, sid=None, duration_ms=None, cluster="c1"):
    return (cluster, f"{cluster}-kafka-{broker}", broker, ts, event_type, sid, duration_ms)


def loss(sid, m, broker=8):
    """A broker's lines of one session loss at minute m (Kafka 2.x with the ZooKeeper 3.4 client)."""
    return [line(broker, t(m, 30), "zk_session_timeout", sid, 4002),
            line(broker, t(m, 33, 724), "zk_session_expired", sid),
            line(broker, t(m, 33, 725), "zk_session_expired", sid),
            line(broker, t(m, 33, 727), "zk_session_expired"),
            line(broker, t(m, 34, 37), "broker_registered")]


def expires(broker, ts, count, cluster="c1"):
    m = mbeans.ZK_EXPIRES
    return (cluster, f"{cluster}-kafka-{broker}", broker, ts, m.domain, dict(m.keys), m.attribute, float(count))


def build(spark, kafka=(), zk=(), jmx=(), hosts=()):
    facts = Facts(HOUR, silver.hosts_of(spark, list(hosts)),
                  local_frame(spark, list(kafka), KAFKA), local_frame(spark, list(jmx), JMX), None, None, None,
                  local_frame(spark, list(zk), ZK), None)
    return facts.table("gold.zk_sessions", thresholds.load())


def rows(df):
    return sorted((r.asDict() for r in df.collect()), key=lambda r: (r["cluster"], r["broker_id"]))


def row(cluster, broker_id, host, **values):
    empty = {"expiries": 0, "expiry_lines": 0, "sessions": [], "log_expired_ts": None, "log_expired_last_ts": None,
             "server_expired_ts": None, "server_timeout_ms": None, "client_timeouts": 0, "not_heard_ms": None,
             "registrations": 0, "jmx_expiries": None, "jmx_after_ts": None, "jmx_seen_ts": None, "jmx_last_ts": None}
    return {"cluster": cluster, "broker_id": broker_id, "host": host, "hour": HOUR, **empty, **values}


def test_schema_and_no_signal(spark):
    df = build(spark, kafka=[line(8, t(5), "other")], jmx=[], hosts=[host(8)])
    assert df.dtypes == SCHEMA
    assert df.collect() == []


def test_brokers_log_server_and_jmx(spark):
    kafka = (loss(SID, 10, broker=8) + loss(SID2, 40, broker=8)
             + [line(5, t(20), "zk_session_timeout", duration_ms=6001),     # a timeout, reconnected in time
                line(5, t(20, 5), "zk_session_timeout", duration_ms=6500),
                # Kafka 1.1+ "[ZooKeeperClient] Session expired." names no session: lines count
                line(9, t(30), "zk_session_expired"), line(9, t(31), "zk_session_expired"),
                line(9, t(31, 1), "zk_reregistering"),
                line(8, t(50), "other"),
                line(8, t(12), "zk_session_expired", SID, cluster="c2")])
    zk = [("c1", "c1-zk-1", 1, t(10, 32, 512), "session_expired", SID, 6000),
          ("c1", "c1-zk-2", 2, t(10, 32, 513), "session_expired", SID, 6000),   # the same id, a later line
          ("c1", "c1-zk-1", 1, t(45), "session_expired", "0x1ffff", 30000)]     # an admin client's session
    jmx = [expires(8, t(10, 1), 3), expires(8, t(15, 1), 4), expires(8, t(40, 1), 4), expires(8, t(45, 1), 5),
           expires(7, t(10, 2), 0), expires(7, t(40, 2), 0),                     # sampled, no expiry
           expires(6, t(5), 7), expires(6, t(20), 0), expires(6, t(25), 2)]      # restart resets, then +2
    df = build(spark, kafka, zk, jmx, hosts=[host(5), host(6), host(7), host(8)])
    assert rows(df) == [
        row("c1", 5, "c1-kafka-5", client_timeouts=2, not_heard_ms=6500),
        row("c1", 6, "c1-kafka-6", expiries=2, jmx_expiries=2, jmx_after_ts=t(20), jmx_seen_ts=t(25),
            jmx_last_ts=t(25)),
        row("c1", 7, "c1-kafka-7", jmx_expiries=0),
        row("c1", 8, "c1-kafka-8", expiries=2, expiry_lines=6, sessions=[SID, SID2], log_expired_ts=t(10, 33, 724),
            log_expired_last_ts=t(40, 33, 727), server_expired_ts=t(10, 32, 512), server_timeout_ms=6000,
            client_timeouts=2, not_heard_ms=4002, registrations=2, jmx_expiries=2, jmx_after_ts=t(10, 1),
            jmx_seen_ts=t(15, 1), jmx_last_ts=t(45, 1)),
        # not in the inventory: the host of its log
        row("c1", 9, "c1-kafka-9", expiries=2, expiry_lines=2, log_expired_ts=t(30), log_expired_last_ts=t(31),
            registrations=1),
        row("c2", 8, "c2-kafka-8", expiries=1, expiry_lines=1, sessions=[SID], log_expired_ts=t(12),
            log_expired_last_ts=t(12)),
    ]


def test_jmx_increase_larger_than_the_log(spark):
    jmx = [expires(3, t(0, 30), 0), expires(3, t(30, 30), 3)]
    df = build(spark, [line(3, t(29), "zk_session_expired", SID)], jmx=jmx)   # no inventory rows at all
    assert rows(df) == [
        row("c1", 3, "c1-kafka-3", expiries=3, expiry_lines=1, sessions=[SID], log_expired_ts=t(29),
            log_expired_last_ts=t(29), jmx_expiries=3, jmx_after_ts=t(0, 30), jmx_seen_ts=t(30, 30),
            jmx_last_ts=t(30, 30))]


def test_quality_suite(spark):
    kafka = loss(SID, 10) + [line(5, t(20), "zk_session_timeout", duration_ms=6001)]
    jmx = [expires(7, t(10, 2), 0), expires(7, t(40, 2), 1)]
    df = build(spark, kafka, jmx=jmx, hosts=[host(5), host(7), host(8)])
    results = quality.validate_tables({"gold.zk_sessions": df}, hour=HOUR, data_docs_dir=None)
    quality.enforce(results)
    assert results and all(r.success for r in results)
