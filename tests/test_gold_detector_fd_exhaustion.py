"""fd_exhaustion: OpenFileDescriptorCount near MaxFileDescriptorCount, or far above the cluster median;
both sides of each threshold."""
from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from fleethealth.gold import detectors, thresholds
from fleethealth.gold.detectors import fd_exhaustion
from fleethealth.gold.facts.core import Facts
from fleethealth.runtime.frames import local_frame

pytestmark = pytest.mark.spark

HOUR = datetime(2026, 11, 21, 6)
JMX = "cluster string, broker_id int, ts timestamp, domain string, props map<string,string>, attribute string, value double"
OS = {"type": "OperatingSystem"}


def samples(broker: int, opens: list[int], max_fds: int = 100_000, offset_s: int = 1):
    out = []
    for i, n in enumerate(opens):
        ts = HOUR + timedelta(minutes=5 * i, seconds=offset_s)
        out += [("c1", broker, ts, "java.lang", OS, "OpenFileDescriptorCount", float(n)),
                ("c1", broker, ts, "java.lang", OS, "MaxFileDescriptorCount", float(max_fds))]
    return out


def detect(spark, rows, **override):
    limits = dict(thresholds.load(), **override)
    facts = Facts(HOUR, None, None, local_frame(spark, rows, JMX), None, None, None, None, None)
    return {r.entity: r for r in detectors.run(fd_exhaustion, facts, limits).collect()}


def test_far_above_the_cluster_median_both_sides_of_the_factor(spark):
    # peers' medians 12,800 and 12,900; 219's own median (64,600) does not drag the cluster's median up
    rows = (samples(217, [12_800] * 4, 1_000_000) + samples(218, [12_900] * 4, 1_000_000)
            + samples(219, [12_850, 64_500, 64_600, 200_000], 1_000_000, offset_s=2))
    found = detect(spark, rows)
    assert set(found) == {"broker-219"}
    f = found["broker-219"]
    # 5 x 12,900 = 64,500: the sample at exactly 5x is not over, the next one is
    assert f.first_seen == HOUR + timedelta(minutes=10, seconds=2)
    assert f.last_seen == HOUR + timedelta(minutes=15, seconds=2)
    assert (f.kind, f.severity, f.hour) == ("fd_exhaustion", "major", HOUR)
    assert f.evidence == ("JMX OpenFileDescriptorCount 64600 at the first sample over, peak 200000 (2 sample(s) over); "
                          "> 5.0x the cluster median 12900 of 3 brokers this hour (peak 15.5x)")
    assert detect(spark, rows, **{"fd_exhaustion.median_factor": 16.0}) == {}


def test_the_median_needs_three_brokers(spark):
    rows = samples(217, [1_000] * 3) + samples(218, [9_000] * 3)
    assert detect(spark, rows) == {}
    assert set(detect(spark, rows + samples(219, [1_100] * 3))) == {"broker-218"}


def test_near_max_file_descriptors_both_sides_of_the_ratio(spark):
    rows = samples(1, [89_999, 90_000, 95_000], 100_000)
    found = detect(spark, rows)
    assert set(found) == {"broker-1"}
    assert found["broker-1"].first_seen == HOUR + timedelta(minutes=5, seconds=1)
    assert found["broker-1"].evidence == ("JMX OpenFileDescriptorCount 90000 at the first sample over, peak 95000 "
                                          "(2 sample(s) over); peak is 95.0% of MaxFileDescriptorCount 100000 "
                                          "(threshold 90%)")
    assert detect(spark, rows, **{"fd_exhaustion.max_fd_ratio": 0.96}) == {}


def test_zookeeper_hosts_and_other_mbeans_are_not_read(spark):
    rows = [("c1", None, HOUR, "java.lang", OS, "OpenFileDescriptorCount", 99_999.0),
            ("c1", None, HOUR, "java.lang", OS, "MaxFileDescriptorCount", 100_000.0),
            ("c1", 1, HOUR, "java.lang", {"type": "Memory"}, "OpenFileDescriptorCount", 99_999.0),
            ("c1", 1, HOUR, "java.lang", OS, "MaxFileDescriptorCount", 100_000.0)]
    assert detect(spark, rows) == {}
