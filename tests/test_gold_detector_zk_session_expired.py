"""zk_session_expired at both sides of min_expiries, from broker log lines, the ZooKeeper server's
expiry and the JMX ZooKeeperExpiresPerSec Count."""
from __future__ import annotations

from datetime import datetime

import pytest
from pyspark.sql import types as T

from fleethealth.gold import thresholds
from fleethealth.gold.detectors import zk_session_expired
from fleethealth.gold.facts.core import Facts
from fleethealth.silver import tables as silver
from fleethealth.runtime.frames import local_frame

pytestmark = pytest.mark.spark

HOUR = datetime(2026, 11, 21, 6)
KAFKA = T.StructType([T.StructField(n, t) for n, t in [
    ("cluster", T.StringType()), ("host", T.StringType()), ("broker_id", T.IntegerType()),
    ("ts", T.TimestampType()), ("event_type", T.StringType()), ("session_id", T.StringType()),
    ("duration_ms", T.LongType())]])
ZK = T.StructType([T.StructField(n, t) for n, t in [
    ("cluster", T.StringType()), ("host", T.StringType()), ("zk_myid", T.IntegerType()), ("ts", T.TimestampType()),
    ("event_type", T.StringType()), ("session_id", T.StringType()), ("duration_ms", T.LongType())]])
JMX = T.StructType([T.StructField(n, t) for n, t in [
    ("cluster", T.StringType()), ("host", T.StringType()), ("broker_id", T.IntegerType()), ("ts", T.TimestampType()),
    ("domain", T.StringType()), ("props", T.MapType(T.StringType(), T.StringType())),
    ("attribute", T.StringType()), ("value", T.DoubleType())]])
SID, SID2 = "0x1000a1b2c3d4e5f", "0x1000a1b2c3d4e60"


def t(m, s, ms=0):
    return datetime(2026, 11, 21, 6, m, s, ms * 1000)


def loss(sid, m, broker=8):
    """A broker's lines of one session loss at minute m (Kafka 2.x with the ZooKeeper 3.4 client)."""
    h = f"c1-kafka-{broker}"
    return [("c1", h, broker, t(m, 30), "zk_session_timeout", sid, 4002),
            ("c1", h, broker, t(m, 33, 724), "zk_session_expired", sid, None),
            ("c1", h, broker, t(m, 33, 725), "zk_session_expired", sid, None),
            ("c1", h, broker, t(m, 33, 727), "zk_session_expired", None, None),
            ("c1", h, broker, t(m, 34, 37), "broker_registered", None, None)]


def expires(broker, ts, count):
    return ("c1", f"c1-kafka-{broker}", broker, ts, "kafka.server",
            {"type": "SessionExpireListener", "name": "ZooKeeperExpiresPerSec"}, "Count", float(count))


def detect(spark, kafka=(), zk=(), jmx=(), **overrides):
    facts = Facts(HOUR, silver.hosts_of(spark, []), local_frame(spark, list(kafka), KAFKA),
                  local_frame(spark, list(jmx), JMX), None, None, None, local_frame(spark, list(zk), ZK), None)
    limits = {**thresholds.load(), **{f"zk_session_expired.{k}": v for k, v in overrides.items()}}
    return zk_session_expired.detect(facts, limits).collect()


def test_one_expiry_dated_by_the_zookeeper_server(spark):
    zk = [("c1", "c1-zk-1", 1, t(35, 32, 512), "session_expired", SID, 6000),
          ("c1", "c1-zk-1", 1, t(40, 0), "session_expired", "0x1ffff", 30000)]   # an admin client's session
    jmx = [expires(8, t(35, 1), 0), expires(8, t(40, 2), 1), expires(7, t(35, 2), 0), expires(7, t(40, 1), 0)]
    [f] = detect(spark, loss(SID, 35), zk, jmx)
    assert (f.cluster, f.kind, f.severity, f.entity) == ("c1", "zk_session_expired", "major", "broker-8")
    assert (f.first_seen, f.last_seen, f.hour) == (t(35, 32, 512), t(40, 2), HOUR)
    assert f.evidence == (
        "broker 8: 1 ZooKeeper session expiry(ies) in the hour >= min_expiries 1; "
        "ZooKeeper 'Expiring session ..., timeout of 6000ms exceeded' at 06:35:32.512Z; "
        f"broker log: 3 session-expired line(s) from 06:35:33.724Z, session(s) {SID}; "
        "client timed out 1 time(s) (not heard from server in up to 4002ms); re-registered /brokers/ids/8 1 time(s); "
        "JMX SessionExpireListener ZooKeeperExpiresPerSec Count +1 (first seen at 06:40:02.000Z)")


def test_min_expiries_both_sides(spark):
    kafka = loss(SID, 10, broker=3) + loss(SID2, 20, broker=3)
    [f] = detect(spark, kafka, min_expiries=2)
    assert (f.entity, f.first_seen) == ("broker-3", t(10, 33, 724))
    assert f.evidence.startswith("broker 3: 2 ZooKeeper session expiry(ies) in the hour >= min_expiries 2; "
                                 f"broker log: 6 session-expired line(s) from 06:10:33.724Z, session(s) {SID},{SID2}")
    assert detect(spark, kafka, min_expiries=3) == []


def test_a_client_timeout_alone_is_not_an_expiry(spark):
    assert detect(spark, [r for r in loss(SID, 35) if r[4] == "zk_session_timeout"]) == []


def test_jmx_count_increase_alone_dates_the_expiry_to_the_sample_before(spark):
    jmx = [expires(8, t(30, 1), 2), expires(8, t(35, 1), 2), expires(8, t(40, 1), 3), expires(8, t(45, 1), 3)]
    [f] = detect(spark, jmx=jmx)
    assert (f.entity, f.first_seen, f.last_seen) == ("broker-8", t(35, 1), t(40, 1))
    assert f.evidence == ("broker 8: 1 ZooKeeper session expiry(ies) in the hour >= min_expiries 1; "
                          "JMX SessionExpireListener ZooKeeperExpiresPerSec Count +1 (first seen at 06:40:01.000Z)")
    assert detect(spark, jmx=jmx, min_expiries=2) == []


def test_a_restart_resetting_the_count_is_not_an_expiry(spark):
    assert detect(spark, jmx=[expires(8, t(30, 1), 4), expires(8, t(35, 1), 0), expires(8, t(40, 1), 0)]) == []
