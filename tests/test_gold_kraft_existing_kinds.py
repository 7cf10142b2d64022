"""The existing kinds on KRaft clusters (issue 46): a controller's node id names `controller-N`, not a
broker, and controllers are compared with controllers; the ZooKeeper-only kinds never fire on a KRaft
cluster (a ZooKeeper-mode cluster beside it is judged as before); gold reads every KRaft event type the
KRaft detectors read."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
from detector_frames import at, event, events, facts, findings, jmx, jmx_sample, kraft_hosts

from fleethealth.fleet import mbeans
from fleethealth.gold import thresholds
from fleethealth.gold import detectors
from fleethealth.gold.detectors import DETECTORS, broker_flapping, fd_exhaustion
from fleethealth.gold.facts.core import KAFKA_UNREAD_EVENTS, kafka_events_read
from fleethealth.silver.parsers.rules import load_rules

KRAFT_KINDS = ("broker_fenced", "controller_quorum_unstable", "metadata_lag", "metadata_snapshots_disabled")


def _fds(node: int, opens: int, cluster: str = "c1") -> list[tuple]:
    return [s for m in (5, 25, 45) for s in (jmx_sample(node, at(m), mbeans.OPEN_FDS, opens, cluster),
                                              jmx_sample(node, at(m), mbeans.MAX_FDS, 1_000_000, cluster))]


@pytest.mark.spark
def test_fd_exhaustion_compares_controllers_with_controllers_and_names_them(spark):
    limits = thresholds.load()
    rows = _fds(3000, 310) + _fds(3001, 300) + _fds(3002, 2_000) + _fds(1, 12_800) + _fds(2, 12_900) + _fds(3, 13_000)
    found = findings(detectors.run(fd_exhaustion, facts(spark, jmx_samples=jmx(spark, rows), hosts=kraft_hosts(spark)),
                                   limits))
    assert [(f["entity"], f["evidence"].split("; ")[1]) for f in found] == [
        ("controller-3002", "> 5.0x the cluster median 310 of 3 controllers this hour (peak 6.5x)")]
    # brokers alone, as before
    brokers = _fds(1, 12_800) + _fds(2, 12_900) + _fds(3, 65_000)
    found = findings(detectors.run(fd_exhaustion, facts(spark, jmx_samples=jmx(spark, brokers),
                                                        hosts=kraft_hosts(spark)), limits))
    assert [(f["entity"], f["evidence"].split("; ")[1]) for f in found] == [
        ("broker-3", "> 5.0x the cluster median 12900 of 3 brokers this hour (peak 5.0x)")]


@pytest.mark.spark
def test_zookeeper_only_kinds_do_not_fire_on_a_kraft_cluster(spark):
    def loss(cluster, minute):
        return [event(1, at(minute, 0.4), "brokers_changed", cluster, deleted_brokers=[2]),
                event(2, at(minute, 1.6), "zk_session_expired", cluster)]
    rows = loss("c1", 10) + loss("c1", 30) + loss("z1", 10) + loss("z1", 30)
    found = findings(detectors.run(broker_flapping, facts(spark, events(spark, rows), hosts=kraft_hosts(spark)),
                                   thresholds.load()))
    assert [(f["cluster"], f["entity"]) for f in found] == [("z1", "broker-2")]


def _named_event_types(module) -> set[str]:
    """The string constants of a module that are Kafka event types (the KRaft detectors name theirs)."""
    known = {r.event_type for r in load_rules("kafka")}
    tree = ast.parse(Path(module.__file__).read_text())
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in known}


def test_gold_reads_the_event_types_the_kraft_detectors_read():
    from fleethealth.gold.facts import kraft, metadata_lag

    named = set().union(*(_named_event_types(m) for m in (*(DETECTORS[k] for k in KRAFT_KINDS), kraft, metadata_lag)))
    assert {"broker_fenced", "broker_fencing_replayed", "broker_unfenced", "raft_state_changed", "raft_shutdown",
            "raft_fetch_timeout", "raft_check_quorum_failed", "metadata_catching_up", "server_fault",
            "metadata_snapshots_disabled"} <= named
    assert not named & set(KAFKA_UNREAD_EVENTS)


@pytest.mark.spark
def test_the_gold_read_keeps_kraft_rows_and_the_fault_text(spark):
    rows = [event(3000, at(1), "broker_fenced", controller=3000, broker=2, message="Fencing broker 2 ..."),
            event(2, at(2), "server_fault", fault="metadata publishing", message="Encountered metadata publishing fault: x"),
            event(2, at(3), "other", message="anything")]
    got = sorted((r.event_type, r.message) for r in kafka_events_read(events(spark, rows)).collect())
    assert got == [("broker_fenced", None), ("server_fault", "Encountered metadata publishing fault: x")]
