"""gold.cluster_availability_hourly: per (cluster, node, hour) the availability gauges' peaks, the sample times
the node was the active controller, and its log dirs' bytes in the hour's last snapshot."""
from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from detector_frames import HOUR, at, facts, jmx, jmx_sample
from pyspark.sql import functions as F
from pyspark.sql.types import (BooleanType, IntegerType, LongType, StringType, StructField, StructType,
                               TimestampType)

from fleethealth.fleet import mbeans
from fleethealth.gold import thresholds
from fleethealth.quality import suites as quality
from fleethealth.runtime.frames import local_frame

pytestmark = pytest.mark.spark

URP, OFFLINE, MIN_ISR, ACTIVE = (mbeans.UNDER_REPLICATED, mbeans.OFFLINE_PARTITIONS, mbeans.UNDER_MIN_ISR,
                                 mbeans.ACTIVE_CONTROLLER_COUNT)
SCHEMA = [("cluster", "string"), ("broker_id", "int"), ("hour", "timestamp"), ("samples", "int"),
          ("first_ts", "timestamp"), ("last_ts", "timestamp"), ("max_under_replicated", "bigint"),
          ("max_offline", "bigint"), ("max_under_min_isr", "bigint"), ("max_active_controller", "bigint"),
          ("active_controller_samples", "int"), ("log_dirs", "int"), ("log_dir_bytes", "bigint"),
          ("log_dir_at", "timestamp"), ("disk_mountpoint", "string"), ("disk_free_bytes", "bigint"),
          ("disk_size_bytes", "bigint"), ("disk_free_change_per_hour", "double"), ("disk_hours_to_full", "double"),
          ("disk_first_ts", "timestamp"), ("disk_last_ts", "timestamp")]
NO_DISK = (None,) * 7
SIZES = StructType([StructField("cluster", StringType()), StructField("broker_id", IntegerType()),
                    StructField("log_dir", StringType()), StructField("topic", StringType()),
                    StructField("partition", IntegerType()), StructField("size_bytes", LongType()),
                    StructField("is_future", BooleanType()), StructField("captured_at", TimestampType())])


def build(spark, samples, sizes=()):
    f = replace(facts(spark, jmx_samples=jmx(spark, samples)),
                partition_sizes=local_frame(spark, list(sizes), SIZES).withColumn("hour", F.lit(HOUR)))
    return f.table("gold.cluster_availability_hourly", thresholds.load())


def test_schema_and_no_sample(spark):
    df = build(spark, [jmx_sample(1, at(5), mbeans.OPEN_FDS, 100)])    # no sample of the four beans
    assert df.dtypes == SCHEMA
    assert df.collect() == []


def test_gauges_controller_and_log_dirs(spark):
    samples = []
    for m, urp, isr in ((0, 0, 0), (5, 12, 3), (10, 4, 0)):   # broker 1: the controller until :10
        samples += [jmx_sample(1, at(m), URP, urp), jmx_sample(1, at(m), MIN_ISR, isr),
                    jmx_sample(1, at(m), ACTIVE, 1 if m < 10 else 0), jmx_sample(1, at(m), OFFLINE, 2 if m == 5 else 0)]
    samples += [jmx_sample(2, at(10, 3), ACTIVE, 1), jmx_sample(2, at(20, 3), ACTIVE, 1),
                jmx_sample(2, at(20, 3), mbeans.OPEN_FDS, 900),
                jmx_sample(None, at(20), URP, 40),                 # a host missing from the inventory: left out
                jmx_sample(1, at(7), URP, 5, cluster="c2")]
    sizes = [("c1", 1, "/var/lib/kafka/data-0", "t", 0, 1000, False, at(45, 5)),
             ("c1", 1, "/var/lib/kafka/data-1", "t", 1, 500, False, at(45, 5)),
             ("c1", 1, "/var/lib/kafka/data-1", "t", 0, 200, True, at(45, 5)),       # a move: disk too
             ("c1", 1, "/var/lib/kafka/data-0", "t", 0, 900, False, at(15)),         # an earlier snapshot
             ("c1", 3, "/var/lib/kafka/data-0", "u", 0, 7, False, at(45, 5))]        # snapshot only
    assert sorted(tuple(r) for r in build(spark, samples, sizes).collect()) == [
        ("c1", 1, HOUR, 3, at(0), at(10), 12, 2, 3, 1, 2, 2, 1700, at(45, 5), *NO_DISK),
        ("c1", 2, HOUR, 2, at(10, 3), at(20, 3), None, None, None, 1, 2, None, None, None, *NO_DISK),
        ("c1", 3, HOUR, 0, None, None, None, None, None, None, 0, 1, 7, at(45, 5), *NO_DISK),
        ("c2", 1, HOUR, 1, at(7), at(7), 5, None, None, None, 0, None, None, None, *NO_DISK),
    ]


