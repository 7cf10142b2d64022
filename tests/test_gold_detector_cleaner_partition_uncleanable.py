"""cleaner_partition_uncleanable: the cleaner's "Marking its partition (t-p) as uncleanable" lines of a broker
make one incident per broker-hour naming each partition, with KAFKA-19895 where the catalogue has it (a KRaft
broker from 3.3); a cleaner that cleans makes none."""
from __future__ import annotations

import pytest
from detector_frames import at, event, events, facts, findings, kraft_hosts

from fleethealth.gold import thresholds
from fleethealth.gold.detectors import cleaner_partition_uncleanable
from fleethealth.gold.detectors import run as run_detector

pytestmark = pytest.mark.spark

# the 4.1 cleaner's line (tests/fixtures/golden/kafka/4.1.0_log-cleaner.log: LogCleaner.java's format)
LINE = ("[kafka-log-cleaner-thread-0]: Unexpected exception thrown when cleaning log UnifiedLog(dir=/var/lib/kafka/data/"
        "__consumer_offsets-12, topicId=Qm1nX0cJRxK2bJwF8m3qTA, topic=__consumer_offsets, partition=12, "
        "highWatermark=88120, lastStableOffset=88120, logStartOffset=0, logEndOffset=88120). Marking its partition "
        "(__consumer_offsets-12) as uncleanable")


def run(spark, rows):
    return findings(run_detector(cleaner_partition_uncleanable, facts(spark, events(spark, rows), hosts=kraft_hosts(spark)),
                                 thresholds.load()))


def uncleanable(broker, ts, partition, cluster="c1"):
    return event(broker, ts, "cleaner_partition_uncleanable", cluster=cluster, topic="__consumer_offsets",
                 partition=partition, message=LINE.replace("-12", f"-{partition}").replace("=12", f"={partition}"))


def test_partitions_marked_uncleanable_on_a_broker(spark):
    rows = [uncleanable(2, at(14, 9.532), 12), uncleanable(2, at(40), 38), uncleanable(1, at(20), 7, cluster="z1"),
            event(3, at(15), "cleaner_summary", topic="__consumer_offsets", partition=3)]
    got = run(spark, rows)
    assert [(f["cluster"], f["kind"], f["entity"], f["severity"], f["first_seen"], f["last_seen"], f["known_bug"])
            for f in got] == [
        # a ZooKeeper-mode 3.6.1 broker: the catalogue has KAFKA-19895 for KRaft brokers only
        ("z1", "cleaner_partition_uncleanable", "broker-1", "major", at(20), at(20), None),
        ("c1", "cleaner_partition_uncleanable", "broker-2", "major", at(14, 9.532), at(40), "KAFKA-19895")]
    assert got[1]["evidence"] == (
        "broker 2: the log cleaner marked __consumer_offsets-12, __consumer_offsets-38 uncleanable at 06:14:09Z "
        "('Unexpected exception thrown when cleaning log ... Marking its partition ... as uncleanable'): not compacted "
        "or deleted again until the broker restarts")


def test_a_cleaner_that_cleans_is_no_incident(spark):
    assert run(spark, [event(2, at(m), "cleaner_summary", topic="__consumer_offsets", partition=12) for m in (5, 35)]) == []
