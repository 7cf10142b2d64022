"""partitions_offline, partitions_under_min_isr and no_active_controller (issue 63): the controller's
OfflinePartitionsCount, a broker's UnderMinIsrPartitionCount and the cluster's sum of ActiveControllerCount,
both sides of each threshold."""
from __future__ import annotations

import pytest
from detector_frames import HOUR, at, facts, findings, jmx, jmx_sample

from fleethealth.fleet import mbeans
from fleethealth.gold import detectors, thresholds
from fleethealth.gold.detectors import partitions_offline, partitions_under_min_isr

pytestmark = pytest.mark.spark


def found(spark, module, rows, **override) -> list[dict]:
    limits = dict(thresholds.load(), **override)
    return findings(detectors.run(module, facts(spark, jmx_samples=jmx(spark, rows)), limits))


def test_offline_partitions_are_one_finding_for_the_cluster_with_the_controller_s_count(spark):
    off = mbeans.OFFLINE_PARTITIONS
    rows = [jmx_sample(2, at(m), off, 0) for m in (0, 5, 30)]                  # no partition offline
    rows += [jmx_sample(1, at(m), off, v) for m, v in ((0, 0), (5, 3), (10, 12), (15, 12), (20, 0))]
    rows += [jmx_sample(1, at(m), off, 4, cluster="c2") for m in (40,)]
    rows += [jmx_sample(1, at(m), off, 0, cluster="c3") for m in (40,)]        # a healthy cluster
    got = found(spark, partitions_offline, rows)
    assert [(f["cluster"], f["entity"], f["severity"], f["first_seen"], f["last_seen"]) for f in got] == [
        ("c1", "partitions", "critical", at(5), at(15)), ("c2", "partitions", "critical", at(40), at(40))]
    assert got[0]["evidence"] == ("OfflinePartitionsCount 12 at its peak (06:10:00Z), 3 sample(s) at or over 1 from "
                                  "06:05:00Z to 06:15:00Z, counted by node(s) 1")
    # the threshold: 12 is not over 13
    assert [f["cluster"] for f in found(spark, partitions_offline, rows, **{
        "partitions_offline.min_partitions": 13})] == []
    assert [f["cluster"] for f in found(spark, partitions_offline, rows, **{
        "partitions_offline.min_partitions": 12})] == ["c1"]


def test_under_min_isr_partitions_are_a_finding_per_broker(spark):
    under = mbeans.UNDER_MIN_ISR
    rows = [jmx_sample(1, at(m), under, v) for m, v in ((0, 0), (12, 2), (13, 5), (20, 0))]
    rows += [jmx_sample(2, at(m), under, 0) for m in (0, 12, 20)]
    rows += [jmx_sample(3, at(m), under, 1) for m in (50,)]
    got = found(spark, partitions_under_min_isr, rows)
    assert [(f["entity"], f["severity"], f["first_seen"], f["last_seen"]) for f in got] == [
        ("broker-1", "major", at(12), at(13)), ("broker-3", "major", at(50), at(50))]
    assert got[0]["evidence"].startswith("UnderMinIsrPartitionCount 5 at its peak (06:13:00Z), 2 sample(s) at or "
                                         "over 1 from 06:12:00Z to 06:13:00Z: acks=all produce")
    assert [f["entity"] for f in found(spark, partitions_under_min_isr, rows, **{
        "partitions_under_min_isr.min_partitions": 2})] == ["broker-1"]
    assert HOUR == at(0)


def test_no_active_controller_from_each_node_s_latest_sample(spark):
    """ZooKeeper mode: every broker reports ActiveControllerCount, the controller 1. Brokers sampled at their own
    times; the sum at each time of each broker's latest sample (of the last 10 minutes)."""
    from fleethealth.gold.detectors import no_active_controller

    acc = mbeans.ACTIVE_CONTROLLER_COUNT
    rows = []
    for m in range(0, 60, 2):        # broker 1 controls until 20:00, then nobody until 31:00, then broker 3
        rows.append(jmx_sample(1, at(m, 10), acc, 1 if m < 20 else 0))
        rows.append(jmx_sample(2, at(m, 40), acc, 0))
        rows.append(jmx_sample(3, at(m + 1, 5), acc, 1 if m + 1 >= 31 else 0))
    # another cluster: its controller broker stops being sampled at 10:00 (down); its last 1 stands for 10
    # minutes, then none is active
    for m in range(0, 60, 5):
        rows.append(jmx_sample(5, at(m), acc, 0, cluster="c2"))
        if m <= 10:
            rows.append(jmx_sample(6, at(m, 30), acc, 1, cluster="c2"))
    # a failover between two samples: 0 at one time only
    for m in range(0, 60, 5):
        rows.append(jmx_sample(7, at(m), acc, 0 if m == 30 else 1, cluster="c3"))
    got = found(spark, no_active_controller, rows)
    assert [(f["cluster"], f["entity"], f["severity"], f["first_seen"], f["last_seen"]) for f in got] == [
        ("c1", "controller", "critical", at(20, 10), at(30, 40)),
        ("c2", "controller", "critical", at(25), at(55))]
    assert got[0]["evidence"] == ("no node's ActiveControllerCount was 1 from 06:20:10Z to 06:30:40Z (17 sample "
                                  "time(s); nodes sampled: 1, 2, 3)")
    # a longer minimum duration leaves the 10-minute gap out
    assert [f["cluster"] for f in found(spark, no_active_controller, rows, **{
        "no_active_controller.min_duration_s": 700})] == ["c2"]
