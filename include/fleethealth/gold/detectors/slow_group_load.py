"""slow_group_load: a broker took too long to load a __consumer_offsets partition it became leader of.

Signal: "Finished loading offsets and group metadata from __consumer_offsets-N in X milliseconds"
(event_type group_load_finished; 0.10 to 3.x texts and the 3.7+ CoordinatorRuntime one) with X above
`slow_group_load.max_duration_ms`: until then the partition's groups get NOT_COORDINATOR /
COORDINATOR_LOAD_IN_PROGRESS. One finding per broker-partition-hour; first_seen is the line's time.
The evidence names the consumer groups that partition coordinates, where the hour's logs name them
(Kafka's partitionFor: abs(String.hashCode(group)) % offsets.topic.num.partitions).
"""
from __future__ import annotations

from pyspark.sql import functions as F

from fleethealth.fleet import entities
from fleethealth.fleet.kafka import OFFSETS_TOPIC
from fleethealth.gold.detectors.base import finding

KIND = "slow_group_load"
REPORT = {"chart": "chart-offsets", "table": "consumer_offsets_partitions",
          "columns": ["hour", "broker_id", "partition", "size_bytes", "growth_bytes", "groups"]}


def detect(facts, thresholds):
    limit = thresholds[f"{KIND}.max_duration_ms"]
    ev = facts.kafka_events
    slow = (ev.where((F.col("event_type") == "group_load_finished") & (F.col("topic") == OFFSETS_TOPIC)
                     & (F.col("duration_ms") > limit))
            .groupBy("cluster", "broker_id", "partition", "hour")
            .agg(F.min("ts").alias("first_ts"), F.max("ts").alias("last_ts"),
                 F.max("duration_ms").alias("duration_ms"), F.count(F.lit(1)).alias("loads")))
    groups = facts.offsets_groups
    hits = slow.join(groups, ["cluster", "partition", "hour"], "left")
    evidence = F.concat_ws("; ",
        F.format_string("'Finished loading offsets and group metadata from %s-%d in %d milliseconds' > %d ms",
                        F.lit(OFFSETS_TOPIC), F.col("partition"), F.col("duration_ms"), F.lit(limit)),
        F.when(F.col("loads") > 1, F.format_string("%d slow loads this hour", F.col("loads"))),
        F.when(F.size("groups") > 0, F.format_string("groups coordinated by this partition: %s",
                                                      F.array_join("groups", ", "))))
    return finding(hits, KIND, thresholds[f"{KIND}.severity"],
                   entity=entities.replica_col(F.lit(OFFSETS_TOPIC), F.col("partition"), F.col("broker_id")),
                   first_seen=F.col("first_ts"), last_seen=F.col("last_ts"), evidence=evidence,
                   hour=F.col("hour"))
