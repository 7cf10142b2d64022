"""controller_quorum_unstable (KRaft) at both sides of its thresholds: elections and voter timeouts in the
window, a graceful shutdown's election left out, a node starting into the current epoch elects nobody,
ZooKeeper-mode clusters left out."""
from __future__ import annotations

from datetime import timedelta

import pytest
from detector_frames import at, event, events, facts, findings, jmx, jmx_sample, kraft_hosts

from fleethealth.fleet import mbeans
from fleethealth.gold import detectors, thresholds
from fleethealth.gold.detectors import controller_quorum_unstable

pytestmark = pytest.mark.spark
VOTERS = (3000, 3001, 3002)


def election(minute: int, epoch: int, leader: int, second: float = 0, cluster: str = "c1") -> list[tuple]:
    """A Raft election as a 3.9 quorum logs it: the new leader's transition, the voters' and a broker's."""
    t = at(minute, second)
    rows = [event(leader, t, "raft_state_changed", cluster, node=leader, to_state="Leader", from_state="Candidate",
                  controller_epoch=epoch, leader=leader)]
    rows += [event(v, t + timedelta(milliseconds=40), "raft_state_changed", cluster, node=v, to_state="Follower",
                   from_state="Unattached", controller_epoch=epoch, leader=leader) for v in VOTERS if v != leader]
    rows.append(event(1, t + timedelta(milliseconds=90), "raft_state_changed", cluster, node=1, to_state="Follower",
                      from_state="Unattached", controller_epoch=epoch, leader=leader))
    return rows


def timeout(minute: int, node: int, second: float = 0, kind: str = "raft_fetch_timeout") -> tuple:
    return event(node, at(minute, second), kind, node=node, reason="fetch_timeout")


def run(spark, rows, samples=(), hosts=None, **overrides):
    limits = {**thresholds.load(), **{f"controller_quorum_unstable.{k}": v for k, v in overrides.items()}}
    return findings(detectors.run(controller_quorum_unstable,
        facts(spark, events(spark, rows), jmx(spark, list(samples)), hosts=hosts), limits))


def test_five_leaders_in_eleven_minutes(spark):
    leaders = [(10, 45, 3000), (12, 46, 3001), (15, 47, 3002), (18, 48, 3000), (21, 49, 3001)]
    rows = [r for m, e, lead in leaders for r in election(m, e, lead)]
    rows += [timeout(m - 1, (lead - 3000 + 2) % 3 + 3000, 59.5) for m, _, lead in leaders[1:]]
    [f] = run(spark, rows)
    assert (f["cluster"], f["kind"], f["entity"], f["severity"]) == ("c1", "controller_quorum_unstable", "quorum",
                                                                     "major")
    assert (f["first_seen"], f["last_seen"]) == (at(10), at(21))
    assert f["evidence"] == (
        "5 leader election(s) within 15 minutes (>= min_elections 2): epochs 45 (leader 3000 at 06:10:00Z), "
        "46 (leader 3001 at 06:12:00Z), 47 (leader 3002 at 06:15:00Z), 48 (leader 3000 at 06:18:00Z), "
        "49 (leader 3001 at 06:21:00Z); "
        "4 voter timeout(s) (fetch_timeout 3000, fetch_timeout 3001, fetch_timeout 3002), "
        "4 within 15 minutes (>= min_voter_timeouts 2)")


def test_min_elections_both_sides(spark):
    rows = election(10, 45, 3000) + election(20, 46, 3001)
    assert [f["entity"] for f in run(spark, rows)] == ["quorum"]
    assert run(spark, rows, min_elections=3) == []


def test_window_both_sides(spark):
    rows = election(10, 45, 3000) + election(25, 46, 3001)
    assert [f["first_seen"] for f in run(spark, rows, window_minutes=15)] == [at(10)]
    assert run(spark, rows, window_minutes=14) == []


def test_min_voter_timeouts_both_sides(spark):
    # a voter that cannot reach the leader: its candidacy fails, the leader stays
    rows = [timeout(10, 3002), timeout(10, 3002, 1.5, "raft_election_failed")]
    [f] = run(spark, rows)
    assert (f["first_seen"], f["last_seen"]) == (at(10), at(10, 1.5))
    assert f["evidence"].startswith("0 leader election(s) within 15 minutes; 2 voter timeout(s) "
                                    "(election_failed 3002, fetch_timeout 3002), 2 within 15 minutes")
    assert run(spark, rows, min_voter_timeouts=3) == []


