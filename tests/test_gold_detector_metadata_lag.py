"""metadata_lag (KRaft) at both sides of its thresholds: a broker's applied offset behind the committed one
for long enough, an old last applied record, the MetadataLoader catching up, metadata faults; controllers
named as controllers; the partitions and groups the lag touched."""
from __future__ import annotations

import pytest
from detector_frames import at, event, events, facts, findings, jmx, jmx_sample, kraft_hosts

from fleethealth.fleet import mbeans
from fleethealth.gold import thresholds
from fleethealth.gold.detectors import metadata_lag

pytestmark = pytest.mark.spark


def committed(minute: int) -> int:
    return 1000 + 120 * minute   # NoOpRecords: two a second


def offsets(stuck_from: int = 10, caught_up: int = 15, node: int = 2) -> list[tuple]:
    """The active controller's committed offset and broker `node`'s applied one each minute; the broker
    applies nothing from minute `stuck_from` until `caught_up`."""
    rows = [jmx_sample(3000, at(m), mbeans.bean("controller_last_committed_offset"), committed(m)) for m in range(30)]
    applied = [committed(stuck_from) - 5 if stuck_from <= m < caught_up else committed(m) - 5 for m in range(30)]
    return rows + [jmx_sample(node, at(m), mbeans.bean("broker_metadata_applied_offset"), v)
                   for m, v in enumerate(applied)]


def run(spark, rows=(), samples=(), hosts=None, **overrides):
    limits = {**thresholds.load(), **{f"metadata_lag.{k}": v for k, v in overrides.items()}}
    return findings(metadata_lag.detect(facts(spark, events(spark, list(rows)), jmx(spark, list(samples)),
                                              hosts=hosts), limits))


def test_a_broker_behind_the_committed_offset_long_enough(spark):
    # 125, 245, 365, 485 records behind at minutes 11 - 14: over 200 from minute 12, two minutes in a row
    [f] = run(spark, samples=offsets(), max_lag_records=200)
    assert (f["cluster"], f["kind"], f["entity"], f["severity"]) == ("c1", "metadata_lag", "broker-2", "major")
    assert (f["first_seen"], f["last_seen"]) == (at(12), at(15))
    assert f["evidence"] == (
        "node 2 (broker-2): JMX: applied metadata behind for 2.0 minutes from 06:12:00Z (up to 485 records behind "
        "the committed offset; max_lag_records 200, min_lag_ms 120000), caught up at 06:15:00Z")


def test_max_lag_records_both_sides(spark):
    assert [f["entity"] for f in run(spark, samples=offsets(), max_lag_records=244)] == ["broker-2"]
    assert run(spark, samples=offsets(), max_lag_records=245) == []   # minutes 13 - 14 only: one minute


def test_min_lag_ms_both_sides(spark):
    assert len(run(spark, samples=offsets(), max_lag_records=200, min_lag_ms=120_000)) == 1
    assert run(spark, samples=offsets(), max_lag_records=200, min_lag_ms=120_001) == []


def test_a_healthy_quorum_and_the_default_threshold(spark):
    assert run(spark, samples=offsets(stuck_from=30)) == []
    assert run(spark, samples=offsets()) == []   # 485 records is far below the default


def test_an_old_last_applied_record_names_a_controller_as_a_controller(spark):
    def age(ms):
        return [jmx_sample(3002, at(20), mbeans.bean("controller_last_applied_lag"), ms)]
    [f] = run(spark, samples=age(120_000), hosts=kraft_hosts(spark))
    assert (f["entity"], f["first_seen"]) == ("controller-3002", at(20))
    assert f["evidence"] == ("node 3002 (controller-3002): JMX: applied metadata behind for 2.0 minutes from "
                             "06:20:00Z (last applied record up to 120000 ms old; max_lag_records 5000, "
                             "min_lag_ms 120000), not caught up in the hour")
    assert run(spark, samples=age(119_999), hosts=kraft_hosts(spark)) == []
    # without the inventory, a node id is a broker's
    assert [f["entity"] for f in run(spark, samples=age(120_000))] == ["broker-3002"]


def test_the_loader_catching_up_for_long_enough(spark):
    rows = [event(1, at(10 + m), "metadata_catching_up", node=1, offset=committed(m), high_watermark=committed(m) + 900)
            for m in range(2)]
    rows += [event(1, at(12), "metadata_caught_up", node=1, high_watermark=committed(12))]
    [f] = run(spark, rows)
    assert (f["entity"], f["first_seen"], f["last_seen"]) == ("broker-1", at(10), at(12))
    assert f["evidence"] == ("node 1 (broker-1): MetadataLoader still catching up for 2.0 minutes from 06:10:00Z, up "
                             "to 900 records behind the high water mark (min_lag_ms 120000)")
    assert run(spark, rows, min_lag_ms=120_001) == []


def test_metadata_faults_both_sides_of_min_errors(spark):
    fault = event(2, at(30, 1.5), "server_fault", fault="metadata publishing", offset=3091,
                  message="Encountered metadata publishing fault: Unhandled error publishing the new metadata image "
                          "ending at 3091 with publisher BrokerMetadataPublisher")
    [f] = run(spark, [fault])
    assert (f["entity"], f["first_seen"]) == ("broker-2", at(30, 1.5))
    assert f["evidence"] == (
        "node 2 (broker-2): 1 metadata fault line(s) (metadata publishing) from 06:30:01Z, at metadata offset 3091: "
        "Unhandled error publishing the new metadata image ending at 3091 with publisher BrokerMetadataPublisher "
        "(>= min_errors 1)")
    assert run(spark, [fault], min_errors=2) == []
    counter = [jmx_sample(3, at(m), mbeans.bean("broker_metadata_apply_errors"), v) for m, v in ((0, 4), (20, 5))]
    [f] = run(spark, samples=counter)
    assert (f["entity"], f["first_seen"]) == ("broker-3", at(20))
    assert f["evidence"] == ("node 3 (broker-3): JMX: metadata-load-error-count +0, metadata-apply-error-count +1, "
                             "MetadataErrorCount +0 (>= min_errors 1)")
    assert run(spark, samples=counter, min_errors=2) == []
    # a counter that only fell (a restart) rose by nothing
    assert run(spark, samples=[jmx_sample(3, at(m), mbeans.bean("broker_metadata_load_errors"), v)
                               for m, v in ((0, 4), (20, 0))]) == []


def test_disabled_snapshots_are_not_a_lag(spark):
    """they are metadata_snapshots_disabled's incident (test_gold_detector_metadata_snapshots_disabled)"""
    rows = [event(3001, at(5), "metadata_snapshots_disabled", node=3001, reason="metadata loading fault")]
    assert run(spark, rows, hosts=kraft_hosts(spark)) == []


def test_the_partitions_and_groups_the_lag_touched(spark):
    rows = [event(1, at(1), "tombstone_append_failed", topic="__consumer_offsets", partition=38,
                  group="consumer-group"),
            event(1, at(13), "not_leader_for_partition", topic="orders", partition=3, peer_broker=2),
            event(3, at(14), "not_leader_for_partition", topic="__consumer_offsets", partition=38, peer_broker=2),
            event(3, at(20), "not_leader_for_partition", topic="orders", partition=4, peer_broker=2)]   # after
    [f] = run(spark, rows, offsets(), max_lag_records=200)
    assert f["evidence"].endswith(
        "caught up at 06:15:00Z; 2 NotLeaderOrFollower error(s) involving it meanwhile, partitions "
        "__consumer_offsets-38, orders-3; consumer groups whose coordinator partitions they are: consumer-group")
