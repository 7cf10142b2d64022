"""data_missing: a source expected for a host-hour did not arrive. No data is never "healthy".

Signal: gold.broker_health_hourly sources_missing (inventory `expect`, default: kafka + jmx for a
broker, zookeeper for a ZooKeeper server) of a host that sent something (a host that sent nothing
at all is one host_silent incident instead; one whose lines fall in other hours, timezone_mismatch; the
JMX of a cluster whose Prometheus gave none, prometheus_unreadable). The finding spans the whole hour; its evidence names the
files of that source that were listed but could not be read, and why (file_problems).
"""
from __future__ import annotations

from pyspark.sql import functions as F

from fleethealth.gold.detectors.base import finding
from fleethealth.gold.detectors import prometheus_unreadable
from fleethealth.gold.detectors.timezone_mismatch import zoned_hours

KIND = "data_missing"
REPORT = {"chart": "chart-completeness", "table": "broker_health_hourly",
          "columns": ["hour", "host", "sources_expected", "sources_missing"]}


def detect(facts, thresholds):
    health = facts.broker_health
    if "file_problems" not in health.columns:
        health = health.withColumn("file_problems", F.array().cast("array<string>"))
    missing = (health.where(F.size("sources_arrived") > 0)
               .join(zoned_hours(health), ["cluster", "hour"], "left_anti")     # timezone_mismatch's
               .select("*", F.explode("sources_missing").alias("missing_source")))
    # a cluster whose Prometheus gave none of its hosts' JMX: one prometheus_unreadable, not one of these each
    missing = missing.join(prometheus_unreadable.unreadable(health).select(
        "cluster", "hour", F.lit(prometheus_unreadable.SOURCE).alias("missing_source")),
        ["cluster", "hour", "missing_source"], "left_anti")
    # why: the files of that source that were listed but could not be read ("<source>: <file> ...")
    why = F.transform(F.filter("file_problems", lambda p: p.startswith(F.concat(F.col("missing_source"), F.lit(": ")))),
                      lambda p: F.substring(p, F.length("missing_source") + 3, 1 << 20))
    end = F.col("hour") + F.expr("INTERVAL 3599 SECONDS")
    evidence = F.format_string("no %s records from %s for this hour (expected: %s)",
                               F.col("missing_source"), F.col("host"), F.array_join("sources_expected", ", "))
    evidence = F.when(F.size(why) > 0, F.concat(evidence, F.lit("; files that could not be read: "),
                                                F.array_join(why, "; "))).otherwise(evidence)
    return finding(missing, KIND, thresholds[f"{KIND}.severity"],
                   entity=F.concat_ws(":", "host", "missing_source"),
                   first_seen=F.col("hour"), last_seen=end, evidence=evidence, hour=F.col("hour"))
