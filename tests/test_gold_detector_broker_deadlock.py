"""broker_deadlock: a thread-dump deadlock cycle gives one finding per broker-hour; known bugs by
signature AND the broker's inventory version (the same answer as known_bugs.bugs_matching)."""
from __future__ import annotations

from datetime import datetime

import pytest

from fleethealth.gold import detectors, known_bugs, thresholds
from fleethealth.gold.detectors import broker_deadlock
from fleethealth.gold.facts import deadlocks
from fleethealth.gold.facts.core import Facts
from fleethealth.runtime.frames import local_frame

pytestmark = pytest.mark.spark

HOUR = datetime(2026, 11, 21, 6)
DEADLOCKS = ("cluster string, host string, broker_id int, captured_at timestamp, deadlock int, "
             "cycle_threads array<string>, cycle_lock_classes array<string>, thread_name string, "
             "waiting_lock_class string, held_by string")
GM, LL = "kafka.coordinator.GroupMetadata", "java.util.LinkedList"
PM1 = [("executor-Heartbeat", GM, "group-metadata-manager-0"),
       ("group-metadata-manager-0", LL, "kafka-request-handler-3"),
       ("kafka-request-handler-3", GM, "executor-Heartbeat")]


def rows(broker: int, at: datetime, cycle=PM1, deadlock: int = 1):
    threads = [t for t, _, _ in cycle]
    classes = list(dict.fromkeys(c for _, c, _ in cycle))
    return [("c1", f"c1-kafka-{broker}", broker, at, deadlock, threads, classes, t, c, h) for t, c, h in cycle]


def detect(spark, deadlock_rows, versions):
    from fleethealth.silver import tables as silver

    hosts = silver.hosts_of(spark, [("c1", f"c1-kafka-{b}", "kafka", b, None, v, "UTC", 50, ["threaddumps"])
                                   for b, v in versions.items()])
    facts = Facts(HOUR, hosts, None, None, None, None, None, None, local_frame(spark, deadlock_rows, DEADLOCKS))
    return {r.entity: r for r in detectors.run(broker_deadlock, facts, thresholds.load()).collect()}


def test_pm1_cycle_on_0_10_1_0_names_threads_locks_and_the_bugs(spark):
    t1, t2 = datetime(2026, 11, 21, 6, 30, 5), datetime(2026, 11, 21, 6, 45, 0)
    found = detect(spark, rows(219, t1) + rows(219, t2), {217: "0.10.1.0", 219: "0.10.1.0"})
    assert set(found) == {"broker-219"}
    f = found["broker-219"]
    assert (f.kind, f.severity, f.cluster, f.first_seen, f.last_seen, f.hour) == (
        "broker_deadlock", "critical", "c1", t1, t2, HOUR)
    assert f.known_bug == "KAFKA-3994,KAFKA-4399,KAFKA-4478,KAFKA-4562"
    assert f.evidence == (
        "Java-level deadlock of 3 threads (executor-Heartbeat, group-metadata-manager-0, kafka-request-handler-3) "
        "on java.util.LinkedList, kafka.coordinator.GroupMetadata in 2 thread dump(s) from 2026-11-21 06:30:05Z: "
        "executor-Heartbeat waits for a kafka.coordinator.GroupMetadata held by group-metadata-manager-0, "
        "group-metadata-manager-0 waits for a java.util.LinkedList held by kafka-request-handler-3, "
        "kafka-request-handler-3 waits for a kafka.coordinator.GroupMetadata held by executor-Heartbeat; "
        "signature and Kafka 0.10.1.0 match KAFKA-3994, KAFKA-4399, KAFKA-4478, KAFKA-4562")


def test_the_same_cycle_after_the_fix_version_or_without_a_version_matches_no_bug(spark):
    at = datetime(2026, 11, 21, 6, 30)
    found = detect(spark, rows(218, at) + rows(219, at), {218: "0.10.1.1", 219: None})
    assert set(found) == {"broker-218", "broker-219"}
    assert found["broker-218"].known_bug is None and found["broker-219"].known_bug is None
    assert "match" not in found["broker-218"].evidence


def test_no_cycle_no_finding(spark):
    assert detect(spark, [], {219: "0.10.1.0"}) == {}


def test_spark_signature_match_agrees_with_bugs_matching(spark):
    # a cycle that lacks executor-Heartbeat: only KAFKA-4399's two-thread signature holds
    two = [("group-metadata-manager-0", LL, "kafka-request-handler-3"),
           ("kafka-request-handler-3", GM, "group-metadata-manager-0")]
    at = datetime(2026, 11, 21, 6, 30)
    found = detect(spark, rows(219, at, two), {219: "0.10.1.0"})
    expected = known_bugs.bugs_matching("0.10.1.0", threads=[t for t, _, _ in two], lock_classes=[GM, LL])
    assert found["broker-219"].known_bug == ",".join(sorted(b.id for b in expected)) == "KAFKA-4399"
    # 5970's cycle (group.GroupMetadata + DelayedProduce) on 0.11.0.1, not on 0.11.0.2
    dp = [("kafka-request-handler-1", "kafka.coordinator.group.GroupMetadata", "executor-Heartbeat"),
          ("executor-Heartbeat", "kafka.server.DelayedProduce", "kafka-request-handler-1")]
    found = detect(spark, rows(1, at, dp) + rows(2, at, dp), {1: "0.11.0.1", 2: "0.11.0.2"})
    assert found["broker-1"].known_bug == "KAFKA-5970" and found["broker-2"].known_bug is None
    assert [b.id for b in known_bugs.bugs_matching("0.11.0.1", threads=["kafka-request-handler-1", "executor-Heartbeat"],
                                                   lock_classes=["kafka.coordinator.group.GroupMetadata",
                                                                 "kafka.server.DelayedProduce"])] == ["KAFKA-5970"]


def test_gold_deadlocks_one_row_per_broker_hour_and_cycle(spark):
    from fleethealth.silver import tables as silver

    t1, t2 = datetime(2026, 11, 21, 6, 30, 5), datetime(2026, 11, 21, 6, 45, 0)
    two = [("group-metadata-manager-0", LL, "kafka-request-handler-3"),
           ("kafka-request-handler-3", GM, "group-metadata-manager-0")]
    hosts = silver.hosts_of(spark, [("c1", "c1-kafka-219", "kafka", 219, None, "0.10.1.0", "UTC", 50,
                                     ["threaddumps"])])
    dl = local_frame(spark, rows(219, t1) + rows(219, t2) + rows(219, t2, two, deadlock=2), DEADLOCKS)
    facts = Facts(HOUR, hosts, None, None, None, None, None, None, dl)
    got = sorted(deadlocks.deadlock_facts(facts).collect(), key=lambda r: r.dumps)
    assert [(r.broker_id, r.kafka_version, r.hour, r.cycle_threads, r.lock_classes, r.first_seen, r.last_seen,
             r.dumps, r.known_bugs) for r in got] == [
        (219, "0.10.1.0", HOUR, ["group-metadata-manager-0", "kafka-request-handler-3"], [LL, GM], t2, t2, 1,
         ["KAFKA-4399"]),
        (219, "0.10.1.0", HOUR, [t for t, _, _ in PM1], [LL, GM], t1, t2, 2,
         ["KAFKA-3994", "KAFKA-4399", "KAFKA-4478", "KAFKA-4562"])]
    assert [(w.thread_name, w.waiting_lock_class, w.held_by) for w in got[1].waits] == PM1
