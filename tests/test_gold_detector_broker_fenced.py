"""broker_fenced (KRaft) at both sides of its thresholds: one fence, flapping fences within the window,
signals of one fence within the episode gap, a controlled shutdown's replayed fence; its evidence says
who fenced whom, when, why and what moved."""
from __future__ import annotations

from datetime import timedelta

import pytest
from detector_frames import at, event, events, facts, findings, jmx, jmx_sample

from fleethealth.fleet import mbeans
from fleethealth.gold import thresholds
from fleethealth.gold.detectors import broker_fenced

pytestmark = pytest.mark.spark
STANDBYS = (3001, 3002)


def fence(broker: int, minute: int, active: int = 3000, moved: int = 41, unfence_after_s: int | None = 25,
          active_logged: bool = True, leaders: int = 0) -> list[tuple]:
    """A session-timeout fence as a 3.9 quorum logs it: the broker's failed heartbeats, the active
    controller's fence and partition changes, every controller's replay, the unfence at its next heartbeat;
    `leaders` partitions it led taken over by broker 9 ("Leader t-p ... starts at leader epoch", state-change.log)."""
    t = at(minute, 5.1)
    rows = [event(broker, t - timedelta(seconds=5), "broker_heartbeat_failed", broker=broker, reason="rpc_timeout"),
            event(broker, t - timedelta(seconds=3), "broker_heartbeat_failed", broker=broker)]
    if active_logged:
        rows += [event(active, t, "broker_fenced", controller=active, broker=broker, reason="session_timeout"),
                 event(active, t + timedelta(milliseconds=1), "partitions_changed", controller=active,
                       reason="handleBrokerFenced", count=moved)]
    rows += [event(c, t + timedelta(milliseconds=5), "broker_fencing_replayed", controller=c, broker=broker,
                   to_state="fenced") for c in (active, *STANDBYS)]
    rows += [event(9, t + timedelta(milliseconds=40 + p), "leader_epoch_start", topic="orders", partition=minute * 100 + p,
                   broker=9, leader=9, role="leader") for p in range(leaders)]
    if unfence_after_s is not None:
        u = t + timedelta(seconds=unfence_after_s)
        rows += [event(active, u, "broker_unfenced", controller=active, broker=broker, offset=90211)]
        rows += [event(c, u + timedelta(milliseconds=3), "broker_fencing_replayed", controller=c, broker=broker,
                       to_state="unfenced") for c in (active, *STANDBYS)]
    return rows


def run(spark, rows, samples=(), **overrides):
    limits = {**thresholds.load(), **{f"broker_fenced.{k}": v for k, v in overrides.items()}}
    return findings(broker_fenced.detect(facts(spark, events(spark, rows), jmx(spark, list(samples))), limits))


def test_one_fence_names_the_broker_the_controller_the_cause_and_the_moves(spark):
    [f] = run(spark, fence(2, 10))
    assert (f["cluster"], f["kind"], f["entity"], f["severity"]) == ("c1", "broker_fenced", "broker-2", "major")
    assert (f["first_seen"], f["last_seen"]) == (at(10, 5.1), at(10, 30.1))
    assert f["evidence"] == (
        "broker 2 fenced 1 time(s) after its session timed out (no heartbeat within broker.session.timeout.ms): "
        "06:10:05Z by controller 3000 (unfenced 06:10:30Z: 41 partition(s) changed, 0 leader(s) moved); "
        "in all the controller changed 41 partition(s) for it (handleBrokerFenced: ISR shrinks and leader moves) "
        "and 0 leader(s) moved away from it (leader_election_storm's count); "
        "its own log: 2 heartbeat(s) not sent within 30 s before (rpc_timeout)")


def test_a_healthy_quorum_unfencing_brokers_at_startup_is_no_incident(spark):
    rows = [event(3000, at(1), "broker_unfenced", controller=3000, broker=b, offset=12) for b in (1, 2, 3)]
    rows += [event(c, at(1, 0.1), "broker_fencing_replayed", controller=c, broker=b, to_state="unfenced")
             for c in (3000, *STANDBYS) for b in (1, 2, 3)]
    assert run(spark, rows) == []


def test_fences_within_the_flapping_window_flap_one_further_apart_does_not(spark):
    rows = fence(2, 10) + fence(2, 25)
    [f] = run(spark, rows, flapping_window_minutes=15)
    assert (f["severity"], f["first_seen"], f["last_seen"]) == ("critical", at(10, 5.1), at(25, 30.1))
    assert "broker 2 fenced 2 time(s)" in f["evidence"]
    assert "flapping: 2 fences within 15 minutes (>= flapping_fences 2)" in f["evidence"]
    assert "the controller changed 82 partition(s)" in f["evidence"]


def test_per_fence_its_partition_changes_and_leader_moves_apart_and_the_storm_counts_the_same(spark):
    """Issue 62 item 7: a fence's ISR changes (handleBrokerFenced's count) and its leader moves are told apart,
    per fence and in all; each fence's leader count is the one gold.leader_elections (the storm's) gives for
    the window that fence starts."""
    rows = fence(2, 10, leaders=7) + fence(2, 25, moved=30, leaders=3)
    [f] = run(spark, rows)
    assert ("06:10:05Z by controller 3000 (unfenced 06:10:30Z: 41 partition(s) changed, 7 leader(s) moved), "
            "06:25:05Z by controller 3000 (unfenced 06:25:30Z: 30 partition(s) changed, 3 leader(s) moved)") in f["evidence"]
    assert ("in all the controller changed 71 partition(s) for it (handleBrokerFenced: ISR shrinks and leader moves) "
            "and 10 leader(s) moved away from it (leader_election_storm's count)") in f["evidence"]
    limits = thresholds.load()
    windows = facts(spark, events(spark, rows)).table("gold.leader_elections", limits).collect()
    assert sorted((w.lost_broker, w.trigger_ts, w.partitions) for w in windows) == [
        (2, at(10, 5.1), 7), (2, at(25, 5.1), 3)]
    [f] = run(spark, rows, flapping_window_minutes=14)
    assert f["severity"] == "major" and "flapping" not in f["evidence"]


