"""prometheus_unreadable: no JMX of a cluster came from its Prometheus in an hour (issue 63): Prometheus was
unreachable, answered an error, a redirect or too much, or holds no sample of any of the cluster's hosts
(a wrong `host_label` or `naming`, jmx_exporter not scraped, an hour older than it keeps).

Signal: gold.broker_health_hourly: every host of the cluster-hour expected to send jmx has it missing, and
its jmx file problem names the cluster's Prometheus (the pull's reason, pull.transports.prometheus.MARK).
One finding per cluster-hour, entity `prometheus`, naming the hosts and the first reason: one problem
for the on-call instead of a data_missing per broker (data_missing leaves those hosts' jmx to it). When
only some hosts' JMX is missing, Prometheus answered: their own exporters are data_missing's.
"""
from __future__ import annotations

from pyspark.sql import functions as F

from fleethealth.gold.detectors.base import file_problems, finding
from fleethealth.pull.transports.prometheus import MARK

KIND = "prometheus_unreadable"
ENTITY = "prometheus"
SOURCE = "jmx"
REPORT = {"chart": "chart-completeness", "table": "broker_health_hourly",
          "columns": ["hour", "host", "sources_expected", "sources_missing", "file_problems"]}


def _problems(health):
    return F.filter(file_problems(health), lambda p: p.startswith(f"{SOURCE}: ") & p.contains(MARK))


def unreadable(health):
    """(cluster, hour, hosts, example) of each cluster-hour whose every host expected to send jmx has none,
    each for a reason naming its cluster's Prometheus."""
    expecting = health.where(F.array_contains("sources_expected", SOURCE))
    marked = F.array_contains("sources_missing", SOURCE) & (F.size(_problems(health)) > 0)
    return (expecting.groupBy("cluster", "hour")
            .agg(F.count(F.lit(1)).alias("expecting"), F.sum(marked.cast("int")).alias("unread"),
                 F.array_sort(F.collect_list(F.when(marked, F.col("host")))).alias("hosts"),
                 F.min(F.when(marked, _problems(health)[0])).alias("example"))
            .where(F.col("unread") == F.col("expecting"))
            .select("cluster", "hour", "hosts", "example"))


def detect(facts, thresholds):
    found = unreadable(facts.broker_health)
    # "jmx: prometheus.<hour>.prom (rejected): not read from the cluster's Prometheus: …": the reason
    reason = F.regexp_extract("example", r"^[^:]*: [^ ]* \([a-z]+\): (.*)$", 1)
    evidence = F.format_string("no JMX of %d host(s) of the cluster (%s) came from its Prometheus in this hour: %s",
                               F.size("hosts"), F.array_join(F.slice("hosts", 1, 10), ", "), reason)
    return finding(found, KIND, thresholds[f"{KIND}.severity"], entity=F.lit(ENTITY), first_seen=F.col("hour"),
                   last_seen=F.col("hour") + F.expr("INTERVAL 3599 SECONDS"), evidence=evidence, hour=F.col("hour"))
