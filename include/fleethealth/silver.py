"""Silver: typed events from an hour of bronze, a quarantine for what does not parse, and the
reconciliation that proves nothing was lost (per host, source and hour: bronze = silver + quarantine).
"""
from __future__ import annotations

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from functools import reduce

from fleethealth.inventory import Inventory
from fleethealth.bronze import is_prometheus
from fleethealth.parsers import jolokia, log4j, logdirs, prometheus, threaddump

MAX_QUARANTINED_RECORD_CHARS = 4000

HOSTS_SCHEMA = T.StructType([
    T.StructField("cluster", T.StringType(), False),
    T.StructField("host", T.StringType(), False),
    T.StructField("role", T.StringType(), False),
    T.StructField("broker_id", T.IntegerType(), True),
    T.StructField("zk_myid", T.IntegerType(), True),
    T.StructField("kafka_version", T.StringType(), True),
    T.StructField("timezone", T.StringType(), False),
    T.StructField("offsets_topic_partitions", T.IntegerType(), False),
    T.StructField("expect", T.ArrayType(T.StringType()), False),
])

QUARANTINE_COLUMNS = ["cluster", "host", "source", "file", "line_number", "line_count", "record", "reason", "hour"]


def hosts_frame(spark: SparkSession, inventory: Inventory) -> DataFrame:
    """The inventory as a small DataFrame (one row per host)."""
    rows = [(h.cluster, h.host, h.role, h.broker_id, h.zk_myid, h.kafka_version, c.timezone,
             c.offsets_topic_partitions, list(h.expect))
            for c in inventory.clusters for h in c.hosts]
    return spark.createDataFrame(rows, HOSTS_SCHEMA)


def _quarantine(df: DataFrame) -> DataFrame:
    return df.select(
        "cluster", "host", "source", "file", F.col("line_number").cast("int"), F.col("line_count").cast("int"),
        F.substring("record", 1, MAX_QUARANTINED_RECORD_CHARS).alias("record"), "reason", "hour")


def _log_events(bronze: DataFrame, hosts: DataFrame, fmt: log4j.LogFormat) -> tuple[DataFrame, DataFrame]:
    lines = bronze.where(F.col("source") == fmt.name)
    records, orphans = log4j.assemble(lines, fmt)
    records = records.join(F.broadcast(hosts.select("cluster", "host", "timezone", "broker_id", "zk_myid")),
                           ["cluster", "host"], "left")
    parsed = log4j.parse_records(records, fmt, F.coalesce(F.col("timezone"), F.lit("UTC")))
    bad_reason = (F.when(F.col("level").isNull(), F.lit(f"not a {fmt.name} log4j header"))
                   .when(F.col("ts").isNull(), F.lit("unparseable timestamp")))
    # parsed feeds both the events and the quarantine: parse once
    parsed = parsed.withColumn("_bad", bad_reason).persist(StorageLevel.MEMORY_AND_DISK)
    quarantine = (parsed.where(F.col("_bad").isNotNull())
                  .select(*log4j.LINEAGE, "line_number", "line_count", F.col("text").alias("record"),
                          F.col("_bad").alias("reason"))
                  .unionByName(orphans.select(*log4j.LINEAGE, "line_number", F.lit(1).alias("line_count"),
                                              "record", F.lit("continuation line before the first record "
                                                              "of its file").alias("reason"))))
    events = log4j.with_events(parsed.where(F.col("_bad").isNull()).drop("_bad", "text"), fmt.name)
    log_name = F.regexp_extract("file", r"([^/]+?)\.log(?:\.[^/]*)?$", 1)
    id_col = "broker_id" if fmt is log4j.KAFKA else "zk_myid"
    events = events.withColumn("log", log_name).drop("timezone", "file_sha256",
                                                     "zk_myid" if fmt is log4j.KAFKA else "broker_id")
    lead = ["cluster", "host", id_col, "log", "ts", "level", "logger", "thread", "message", "detail", "event_type"]
    rest = [c for c in events.columns if c not in lead]
    return events.select(*lead, *rest), _quarantine(quarantine)


