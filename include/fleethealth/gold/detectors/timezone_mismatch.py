"""timezone_mismatch: a cluster's log lines fall in other hours than the one processed, because its
inventory `timezone:` is not the zone its logs are written in (issue 61).

Signal: the pull of a host-hour that found no line of a log although its files were written in the
hour rejects the latest of them with the offset between its newest line (read in the inventory's
zone) and its mtime (fleethealth.pull.zoneprobe; gold.broker_health_hourly.file_problems). One finding
per cluster and hour, entity `timezone`, naming the hosts and the offset seen: the on-call fixes one
setting instead of chasing a host_silent per host (host_silent and data_missing leave such host-hours
to it, and so do the cluster's other hosts of that hour: a ZooKeeper server's one live file may not
tell, and a host is not called down while its cluster's lines are read in the wrong hours).
"""
from __future__ import annotations

from pyspark.sql import functions as F

from fleethealth.gold.detectors.base import file_problems, finding
from fleethealth.pull.zoneprobe import MARK

KIND = "timezone_mismatch"
ENTITY = "timezone"
REPORT = {"chart": "chart-completeness", "table": "broker_health_hourly",
          "columns": ["hour", "host", "sources_expected", "sources_missing", "file_problems"]}


def zone_problems(health):
    """The file_problems of a host-hour that say its lines run off by a time zone."""
    return F.filter(file_problems(health), lambda p: p.contains(MARK))


def zoned_hours(health):
    """(cluster, hour) of the clusters some host of which had lines in other hours: its hosts that sent
    nothing in that hour are this finding's, not host_silent's or data_missing's."""
    return health.where(F.size(zone_problems(health)) > 0).select("cluster", "hour").distinct()


def detect(facts, thresholds):
    health = facts.broker_health
    off = health.select("cluster", "host", "hour", zone_problems(health).alias("zone")).where(F.size("zone") > 0)
    per_cluster = off.groupBy("cluster", "hour").agg(
        F.array_sort(F.collect_set("host")).alias("hosts"), F.min(F.col("zone")[0]).alias("example"))
    evidence = F.format_string("log lines of %s fall outside this hour: the cluster's timezone: is likely wrong; "
                               "e.g. %s", F.array_join("hosts", ", "), F.col("example"))
    return finding(per_cluster, KIND, thresholds[f"{KIND}.severity"], entity=F.lit(ENTITY),
                   first_seen=F.col("hour"), last_seen=F.col("hour") + F.expr("INTERVAL 3599 SECONDS"),
                   evidence=evidence, hour=F.col("hour"))
