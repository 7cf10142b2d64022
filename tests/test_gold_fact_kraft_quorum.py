"""gold.kraft_quorum: each KRaft cluster's Raft leader, epoch, elections and fenced brokers per (cluster, hour),
lines or no lines; ZooKeeper-mode clusters have no row."""
from __future__ import annotations

from datetime import timedelta

import pytest
from detector_frames import HOUR, at, event, events, facts, jmx, jmx_sample

from fleethealth.fleet import mbeans
from fleethealth.fleet.inventory import parse_inventory
from fleethealth.gold import thresholds
from fleethealth.gold.detectors import broker_fenced
from fleethealth.gold.facts.kraft_quorum import QUORUM_EVENTS
from fleethealth.quality import suites as quality
from fleethealth.silver.tables import hosts_frame

pytestmark = pytest.mark.spark

SCHEMA = [("cluster", "string"), ("hour", "timestamp"), ("log_lines", "bigint"), ("epoch", "int"), ("leader", "int"),
          ("elections", "int"), ("leaders", "array<int>"), ("fences", "int"), ("fenced_brokers", "array<int>"),
          ("unfences", "int"), ("fenced_at_end", "array<int>"), ("fenced_broker_count_max", "bigint"),
          ("active_controller_count_max", "int"), ("controllers_listed", "int")]
CONTROLLERS = (3000, 3001, 3002)
# c1 and c2 in KRaft mode (three controllers, brokers 1-3), z1 in ZooKeeper mode
INVENTORY = {"clusters": [
    *[{"name": c, "root": "/r", "hosts": [
        *[{"host": f"{c}-ctl-{n}", "role": "controller", "node_id": n, "kafka_version": "3.9.0"} for n in CONTROLLERS],
        *[{"host": f"{c}-kafka-{n}", "role": "kafka", "broker_id": n, "kafka_version": "3.9.0"} for n in (1, 2, 3)]]}
      for c in ("c1", "c2")],
    # KRaft, its controllers not listed (issue 61): a row saying none is
    {"name": "k0", "root": "/r", "mode": "kraft", "hosts": [
        {"host": "k0-kafka-1", "role": "broker", "node_id": 1, "kafka_version": "3.9.0"}]},
    {"name": "z1", "root": "/r", "hosts": [
        {"host": "z1-kafka-1", "role": "kafka", "broker_id": 1, "kafka_version": "3.6.1"},
        {"host": "z1-zk-1", "role": "zookeeper", "zk_myid": 1}]}]}


def fence(broker: int, minute: int, active: int, unfence_after_s: int | None = None) -> list[tuple]:
    """A session-timeout fence as a 3.9 quorum logs it: the active controller's line, every controller's
    replay, and the unfence at the broker's next heartbeat (with its replays)."""
    t = at(minute, 5.1)
    rows = [event(active, t, "broker_fenced", controller=active, broker=broker, reason="session_timeout")]
    rows += [event(c, t + timedelta(milliseconds=5), "broker_fencing_replayed", controller=c, broker=broker,
                   to_state="fenced") for c in CONTROLLERS]
    if unfence_after_s is not None:
        u = t + timedelta(seconds=unfence_after_s)
        rows += [event(active, u, "broker_unfenced", controller=active, broker=broker, offset=90211)]
        rows += [event(c, u + timedelta(milliseconds=3), "broker_fencing_replayed", controller=c, broker=broker,
                       to_state="unfenced") for c in CONTROLLERS]
    return rows


def elected(leader: int, epoch: int, minute: int) -> list[tuple]:
    """A Raft election: the new leader's transition, the standbys learning it."""
    t = at(minute, 2)
    return [event(leader, t, "raft_state_changed", node=leader, to_state="Leader", controller_epoch=epoch,
                  leader=leader)] + [
        event(c, t + timedelta(milliseconds=100), "quorum_leader_changed", controller=c, controller_epoch=epoch,
              leader=leader) for c in CONTROLLERS if c != leader]


# c1: broker 1 restarts into epoch 6 (no election), 3000 then 3001 elected; broker 2 fenced, unfenced,
# fenced again; broker 3's controlled shutdown replays a fence (that shutdown's, not a fence)
QUORUM = ([event(1, at(1), "raft_state_changed", node=1, to_state="Follower", controller_epoch=6, leader=3000)]
          + elected(3000, 7, 10)
          + [event(3001, at(30), "raft_fetch_timeout", node=3001, reason="fetch_timeout")]
          + elected(3001, 8, 30))
FENCING = (fence(2, 12, active=3000, unfence_after_s=25) + fence(2, 40, active=3001)
           + [event(3, at(50), "broker_state_changed", broker=3, from_state="RUNNING",
                    to_state="PENDING_CONTROLLED_SHUTDOWN"),
              event(3001, at(50, 1), "broker_fencing_replayed", controller=3001, broker=3, to_state="fenced")])
OTHER = [event(1, at(5), "segment_rolled"), event(3000, at(59), "partitions_changed", controller=3000,
                                                  reason="handleBrokerFenced", count=41)]
