"""coordinators.groups_by_partition, and the `groups` column of gold.consumer_offsets_partitions (with the
bloat evidence naming them): consumer-group -> __consumer_offsets-38 of 50 (Java hashCode)."""
from __future__ import annotations

import pytest
from detector_frames import HOUR, at, event, events
from pyspark.sql import functions as F

from fleethealth.gold import thresholds
from fleethealth.gold.detectors import offsets_partition_bloat
from fleethealth.gold.facts.coordinators import groups_by_partition
from fleethealth.gold.facts.core import Facts, offsets_partitions
from fleethealth.quality import suites as quality
from fleethealth.silver import tables as silver
from fleethealth.runtime.frames import local_frame

pytestmark = pytest.mark.spark

GROUPS = ("cluster string, broker_id int, ts timestamp, event_type string, topic string, `partition` int, "
          "`group` string")
JMX = ("cluster string, broker_id int, ts timestamp, domain string, props map<string,string>, attribute string, "
       "value double")
SIZES = ("cluster string, broker_id int, topic string, `partition` int, is_future boolean, captured_at timestamp, "
         "size_bytes bigint")
GIB = 1024 ** 3


def hosts(spark, partitions=None):
    partitions = partitions or {"c1": 50}
    return silver.hosts_of(spark, [(c, f"{c}-kafka-{b}", "kafka", b, None, "1.1.0", "UTC", n, ["kafka"])
                                  for c, n in partitions.items() for b in (1, 2)])


def named(spark, pairs):
    return (local_frame(spark, [(c, 2, at(1), "tombstone_append_failed", None, None, g) for c, g in pairs], GROUPS)
            .withColumn("hour", F.lit(HOUR)))


def by_partition(df):
    return sorted((r.cluster, r.partition, r.groups) for r in df.collect())


def test_groups_by_partition_with_the_cluster_partition_count(spark):
    ev = named(spark, [("c1", "consumer-group"), ("c1", "billing-service"), ("c1", "consumer-group"),
                       ("c1", "Aa"), ("c1", "BB"), ("c2", "consumer-group"), ("c2", "a"), ("c1", None)])
    df = groups_by_partition(ev, hosts(spark, {"c1": 50, "c2": 7}))
    assert [(f.name, f.dataType.simpleString()) for f in df.schema.fields] == [
        ("cluster", "string"), ("partition", "int"), ("hour", "timestamp"), ("groups", "array<string>")]
    assert by_partition(df) == [("c1", 12, ["Aa", "BB"]), ("c1", 38, ["consumer-group"]),
                                ("c1", 39, ["billing-service"]), ("c2", 6, ["a", "consumer-group"])]
    # no inventory (unit tests), or a cluster missing from it: 50 partitions
    assert by_partition(groups_by_partition(ev.where("cluster = 'c2'"), None)) == [
        ("c2", 38, ["consumer-group"]), ("c2", 47, ["a"])]
    assert by_partition(groups_by_partition(ev.where("cluster = 'c2'"), hosts(spark))) == [
        ("c2", 38, ["consumer-group"]), ("c2", 47, ["a"])]
    # events without a `group` column: none
    assert groups_by_partition(events(spark, []).drop("group"), None).collect() == []


def offsets_facts(spark, kafka, with_hosts=True):
    mbean = {"type": "Log", "name": "Size", "topic": "__consumer_offsets"}
    jmx = local_frame(spark, 
        [("c1", 2, at(m), "kafka.log", {**mbean, "partition": str(p)}, "Value", float(size))
         for p, m, size in ((38, 5, GIB), (38, 50, 3 * GIB), (7, 5, 1000), (7, 50, 1000))], JMX)
    sizes = local_frame(spark, [("c1", 1, "__consumer_offsets", 38, False, at(30), 2000)], SIZES)
    return Facts(HOUR, hosts(spark) if with_hosts else None, kafka, jmx, None, sizes, None, None, None)


def test_offsets_partitions_groups_column_and_bloat_evidence(spark):
    kafka = named(spark, [("c1", "consumer-group"), ("c1", "billing-service")])
    for with_hosts in (True, False):
        facts = offsets_facts(spark, kafka, with_hosts)
        df = offsets_partitions(facts)
        assert df.schema["groups"].dataType.simpleString() == "array<string>"
        assert sorted((r.broker_id, r.partition, r.size_source, r.groups) for r in df.collect()) == [
            (1, 38, "logdirs", ["consumer-group"]), (2, 7, "jmx", []), (2, 38, "jmx", ["consumer-group"])]
    facts.offsets_partitions = df
    [f] = offsets_partition_bloat.detect(facts, thresholds.load()).collect()
    assert f.entity == "__consumer_offsets-38@broker-2"
    assert f.evidence == ("size 3.00 GiB > 1.00 GiB (jmx); grew 2.00 GiB this hour > 0.25 GiB without compaction; "
                          "no compaction seen this hour; groups coordinated by this partition: consumer-group")
    results = quality.validate_tables({"gold.consumer_offsets_partitions": df}, hour=HOUR, data_docs_dir=None)
    quality.enforce(results)
    assert [r.expectation for r in results if not r.success] == []


def test_no_group_named_empty_groups_and_unchanged_evidence(spark):
    facts = offsets_facts(spark, events(spark, [event(2, at(1), "other")]))
    facts.offsets_partitions = offsets_partitions(facts)
    assert {r.groups == [] for r in facts.offsets_partitions.collect()} == {True}
    [f] = offsets_partition_bloat.detect(facts, thresholds.load()).collect()
    assert f.evidence.endswith("without compaction; no compaction seen this hour")