def test_flapping_fences_both_sides(spark):
    rows = fence(2, 10) + fence(2, 20) + fence(2, 30)
    assert [f["severity"] for f in run(spark, rows, flapping_fences=3)] == ["critical"]
    assert [f["severity"] for f in run(spark, rows, flapping_fences=4)] == ["major"]


def test_signals_further_apart_than_the_episode_gap_are_two_fences(spark):
    # only the standbys' replays (the active controller's log did not arrive), 40 s apart
    rows = [event(c, at(10, s + 0.001 * (c - 3001)), "broker_fencing_replayed", controller=c, broker=3,
                  to_state="fenced") for c in STANDBYS for s in (0, 40)]
    [f] = run(spark, rows, episode_gap_s=39)
    assert f["severity"] == "critical" and "broker 3 fenced 2 time(s)" in f["evidence"]
    assert ", seen in standby controllers' replays: 06:10:00Z by controller 3001 (not unfenced in the hour), " \
           "06:10:40Z by controller 3001" in f["evidence"]
    [f] = run(spark, rows, episode_gap_s=40)
    assert f["severity"] == "major" and "broker 3 fenced 1 time(s)" in f["evidence"]


def test_a_controlled_shutdowns_replayed_fence_is_none_within_the_grace(spark):
    rows = [event(3000, at(10), "partitions_changed", controller=3000, reason="enterControlledShutdown", broker=1,
                  count=17),
            event(1, at(10, 0.2), "broker_state_changed", broker=1, from_state="RUNNING",
                  to_state="PENDING_CONTROLLED_SHUTDOWN")]
    rows += [event(c, at(11, 40), "broker_fencing_replayed", controller=c, broker=1, to_state="fenced")
             for c in (3000, *STANDBYS)]
    assert run(spark, rows, shutdown_grace_s=100) == []
    assert [f["entity"] for f in run(spark, rows, shutdown_grace_s=99)] == ["broker-1"]
    # the active controller's session-timeout line is a fault whatever the broker was doing
    timed_out = rows + [event(3000, at(11, 39), "broker_fenced", controller=3000, broker=1)]
    assert [f["entity"] for f in run(spark, timed_out, shutdown_grace_s=100)] == ["broker-1"]


def test_an_overloaded_controller_and_its_jmx_are_in_the_evidence(spark):
    rows = fence(2, 10) + [event(3000, at(10, 1), "broker_heartbeat_timed_out", controller=3000, broker=2,
                                 reason="controller_overloaded")]
    samples = [jmx_sample(3000, at(m), mbeans.bean("timed_out_heartbeats"), v) for m, v in ((5, 3), (11, 5))]
    samples += [jmx_sample(3000, at(11), mbeans.bean("fenced_broker_count"), 1),
                jmx_sample(3000, at(11), mbeans.bean("active_broker_count"), 2),
                jmx_sample(3000, at(11), mbeans.bean("controller_event_queue_time"), 5400.0)]
    [f] = run(spark, rows, samples)
    assert f["evidence"].endswith(
        "the controller timed out 1 of its heartbeat(s) on an overloaded event queue; "
        "controllers' JMX: FencedBrokerCount up to 1, ActiveBrokerCount down to 2; TimedOutBrokerHeartbeatCount +2; "
        "EventQueueTimeMs p99 up to 5400 ms")


def test_fences_shorter_than_the_gauges_sampling_are_said_to_fall_between_samples(spark):
    """FencedBrokerCount sampled every 5 minutes reads 0 through fences of 9 and 12 s: the evidence says
    so, not "up to 0" (issue 62); a fence the gauge caught keeps its maximum."""
    def gauge(fenced_at=()):   # both gauges every 5 minutes
        return ([jmx_sample(3000, at(m), mbeans.bean("fenced_broker_count"), int(m in fenced_at)) for m in range(0, 60, 5)]
                + [jmx_sample(3000, at(m), mbeans.bean("active_broker_count"), 3) for m in range(0, 60, 5)])
    [f] = run(spark, fence(2, 10, unfence_after_s=9) + fence(2, 22, unfence_after_s=12), gauge())
    assert f["evidence"].endswith("controllers' JMX: FencedBrokerCount sampled every 300 s: the 9-12 s fence(s) fall "
                                  "between samples (0 in each), ActiveBrokerCount down to 3")
    [f] = run(spark, fence(2, 10, unfence_after_s=9), gauge())
    assert f["evidence"].endswith("FencedBrokerCount sampled every 300 s: the 9 s fence(s) fall between samples "
                                  "(0 in each), ActiveBrokerCount down to 3")
    # a fence that outlasts a sample shows in it: the gauge's maximum, as before
    [f] = run(spark, fence(2, 14, unfence_after_s=100), gauge(fenced_at=(15,)))
    assert f["evidence"].endswith("controllers' JMX: FencedBrokerCount up to 1, ActiveBrokerCount down to 3")


def test_brokers_and_clusters_are_kept_apart(spark):
    rows = fence(2, 10) + [r[:0] + ("c2",) + r[1:] for r in fence(3, 12)]
    assert [(f["cluster"], f["entity"]) for f in run(spark, rows)] == [("c1", "broker-2"), ("c2", "broker-3")]
