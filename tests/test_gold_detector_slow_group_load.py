"""slow_group_load: "Finished loading offsets and group metadata from __consumer_offsets-N in X
milliseconds" above the threshold; the evidence names the groups of that partition."""
from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from fleethealth.gold import thresholds
from fleethealth.gold.detectors import slow_group_load
from fleethealth.gold.facts.core import Facts
from fleethealth.runtime.frames import local_frame

pytestmark = pytest.mark.spark

HOUR = datetime(2026, 11, 21, 8)
EVENTS = ("cluster string, broker_id int, ts timestamp, event_type string, topic string, `partition` int, "
          "duration_ms bigint, `group` string")
T1 = HOUR + timedelta(minutes=10, seconds=3)


def load(broker: int, partition: int, ms: int, at: datetime = T1, topic: str = "__consumer_offsets"):
    return ("c1", broker, at, "group_load_finished", topic, partition, ms, None)


def tombstones(broker: int, group: str):
    return ("c1", broker, HOUR, "tombstone_append_failed", "__consumer_offsets", 38, None, group)


def detect(spark, events, **override):
    from fleethealth.silver import tables as silver

    limits = dict(thresholds.load(), **override)
    hosts = silver.hosts_of(spark, [("c1", f"c1-kafka-{b}", "kafka", b, None, "1.1.0", "UTC", 50, ["kafka"])
                                   for b in (1, 2, 3)])
    facts = Facts(HOUR, hosts, local_frame(spark, events, EVENTS), None, None, None, None, None, None)
    return {r.entity: r for r in slow_group_load.detect(facts, limits).collect()}


def test_both_sides_of_the_threshold(spark):
    events = [load(2, 38, 95_123), load(2, 7, 60_000), load(1, 12, 3), load(2, 38, 95_123, topic="orders"),
              tombstones(2, "consumer-group"), tombstones(2, "billing-service")]
    found = detect(spark, events)
    assert set(found) == {"__consumer_offsets-38@broker-2"}
    f = found["__consumer_offsets-38@broker-2"]
    assert (f.kind, f.severity, f.first_seen, f.last_seen, f.hour) == ("slow_group_load", "major", T1, T1, HOUR)
    # consumer-group -> abs(hashCode) % 50 = 38; billing-service lives elsewhere
    assert f.evidence == ("'Finished loading offsets and group metadata from __consumer_offsets-38 in 95123 "
                          "milliseconds' > 60000 ms; groups coordinated by this partition: consumer-group")
    assert set(detect(spark, events, **{"slow_group_load.max_duration_ms": 59_999})) == {
        "__consumer_offsets-38@broker-2", "__consumer_offsets-7@broker-2"}
    assert detect(spark, events, **{"slow_group_load.max_duration_ms": 95_123}) == {}


def test_repeated_slow_loads_in_the_hour_and_no_known_groups(spark):
    later = T1 + timedelta(minutes=20)
    found = detect(spark, [load(3, 5, 70_000), load(3, 5, 80_000, later)])
    f = found["__consumer_offsets-5@broker-3"]
    assert (f.first_seen, f.last_seen) == (T1, later)
    assert f.evidence == ("'Finished loading offsets and group metadata from __consumer_offsets-5 in 80000 "
                          "milliseconds' > 60000 ms; 2 slow loads this hour")
