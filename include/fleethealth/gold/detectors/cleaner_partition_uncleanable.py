"""cleaner_partition_uncleanable: the log cleaner gave up on a partition and skips it until the broker restarts.

Since KIP-346 (2.1.0, KAFKA-7215) an exception while cleaning one partition no longer kills the cleaner
thread: LogCleaner logs "Unexpected exception thrown when cleaning log <log>. Marking its partition
(<topic>-<partition>) as uncleanable" (WARN) and leaves that partition out of every later compaction
and deletion pass, in memory, until the process restarts (KAFKA-19895, not fixed): a compacted topic,
e.g. a __consumer_offsets partition, then grows without bound while the cleaner looks alive. Signal:
silver's `cleaner_partition_uncleanable` lines (log-cleaner.log; server.log from 3.5 to 4.0); one finding
per broker-hour with such a line, naming each partition, first_seen the first line. Only the hour of the
line shows it: the partition stays uncleanable after the incident resolves, until the broker restarts.
"""
from __future__ import annotations

from pyspark.sql import functions as F

from fleethealth.gold.detectors.base import finding

KIND = "cleaner_partition_uncleanable"
REPORT = None     # the cleaner's own line is its evidence
HMS = "HH:mm:ss'Z'"


def detect(facts, thresholds):
    df = (facts.kafka_events.where(F.col("event_type") == KIND)
          .groupBy("cluster", "broker_id", "hour")
          .agg(F.min("ts").alias("first_seen"), F.max("ts").alias("last_seen"),
               F.array_sort(F.collect_set(F.concat_ws("-", "topic", F.col("partition").cast("string"))))
               .alias("partitions")))
    evidence = F.format_string(
        "broker %d: the log cleaner marked %s uncleanable at %s ('Unexpected exception thrown when cleaning log "
        "... Marking its partition ... as uncleanable'): not compacted or deleted again until the broker restarts",
        F.col("broker_id"), F.array_join("partitions", ", "), F.date_format("first_seen", HMS))
    return finding(df, KIND, thresholds[f"{KIND}.severity"], entity=None, node=F.col("broker_id"),
                   first_seen=F.col("first_seen"), last_seen=F.col("last_seen"), evidence=evidence,
                   hour=F.col("hour"))
