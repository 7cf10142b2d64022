"""broker_deadlock: a thread dump of a broker shows a Java-level deadlock.

Signal: silver.deadlocks (one row per thread of each "Found one Java-level deadlock:" cycle of a
jstack dump). One finding per broker-hour: first_seen is the capture time of the first dump of the
hour showing a cycle, last_seen of the last. The evidence names each cycle's threads, the lock class
each waits for and who holds it, and how many dumps showed it. `known_bug`: the catalogued bugs
(known_bugs.yaml) whose thread and lock-class signature matches the cycle (known_bugs.bugs_matching,
evaluated in Spark) and whose affected range holds the broker's inventory kafka_version.
No threshold: a JVM deadlock never resolves itself (the threads stay stuck until a restart).
The cycles themselves, one row per broker-hour and cycle, are the fact table gold.deadlocks.
"""
from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from fleethealth import known_bugs
from fleethealth.gold.detectors.known_bug_exposure import exposures

KIND = "broker_deadlock"
TIME = "yyyy-MM-dd HH:mm:ss'Z'"


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
    affected = exposures(hosts, known_bugs.ranges_frame(spark)).select("cluster", "broker_id", "hour", "bug_id")
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


def detect(facts, thresholds):
    from fleethealth.gold.detectors import finding

    cyc = facts.table("gold.deadlocks", thresholds)
    wait_text = F.array_join(F.transform("waits", lambda w: F.format_string(
        "%s waits for a %s held by %s", w["thread_name"], w["waiting_lock_class"], w["held_by"])), ", ")
    bug_text = F.when(F.size("known_bugs") > 0, F.format_string(
        "; signature and Kafka %s match %s", F.col("kafka_version"), F.array_join("known_bugs", ", ")))
    described = cyc.withColumn("text", F.concat(
        F.format_string("Java-level deadlock of %d threads (%s) on %s in %d thread dump(s) from %s: ",
                        F.size("cycle_threads"), F.array_join("cycle_threads", ", "),
                        F.array_join("lock_classes", ", "), F.col("dumps"), F.date_format("first_seen", TIME)),
        wait_text, F.coalesce(bug_text, F.lit(""))))
    per_broker = (described.groupBy("cluster", "broker_id", "hour")
                  .agg(F.min("first_seen").alias("first_ts"), F.max("last_seen").alias("last_ts"),
                       F.array_join(F.array_sort(F.collect_list("text")), "; ").alias("evidence"),
                       F.array_sort(F.array_distinct(F.flatten(F.collect_list("known_bugs")))).alias("bugs")))
    return finding(per_broker, KIND, thresholds[f"{KIND}.severity"],
                   entity=F.format_string("broker-%d", F.col("broker_id")),
                   first_seen=F.col("first_ts"), last_seen=F.col("last_ts"), evidence=F.col("evidence"),
                   hour=F.col("hour"), known_bug=F.nullif(F.array_join("bugs", ","), F.lit("")))
