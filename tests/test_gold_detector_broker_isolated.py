"""broker_isolated: peers' fetch disconnects naming a broker (at least the threshold) plus one
corroborating signal of that broker (ISR shrunk to itself, UnderReplicatedPartitions, FD growth)."""
from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from fleethealth.gold import detectors, thresholds
from fleethealth.gold.detectors import broker_isolated
from fleethealth.gold.facts.core import Facts
from fleethealth.runtime.frames import local_frame

pytestmark = pytest.mark.spark

HOUR = datetime(2026, 11, 21, 6)
EVENTS = "cluster string, broker_id int, ts timestamp, event_type string, peer_broker int, isr_after array<int>"
JMX = "cluster string, broker_id int, ts timestamp, domain string, props map<string,string>, attribute string, value double"
URP = ("kafka.server", {"type": "ReplicaManager", "name": "UnderReplicatedPartitions"}, "Value")
FDS = ("java.lang", {"type": "OperatingSystem"}, "OpenFileDescriptorCount")


def at(minute: float) -> datetime:
    return HOUR + timedelta(seconds=int(minute * 60))


def disconnects(peer: int, target: int, minutes):
    return [("c1", peer, at(m), "fetch_disconnected", target, None) for m in minutes]


def shrink(broker: int, minute: float, isr):
    return ("c1", broker, at(minute), "isr_shrink", None, isr)


def jmx(broker: int, mbean, values):
    return [("c1", broker, at(5 * i), *mbean, float(v)) for i, v in enumerate(values)]


def detect(spark, events, jmx_rows=(), **override):
    limits = dict(thresholds.load(), **override)
    facts = Facts(HOUR, None, local_frame(spark, events, EVENTS), local_frame(spark, list(jmx_rows), JMX),
                  None, None, None, None, None)
    return {r.entity: r for r in detectors.run(broker_isolated, facts, limits).collect()}


PEERS = disconnects(217, 219, [15.5, 16.0]) + disconnects(218, 219, [15.6])


def test_disconnects_and_isr_shrunk_to_itself(spark):
    found = detect(spark, PEERS + [shrink(219, 15.3, [219]), shrink(219, 15.31, [219])])
    assert set(found) == {"broker-219"}
    f = found["broker-219"]
    assert (f.kind, f.severity, f.first_seen, f.last_seen, f.hour) == (
        "broker_isolated", "critical", at(15.5), at(16.0), HOUR)
    assert f.evidence == ("3 fetches of peer broker(s) 217,218 failed with 'Connection to 219 was disconnected "
                          "before the response was read' (>= 3 in the hour); it shrank the ISR of 2 partition(s) "
                          "to {219} from 06:15:18Z")


def test_below_the_disconnect_threshold_nothing(spark):
    events = PEERS + [shrink(219, 15.3, [219])]
    assert detect(spark, events, **{"broker_isolated.min_peer_disconnects": 4}) == {}


def test_disconnects_alone_are_not_enough(spark):
    # a broker that is restarting or down: peers disconnect, it says nothing; a shrink of some other
    # broker's partitions (or one that keeps a follower) does not corroborate
    events = PEERS + [shrink(219, 15.3, [219, 217]), shrink(217, 15.4, [217])]
    assert detect(spark, events, jmx(219, URP, [0, 0])) == {}


def test_under_replicated_partitions_corroborate(spark):
    found = detect(spark, PEERS, jmx(219, URP, [0, 2]))
    assert found["broker-219"].evidence.endswith("; JMX UnderReplicatedPartitions up to 2 > 0")


def test_fd_growth_both_sides_of_the_factor(spark):
    rows = jmx(219, FDS, [12_800, 20_000, 25_600])
    found = detect(spark, PEERS, rows)
    assert found["broker-219"].evidence.endswith("; OpenFileDescriptorCount grew 12800 -> 25600 this hour (>= 2.0x)")
    assert detect(spark, PEERS, rows, **{"broker_isolated.fd_growth_factor": 2.1}) == {}


def test_a_broker_naming_itself_is_not_a_peer(spark):
    assert detect(spark, disconnects(219, 219, [1, 2, 3]) + [shrink(219, 15.3, [219])]) == {}
