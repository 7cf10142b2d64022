"""zk_follower_disconnect: the follower's lines anchor it, the leader's transaction timeout and the
re-election are linked at both sides of link_window_ms."""
from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from pyspark.sql import types as T

from fleethealth.gold import thresholds
from fleethealth.gold.detectors import zk_follower_disconnect
from fleethealth.gold.facts.core import Facts
from fleethealth.silver import tables as silver
from fleethealth.runtime.frames import local_frame

pytestmark = pytest.mark.spark

HOUR = datetime(2026, 11, 21, 6)
ZK = T.StructType([T.StructField(n, t) for n, t in [
    ("cluster", T.StringType()), ("host", T.StringType()), ("zk_myid", T.IntegerType()), ("ts", T.TimestampType()),
    ("thread", T.StringType()), ("event_type", T.StringType()), ("message", T.StringType()),
    ("detail", T.StringType()), ("duration_ms", T.LongType()), ("state", T.StringType())]])
T0 = datetime(2026, 11, 21, 6, 25, 0, 377_000)   # the leader closes the follower
RESET = "java.net.SocketException: Connection reset\n\tat java.net.SocketInputStream.read(SocketInputStream.java:210)"


def ms(n):
    return T0 + timedelta(milliseconds=n)


def rec(myid, ts, event_type, message, detail=None, duration_ms=None, state=None, zk_myid=True):
    return ("c1", f"c1-zk-{myid}", myid if zk_myid else None, ts, f"QuorumPeer[myid={myid}](plain=0.0.0.0:2181)",
            event_type, message, detail, duration_ms, state)


def reset(leader_gap_ms=0, election_after_ms=114, zk_myid=True, election_unit=" MS"):
    """Leader zk-2 closes follower zk-3, which logs the reset and re-elects (ZooKeeper 3.6 / 3.4 texts)."""
    f0 = ms(leader_gap_ms)
    return [rec(2, T0, "follower_transaction_timeout", "Closing connection to peer due to transaction timeout."),
            rec(2, ms(1), "learner_handler_error", "******* GOODBYE /10.0.0.3:41234 ********"),
            # the stack trace in detail, or kept in the message
            rec(3, f0 + timedelta(milliseconds=3), "follower_exception", *(
                ("Exception when following the leader", RESET) if zk_myid else
                ("Exception when following the leader\n" + RESET, None)), zk_myid=zk_myid),
            rec(3, f0 + timedelta(milliseconds=5), "follower_disconnected",
                "Disconnected from leader (with address: /10.0.0.2:2888). Was connected for 316796607ms. Sync state: true",
                duration_ms=316796607, zk_myid=zk_myid),
            rec(3, f0 + timedelta(milliseconds=10), "peer_state", "LOOKING", state="LOOKING", zk_myid=zk_myid),
            rec(3, f0 + timedelta(milliseconds=election_after_ms), "election_time",
                f"FOLLOWING - LEADER ELECTION TOOK - 104{election_unit}", duration_ms=104, state="FOLLOWING",
                zk_myid=zk_myid)]


def detect(spark, zk, **overrides):
    facts = Facts(HOUR, silver.hosts_of(spark, []), None, None, None, None, None,
                  local_frame(spark, zk, ZK), None)
    limits = {**thresholds.load(), **{f"zk_follower_disconnect.{k}": v for k, v in overrides.items()}}
    return zk_follower_disconnect.detect(facts, limits).collect()


def test_follower_reset_by_the_leaders_transaction_timeout(spark):
    [f] = detect(spark, reset())
    assert (f.cluster, f.kind, f.severity, f.entity) == ("c1", "zk_follower_disconnect", "major", "zk-3")
    assert (f.first_seen, f.last_seen, f.hour) == (T0, ms(114), HOUR)
    assert f.evidence == (
        "leader zk-2 at 06:25:00.377Z: 'Closing connection to peer due to transaction timeout' (no ack within "
        "tickTime x syncLimit; linked within link_window_ms 60000); "
        "follower zk-3 at 06:25:00.380Z: 'Exception when following the leader' java.net.SocketException: Connection reset; "
        "'Disconnected from leader', was connected for 316796607ms; "
        "re-joined at 06:25:00.491Z: 'FOLLOWING - LEADER ELECTION TOOK - 104 MS'")


def test_link_window_both_sides(spark):
    zk = reset(leader_gap_ms=30_000, election_after_ms=40_000, zk_myid=False, election_unit="")   # 3.4 texts
    [f] = detect(spark, zk, link_window_ms=40_000)
    assert (f.entity, f.first_seen) == ("zk-3", T0)   # myid from the QuorumPeer thread name
    assert "leader zk-2 at 06:25:00.377Z" in f.evidence and "LEADER ELECTION TOOK - 104 MS" in f.evidence
    [f] = detect(spark, zk, link_window_ms=29_000)
    assert (f.entity, f.first_seen) == ("zk-3", ms(30_003))
    assert f.evidence == (
        "follower zk-3 at 06:25:30.380Z: 'Exception when following the leader' java.net.SocketException: Connection reset; "
        "'Disconnected from leader', was connected for 316796607ms; no re-election logged within link_window_ms 29000")


def test_the_leader_side_alone_names_no_follower(spark):
    assert detect(spark, reset()[:2]) == []


def test_an_election_alone_is_not_a_disconnect(spark):
    assert detect(spark, reset()[4:]) == []
