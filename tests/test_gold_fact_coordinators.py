"""Tests of fleethealth.gold.facts.coordinators: Java String.hashCode in Spark SQL, exact against real Java
(values computed with tests/fixtures/java/GroupPartition.java), and gold.group_coordinators."""
from __future__ import annotations

import shutil
import subprocess
from datetime import datetime

import pytest
from conftest import FIXTURES
from pyspark.sql import functions as F

from fleethealth.gold.facts.coordinators import coordinator_partition, group_coordinators, java_string_hashcode
from fleethealth.simulate import coordinator_partition as py_partition
from fleethealth.simulate import java_string_hashcode as py_hashcode
from fleethealth.runtime.frames import local_frame

pytestmark = pytest.mark.spark

# group -> (String.hashCode, partition of 50, partition of 7), printed by GroupPartition.java (JDK 17)
JAVA = {
    "consumer-group": (-1738392088, 38, 6),
    "": (0, 0, 0),
    "a": (97, 47, 6),
    "polygenelubricants": (-2147483648, 0, 0),      # Integer.MIN_VALUE: Kafka's Utils.abs gives 0
    "orders-app": (772757305, 5, 5),
    "billing-service": (1374429539, 39, 0),
    "Aa": (2112, 12, 5),
    "BB": (2112, 12, 5),                            # a classic collision
    "grüppe-ü": (243491011, 11, 1),
    "组-😀": (968593676, 26, 1),                     # a surrogate pair counts as two UTF-16 units
    "a-very-long-consumer-group-name-for-the-analytics-pipeline-v2": (1324152221, 21, 0),
}


def test_hashcode_and_partition_exact_against_java(spark):
    df = local_frame(spark, [(g,) for g in JAVA] + [(None,)], "g string")
    got = {r.g: (r.h, r.p50, r.p7) for r in df.select(
        "g", java_string_hashcode(F.col("g")).alias("h"), coordinator_partition(F.col("g")).alias("p50"),
        coordinator_partition(F.col("g"), F.lit(7)).alias("p7")).collect()}
    assert got == {**JAVA, None: (None, None, None)}
    # the simulator's Python version agrees (the simulated fleet places groups with it)
    assert {g: (py_hashcode(g), py_partition(g, 50), py_partition(g, 7)) for g in JAVA} == JAVA


@pytest.mark.skipif(shutil.which("javac") is None, reason="no JDK compiler on this machine")
def test_recorded_values_are_what_java_prints(tmp_path):
    src = FIXTURES / "java" / "GroupPartition.java"
    subprocess.run(["javac", "-d", str(tmp_path), str(src)], check=True, timeout=120)
    out = subprocess.run(["java", "-cp", str(tmp_path), "GroupPartition"], check=True, capture_output=True,
                         text=True, encoding="utf-8", timeout=120).stdout
    printed = {}
    for line in out.splitlines():
        h, p50, p7, g = line.split("\t", 3)
        printed[g] = (int(h), int(p50), int(p7))
    assert printed == JAVA


def _ts(s):
    return datetime.fromisoformat(s)


def test_group_coordinators_from_group_lines_and_offsets_leaders(spark):
    from fleethealth.silver import tables as silver

    events = local_frame(spark, [
        # coordinator lines naming the group, on broker 2; a non-coordinator logger naming a group is ignored
        ("c1", 2, _ts("2026-11-20 10:05:00"), "tombstone_append_failed", "kafka.coordinator.group.GroupMetadataManager",
         "consumer-group", "__consumer_offsets", 38, None),
        ("c1", 2, _ts("2026-11-20 10:15:00"), "tombstone_append_failed", "kafka.coordinator.group.GroupMetadataManager",
         "consumer-group", "__consumer_offsets", 38, None),
        ("c1", 3, _ts("2026-11-20 10:20:00"), "other", "kafka.server.KafkaApis", "consumer-group", None, None, None),
        # partition 38 moves to broker 3 at 10:29:58 (new leader epoch) and 10:30 (it loaded the partition's groups)
        ("c1", 3, _ts("2026-11-20 10:29:58"), "leader_epoch_start", "kafka.cluster.Partition",
         None, "__consumer_offsets", 38, 3),
        ("c1", 3, _ts("2026-11-20 10:30:00"), "group_load_finished", "kafka.coordinator.group.GroupMetadataManager",
         None, "__consumer_offsets", 38, None),
        ("c1", 1, _ts("2026-11-20 10:31:00"), "group_load_finished", "kafka.coordinator.group.GroupMetadataManager",
         None, "__consumer_offsets", 5, None),
    ], "cluster string, broker_id int, ts timestamp, event_type string, logger string, `group` string, "
       "topic string, partition int, leader int")
    hosts = silver.hosts_of(spark, [("c1", f"c1-kafka-{b}", "kafka", b, None, "1.1.0", "UTC", 50, ["kafka"])
                                   for b in (1, 2, 3)])
    events = events.withColumn("hour", F.lit(_ts("2026-11-20 10:00:00")))
    found = group_coordinators(events, hosts).collect()
    assert {str(r.hour) for r in found} == {"2026-11-20 10:00:00"}
    rows = sorted((r.group, r.offsets_partition, r.coordinator_broker, r.source, str(r.first_seen), str(r.last_seen),
                   r.events) for r in found)
    assert rows == [
        ("consumer-group", 38, 2, "group_log", "2026-11-20 10:05:00", "2026-11-20 10:15:00", 2),
        ("consumer-group", 38, 3, "offsets_leader", "2026-11-20 10:29:58", "2026-11-20 10:30:00", 2),
    ]
