"""data_missing: a source expected for a host-hour did not arrive. No data is never "healthy".

Signal: gold.broker_health_hourly sources_missing (inventory `expect`, default: kafka + jmx for a
broker, zookeeper for a ZooKeeper server). The finding spans the whole hour.
"""
from __future__ import annotations

from pyspark.sql import functions as F

KIND = "data_missing"


def detect(facts, thresholds):
    from fleethealth.gold.detectors import finding

    missing = facts.broker_health.select("*", F.explode("sources_missing").alias("missing_source"))
    end = F.col("hour") + F.expr("INTERVAL 3599 SECONDS")
    return finding(missing, KIND, thresholds[f"{KIND}.severity"],
                   entity=F.concat_ws(":", "host", "missing_source"),
                   first_seen=F.col("hour"), last_seen=end,
                   evidence=F.format_string("no %s records from %s for this hour (expected: %s)",
                                            F.col("missing_source"), F.col("host"),
                                            F.array_join("sources_expected", ", ")),
                   hour=F.col("hour"))
