"""gold.leader_elections: one row per leader-change window (failure callback, KRaft fence, leaders the brokers
took over from a broker out of their ISR, or Offline transition), storms or not, with the __consumer_offsets partitions moved and the consumer groups they coordinate."""
from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from pyspark.sql import types as T

from fleethealth.gold import thresholds
from fleethealth.gold.detectors import leader_election_storm
from fleethealth.gold.facts import leader_elections
from fleethealth.gold.facts.core import Facts
from fleethealth.quality import suites as quality
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
    ("group", T.StringType()), ("prev_leader", T.IntegerType()), ("isr", T.ArrayType(T.IntegerType()))]])
T0 = datetime(2026, 11, 21, 6, 35, 0, 17_000)   # "Broker failure callback for 8"
# 7 partitions led by 8; consumer-group lives on __consumer_offsets-38 (of 50), billing-service on 39
PARTS = [("orders", p) for p in range(5)] + [("__consumer_offsets", p) for p in (2, 38)]
SIGNALS = ["Offline->Online", "Online->Offline", "starts at Leader Epoch"]
COLUMNS = [("cluster", "string"), ("hour", "timestamp"), ("trigger_ts", "timestamp"), ("trigger", "string"),
           ("controller", "int"), ("lost_broker", "int"), ("partitions", "int"), ("offsets_partitions", "int"),
           ("offsets_partition_list", "array<int>"), ("groups", "array<string>"), ("signals", "array<string>"),
           ("offline", "int"), ("epochs", "int"), ("last_change_ts", "timestamp"), ("window_ms", "bigint"),
           ("storm", "boolean")]


def ev(ts, event_type, broker_id=6, cluster="c1", **kw):
    row = dict.fromkeys(KAFKA.fieldNames())
    row.update(cluster=cluster, host=f"{cluster}-kafka-{broker_id}", broker_id=broker_id, ts=ts,
               event_type=event_type, **kw)
    return tuple(row[n] for n in KAFKA.fieldNames())


def failover(t0=T0, parts=PARTS, lost=8, new=7, cluster="c1"):
    out = [ev(t0, "broker_failure_callback", cluster=cluster, controller=6, brokers=[lost])]
    for i, (tn, p) in enumerate(parts):
        ms = t0 + timedelta(milliseconds=2 + i)
        out += [ev(ms, "partition_state_change", cluster=cluster, controller=6, topic=tn, partition=p,
                   from_state="OnlinePartition", to_state="OfflinePartition"),
                ev(ms, "partition_state_change", cluster=cluster, controller=6, topic=tn, partition=p,
                   from_state="OfflinePartition", to_state="OnlinePartition", leader=new),
                ev(ms + timedelta(milliseconds=50), "leader_epoch_start", cluster=cluster, broker_id=new, topic=tn,
                   partition=p, broker=new, leader=new, role="leader")]
    return out


def groups_named(cluster="c1"):
    return [ev(HOUR + timedelta(minutes=1), "other", broker_id=7, cluster=cluster, group=g)
            for g in ("consumer-group", "billing-service")]


def hosts(spark):
    return silver.hosts_of(spark, [(c, f"{c}-kafka-{b}", "kafka", b, None, "2.8.2", "UTC", 50, ["kafka"])
                                  for c in ("c1", "c2") for b in (6, 7, 8)])


def facts(spark, kafka):
    return Facts(HOUR, hosts(spark), local_frame(spark, kafka, KAFKA), None, None, None, None, None, None)


def limits(**overrides):
    return {**thresholds.load(), **{f"leader_election_storm.{k}": v for k, v in overrides.items()}}


def build(spark, kafka, **overrides):
    return leader_elections.leader_elections(facts(spark, kafka), limits(**overrides))


def rows(df):
    return sorted((r.asDict() for r in df.collect()), key=lambda r: (r["cluster"], r["trigger_ts"]))


def test_windows_of_several_clusters_storms_or_not(spark):
    t1 = datetime(2026, 11, 21, 6, 50)      # broker 7 lost later: nothing left to move
    t2 = datetime(2026, 11, 21, 6, 20, 5)   # c2: one partition offline, no callback
    kafka = (failover() + groups_named()
             # leadership back to 8 two minutes later: not a change away from the lost broker
             + [ev(T0 + timedelta(minutes=2), "leader_epoch_start", broker_id=8, topic="orders", partition=0,
                   broker=8, leader=8, role="leader")]
             + [ev(t1, "broker_failure_callback", controller=6, brokers=[7])]
             + failover(t2, [("logs", 0)], lost=None, new=2, cluster="c2")[1:])
    df = build(spark, kafka, min_partitions=7)
    assert [(f.name, f.dataType.simpleString()) for f in df.schema.fields] == COLUMNS
    base = dict(hour=HOUR, window_ms=300_000)
    assert rows(df) == [
        dict(base, cluster="c1", trigger_ts=T0, trigger="'Broker failure callback'", controller=6, lost_broker=8,
             partitions=7, offsets_partitions=2, offsets_partition_list=[2, 38], groups=["consumer-group"],
             signals=SIGNALS, offline=7, epochs=7, last_change_ts=T0 + timedelta(milliseconds=58), storm=True),
        dict(base, cluster="c1", trigger_ts=t1, trigger="'Broker failure callback'", controller=6, lost_broker=7,
             partitions=0, offsets_partitions=0, offsets_partition_list=[], groups=[], signals=[], offline=0,
             epochs=0, last_change_ts=None, storm=False),
        dict(base, cluster="c2", trigger_ts=t2 + timedelta(milliseconds=2), trigger="partition Online -> Offline",
             controller=6, lost_broker=None, partitions=1, offsets_partitions=0, offsets_partition_list=[],
             groups=[], signals=SIGNALS, offline=1, epochs=1, last_change_ts=t2 + timedelta(milliseconds=52),
             storm=False)]
    # below the default min_partitions (10) the window stays, as no storm
    assert [r["storm"] for r in rows(build(spark, kafka))] == [False, False, False]


