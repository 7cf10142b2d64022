"""metadata_divergence at both sides of min_lag_ms: which epochs a broker must take, when the lag began."""
from __future__ import annotations

import pytest
from detector_frames import at, event, events, facts, findings

from fleethealth.gold import thresholds
from fleethealth.gold.detectors import metadata_divergence

pytestmark = pytest.mark.spark

TP = {"topic": "payments", "partition": 2}


def sent(minute, second, target, epoch, transition="become-leader"):
    return event(1, at(minute, second), "leader_and_isr_sent", broker=target, leader=target, leader_epoch=epoch,
                 transition=transition, **TP)


def started(broker, minute, second, epoch):
    return event(broker, at(minute, second), "leader_epoch_start", broker=broker, leader=broker, leader_epoch=epoch, **TP)


def alive(broker, minute):
    return event(broker, at(minute), "other")


def pm5_rows():
    """Post-mortem 5: broker 3 took 426 and nothing after; the controller moves payments-2 between 1 and 3."""
    rows = [started(3, 5, 0.417, 426), alive(3, 55), alive(1, 59)]
    for i, (away, back) in enumerate(((10, 10), (20, 20), (31, 35), (44, 45))):
        rows += [sent(away, 0.438, 1, 427 + 2 * i), started(1, away, 0.467, 427 + 2 * i),
                 sent(back, 17.314, 3, 428 + 2 * i)]
    rows += [sent(50, 28.314, 1, 435), started(1, 50, 28.343, 435)]
    rows += [event(2, at(10 + m // 4, 5.753 + 15 * (m % 4)), "not_leader_for_partition", peer_broker=3, **TP)
             for m in range(8)]
    return rows


def run(spark, rows, min_lag_ms=None):
    limits = thresholds.load()
    if min_lag_ms is not None:
        limits["metadata_divergence.min_lag_ms"] = min_lag_ms
    return findings(metadata_divergence.detect(facts(spark, events(spark, rows)), limits))


def test_broker_stuck_at_426_diverges_from_when_the_controller_passed_it(spark):
    [f] = run(spark, pm5_rows())
    assert (f["kind"], f["entity"], f["first_seen"], f["last_seen"], f["severity"]) == (
        "metadata_divergence", "payments-2@broker-3", at(10, 0.438), at(55), "critical")
    assert f["evidence"] == (
        "broker 3 stayed at LeaderEpoch 426 of payments-2 while the controller moved it to LeaderEpoch 427..435; "
        "epochs given to broker 3 and not taken within 300000 ms: 428, 430, 432, 434; "
        "behind for 45.0 minutes (06:10:00Z - 06:55:00Z, not caught up in the hour); "
        "8 NotLeaderForPartition errors from peers fetching payments-2 from broker 3")


def test_lag_just_under_and_over_the_threshold(spark):
    # broker 3 takes 428 after 299 s and 301 s
    for delay, found in ((299, []), (301, ["payments-2@broker-3"])):
        rows = [started(3, 0, 1, 426), sent(10, 0, 3, 428), alive(3, 59),
                started(3, 10 + delay // 60, delay % 60, 428)]
        assert [f["entity"] for f in run(spark, rows)] == found, delay
    rows = [started(3, 0, 1, 426), sent(10, 0, 3, 428), started(3, 15, 1, 428), alive(3, 59)]
    [f] = run(spark, rows)
    assert (f["first_seen"], f["last_seen"]) == (at(10), at(15, 1))
    assert "behind for 5.0 minutes (06:10:00Z - 06:15:01Z, caught up)" in f["evidence"]
    assert run(spark, rows, min_lag_ms=302_000) == []


def test_a_later_epoch_taken_counts_and_followers_that_log_nothing_are_not_judged(spark):
    rows = [sent(10, 0, 3, 428), started(3, 11, 0, 430), alive(3, 59),
            # become-follower to broker 2, which never logs received requests: no verdict on it
            sent(10, 0, 2, 428, "become-follower"), alive(2, 59)]
    assert run(spark, rows) == []


def test_a_follower_that_logs_received_requests_is_judged(spark):
    rows = [event(2, at(1), "leader_and_isr_received", broker=2, leader=3, leader_epoch=426, **TP),
            sent(10, 0, 2, 428, "become-follower"), alive(2, 59)]
    [f] = run(spark, rows)
    assert (f["entity"], f["first_seen"], f["last_seen"]) == ("payments-2@broker-2", at(10), at(59))


def test_a_broker_without_log_lines_in_the_hour_is_not_judged(spark):
    # the controller elects broker 4 (its state change names it) but broker 4's log did not arrive
    rows = [event(1, at(10), "partition_state_change", leader=4, leader_epoch=9, **TP)]
    assert run(spark, rows) == []
    [f] = run(spark, rows + [alive(4, 40)])
    assert (f["entity"], f["first_seen"]) == ("payments-2@broker-4", at(10))
