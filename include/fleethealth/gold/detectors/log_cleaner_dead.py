"""log_cleaner_dead: the log cleaner thread of a broker is not running.

Signals (gold.log_cleaner_status): LogCleaner DeadThreadCount > 0 (2.4+), LogCleanerManager
time-since-last-run-ms above `log_cleaner_dead.stale_ms` (0.10.2+; first_seen is when it last ran),
"Error due to"/"Stopped" from kafka-log-cleaner-thread-* (log-cleaner.log, server.log from 3.5), a
thread dump without kafka-log-cleaner-thread-*.
"""
from __future__ import annotations

from pyspark.sql import functions as F

from fleethealth.fleet import entities
from fleethealth.gold.detectors.base import finding

KIND = "log_cleaner_dead"
REPORT = {"chart": "chart-cleaner", "table": "log_cleaner_status",
          "columns": ["hour", "broker_id", "status", "dead_since", "time_since_last_run_ms",
                      "cleaner_error_ts", "evidence"]}


def detect(facts, thresholds):
    dead = facts.cleaner_status.where(F.col("status") == "dead")
    return finding(dead, KIND, thresholds[f"{KIND}.severity"],
                   entity=entities.broker_col(F.col("broker_id")),
                   first_seen=F.col("dead_since"), last_seen=F.col("last_dead_evidence_ts"),
                   evidence=F.col("evidence"), hour=F.col("hour"))
