"""gold.known_bug_exposure: per cluster-hour, each catalogued bug (known_bugs.yaml) that one of its Kafka
versions carries, and the hosts that run it.

Advice, not an incident: a version in a bug's affected range is not the bug happening (most never meet
it). When its signature is seen, the incident of that event names it (known_bugs.with_known_bugs).
Signal: the inventory's `kafka_version` of each broker and KRaft controller against the affected ranges,
for the bugs in code the host runs (each entry's `processes`).
"""
from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from fleethealth.gold import known_bugs


def known_bug_exposure(facts, thresholds: dict) -> DataFrame:
    """One row per (cluster, kafka_version, bug, hour): the bug's title, component, the affected range
    holding the version, its fix releases (empty: not fixed) and the hosts of that version that run its code."""
    ranges = known_bugs.ranges_frame(facts.hosts.sparkSession)
    return (known_bugs.exposures(facts.hosts, ranges)
            .groupBy("cluster", "kafka_version", "bug_id", "hour")
            .agg(F.min("title").alias("title"), F.min("component").alias("component"),
                 F.min("affected").alias("affected"), F.min("fixed_in").alias("fixed_in"),
                 F.array_sort(F.collect_set("host")).alias("hosts"))
            .select("cluster", "kafka_version", "bug_id", "title", "component", "affected", "fixed_in",
                    "hosts", F.size("hosts").alias("host_count"), "hour"))