def build(spark: SparkSession, bronze: DataFrame, inventory: Inventory) -> dict[str, DataFrame]:
    """The silver tables of one hour of bronze (DataFrames, not yet written)."""
    hosts = hosts_frame(spark, inventory)
    tz = hosts.select("cluster", "host", "timezone", "broker_id")
    kafka, q_kafka = _log_events(bronze, hosts, log4j.KAFKA)
    zk, q_zk = _log_events(bronze, hosts, log4j.ZOOKEEPER)

    jmx_bronze = bronze.where(F.col("source") == "jmx")
    prom = is_prometheus(F.col("source"), F.col("file"))
    samples, q_jmx = jolokia.parse(jmx_bronze.where(~prom))
    scrapes = jmx_bronze.where(prom).join(F.broadcast(tz.drop("broker_id")), ["cluster", "host"], "left")
    prom_samples, q_prom = prometheus.parse(scrapes, F.coalesce(F.col("timezone"), F.lit("UTC")))
    samples = samples.unionByName(prom_samples)
    samples = samples.join(F.broadcast(tz.select("cluster", "host", "broker_id")), ["cluster", "host"], "left")
    samples = samples.select("cluster", "host", "broker_id", *[c for c in samples.columns
                                                               if c not in ("cluster", "host", "broker_id")])

    dumps = bronze.where(F.col("source") == "threaddumps").join(F.broadcast(tz), ["cluster", "host"], "left")
    threads, q_dumps = threaddump.parse(dumps, F.coalesce(F.col("timezone"), F.lit("UTC")))
    threads = threads.join(F.broadcast(tz.select("cluster", "host", "broker_id")), ["cluster", "host"], "left")
    cycles, q_cycles = threaddump.deadlocks(dumps, F.coalesce(F.col("timezone"), F.lit("UTC")))
    cycles = cycles.join(F.broadcast(tz.select("cluster", "host", "broker_id")), ["cluster", "host"], "left")
    cycles = cycles.select("cluster", "host", "broker_id", *[c for c in cycles.columns if c not in ("cluster", "host", "broker_id")])

    snaps = bronze.where(F.col("source") == "logdirs").join(F.broadcast(tz.drop("broker_id")), ["cluster", "host"], "left")
    sizes, q_logdirs = logdirs.parse(snaps, F.coalesce(F.col("timezone"), F.lit("UTC")))

    quarantine = q_kafka.unionByName(q_zk)
    for q in (q_jmx, q_prom, q_dumps, q_cycles, q_logdirs):
        quarantine = quarantine.unionByName(_quarantine(q))
    return {
        "silver.kafka_events": kafka,
        "silver.zk_events": zk,
        "silver.jmx_samples": samples,
        "silver.threads": threads,
        "silver.deadlocks": cycles,
        "silver.partition_sizes": sizes,
        "silver.quarantine": quarantine,
    }


# Which silver table holds each source's rows; log sources count lines, others records.
# (silver.deadlocks is derived from dumps that silver.threads already counts.)
SILVER_OF_SOURCE = {
    "kafka": "silver.kafka_events",
    "zookeeper": "silver.zk_events",
    "jmx": "silver.jmx_samples",
    "threaddumps": "silver.threads",
    "logdirs": "silver.partition_sizes",
}
LINE_SOURCES = ("kafka", "zookeeper")

def reconciliation(bronze: DataFrame, silver_tables: dict[str, DataFrame], quarantine: DataFrame) -> DataFrame:
    """Per cluster, host, source and hour: bronze records = silver records + quarantined records.

    Log sources count lines (a silver event covers `line_count` lines); the others count records
    (distinct file + line). Quarantine rows carry how many bronze records they stand for (0 for a
    failed MBean inside a bulk JMX read whose other MBeans made silver rows). `unaccounted` must
    be 0: the silver quality gate fails the run otherwise.
    """
    group = ["cluster", "host", "source", "hour"]  # a build may cover several hours (the rows keep theirs)
    counted = []
    for source, name in SILVER_OF_SOURCE.items():
        df = silver_tables[name].where(F.col("source") == source)
        if source in LINE_SOURCES:
            agg = F.sum("line_count")
        else:
            agg = F.count_distinct("file", "line_number")
        counted.append(df.groupBy(*group).agg(agg.cast("long").alias("silver_records")))
    s = reduce(DataFrame.unionByName, counted)
    q = quarantine.groupBy(*group).agg(F.sum("line_count").cast("long").alias("quarantined_records"))
    b = bronze.groupBy(*group).agg(F.count(F.lit(1)).cast("long").alias("bronze_records"))
    out = b.join(s, group, "left").join(q, group, "left").fillna(0, ["silver_records", "quarantined_records"])
    return out.select(*group, "bronze_records", "silver_records", "quarantined_records",
                      (F.col("bronze_records") - F.col("silver_records") - F.col("quarantined_records"))
                      .alias("unaccounted"))
