"""A detector's reach, declared (`MODES` of its module) and applied in one place (gold.detectors.run): each
kind that does not apply to a mode fires on a cluster of that mode and of a mode it applies to, in real
frames; run keeps the finding of the one and drops the other's. A kind declaring MODES without firing
inputs here fails the test: every such kind is checked."""
from __future__ import annotations

import pytest
import test_gold_detector_controller_quorum_unstable as quorum
import test_gold_detector_zk_follower_disconnect as follower
import test_gold_detector_zk_session_expired as session
from detector_frames import HOUR, at, event, events, facts, jmx, kraft_hosts

from fleethealth.fleet.inventory import MODES
from fleethealth.gold import detectors, thresholds
from fleethealth.gold.facts.core import Facts
from fleethealth.runtime.frames import local_frame

pytestmark = pytest.mark.spark
# kraft_hosts: cluster c1 is in KRaft mode, z1 in ZooKeeper mode
CLUSTER = {"kraft": "c1", "zookeeper": "z1"}


def in_cluster(rows, cluster):
    return [(cluster, *r[1:]) for r in rows]


def flapping(spark, clusters, hosts):
    """broker 1 loses its ZooKeeper session four times in 34 minutes (test_gold_detector_broker_flapping)."""
    rows = [r for c in clusters for m in (10, 20, 31, 44) for r in (
        event(1, at(m, 0.432), "brokers_changed", c, deleted_brokers=[1], added_brokers=None),
        event(1, at(m, 1.629), "zk_session_expired", c),
        event(1, at(m, 1.942), "broker_registered", c, broker=1))]
    return facts(spark, events(spark, rows), hosts=hosts)


def session_expired(spark, clusters, hosts):
    """broker 8's session expires, dated by the ZooKeeper server (test_gold_detector_zk_session_expired)."""
    zk = [("c1", "c1-zk-1", 1, session.t(35, 32, 512), "session_expired", session.SID, 6000)]
    kafka = [r for c in clusters for r in in_cluster(session.loss(session.SID, 35), c)]
    zk = [r for c in clusters for r in in_cluster(zk, c)]
    return Facts(HOUR, hosts, local_frame(spark, kafka, session.KAFKA), local_frame(spark, [], session.JMX),
                 None, None, None, local_frame(spark, zk, session.ZK), None)


def follower_reset(spark, clusters, hosts):
    """leader zk-2 closes follower zk-3 (test_gold_detector_zk_follower_disconnect)."""
    zk = [r for c in clusters for r in in_cluster(follower.reset(), c)]
    return Facts(HOUR, hosts, None, None, None, None, None, local_frame(spark, zk, follower.ZK), None)


def quorum_unstable(spark, clusters, hosts):
    """two Raft elections within the window (test_gold_detector_controller_quorum_unstable)."""
    rows = [r for c in clusters for r in quorum.election(10, 45, 3000, cluster=c) + quorum.election(12, 46, 3001, cluster=c)]
    return facts(spark, events(spark, rows), jmx(spark, []), hosts=hosts)


# kind -> (the facts that fire it in the clusters given, the entity it names)
FIRING = {"broker_flapping": (flapping, "broker-1"), "zk_session_expired": (session_expired, "broker-8"),
          "zk_follower_disconnect": (follower_reset, "zk-3"), "controller_quorum_unstable": (quorum_unstable, "quorum")}


def test_every_kind_declares_modes_of_the_inventory():
    assert all(set(getattr(m, "MODES", MODES)) <= set(MODES) for m in detectors.DETECTORS.values())
    restricted = {k for k, m in detectors.DETECTORS.items() if set(getattr(m, "MODES", MODES)) != set(MODES)}
    assert restricted == set(FIRING)
    assert {k: detectors.DETECTORS[k].MODES for k in sorted(restricted)} == {
        "broker_flapping": ("zookeeper",), "controller_quorum_unstable": ("kraft",),
        "zk_follower_disconnect": ("zookeeper",), "zk_session_expired": ("zookeeper",)}


@pytest.mark.parametrize("kind", sorted(FIRING))
def test_a_kind_fires_only_on_clusters_of_its_modes(spark, kind):
    module, (make, entity) = detectors.DETECTORS[kind], FIRING[kind]
    limits = thresholds.load()
    both = sorted(CLUSTER.values())

    def found(hosts):
        return sorted((r.cluster, r.kind, r.entity) for r in detectors.run(module, make(spark, both, hosts),
                                                                           limits).collect())
    # without the hosts frame nothing says a cluster's mode: it fires on both
    assert found(None) == [(c, kind, entity) for c in both]
    # with it, on the clusters of its modes only; each excluded mode's finding is dropped
    kept = sorted(CLUSTER[m] for m in module.MODES)
    assert found(kraft_hosts(spark)) == [(c, kind, entity) for c in kept]
    assert set(MODES) - set(module.MODES)   # a mode is excluded: the test checks something
