"""offsets_partition_bloat: a __consumer_offsets partition far larger than normal, or growing
without compaction.

Signals: JMX kafka.log:type=Log,name=Size (or log-dir snapshots) above
`offsets_partition_bloat.max_size_bytes`, or hourly growth above
`offsets_partition_bloat.max_growth_bytes_per_hour` with no compaction seen (no cleaner summary
for the partition, no shrink). first_seen: the first sample above the size threshold. The evidence
names the consumer groups the partition coordinates, where the hour's logs name them.
"""
from __future__ import annotations

from pyspark.sql import functions as F

from fleethealth.fleet import entities
from fleethealth.fleet.kafka import OFFSETS_TOPIC
from fleethealth.gold.detectors.base import finding
from fleethealth.gold.facts.core import offsets_size_samples

KIND = "offsets_partition_bloat"
REPORT = {"chart": "chart-offsets", "table": "consumer_offsets_partitions",
          "columns": ["hour", "broker_id", "partition", "size_bytes", "growth_bytes", "compaction_seen",
                      "size_source"]}
GIB = 1024 ** 3


def detect(facts, thresholds):
    max_size = thresholds[f"{KIND}.max_size_bytes"]
    max_growth = thresholds[f"{KIND}.max_growth_bytes_per_hour"]
    over = (offsets_size_samples(facts.jmx).where(F.col("size_bytes") > max_size)
            .groupBy("cluster", "broker_id", "partition", "hour").agg(F.min("ts").alias("first_over_ts")))
    parts = facts.offsets_partitions.join(over, ["cluster", "broker_id", "partition", "hour"], "left")
    too_big = F.col("max_size_bytes") > max_size
    growing = (F.col("growth_bytes") > max_growth) & ~F.col("compaction_seen")
    hits = parts.where(too_big | growing)
    evidence = F.concat_ws("; ",
        F.when(too_big, F.format_string("size %.2f GiB > %.2f GiB (%s)", F.col("max_size_bytes") / GIB,
                                        F.lit(max_size / GIB), F.col("size_source"))),
        F.when(growing, F.format_string("grew %.2f GiB this hour > %.2f GiB without compaction",
                                        F.col("growth_bytes") / GIB, F.lit(max_growth / GIB))),
        F.when(~F.col("compaction_seen"), F.lit("no compaction seen this hour")),
        F.when(F.size("groups") > 0, F.format_string("groups coordinated by this partition: %s",
                                                      F.array_join("groups", ", "))))
    return finding(hits, KIND, thresholds[f"{KIND}.severity"],
                   entity=entities.replica_col(F.lit(OFFSETS_TOPIC), F.col("partition"), F.col("broker_id")),
                   first_seen=F.coalesce(F.col("first_over_ts"), F.col("first_ts")),
                   last_seen=F.col("last_ts"), evidence=evidence, hour=F.col("hour"))
