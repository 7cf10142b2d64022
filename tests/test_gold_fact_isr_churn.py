"""gold.isr_churn: ISR shrinks/expands/updates per (cluster, topic, partition, leader broker, hour)."""
from __future__ import annotations

from datetime import datetime

import pytest

from fleethealth.gold.facts.core import Facts
from fleethealth.gold.facts.isr_churn import isr_churn
from fleethealth.quality import suites as quality
from fleethealth.runtime.frames import local_frame

pytestmark = pytest.mark.spark

HOUR = datetime(2026, 11, 21, 6)
EVENTS = ("cluster string, broker_id int, ts timestamp, event_type string, broker int, topic string, "
          "partition int, isr_before array<int>, isr_after array<int>, isr array<int>, peer_broker int")
SCHEMA = [("cluster", "string"), ("topic", "string"), ("partition", "int"), ("broker", "int"),
          ("hour", "timestamp"), ("shrinks", "int"), ("expands", "int"), ("updates", "int"),
          ("skipped_updates", "int"), ("first_change_ts", "timestamp"), ("last_change_ts", "timestamp"),
          ("isr_first", "array<int>"), ("isr_last", "array<int>"), ("min_isr_size", "int"),
          ("max_isr_size", "int"), ("shrunk_to_leader", "boolean"), ("under_replicated_at_end", "boolean"),
          ("dropped_brokers", "array<int>")]


def at(minute: int, second: float = 0) -> datetime:
    return HOUR.replace(minute=minute, second=int(second), microsecond=int(round((second % 1) * 1e6)))


def ev(broker_id, ts, event_type, topic=None, partition=None, before=None, after=None, isr=None,
       broker="same", cluster="c1", peer_broker=None):
    broker = broker_id if broker == "same" else broker
    return (cluster, broker_id, ts, event_type, broker, topic, partition, before, after, isr, peer_broker)


def build(spark, rows):
    facts = Facts(HOUR, None, local_frame(spark, rows, EVENTS), None, None, None, None, None, None)
    return facts.table("gold.isr_churn", {})


def rows(df):
    return sorted((tuple(r) for r in df.collect()), key=lambda r: (r[0], r[1], r[2], r[3]))


# 0.10-style: "Partition [orders,0] on broker 1: Shrinking ISR for partition [orders,0] from 1,2,3 to 1,2"
OLD = [ev(1, at(10), "isr_shrink", "orders", 0, [1, 2, 3], [1, 2]),
       ev(1, at(20), "isr_shrink", "orders", 0, [1, 2], [1]),
       ev(1, at(40), "isr_expand", "orders", 0, [1], [1, 2]),
       ev(1, at(41), "isr_update_skipped", "orders", 0)]
# 2.7+-style: "[Partition orders-1 broker=2] Shrinking ISR from 2,3,1 to 2,1" + "ISR updated to 2,1 ..."
NEW = [ev(2, at(5), "isr_shrink", "orders", 1, [2, 3, 1], [2, 1]),
       ev(2, at(5, 0.1), "isr_updated", "orders", 1, isr=[2, 1]),
       ev(2, at(30), "isr_expand", "orders", 1, [2, 1], [2, 1, 3]),
       ev(2, at(30, 0.05), "isr_updated", "orders", 1, isr=[2, 1, 3])]
NOISE = [ev(3, at(15), "fetch_disconnected", peer_broker=1), ev(3, at(16), "other")]


def test_schema(spark):
    assert build(spark, OLD).dtypes == SCHEMA


def test_old_and_new_format_sequences_on_two_partitions_and_brokers(spark):
    # given in scrambled order: the sequence is the timestamps'
    df = build(spark, NOISE + NEW[::-1] + OLD[::-1])
    assert rows(df) == [
        ("c1", "orders", 0, 1, HOUR, 2, 1, 0, 1, at(10), at(41), [1, 2, 3], [1, 2], 1, 3, True, True, [2, 3]),
        ("c1", "orders", 1, 2, HOUR, 1, 1, 2, 0, at(5), at(30, 0.05), [2, 3, 1], [2, 1, 3], 2, 3, False, False,
         [3]),
    ]


def test_shrink_to_the_leader_alone(spark):
    df = build(spark, [ev(3, at(12), "isr_shrink", "payments", 7, [3, 1], [3]),
                       ev(3, at(12, 0.2), "isr_updated", "payments", 7, isr=[3]),
                       # a follower's log has no ISR lines of this partition; another cluster's is apart
                       ev(3, at(50), "isr_shrink", "payments", 7, [3, 2], [3], cluster="c2")])
    assert rows(df) == [
        ("c1", "payments", 7, 3, HOUR, 1, 0, 1, 0, at(12), at(12, 0.2), [3, 1], [3], 1, 2, True, True, [1]),
        ("c2", "payments", 7, 3, HOUR, 1, 0, 0, 0, at(50), at(50), [3, 2], [3], 1, 2, True, True, [2]),
    ]


def test_updates_only_chain_through_the_previous_isr(spark):
    # 2.7+ without the Shrinking line: what an update dropped is known from the update before it;
    # the leader is the line's broker, else the logging host's broker_id
    df = build(spark, [ev(4, at(1), "isr_updated", "t", 2, isr=[4, 5, 6], broker=None),
                       ev(4, at(2), "isr_update_skipped", "t", 2, broker=None),
                       ev(4, at(3), "isr_updated", "t", 2, isr=[4], broker=None)])
    assert rows(df) == [
        ("c1", "t", 2, 4, HOUR, 0, 0, 2, 1, at(1), at(3), None, [4], 1, 3, True, True, [5, 6]),
    ]


def test_skipped_updates_only(spark):
    df = build(spark, [ev(5, at(8), "isr_update_skipped", "t", 0)])
    assert rows(df) == [("c1", "t", 0, 5, HOUR, 0, 0, 0, 1, at(8), at(8), None, None, None, None, False, None, [])]


def test_an_hour_without_isr_events_is_empty(spark):
    df = build(spark, NOISE)
    assert df.dtypes == SCHEMA
    assert df.collect() == []


def test_quality_suite_passes(spark):
    df = build(spark, OLD + NEW + NOISE)
    results = quality.validate_tables({"gold.isr_churn": df}, hour=HOUR, data_docs_dir=None)
    assert results and all(r.success for r in results), [r for r in results if not r.success]
    quality.enforce(results)