def test_a_graceful_shutdowns_elections_do_not_count(spark):
    # a rolling restart: each leader resigns on its graceful shutdown, another is elected within a second
    rows = [event(3000, at(10), "raft_shutdown", node=3000), *election(10, 45, 3001, 0.5),
            event(3001, at(20), "raft_shutdown", node=3001), *election(20, 46, 3002, 0.5)]
    assert run(spark, rows, shutdown_grace_s=1) == []
    [f] = run(spark, rows, shutdown_grace_s=0)
    assert f["evidence"].startswith("2 leader election(s) within 15 minutes (>= min_elections 2)")


def test_the_graceful_ones_are_named_beside_those_that_count(spark):
    rows = [event(3000, at(10), "raft_shutdown", node=3000), *election(10, 45, 3001, 0.5),
            *election(12, 46, 3002), *election(13, 47, 3000)]
    [f] = run(spark, rows)
    assert f["first_seen"] == at(12)
    assert "not counted (graceful shutdown)" not in f["evidence"]   # before the first window that fired
    [f] = run(spark, [event(3000, at(11), "raft_shutdown", node=3000), *election(11, 46, 3002, 0.5),
                      *election(10, 45, 3001), *election(13, 47, 3000)])
    assert "not counted (graceful shutdown): 06:11:00Z after node 3000's graceful shutdown" in f["evidence"]


def test_nodes_starting_into_the_current_epoch_elect_nobody(spark):
    rows = [event(n, at(m), "raft_state_changed", node=n, to_state="Follower", from_state="Unattached",
                  controller_epoch=44, leader=3000) for m, n in ((5, 1), (15, 2), (25, 3001))]
    rows += [event(3001, at(30), "quorum_leader_changed", controller=3001, controller_epoch=44, leader=3000)]
    assert run(spark, rows, min_elections=1) == []
    # a newer epoch than the hour's first is an election, whoever logs it
    rows += [event(2, at(40), "raft_state_changed", node=2, to_state="Follower", controller_epoch=45, leader=3001)]
    [f] = run(spark, rows, min_elections=1)
    assert f["evidence"].startswith("1 leader election(s) within 15 minutes (>= min_elections 1): "
                                    "epochs 45 (leader 3001 at 06:40:00Z)")


def test_zookeeper_mode_clusters_are_left_out(spark):
    rows = election(10, 45, 3000, cluster="z1") + election(12, 46, 3001, cluster="z1")
    hosts = kraft_hosts(spark)
    assert run(spark, rows, hosts=hosts) == []
    moved = [("c1",) + r[1:] for r in rows]
    assert [f["cluster"] for f in run(spark, moved, hosts=hosts)] == ["c1"]


def test_raft_metrics_and_the_active_controller_count_are_in_the_evidence(spark):
    rows = election(10, 45, 3000) + election(12, 46, 3001)
    samples = []
    for node, (before, after) in {3000: (44, 46), 3001: (44, 46), 3002: (44, 45)}.items():
        samples += [jmx_sample(node, at(9), mbeans.bean("raft_current_epoch"), before),
                    jmx_sample(node, at(13), mbeans.bean("raft_current_epoch"), after),
                    jmx_sample(node, at(9), mbeans.bean("raft_current_leader"), 3002),
                    jmx_sample(node, at(13), mbeans.bean("raft_current_leader"), 3001),
                    jmx_sample(node, at(13), mbeans.bean("raft_current_state"),
                               "leader" if node == 3001 else "follower"),
                    jmx_sample(node, at(9), mbeans.bean("active_controller_count"), 1 if node == 3002 else 0),
                    jmx_sample(node, at(11), mbeans.bean("active_controller_count"), 0),
                    jmx_sample(node, at(13), mbeans.bean("active_controller_count"), 1 if node == 3001 else 0)]
    samples += [jmx_sample(3001, at(13), mbeans.bean("raft_election_latency_max"), 1840.0),
                jmx_sample(3001, at(13), mbeans.bean("raft_election_latency_avg"), 950.0),
                jmx_sample(3001, at(9), mbeans.bean("new_active_controllers"), 2),
                jmx_sample(3001, at(13), mbeans.bean("new_active_controllers"), 3)]
    [f] = run(spark, rows, samples)
    assert f["evidence"].endswith(
        "JMX raft-metrics current-epoch +2; current-leader took 3001, 3002; "
        "election-latency-max 1840 ms (avg 950 ms); "
        "ActiveControllerCount summed over the controllers was not 1 in 1 minute(s) (0..1); "
        "NewActiveControllersCount +1; current-state seen: follower, leader")
