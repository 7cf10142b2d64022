"""broker_flapping at both sides of its thresholds: losses in the window, the window, one loss = one episode."""
from __future__ import annotations

import pytest
from detector_frames import at, event, events, facts, findings

from fleethealth.gold import thresholds
from fleethealth.gold.detectors import broker_flapping

pytestmark = pytest.mark.spark


def loss(broker: int, minute: int, controller: int = 1) -> list[tuple]:
    """One ZooKeeper session loss as Kafka 2.x logs it: three client lines, the controller's view, re-registration."""
    return [event(controller, at(minute, 0.432), "brokers_changed", deleted_brokers=[broker], added_brokers=None),
            event(broker, at(minute, 1.629), "zk_session_expired"),
            event(broker, at(minute, 1.630), "zk_session_expired"),
            event(broker, at(minute, 1.632), "zk_session_expired"),
            event(broker, at(minute, 1.942), "broker_registered", broker=broker),
            event(controller, at(minute, 1.982), "brokers_changed", added_brokers=[broker], deleted_brokers=None)]


def run(spark, rows, **overrides):
    limits = {**thresholds.load(), **{f"broker_flapping.{k}": v for k, v in overrides.items()}}
    return findings(broker_flapping.detect(facts(spark, events(spark, rows)), limits))


def test_four_losses_in_34_minutes_flap_from_the_first(spark):
    rows = [r for m in (10, 20, 31, 44) for r in loss(3, m)]
    [f] = run(spark, rows)
    assert (f["kind"], f["entity"], f["first_seen"], f["last_seen"], f["severity"]) == (
        "broker_flapping", "broker-3", at(10, 0.432), at(44, 1.632), "major")
    assert f["evidence"] == (
        "4 ZooKeeper session losses of broker 3 in 34 minutes (06:10:00Z, 06:20:00Z, 06:31:00Z, 06:44:00Z; "
        ">= 2 within 60 minutes); 4 re-registrations of /brokers/ids/3; "
        "signals: controller: deleted broker, zk_session_expired")


def test_one_loss_is_not_flapping(spark):
    assert run(spark, loss(8, 35)) == []


def test_two_losses_at_the_minimum_flap_one_below_does_not(spark):
    rows = loss(3, 10) + loss(3, 40)
    assert [f["entity"] for f in run(spark, rows)] == ["broker-3"]
    assert run(spark, rows, min_losses=3) == []


def test_losses_further_apart_than_the_window_do_not_flap(spark):
    rows = loss(3, 5) + loss(3, 50)
    assert [f["first_seen"] for f in run(spark, rows, window_minutes=45)] == [at(5, 0.432)]
    assert run(spark, rows, window_minutes=44) == []


def test_signals_further_apart_than_the_episode_gap_are_separate_losses(spark):
    # the controller saw broker 5 go at :00.432; its own expiry lines come 61 s later
    rows = [event(1, at(10, 0.432), "brokers_changed", deleted_brokers=[5]),
            event(5, at(11, 1.5), "zk_session_expired")]
    assert [f["first_seen"] for f in run(spark, rows, episode_gap_s=60)] == [at(10, 0.432)]
    assert run(spark, rows, episode_gap_s=62) == []


def test_legacy_reregistration_counts_and_brokers_are_kept_apart(spark):
    rows = [event(2, at(3), "zk_reregistering", broker=2), event(2, at(30), "zk_reregistering", broker=2),
            event(4, at(3), "zk_session_expired")]
    assert [(f["entity"], f["first_seen"]) for f in run(spark, rows)] == [("broker-2", at(3))]
