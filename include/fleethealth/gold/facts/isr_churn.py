"""gold.isr_churn: ISR changes per partition and leader broker, per hour.

Key: (cluster, topic, partition, broker, hour), one row per partition-leader that logged an ISR event
in the hour; `broker` is the leader that logged it (the line's `broker` field, else the logging host's
broker_id). Signals (silver.kafka_events, kafka.cluster.Partition lines of every version: docs/postmortems.md, version notes):
- isr_shrink / isr_expand: "Shrinking|Expanding ISR ... from 1,2,3 to 1" (isr_before -> isr_after);
- isr_updated (2.7+): "ISR updated to 1,2" once AlterIsr/AlterPartition took the change (isr only: the
  ISR before it is the one after the previous change of the row, unknown if it is the first);
- isr_update_skipped: "Cached zkVersion ... not equal to that in zookeeper, skip updating ISR" (the
  leader's change was refused: the ISR in ZooKeeper is not the one it logs).

Columns: shrinks, expands, updates, skipped_updates (counts of each event); first_change_ts,
last_change_ts (first/last of any of these events, skipped ones included); isr_first (ISR before the
first change; NULL if that change is an isr_updated without a known predecessor), isr_last (ISR after
the last change); min_isr_size, max_isr_size (over every ISR the row's changes name, before and after);
shrunk_to_leader (some change left the ISR = {broker}: no follower in sync, URP for that partition);
under_replicated_at_end (isr_last smaller than max_isr_size: the hour ends below the widest ISR seen);
dropped_brokers (sorted brokers some change removed from the ISR).

Limits: only what leaders log. A broker whose log did not arrive has no rows (no rows is not "no
churn"); an ISR change begun in an earlier hour shows only its tail; the replication factor is not
known here, so an ISR that was already short for the whole hour is not under_replicated_at_end.
Sizes, isr_last and under_replicated_at_end are NULL for a row of skipped updates only. An empty ISR
("to " with no broker) is read as NULL by the parser and so is not counted as a size.
"""
from __future__ import annotations

from pyspark.sql import Window
from pyspark.sql import functions as F

CHANGES = ("isr_shrink", "isr_expand", "isr_updated")
EVENTS = (*CHANGES, "isr_update_skipped")
KEY = ["cluster", "topic", "partition", "broker", "hour"]


def _size(col):
    return F.when(col.isNotNull(), F.size(col))


def isr_churn(facts, thresholds):
    ev = facts.kafka_events.where(F.col("event_type").isin(*EVENTS))
    ev = ev.select(
        F.col("cluster").cast("string").alias("cluster"), F.col("topic").cast("string").alias("topic"),
        F.col("partition").cast("int").alias("partition"),
        F.coalesce(F.col("broker"), F.col("broker_id")).cast("int").alias("broker"),
        F.col("ts").cast("timestamp").alias("ts"), "event_type", "hour",
        F.col("isr_before").cast("array<int>").alias("before"),
        F.when(F.col("event_type") == "isr_updated", F.col("isr"))
        .otherwise(F.col("isr_after")).cast("array<int>").alias("after"),
    ).where(F.col("topic").isNotNull() & F.col("partition").isNotNull() & F.col("broker").isNotNull())
    # a tie on ts (same millisecond): a shrink/expand comes before the "ISR updated" that confirms it
    w = Window.partitionBy(*KEY).orderBy("ts", F.col("event_type") == "isr_updated", "after", "before")
    ev = ev.withColumn("seq", F.row_number().over(w))
    prev_after = F.last("after", ignorenulls=True).over(w.rowsBetween(Window.unboundedPreceding, -1))
    ev = ev.withColumn("before", F.coalesce("before", F.when(F.col("event_type") == "isr_updated", prev_after)))
    change_seq = F.when(F.col("event_type").isin(*CHANGES), F.col("seq"))
    agg = ev.groupBy(*KEY).agg(
        *[F.count(F.when(F.col("event_type") == t, 1)).alias(name) for t, name in
          (("isr_shrink", "shrinks"), ("isr_expand", "expands"), ("isr_updated", "updates"),
           ("isr_update_skipped", "skipped_updates"))],
        F.min("ts").alias("first_change_ts"), F.max("ts").alias("last_change_ts"),
        F.min_by("before", change_seq).alias("isr_first"), F.max_by("after", change_seq).alias("isr_last"),
        F.least(F.min(_size(F.col("before"))), F.min(_size(F.col("after")))).alias("min_isr_size"),
        F.greatest(F.max(_size(F.col("before"))), F.max(_size(F.col("after")))).alias("max_isr_size"),
        F.max(F.coalesce(F.col("after") == F.array(F.col("broker")), F.lit(False))).alias("shrunk_to_leader"),
        F.array_sort(F.array_distinct(F.flatten(F.collect_list(
            F.when(F.col("before").isNotNull() & F.col("after").isNotNull(),
                   F.array_except("before", "after")))))).alias("dropped_brokers"))
    return agg.select(
        "cluster", "topic", "partition", "broker", "hour",
        *[F.col(c).cast("int").alias(c) for c in ("shrinks", "expands", "updates", "skipped_updates")],
        F.col("first_change_ts").cast("timestamp").alias("first_change_ts"),
        F.col("last_change_ts").cast("timestamp").alias("last_change_ts"),
        F.col("isr_first").cast("array<int>").alias("isr_first"),
        F.col("isr_last").cast("array<int>").alias("isr_last"),
        F.col("min_isr_size").cast("int").alias("min_isr_size"),
        F.col("max_isr_size").cast("int").alias("max_isr_size"),
        F.col("shrunk_to_leader").cast("boolean").alias("shrunk_to_leader"),
        (_size(F.col("isr_last")) < F.col("max_isr_size")).cast("boolean").alias("under_replicated_at_end"),
        F.coalesce(F.col("dropped_brokers"), F.array().cast("array<int>")).cast("array<int>")
        .alias("dropped_brokers"))
