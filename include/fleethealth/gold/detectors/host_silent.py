"""host_silent: an inventory host sent nothing at all in an hour (no expected source arrived).

A silent host is one incident of its own, at least major: the host may be down, cut off, or its
collection broken, and nothing about it can be called healthy. Signal: gold.broker_health_hourly
with sources expected and none arrived; the evidence names the files that were listed but could not
be read (file_problems). The hosts of a cluster-hour in which some host's files were written but
their lines fall in other hours (the cluster's timezone: is wrong) are timezone_mismatch's, not
silent. Its entity is the host's process (the hosts frame's `entity`), like the other kinds'.
"""
from __future__ import annotations

from pyspark.sql import functions as F

from fleethealth.gold.detectors.base import finding
from fleethealth.gold.detectors.timezone_mismatch import zoned_hours

KIND = "host_silent"
REPORT = {"chart": "chart-completeness", "table": "broker_health_hourly",
          "columns": ["hour", "host", "sources_expected", "sources_missing"]}


def detect(facts, thresholds):
    health = facts.broker_health
    if "file_problems" not in health.columns:
        health = health.withColumn("file_problems", F.array().cast("array<string>"))
    silent = health.where((F.size("sources_expected") > 0) & (F.size("sources_arrived") == 0))
    silent = silent.join(zoned_hours(health), ["cluster", "hour"], "left_anti")   # timezone_mismatch's
    silent = silent.join(F.broadcast(facts.hosts.select("cluster", "host", "entity").distinct()), ["cluster", "host"])
    evidence = F.format_string("nothing from %s for this hour (expected: %s)", F.col("host"),
                               F.array_join("sources_expected", ", "))
    evidence = F.when(F.size("file_problems") > 0, F.concat(evidence, F.lit("; files that could not be read: "),
                                                            F.array_join("file_problems", "; "))).otherwise(evidence)
    return finding(silent, KIND, thresholds[f"{KIND}.severity"], entity=F.col("entity"), first_seen=F.col("hour"),
                   last_seen=F.col("hour") + F.expr("INTERVAL 3599 SECONDS"), evidence=evidence, hour=F.col("hour"))