def test_window_ms_and_min_partitions_bound_the_window(spark):
    kafka = failover() + groups_named() + failover(T0 + timedelta(seconds=59), [("__consumer_offsets", 39)])[1:]
    [r] = rows(build(spark, kafka, min_partitions=8, window_ms=60_000))
    assert (r["partitions"], r["offsets_partition_list"], r["groups"], r["storm"], r["window_ms"]) == (
        8, [2, 38, 39], ["billing-service", "consumer-group"], True, 60_000)
    assert r["last_change_ts"] == T0 + timedelta(seconds=59, milliseconds=52)
    # a shorter window ends before the 39 move: 7 partitions, no storm at 8; 39 going Offline outside the
    # callback's window starts a window of its own
    first, second = rows(build(spark, kafka, min_partitions=8, window_ms=58_000))
    assert (first["trigger_ts"], first["partitions"], first["offsets_partition_list"], first["groups"],
            first["storm"]) == (T0, 7, [2, 38], ["consumer-group"], False)
    assert (second["trigger_ts"], second["trigger"], second["lost_broker"], second["partitions"],
            second["offsets_partition_list"], second["groups"]) == (
        T0 + timedelta(seconds=59, milliseconds=2), "partition Online -> Offline", None, 1, [39], ["billing-service"])


def test_detect_keeps_the_storm_rows_of_the_table(spark):
    f = facts(spark, failover() + groups_named())
    [found] = leader_election_storm.detect(f, limits(min_partitions=7)).collect()
    assert "gold.leader_elections" in f.derived
    assert (found.entity, found.first_seen) == ("broker-8", T0)
    assert leader_election_storm.detect(facts(spark, failover()), limits(min_partitions=8)).collect() == []


def test_no_trigger_no_row(spark):
    kafka = [ev(T0, "leader_epoch_start", broker_id=8, topic="orders", partition=0, broker=8, leader=8, role="leader")]
    df = build(spark, kafka)
    assert df.collect() == [] and [f.name for f in df.schema.fields] == [n for n, _ in COLUMNS]


def test_gx_suite_passes_on_the_built_table(spark):
    kafka = failover() + groups_named() + failover(datetime(2026, 11, 21, 6, 20, 5), [("logs", 0)], cluster="c2")[1:]
    results = quality.validate_tables({"gold.leader_elections": build(spark, kafka)}, hour=HOUR, data_docs_dir=None)
    quality.enforce(results)
    assert [r.expectation for r in results if not r.success] == []


def took_over(t0, lost, new, parts, isr, cluster="c1"):
    """KRaft state-change.log lines of `new` leading `parts` after `lost`: "Leader t-p with topic id Some(..)
    starts at leader epoch .. ISR [..] .. Previous leader Some(lost) and previous leader epoch was .."."""
    return [ev(t0 + timedelta(milliseconds=2 + i), "leader_epoch_start", broker_id=new, cluster=cluster, topic=tn,
               partition=p, broker=new, leader=new, role="leader", prev_leader=lost, isr=isr)
            for i, (tn, p) in enumerate(parts)]


def test_brokers_alone_show_a_lost_broker_by_the_partitions_taken_from_it(spark):
    """A KRaft cluster listed without its controllers: no fence line, the brokers' own take-overs trigger."""
    parts = [("orders", p) for p in range(12)]
    t_back = T0 + timedelta(minutes=20)
    t_again = T0 + timedelta(minutes=30)
    kafka = (took_over(T0, 2, 3, parts[:6], [3, 1]) + took_over(T0 + timedelta(seconds=1), 2, 1, parts[6:], [1, 3])
             # the preferred election giving them back to 2 (1 and 3 stay in the ISR): no trigger
             + took_over(t_back, 3, 2, parts[:6], [2, 3, 1]) + took_over(t_back, 1, 2, parts[6:], [2, 1, 3])
             # 2 announces its controlled shutdown, then its leaders move: no trigger
             + [ev(t_again - timedelta(seconds=3), "broker_state_changed", broker_id=2, broker=2,
                   from_state="RUNNING", to_state="PENDING_CONTROLLED_SHUTDOWN")]
             + took_over(t_again, 2, 3, parts, [3, 1])
             # c2: the active controller's fence is there: its trigger alone
             + [ev(T0, "broker_fenced", cluster="c2", controller=9, broker=2)]
             + took_over(T0 + timedelta(milliseconds=40), 2, 3, parts, [3, 1], cluster="c2"))
    got = rows(build(spark, kafka))
    assert [(r["cluster"], r["trigger_ts"], r["trigger"], r["controller"], r["lost_broker"], r["partitions"],
             r["storm"]) for r in got] == [
        ("c1", T0 + timedelta(milliseconds=2), "leaders moved off it (brokers' state-change.log)", None, 2, 12, True),
        ("c2", T0, "'Fencing broker' (session timed out)", 9, 2, 12, True)]
    [found] = [f for f in leader_election_storm.detect(facts(spark, kafka), limits()).collect() if f.cluster == "c1"]
    assert (found.entity, found.first_seen) == ("broker-2", T0 + timedelta(milliseconds=2))
    assert found.evidence.startswith("broker 2: leaders moved off it (brokers' state-change.log) at 06:35:00.019Z"
                                     " (its fence is logged by the active controller only); 12 partitions")
