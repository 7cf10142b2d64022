"""gold.metadata_divergence: one row per (partition, broker) lag window longer than min_lag_ms, with the
epochs given and not taken, the lag window and peers' NotLeaderForPartition errors."""
from __future__ import annotations

import pytest
from detector_frames import HOUR, at, event, events, facts

from fleethealth.gold import thresholds
from fleethealth.gold.detectors import metadata_divergence
from fleethealth.gold.facts import metadata_divergence as divergence_fact
from fleethealth.quality import suites as quality

pytestmark = pytest.mark.spark

PAY = {"topic": "payments", "partition": 2}
ORD = {"topic": "orders", "partition": 0}
COLUMNS = [("cluster", "string"), ("topic", "string"), ("partition", "int"), ("broker", "int"), ("hour", "timestamp"),
           ("stuck_epoch", "int"), ("controller_min_epoch", "int"), ("controller_max_epoch", "int"),
           ("epochs_not_taken", "array<int>"), ("lag_start", "timestamp"), ("lag_end", "timestamp"),
           ("caught_up_ts", "timestamp"), ("lag_ms", "bigint"), ("not_leader_errors", "int")]


def sent(minute, second, target, epoch, tp, transition="become-leader"):
    return event(1, at(minute, second), "leader_and_isr_sent", broker=target, leader=target, leader_epoch=epoch,
                 transition=transition, **tp)


def started(broker, minute, second, epoch, tp):
    return event(broker, at(minute, second), "leader_epoch_start", broker=broker, leader=broker, leader_epoch=epoch,
                 **tp)


def alive(broker, minute):
    return event(broker, at(minute), "other")


def not_leader(minute, peer, tp):
    return event(2, at(minute), "not_leader_for_partition", peer_broker=peer, **tp)


def two_lags():
    """payments-2: broker 3 stays at 426 after the controller moved to 427 (broker 1) and gave it 428;
    orders-0: broker 2 takes epoch 7 6 min 1 s after it was sent."""
    return [started(3, 5, 0.417, 426, PAY), sent(10, 0.438, 1, 427, PAY), started(1, 10, 0.467, 427, PAY),
            sent(20, 17.314, 3, 428, PAY), alive(3, 55), alive(1, 59),
            not_leader(5, 3, PAY), not_leader(12, 3, PAY), not_leader(40, 3, PAY),   # the first before the lag
            started(2, 1, 0, 5, ORD), sent(30, 0, 2, 7, ORD), started(2, 36, 1, 7, ORD), alive(2, 59)]


def build(spark, rows, min_lag_ms=None):
    limits = thresholds.load()
    if min_lag_ms is not None:
        limits["metadata_divergence.min_lag_ms"] = min_lag_ms
    return divergence_fact.divergence(facts(spark, events(spark, rows)), limits)


def rows(df):
    return sorted((r.asDict() for r in df.collect()), key=lambda r: (r["topic"], r["partition"], r["broker"]))


def test_one_row_per_partition_and_broker_behind(spark):
    df = build(spark, two_lags())
    assert [(f.name, f.dataType.simpleString()) for f in df.schema.fields] == COLUMNS
    assert rows(df) == [
        dict(cluster="c1", topic="orders", partition=0, broker=2, hour=HOUR, stuck_epoch=5, controller_min_epoch=7,
             controller_max_epoch=7, epochs_not_taken=[7], lag_start=at(30), lag_end=at(36, 1),
             caught_up_ts=at(36, 1), lag_ms=361_000, not_leader_errors=0),
        dict(cluster="c1", topic="payments", partition=2, broker=3, hour=HOUR, stuck_epoch=426,
             controller_min_epoch=427, controller_max_epoch=428, epochs_not_taken=[428], lag_start=at(10, 0.438),
             lag_end=at(55), caught_up_ts=None, lag_ms=2_699_562, not_leader_errors=2)]


def test_min_lag_ms_both_sides(spark):
    assert [r["broker"] for r in rows(build(spark, two_lags(), min_lag_ms=360_999))] == [2, 3]
    assert [r["broker"] for r in rows(build(spark, two_lags(), min_lag_ms=361_000))] == [3]


def test_no_lag_no_row(spark):
    in_time = [started(3, 5, 0, 426, PAY), sent(10, 0, 3, 428, PAY), started(3, 14, 59, 428, PAY), alive(3, 59)]
    assert build(spark, in_time).collect() == []
    assert build(spark, []).collect() == []


def test_detect_formats_the_table(spark):
    f = facts(spark, events(spark, two_lags()))
    found = sorted(metadata_divergence.detect(f, thresholds.load()).collect(), key=lambda r: r.entity)
    assert "gold.metadata_divergence" in f.derived
    assert [(r.entity, r.first_seen, r.last_seen) for r in found] == [
        ("orders-0@broker-2", at(30), at(36, 1)), ("payments-2@broker-3", at(10, 0.438), at(55))]
    assert found[1].evidence.endswith("2 NotLeaderForPartition errors from peers fetching payments-2 from broker 3")


def test_gx_suite_passes_on_the_built_table(spark):
    results = quality.validate_tables({"gold.metadata_divergence": build(spark, two_lags())}, hour=HOUR,
                                      data_docs_dir=None)
    quality.enforce(results)
    assert [r.expectation for r in results if not r.success] == []
