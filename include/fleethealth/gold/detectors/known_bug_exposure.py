"""known_bug_exposure: a broker or KRaft controller runs a Kafka version inside the affected range of catalogued bugs.

Signal: the inventory's `kafka_version` of each Kafka host against known_bugs.yaml (ranges compared as
numeric versions in Spark), for the bugs in code the host runs (each entry's `processes`: a ZooKeeper-mode
broker, a KRaft broker, a KRaft controller; a combined node is the last two). One finding per host-hour
(its process, the hosts frame's `entity`) naming every bug id (known_bug column,
comma-separated, sorted as text) and why: the version and each bug's affected range.
"""
from __future__ import annotations

from pyspark.sql import functions as F

from fleethealth.gold import known_bugs
from fleethealth.gold.detectors.base import finding

KIND = "known_bug_exposure"
REPORT = None   # no fact table is behind its incidents: the inventory's versions against known_bugs.yaml


def detect(facts, thresholds):
    spark = facts.hosts.sparkSession
    ranges = known_bugs.ranges_frame(spark)
    per_broker = (known_bugs.exposures(facts.hosts, ranges)
                  .groupBy("cluster", "host", "role", "broker_id", "entity", "kafka_version", "hour")
                  .agg(F.array_sort(F.collect_set(F.struct("bug_id", "affected", "summary"))).alias("bugs")))
    evidence = F.format_string(
        "inventory kafka_version %s of %s is in the affected range of %d catalogued bug(s): %s",
        F.col("kafka_version"), F.col("host"), F.size("bugs"),
        F.array_join(F.transform("bugs", lambda b: F.concat(b["summary"], F.lit(" affected "), b["affected"])), "; "))
    return finding(per_broker, KIND, thresholds[f"{KIND}.severity"],
                   entity=F.col("entity"),
                   first_seen=F.col("hour"), last_seen=F.col("hour") + F.expr("INTERVAL 3599 SECONDS"),
                   evidence=evidence, hour=F.col("hour"),
                   known_bug=F.array_join(F.transform("bugs", lambda b: b["bug_id"]), ","))
