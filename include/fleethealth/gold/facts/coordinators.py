"""Consumer group -> __consumer_offsets partition -> coordinator broker (gold.group_coordinators).

Kafka places a group's offsets and metadata on partition
``Utils.abs(groupId.hashCode) % offsets.topic.num.partitions`` (GroupMetadataManager.partitionFor;
``Utils.abs(n) = n == Integer.MIN_VALUE ? 0 : Math.abs(n)``), and the leader of that partition is
the group's coordinator. Here Java's ``String.hashCode`` is computed with Spark SQL expressions
only (no Python UDF): the string's UTF-16 code units, folded as ``h = 31*h + c`` modulo 2^32.
"""
from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from fleethealth.fleet.kafka import OFFSETS_TOPIC
from fleethealth.runtime.frames import local_frame
from fleethealth.silver.parsers import rules as rule_engine

_2_32 = 1 << 32
_2_31 = 1 << 31
COORDINATOR_LOGGERS = "kafka.coordinator.%"   # GroupCoordinator / GroupMetadataManager (all versions)
# the same written with %c{1} (Strimzi's Kafka 4 layout)
COORDINATOR_CLASSES = ("kafka.coordinator.group.GroupCoordinator", "kafka.coordinator.group.GroupMetadataManager",
                       "kafka.coordinator.group.GroupCoordinatorService")

SCHEMA_DDL = ("cluster string, `group` string, offsets_partition int, coordinator_broker int, source string, "
              "first_seen timestamp, last_seen timestamp, events bigint, hour timestamp")


def java_string_hashcode(s: Column) -> Column:
    """Java ``String.hashCode()`` of a string column, as a signed 32-bit int (null stays null).

    UTF-16BE bytes -> hex -> one 4-hex-digit code unit each (surrogate pairs count as two units,
    as in Java); the fold keeps h below 2^32 so 31*h + c fits a long; then two's complement.
    """
    units = F.regexp_extract_all(F.hex(F.encode(s, "UTF-16BE")), F.lit("([0-9A-F]{4})"), 1)
    codes = F.transform(units, lambda u: F.conv(u, 16, 10).cast("long"))
    h = F.aggregate(codes, F.lit(0).cast("long"), lambda acc, c: (acc * 31 + c) % F.lit(_2_32))
    signed = F.when(h >= _2_31, h - F.lit(_2_32)).otherwise(h).cast("int")
    return F.when(s.isNotNull(), signed)


def kafka_abs(n: Column) -> Column:
    """org.apache.kafka.common.utils.Utils.abs: Integer.MIN_VALUE -> 0, else Math.abs."""
    return F.when(n == F.lit(-_2_31).cast("int"), F.lit(0)).otherwise(F.abs(n))


def coordinator_partition(group: Column, partitions: Column | int = 50) -> Column:
    """The __consumer_offsets partition of a consumer group (Kafka's GroupMetadataManager.partitionFor)."""
    parts = partitions if isinstance(partitions, Column) else F.lit(partitions)
    return (kafka_abs(java_string_hashcode(group)) % parts).cast("int")


def groups_by_partition(kafka_events: DataFrame, hosts: DataFrame | None) -> DataFrame:
    """(cluster, partition, hour, groups): the consumer groups any line of the hour names (`group` field),
    sorted, per __consumer_offsets partition that coordinates them (`coordinator_partition`, the
    cluster's offsets.topic.num.partitions from the inventory, 50 when unknown or `hosts` is None).
    Only groups the logs name: a quiet group is not listed."""
    if "group" not in kafka_events.columns:   # test frames carry only the columns they need
        return local_frame(kafka_events.sparkSession, [], "cluster string, `partition` int, hour timestamp, groups array<string>")
    named = kafka_events.where(F.col("group").isNotNull()).select("cluster", "hour", "group").distinct()
    if hosts is None:
        named = named.withColumn("offsets_topic_partitions", F.lit(None).cast("int"))
    else:
        parts = hosts.groupBy("cluster").agg(F.max("offsets_topic_partitions").alias("offsets_topic_partitions"))
        named = named.join(F.broadcast(parts), "cluster", "left")
    return (named.withColumn("partition", coordinator_partition(F.col("group"),
                                                                F.coalesce("offsets_topic_partitions", F.lit(50))))
            .groupBy("cluster", "partition", "hour")
            .agg(F.array_sort(F.collect_set(F.col("group").cast("string"))).alias("groups"))
            .select(F.col("cluster").cast("string"), F.col("partition").cast("int"), "hour", "groups"))


