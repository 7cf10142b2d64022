"""gold.zk_quorum: each inventory ZooKeeper server's quorum view per (cluster, host, hour), log or no log."""
from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from fleethealth.gold.facts.core import Facts
from fleethealth.quality import suites as quality
from fleethealth.silver import tables as silver
from fleethealth.runtime.frames import local_frame

pytestmark = pytest.mark.spark

HOUR = datetime(2026, 11, 21, 6)
ZK = ("cluster string, host string, zk_myid int, ts timestamp, event_type string, state string, "
      "duration_ms long, session_id string, peer_id long")
SCHEMA = [("cluster", "string"), ("host", "string"), ("zk_myid", "int"), ("hour", "timestamp"),
          ("log_lines", "bigint"), ("state", "string"), ("state_ts", "timestamp"), ("elections", "int"),
          ("max_election_ms", "bigint"), ("last_election_ms", "bigint"), ("follower_disconnects", "int"),
          ("transaction_timeouts", "int"), ("learner_handler_errors", "int"), ("peer_connection_errors", "int"),
          ("session_expiries", "int"), ("slow_fsyncs", "int"), ("max_fsync_ms", "bigint"),
          ("first_event_ts", "timestamp"), ("last_event_ts", "timestamp")]
T0 = datetime(2026, 11, 21, 6, 25, 0, 377_000)


def ms(n):
    return T0 + timedelta(milliseconds=n)


def t(m, s=0):
    return datetime(2026, 11, 21, 6, m, s)


def server(myid, cluster="c1"):
    return (cluster, f"{cluster}-zk-{myid}", "zookeeper", None, myid, None, "UTC", 50, ["zookeeper"])


def broker(broker_id, cluster="c1"):
    return (cluster, f"{cluster}-kafka-{broker_id}", "kafka", broker_id, None, "3.6.1", "UTC", 50, ["kafka", "jmx"])


def rec(myid, ts, event_type, state=None, duration_ms=None, session_id=None, peer_id=None, cluster="c1"):
    return (cluster, f"{cluster}-zk-{myid}", myid, ts, event_type, state, duration_ms, session_id, peer_id)


def build(spark, zk, hosts):
    facts = Facts(HOUR, silver.hosts_of(spark, hosts), None, None, None, None, None,
                  local_frame(spark, zk, ZK), None)
    return facts.table("gold.zk_quorum", {})


def rows(df):
    return sorted((r.asDict() for r in df.collect()), key=lambda r: (r["cluster"], r["host"]))


def row(myid, cluster="c1", **values):
    empty = {"log_lines": 0, "state": None, "state_ts": None, "elections": 0, "max_election_ms": None,
             "last_election_ms": None, "follower_disconnects": 0, "transaction_timeouts": 0,
             "learner_handler_errors": 0, "peer_connection_errors": 0, "session_expiries": 0, "slow_fsyncs": 0,
             "max_fsync_ms": None, "first_event_ts": None, "last_event_ts": None}
    return {"cluster": cluster, "host": f"{cluster}-zk-{myid}", "zk_myid": myid, "hour": HOUR, **empty, **values}


# zk-1 leads (3.6 texts), drops follower zk-2 at T0 (transaction timeout), zk-2 re-joins; zk-4 stays LOOKING
LEADER = [rec(1, t(1), "peer_state", "LOOKING"), rec(1, t(1, 1), "peer_state", "LEADING"),
          rec(1, t(1, 2), "election_time", "LEADING", 1204),
          rec(1, t(1, 3), "zab_state", "leading - broadcast"),
          rec(1, t(20), "session_expired", duration_ms=6000, session_id="0x1000a1b2c3d4e5f"),
          rec(1, t(21), "session_expired", duration_ms=30000, session_id="0x1ffff"),
          rec(1, T0, "follower_transaction_timeout"),
          rec(1, ms(1), "learner_handler_error"), rec(1, ms(2), "learner_handler_error"),
          rec(1, t(40), "slow_fsync", duration_ms=1500), rec(1, t(41), "slow_fsync", duration_ms=3012),
          rec(1, t(59, 59), "other")]
FOLLOWER = [rec(2, t(1, 1), "peer_state", "FOLLOWING"), rec(2, t(1, 2), "election_time", "FOLLOWING", 1230),
            rec(2, ms(3), "follower_exception"), rec(2, ms(5), "follower_disconnected", duration_ms=316796607),
            rec(2, ms(10), "peer_state", "LOOKING"), rec(2, ms(11), "zab_state", "looking"),
            rec(2, ms(12), "peer_connection_broken", peer_id=1),
            # 3.5+: the bare state and the election time at one millisecond
            rec(2, ms(114), "peer_state", "FOLLOWING"), rec(2, ms(114), "election_time", "FOLLOWING", 104),
            rec(2, ms(115), "zab_state", "following - discovery"),
            rec(2, ms(116), "other")]
STUCK = [rec(4, t(5), "peer_state", "LOOKING")] + [rec(4, t(5, s), "peer_connect_failed", peer_id=1)
                                                   for s in (1, 2, 3)]


def test_schema_and_no_zookeeper_server(spark):
    df = build(spark, LEADER, [broker(1)])
    assert df.dtypes == SCHEMA
    assert df.collect() == []


def test_leader_follower_silent_and_looking_servers(spark):
    unknown = [rec(9, t(3), "peer_state", "LEADING")]   # not in the inventory
    hosts = [server(1), server(2), server(3), server(4), broker(1)]
    df = build(spark, FOLLOWER + STUCK + unknown + LEADER, hosts)
    assert rows(df) == [
        row(1, log_lines=12, state="LEADING", state_ts=t(1, 3), elections=1, max_election_ms=1204,
            last_election_ms=1204, transaction_timeouts=1, learner_handler_errors=2, session_expiries=2,
            slow_fsyncs=2, max_fsync_ms=3012, first_event_ts=t(1), last_event_ts=t(59, 59)),
        row(2, log_lines=11, state="FOLLOWING", state_ts=ms(115), elections=2, max_election_ms=1230,
            last_election_ms=104, follower_disconnects=1, peer_connection_errors=1, first_event_ts=t(1, 1),
            last_event_ts=ms(116)),
        row(3),   # no log line in the hour: counts 0, state unknown
        row(4, log_lines=4, state="LOOKING", state_ts=t(5), peer_connection_errors=3, first_event_ts=t(5),
            last_event_ts=t(5, 3)),
    ]


def test_quality_suite(spark):
    df = build(spark, LEADER + FOLLOWER, [server(1), server(2), server(3), broker(1)])
    results = quality.validate_tables({"gold.zk_quorum": df}, hour=HOUR, data_docs_dir=None)
    quality.enforce(results)
    assert results and all(r.success for r in results)
