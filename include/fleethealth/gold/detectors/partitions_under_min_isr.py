"""partitions_under_min_isr: a broker leads partitions with fewer in-sync replicas than min.insync.replicas:
producers with acks=all get NOT_ENOUGH_REPLICAS on them (issue 63).

Signal: JMX kafka.server:type=ReplicaManager,name=UnderMinIsrPartitionCount (1.0.0+, KIP-164) at or above
`partitions_under_min_isr.min_partitions` on a broker. One finding per broker-hour: first_seen the first
sample over, last_seen the last, with the peak. The broker that reports it leads the partitions; what took
their other replicas out of the ISR (another broker fenced, isolated, silent, its ZooKeeper session expired)
is its caused_by (gold/causes.yaml).
"""
from __future__ import annotations

from pyspark.sql import functions as F

from fleethealth.fleet import mbeans
from fleethealth.gold.detectors.base import finding

KIND = "partitions_under_min_isr"
REPORT = {"chart": None, "table": "cluster_availability_hourly",
          "columns": ["hour", "broker_id", "max_under_min_isr", "max_under_replicated", "samples"]}


def detect(facts, thresholds):
    least = thresholds[f"{KIND}.min_partitions"]
    over = facts.jmx.where(mbeans.UNDER_MIN_ISR.matches() & (F.col("value") >= least) & F.col("broker_id").isNotNull())
    per_broker = over.groupBy("cluster", "broker_id", "hour").agg(
        F.min("ts").alias("first_ts"), F.max("ts").alias("last_ts"), F.max("value").cast("long").alias("peak"),
        F.min_by("ts", F.struct(-F.col("value"), F.col("ts"))).alias("peak_ts"), F.count(F.lit(1)).alias("samples"))
    evidence = F.format_string(
        "UnderMinIsrPartitionCount %d at its peak (%s), %d sample(s) at or over %d from %s to %s: acks=all "
        "produce to those partitions fails", F.col("peak"), F.date_format("peak_ts", "HH:mm:ss'Z'"), F.col("samples"),
        F.lit(int(least)), F.date_format("first_ts", "HH:mm:ss'Z'"), F.date_format("last_ts", "HH:mm:ss'Z'"))
    return finding(per_broker, KIND, thresholds[f"{KIND}.severity"], entity=None, node=F.col("broker_id"),
                   first_seen=F.col("first_ts"), last_seen=F.col("last_ts"), evidence=evidence, hour=F.col("hour"))
