"""leader_election_storm at both sides of min_partitions and window_ms: a broker failure callback and
the partitions moved away from the lost broker; preferred-replica moves back do not count."""
from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from pyspark.sql import types as T

from fleethealth.gold import detectors, thresholds
from fleethealth.gold.detectors import leader_election_storm
from fleethealth.gold.facts.core import Facts
from fleethealth.silver import tables as silver
from fleethealth.runtime.frames import local_frame

pytestmark = pytest.mark.spark

HOUR = datetime(2026, 11, 21, 6)
KAFKA = T.StructType([T.StructField(n, t) for n, t in [
    ("cluster", T.StringType()), ("host", T.StringType()), ("broker_id", T.IntegerType()),
    ("ts", T.TimestampType()), ("event_type", T.StringType()), ("controller", T.IntegerType()),
    ("brokers", T.ArrayType(T.IntegerType())), ("topic", T.StringType()), ("partition", T.IntegerType()),
    ("from_state", T.StringType()), ("to_state", T.StringType()), ("leader", T.IntegerType()),
    ("broker", T.IntegerType()), ("role", T.StringType()), ("transition", T.StringType()),
    ("prev_leader", T.IntegerType()), ("isr", T.ArrayType(T.IntegerType()))]])
T0 = datetime(2026, 11, 21, 6, 35, 0, 17_000)   # "Broker failure callback for 8"
PARTS = [("orders", p) for p in range(4)] + [("__consumer_offsets", p) for p in (2, 5, 8)]   # 7 led by 8


def ev(ts, event_type, broker_id=6, **kw):
    row = dict.fromkeys(KAFKA.fieldNames())
    row.update(cluster="c1", host=f"c1-kafka-{broker_id}", broker_id=broker_id, ts=ts, event_type=event_type, **kw)
    return tuple(row[n] for n in KAFKA.fieldNames())


def failover(t0=T0, parts=PARTS, lost=8, new=7, offline_states=True):
    """The controller's callback, each partition Online -> Offline -> Online on `new`, and `new` taking over."""
    out = [ev(t0, "broker_failure_callback", controller=6, brokers=[lost])]
    for i, (tn, p) in enumerate(parts):
        ms = t0 + timedelta(milliseconds=2 + i)
        if offline_states:
            out += [ev(ms, "partition_state_change", controller=6, topic=tn, partition=p,
                       from_state="OnlinePartition", to_state="OfflinePartition"),
                    ev(ms, "partition_state_change", controller=6, topic=tn, partition=p,
                       from_state="OfflinePartition", to_state="OnlinePartition", leader=new)]
        out.append(ev(ms + timedelta(milliseconds=50), "leader_epoch_start", broker_id=new, topic=tn, partition=p,
                      broker=new, leader=new, role="leader"))
    return out


def back(t1, parts=PARTS, lost=8):
    """A preferred-replica election: leadership returns to `lost`."""
    return [ev(t1 + timedelta(milliseconds=i), "leader_epoch_start", broker_id=lost, topic=tn, partition=p,
               broker=lost, leader=lost, role="leader") for i, (tn, p) in enumerate(parts)]


def detect(spark, kafka, **overrides):
    facts = Facts(HOUR, silver.hosts_of(spark, []), local_frame(spark, kafka, KAFKA),
                  None, None, None, None, None, None)
    limits = {**thresholds.load(), **{f"leader_election_storm.{k}": v for k, v in overrides.items()}}
    return detectors.run(leader_election_storm, facts, limits).collect()


def test_failure_callback_storm_names_the_lost_broker(spark):
    [f] = detect(spark, failover() + back(T0 + timedelta(minutes=2)), min_partitions=7)
    assert (f.cluster, f.kind, f.severity, f.entity) == ("c1", "leader_election_storm", "critical", "broker-8")
    assert (f.first_seen, f.last_seen, f.hour) == (T0, T0 + timedelta(milliseconds=58), HOUR)
    assert f.evidence == (
        "controller 6: 'Broker failure callback' for 8 at 06:35:00.017Z; "
        "7 partitions changed leader within 300000 ms (>= min_partitions 7) away from broker 8, 3 of them "
        "__consumer_offsets (coordinator moves: their groups rebalance); "
        "signals: Offline->Online, Online->Offline, starts at Leader Epoch (7 Online->Offline, 7 'starts at Leader Epoch')")