def offsets_leaders(kafka_events: DataFrame) -> DataFrame:
    """(cluster, partition, leader, ts, hour): a broker became leader (coordinator) of an offsets partition.

    From silver.kafka_events: "Finished loading offsets and group metadata from __consumer_offsets-N"
    (logged by the new leader once it serves the partition's groups) and `leader_epoch_start` ("... starts
    at Leader Epoch N", whose `leader` field names the leader also on a follower's line from 2.7).
    """
    offsets = kafka_events.where(F.col("topic") == OFFSETS_TOPIC)
    loaded = (offsets.where(F.col("event_type") == "group_load_finished")
              .select("cluster", "partition", F.col("broker_id").alias("leader"), "ts", "hour"))
    started = (offsets.where((F.col("event_type") == "leader_epoch_start") & F.col("leader").isNotNull())
               .select("cluster", "partition", "leader", "ts", "hour"))
    return loaded.unionByName(started)


def group_coordinators(kafka_events: DataFrame, hosts: DataFrame, leaders: DataFrame | None = None) -> DataFrame:
    """gold.group_coordinators, per hour (`hour` of the events): per group seen in the hour's logs, its
    offsets partition and the broker(s) coordinating it, with when.

    Two sources, one row per (cluster, group, coordinator broker, source):
    - ``group_log``: the broker whose GroupCoordinator/GroupMetadataManager logged a line naming the
      group (only the coordinator logs those) - first/last such line;
    - ``offsets_leader``: the broker that became leader of the group's offsets partition (``leaders``,
      default `offsets_leaders` of the same events) - first/last time it did.
    """
    leaders = offsets_leaders(kafka_events) if leaders is None else leaders
    partitions = hosts.groupBy("cluster").agg(F.max("offsets_topic_partitions").alias("offsets_topic_partitions"))
    named = (kafka_events.where(F.col("group").isNotNull() & F.col("broker_id").isNotNull()
                                & (F.col("logger").like(COORDINATOR_LOGGERS)
                                   | rule_engine.logger_in(F.col("logger"), COORDINATOR_CLASSES)))
             .join(F.broadcast(partitions), "cluster", "left")
             .withColumn("offsets_partition",
                         coordinator_partition(F.col("group"), F.coalesce("offsets_topic_partitions", F.lit(50)))))
    logged = (named.groupBy("cluster", "hour", "group", "offsets_partition",
                            F.col("broker_id").alias("coordinator_broker"))
              .agg(F.min("ts").alias("first_seen"), F.max("ts").alias("last_seen"),
                   F.count(F.lit(1)).alias("events"))
              .withColumn("source", F.lit("group_log")))
    groups = named.select("cluster", "hour", "group", "offsets_partition").distinct()
    led = (groups.join(leaders.withColumnRenamed("partition", "offsets_partition"),
                       ["cluster", "hour", "offsets_partition"])
           .groupBy("cluster", "hour", "group", "offsets_partition", F.col("leader").alias("coordinator_broker"))
           .agg(F.min("ts").alias("first_seen"), F.max("ts").alias("last_seen"), F.count(F.lit(1)).alias("events"))
           .withColumn("source", F.lit("offsets_leader")))
    return (logged.unionByName(led)
            .select("cluster", "group", "offsets_partition", F.col("coordinator_broker").cast("int"), "source",
                    "first_seen", "last_seen", F.col("events").cast("long"), "hour"))
