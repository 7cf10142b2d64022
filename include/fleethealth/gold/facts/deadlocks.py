"""gold.deadlocks: one row per broker-hour and distinct Java-level deadlock cycle of its thread dumps, with the catalogued bugs whose signature and affected versions match.

Signals and limits: fleethealth.gold.detectors.broker_deadlock, the detector that reads it.
"""
from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from fleethealth.gold import known_bugs

THRESHOLDS = "broker_deadlock"  # the detector whose thresholds this fact applies



def cycles(deadlocks: DataFrame) -> DataFrame:
    """One row per broker-hour and distinct cycle (its threads, sorted): when dumps showed it and how it waits."""
    waits = F.struct(F.array_position("cycle_threads", F.col("thread_name")).alias("pos"), "thread_name",
                     "waiting_lock_class", "held_by")
    per_dump = (deadlocks.groupBy("cluster", "host", "broker_id", "hour", "captured_at", "deadlock")
                .agg(F.first("cycle_threads").alias("cycle_threads"),
                     F.first("cycle_lock_classes").alias("cycle_lock_classes"),
                     F.array_sort(F.collect_list(waits)).alias("waits")))
    return (per_dump.withColumn("cycle", F.array_sort("cycle_threads"))
            .groupBy("cluster", "host", "broker_id", "hour", "cycle")
            .agg(F.min("captured_at").alias("first_ts"), F.max("captured_at").alias("last_ts"),
                 F.countDistinct("captured_at").alias("dumps"),
                 F.min_by("cycle_threads", "captured_at").alias("cycle_threads"),
                 F.array_sort(F.array_distinct(F.flatten(F.collect_list("cycle_lock_classes")))).alias("lock_classes"),
                 F.min_by("waits", "captured_at").alias("waits")))


def matching_bugs(cyc: DataFrame, hosts: DataFrame) -> DataFrame:
    """(cluster, broker_id, hour, cycle, bug_id): catalogued bugs whose signature matches the cycle and
    whose affected range holds the broker's inventory version."""
    spark = hosts.sparkSession
    affected = known_bugs.exposures(hosts, known_bugs.ranges_frame(spark)).select("cluster", "broker_id", "hour", "bug_id")
    sigs = known_bugs.signatures_frame(spark).select(
        "bug_id", F.col("threads").alias("bug_threads"), F.col("lock_classes").alias("bug_lock_classes"))
    return (cyc.join(affected, ["cluster", "broker_id", "hour"]).join(F.broadcast(sigs), "bug_id")
            .where(known_bugs.deadlock_matches_col(F.col("cycle_threads"), F.col("lock_classes"),
                                                   F.col("bug_threads"), F.col("bug_lock_classes")))
            .select("cluster", "broker_id", "hour", "cycle", "bug_id").distinct())


def deadlock_facts(facts) -> DataFrame:
    """gold.deadlocks: one row per broker-hour and distinct cycle, with the matching known bugs."""
    cyc = cycles(facts.deadlocks)
    bugs = (matching_bugs(cyc, facts.hosts)
            .groupBy("cluster", "broker_id", "hour", "cycle")
            .agg(F.array_sort(F.collect_set("bug_id")).alias("known_bugs")))
    versions = facts.hosts.select("cluster", "broker_id", "hour", "kafka_version")
    return (cyc.join(bugs, ["cluster", "broker_id", "hour", "cycle"], "left")
            .join(versions, ["cluster", "broker_id", "hour"], "left")
            .select("cluster", "host", "broker_id", "kafka_version", "hour", "cycle_threads",
                    "lock_classes", "waits", F.col("first_ts").alias("first_seen"), F.col("last_ts").alias("last_seen"),
                    F.col("dumps").cast("int").alias("dumps"),
                    F.coalesce("known_bugs", F.array().cast("array<string>")).alias("known_bugs")))
