"""broker_deadlock: a thread dump of a broker shows a Java-level deadlock.

Signal: silver.deadlocks (one row per thread of each "Found one Java-level deadlock:" cycle of a
jstack dump). One finding per broker-hour: first_seen is the capture time of the first dump of the
hour showing a cycle, last_seen of the last. The evidence names each cycle's threads, the lock class
each waits for and who holds it, and how many dumps showed it. `known_bug`: the catalogued bugs
(known_bugs.yaml) whose thread and lock-class signature matches the cycle (known_bugs.bugs_matching,
evaluated in Spark) and whose affected range holds the broker's inventory kafka_version.
No threshold: a JVM deadlock never resolves itself (the threads stay stuck until a restart).
The cycles themselves, one row per broker-hour and cycle, are the fact table gold.deadlocks
(fleethealth.gold.facts.deadlocks).
"""
from __future__ import annotations

from pyspark.sql import functions as F

from fleethealth.gold.detectors.base import finding

KIND = "broker_deadlock"
REPORT = {"chart": None, "table": "deadlocks",
          "columns": ["hour", "broker_id", "cycle_threads", "lock_classes", "first_seen"]}
TIME = "yyyy-MM-dd HH:mm:ss'Z'"


def detect(facts, thresholds):
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
    return finding(per_broker, KIND, thresholds[f"{KIND}.severity"], entity=None, node=F.col("broker_id"),
                   first_seen=F.col("first_ts"), last_seen=F.col("last_ts"), evidence=F.col("evidence"),
                   hour=F.col("hour"), known_bug=F.nullif(F.array_join("bugs", ","), F.lit("")))