def fs_sample(broker_id, ts, mountpoint, attribute, value):
    """node_exporter's filesystem series as silver keeps them (node:type=Filesystem, mountpoint)."""
    return ("c1", broker_id, ts, "node", {"type": "Filesystem", "mountpoint": mountpoint, "device": "/dev/x"},
            attribute, float(value), None)


def test_the_disk_under_the_log_dirs_and_when_it_is_full(spark):
    """Broker 1: /var/lib/kafka (its log dirs) loses 10 GB in 30 minutes (20 GB/h) with 50 GB free at the
    end: full in 2.5 h; / holds no log dir. Broker 2: two log dirs on two disks, the steady one and one
    falling 1 GB/h; broker 3: disk samples but no snapshot to say where its log dirs are; broker 4: one sample."""
    GB = 10**9
    samples = [jmx_sample(b, at(0), URP, 0) for b in (1, 2, 3, 4)]
    for m, free in ((0, 60), (15, 55), (30, 50)):
        samples += [fs_sample(1, at(m), "/var/lib/kafka", "AvailableBytes", free * GB),
                    fs_sample(1, at(m), "/", "AvailableBytes", (1 - m / 60) * GB),            # falling faster
                    fs_sample(2, at(m), "/data/a", "AvailableBytes", 900 * GB),
                    fs_sample(2, at(m), "/data/b", "AvailableBytes", (800 - m / 60) * GB),
                    fs_sample(3, at(m), "/var/lib/kafka", "AvailableBytes", free * GB)]
    samples += [fs_sample(1, at(30), "/var/lib/kafka", "SizeBytes", 1000 * GB), fs_sample(1, at(30), "/", "SizeBytes", 50 * GB),
                fs_sample(2, at(30), "/data/a", "SizeBytes", 1000 * GB),
                fs_sample(4, at(30), "/kafka", "AvailableBytes", 5 * GB)]
    sizes = [("c1", 1, "/var/lib/kafka/data", "t", 0, 10, False, at(45)),
             ("c1", 2, "/data/a/kafka", "t", 0, 10, False, at(45)), ("c1", 2, "/data/b/kafka", "t", 1, 10, False, at(45)),
             ("c1", 4, "/kafka", "t", 0, 10, False, at(45))]
    got = {r["broker_id"]: r for r in build(spark, samples, sizes).collect()}
    disk = lambda b: tuple(got[b][c] for c in (  # noqa: E731
        "disk_mountpoint", "disk_free_bytes", "disk_size_bytes", "disk_first_ts", "disk_last_ts"))
    assert disk(1) == ("/var/lib/kafka", 50 * GB, 1000 * GB, at(0), at(30))
    assert got[1]["disk_free_change_per_hour"] == pytest.approx(-20 * GB)
    assert got[1]["disk_hours_to_full"] == pytest.approx(2.5)
    assert disk(2) == ("/data/b", int(799.5 * GB), None, at(0), at(30))
    assert got[2]["disk_hours_to_full"] == pytest.approx(799.5)
    assert disk(3) == (None,) * 5                      # no snapshot: where its log dirs are is not known
    assert disk(4)[:2] == ("/kafka", 5 * GB) and got[4]["disk_free_change_per_hour"] is None
    assert got[4]["disk_hours_to_full"] is None


def test_quality_suite(spark):
    samples = [jmx_sample(1, at(m), ACTIVE, 1) for m in (0, 30)] + [jmx_sample(2, at(1), URP, 3)]
    df = build(spark, samples, [("c1", 1, "/d", "t", 0, 10, False, at(45))])
    results = quality.validate_tables({"gold.cluster_availability_hourly": df}, hour=HOUR, data_docs_dir=None)
    quality.enforce(results)
    assert results and all(r.success for r in results)
    late = build(spark, samples, [("c1", 1, "/d", "t", 0, 10, False, HOUR + timedelta(hours=2))])
    failed = quality.validate_tables({"gold.cluster_availability_hourly": late}, hour=HOUR, data_docs_dir=None)
    bad = [r.expectation for r in failed if not r.success]
    assert len(bad) == 1 and "log_dir_at" in bad[0], bad