def test_min_partitions_both_sides(spark):
    assert len(detect(spark, failover(), min_partitions=7)) == 1
    # the moves back to broker 8 are the same partitions, and go to the lost broker: no eighth partition
    assert detect(spark, failover() + back(T0 + timedelta(minutes=2)), min_partitions=8) == []


def test_window_both_sides(spark):
    late = [("payments", p) for p in range(3)]
    kafka = failover() + failover(T0 + timedelta(seconds=59), late)[1:]   # 3 more partitions 59 s later
    [f] = detect(spark, kafka, min_partitions=10, window_ms=60_000)
    assert f.evidence.split("; ")[1].startswith("10 partitions changed leader within 60000 ms (>= min_partitions 10)")
    assert f.last_seen == T0 + timedelta(seconds=59, milliseconds=54)
    assert detect(spark, kafka, min_partitions=10, window_ms=58_000) == []


def test_from_2_6_without_offline_transitions_the_new_leaders_count(spark):
    [f] = detect(spark, failover(offline_states=False), min_partitions=7)
    assert (f.entity, f.first_seen) == ("broker-8", T0)
    assert f.evidence.endswith("signals: starts at Leader Epoch (0 Online->Offline, 7 'starts at Leader Epoch')")


def test_offline_partitions_without_a_callback_name_the_controller(spark):
    kafka = failover()[1:]
    [f] = detect(spark, kafka, min_partitions=7)
    assert (f.entity, f.first_seen) == ("broker-6", T0 + timedelta(milliseconds=2))
    assert f.evidence.startswith("controller 6: partition Online -> Offline at 06:35:00.019Z; 7 partitions changed "
                                 "leader within 300000 ms (>= min_partitions 7), 3 of them")


def test_preferred_replica_elections_alone_are_no_storm(spark):
    assert detect(spark, back(T0) + back(T0 + timedelta(minutes=5)), min_partitions=2) == []


def fencing(t0=T0, parts=PARTS, lost=2, new=3):
    """KRaft: the active controller fences `lost`; the new leaders' state-change lines (3.x/4.x)."""
    out = [ev(t0, "broker_fenced", broker_id=3000, controller=3000, broker=lost),
           ev(t0 + timedelta(milliseconds=1), "partitions_changed", broker_id=3000, controller=3000)]
    out += [ev(t0 + timedelta(milliseconds=30 + i), "leader_epoch_start", broker_id=new, topic=tn, partition=p,
               broker=new, leader=new, role="leader") for i, (tn, p) in enumerate(parts)]
    return out


def test_kraft_a_fencing_starts_the_storm_of_the_fenced_broker(spark):
    [f] = detect(spark, fencing() + back(T0 + timedelta(minutes=1), lost=2), min_partitions=7)
    assert (f.entity, f.first_seen, f.last_seen) == ("broker-2", T0, T0 + timedelta(milliseconds=36))
    assert f.evidence == (
        "controller 3000: 'Fencing broker' (session timed out) for 2 at 06:35:00.017Z; "
        "7 partitions changed leader within 300000 ms (>= min_partitions 7) away from broker 2, 3 of them "
        "__consumer_offsets (coordinator moves: their groups rebalance); "
        "signals: starts at Leader Epoch (0 Online->Offline, 7 'starts at Leader Epoch')")
    assert detect(spark, fencing(), min_partitions=8) == []


def test_kraft_a_window_without_a_lost_broker_is_named_after_its_controllers_role(spark):
    from detector_frames import kraft_hosts

    kafka = [ev(T0 + timedelta(milliseconds=i), "partition_state_change", broker_id=3000, controller=3000, topic=tn,
                partition=p, from_state="OnlinePartition", to_state="OfflinePartition")
             for i, (tn, p) in enumerate(PARTS)]
    facts = Facts(HOUR, kraft_hosts(spark), local_frame(spark, kafka, KAFKA), None, None, None, None, None, None)
    limits = {**thresholds.load(), "leader_election_storm.min_partitions": 7}
    assert [f.entity for f in detectors.run(leader_election_storm, facts, limits).collect()] == ["controller-3000"]