SAMPLES = ([jmx_sample(3000, at(m), mbeans.bean("fenced_broker_count"), v) for m, v in ((11, 0), (13, 1), (41, 1))]
           + [jmx_sample(c, at(m, 30), mbeans.bean("active_controller_count"), v)
              for m, values in ((10, (1, 0, 0)), (30, (1, 1, 0)), (31, (0, 1, 0)))
              for c, v in zip(CONTROLLERS, values, strict=True)])
STRAY = [event(1, at(3), "broker_fenced", cluster="z1", controller=1, broker=1)]   # no KRaft there


def build(spark, rows, samples=()):
    hosts = hosts_frame(spark, parse_inventory(INVENTORY))
    f = facts(spark, events(spark, rows), jmx(spark, list(samples)), hosts=hosts)
    return f.table("gold.kraft_quorum", thresholds.load())


def rows(df):
    return sorted((r.asDict() for r in df.collect()), key=lambda r: r["cluster"])


def row(cluster, **values):
    empty = {"log_lines": 0, "epoch": None, "leader": None, "elections": 0, "leaders": [], "fences": 0,
             "fenced_brokers": [], "unfences": 0, "fenced_at_end": [], "fenced_broker_count_max": None,
             "active_controller_count_max": None, "controllers_listed": len(CONTROLLERS)}
    return {"cluster": cluster, "hour": HOUR, **empty, **values}


def test_elections_fences_a_silent_kraft_cluster_and_no_zookeeper_row(spark):
    lines = QUORUM + FENCING + OTHER + STRAY
    df = build(spark, lines, SAMPLES)
    assert df.dtypes == SCHEMA
    quorum_lines = sum(1 for r in QUORUM + FENCING if r[3] in QUORUM_EVENTS)
    assert rows(df) == [
        row("c1", log_lines=quorum_lines, epoch=8, leader=3001, elections=2, leaders=[3000, 3001], fences=2,
            fenced_brokers=[2], unfences=1, fenced_at_end=[2], fenced_broker_count_max=1,
            active_controller_count_max=2),
        row("c2"),   # KRaft, no quorum line and no sample in the hour: counts 0, leader and epoch unknown
        row("k0", controllers_listed=0),
    ]


def test_fences_are_counted_as_broker_fenced_counts_them(spark):
    """One place for each fact: the table's fences are the detector's, broker by broker."""
    limits = thresholds.load()
    [quorum] = [r for r in rows(build(spark, FENCING)) if r["cluster"] == "c1"]
    found = broker_fenced.detect(facts(spark, events(spark, FENCING)), limits).collect()
    assert [f.entity for f in found] == ["broker-2"] and "broker 2 fenced 2 time(s)" in found[0].evidence
    assert (quorum["fences"], quorum["fenced_brokers"], quorum["elections"]) == (2, [2], 0)


def test_an_unfence_after_the_last_fence_leaves_no_broker_fenced_at_end(spark):
    [c1, _, _] = rows(build(spark, fence(2, 12, active=3000, unfence_after_s=25)))
    assert (c1["fences"], c1["unfences"], c1["fenced_at_end"]) == (1, 1, [])


def test_a_quiet_hour_takes_the_leader_and_epoch_from_raft_metrics(spark):
    """A stable quorum logs no Raft line: raft-metrics name the leader (the last sample; -1, a node that
    knows none, is not a leader) and the epoch; a later epoch there wins over the logs' older one."""
    epoch, leader = mbeans.bean("raft_current_epoch"), mbeans.bean("raft_current_leader")
    samples = ([jmx_sample(c, at(m), epoch, 8) for c in CONTROLLERS for m in (5, 35)]
               + [jmx_sample(3000, at(5), leader, 3001), jmx_sample(3002, at(35), leader, 3002),
                  jmx_sample(1, at(50), leader, -1)]
               + [jmx_sample(1, at(50), epoch, 9, cluster="c2"), jmx_sample(1, at(50), leader, 3002, cluster="c2")])
    c1, c2 = [r for r in rows(build(spark, elected(3000, 7, 10), samples)) if r["cluster"] in ("c1", "c2")]
    assert (c1["epoch"], c1["leader"], c1["elections"]) == (8, 3002, 1)     # raft-metrics' later epoch
    assert (c2["log_lines"], c2["epoch"], c2["leader"]) == (0, 9, 3002)     # no line at all
    [c1] = [r for r in rows(build(spark, elected(3000, 7, 10), samples[:6])) if r["cluster"] == "c1"]
    assert (c1["epoch"], c1["leader"]) == (8, None)     # a later epoch, its leader unknown (not epoch 7's)


def test_quality_suite(spark):
    df = build(spark, QUORUM + FENCING + OTHER, SAMPLES)
    results = quality.validate_tables({"gold.kraft_quorum": df}, hour=HOUR, data_docs_dir=None)
    quality.enforce(results)
    assert results and all(r.success for r in results)
