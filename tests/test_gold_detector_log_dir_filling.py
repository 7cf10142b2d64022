"""log_dir_filling (issue 63): the disk under a broker's log dirs full within hours at the hour's rate, or
almost full, from node_exporter's filesystem series; both sides of each threshold, and its cause."""
from __future__ import annotations

from dataclasses import replace

import pytest
from detector_frames import HOUR, at, facts, findings, jmx
from pyspark.sql import functions as F
from test_gold_fact_availability import SIZES, fs_sample

from fleethealth.gold import detectors, thresholds
from fleethealth.gold.detectors import log_dir_filling
from fleethealth.runtime.frames import local_frame

pytestmark = pytest.mark.spark
GB = 10**9


def found(spark, samples, sizes, **override) -> list[dict]:
    limits = dict(thresholds.load(), **override)
    f = replace(facts(spark, jmx_samples=jmx(spark, samples)),
                partition_sizes=local_frame(spark, sizes, SIZES).withColumn("hour", F.lit(HOUR)))
    return findings(detectors.run(log_dir_filling, f, limits))


def fleet():
    """Broker 1 loses 20 GB/h with 50 GB left (full in 2.5 h); broker 2 loses 1 GB/h of 800 GB; broker 3 has
    30 GB of 1 TB left (3 %), steady; broker 4 fills as fast as broker 1 but no snapshot says where its log
    dirs are."""
    samples = []
    for m, free in ((0, 60), (15, 55), (30, 50)):
        samples += [fs_sample(1, at(m), "/var/lib/kafka", "AvailableBytes", free * GB),
                    fs_sample(2, at(m), "/var/lib/kafka", "AvailableBytes", (800 - m / 60) * GB),
                    fs_sample(3, at(m), "/var/lib/kafka", "AvailableBytes", 30 * GB),
                    fs_sample(4, at(m), "/var/lib/kafka", "AvailableBytes", free * GB)]
    samples += [fs_sample(b, at(30), "/var/lib/kafka", "SizeBytes", 1000 * GB) for b in (1, 2, 3, 4)]
    sizes = [("c1", b, "/var/lib/kafka/data", "__consumer_offsets", 38, 40 * GB, False, at(45)) for b in (1, 2, 3)]
    return samples, sizes


def test_a_disk_full_within_hours_or_almost_full_is_a_finding_per_broker(spark):
    got = found(spark, *fleet())
    assert [(f["entity"], f["severity"], f["first_seen"], f["last_seen"]) for f in got] == [
        ("broker-1", "major", at(0), at(30)), ("broker-3", "major", at(0), at(30))]
    assert got[0]["evidence"] == ("46.6 GiB free of 931.3 GiB on /var/lib/kafka (under its log dirs, node_exporter), "
                                  "falling 18.63 GiB/h: full in about 2.5 h; its log dirs hold 37.3 GiB")
    assert got[1]["evidence"].startswith("27.9 GiB free of 931.3 GiB on /var/lib/kafka (under its log dirs, "
                                         "node_exporter), not falling this hour")
    # the thresholds: 2.5 h is within 3 but not 2; 3 % free is at or below 3 % but not 2 %
    tight = found(spark, *fleet(), **{"log_dir_filling.max_hours_to_full": 2, "log_dir_filling.min_free_ratio": 0.02})
    assert tight == []
    loose = found(spark, *fleet(), **{"log_dir_filling.max_hours_to_full": 800, "log_dir_filling.min_free_ratio": 0.03})
    assert [f["entity"] for f in loose] == ["broker-1", "broker-2", "broker-3"]


def test_a_dead_cleaner_on_the_broker_explains_it(spark):
    """caused_by (gold/causes.yaml): the broker's dead cleaner or its bloated offsets partition, while open;
    another broker's is not."""
    from test_gold_causes import M, T, explained

    cleaner = ("d", "c1", "log_cleaner_dead", "broker-2", T, T + 170 * M, None)
    bloat = ("b", "c1", "offsets_partition_bloat", "__consumer_offsets-38@broker-2", T + 28 * M, T + 170 * M, None)
    other = ("d3", "c1", "log_cleaner_dead", "broker-3", T, T + 170 * M, None)
    rows = [cleaner, bloat, other,
            ("full", "c1", "log_dir_filling", "broker-2", T + 120 * M, T + 150 * M, None),
            ("full4", "c1", "log_dir_filling", "broker-4", T + 120 * M, T + 150 * M, None)]
    got = explained(spark, rows)
    assert got["full"] == [("log_cleaner_dead", "broker-2", T),
                           ("offsets_partition_bloat", "__consumer_offsets-38@broker-2", T + 28 * M)]
    assert got["full4"] == []
