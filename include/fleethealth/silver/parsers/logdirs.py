"""`kafka-log-dirs.sh --describe` snapshots -> partition sizes per broker and log dir.

The tool prints two banner lines ("Querying brokers for log directories information", "Received log
directory information from brokers 1,2,3") and then one JSON line: brokers -> logDirs (each with
`error`, null unless the dir is offline, e.g. "org.apache.kafka.common.errors.KafkaStorageException")
-> partitions. Banner lines are quarantined as not data; an offline log dir is quarantined with its
error (line_count 0 when the snapshot gave sizes, else it stands for the record); a snapshot without
any partition is quarantined as such, so that every record is accounted for.
"""
from __future__ import annotations

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from fleethealth.lake.hours import NAME_STAMP
from fleethealth.silver.parsers.log4j import LINEAGE

SNAPSHOT = ("struct<version:int,brokers:array<struct<broker:int,logDirs:array<struct<logDir:string,"
            "error:string,partitions:array<struct<partition:string,size:bigint,offsetLag:bigint,"
            "isFuture:boolean>>>>>>>")
BANNER = r"^(Querying brokers for log directories information|Received log directory information from brokers .*)$"


def captured_at(file: Column, timezone: Column, fallback: Column) -> Column:
    """The capture time from the file name (cluster-local, or UTC with a trailing Z: the stamp that
    fleethealth.lake.hours.file_span lands the file by), else `fallback`."""
    part = lambda i: F.regexp_extract(file, NAME_STAMP, i)  # noqa: E731
    second = F.when(part(6) == "", F.lit("00")).otherwise(part(6))
    stamp = F.concat(part(1), F.lit("-"), part(2), F.lit("-"), part(3), F.lit(" "), part(4), F.lit(":"), part(5),
                     F.lit(":"), second)
    # try_to_timestamp: a name without a stamp gives "-- ::00", which to_timestamp rejects under ANSI
    local = F.try_to_timestamp(stamp, F.lit("yyyy-MM-dd HH:mm:ss"))
    utc = F.when(part(7) == "Z", local).otherwise(F.to_utc_timestamp(local, timezone))
    return F.coalesce(utc, fallback)


def parse(bronze: DataFrame, timezone: Column) -> tuple[DataFrame, DataFrame]:
    """(partition sizes, quarantine) from bronze `logdirs` records (one per line)."""
    # parsed once, read by the sizes and by three kinds of quarantine rows
    docs = (bronze.withColumn("doc", F.when(F.ltrim("record").startswith("{"), F.from_json("record", SNAPSHOT)))
            .persist(StorageLevel.MEMORY_AND_DISK))
    bad = (docs.where(F.col("doc").isNull())
           .select(*LINEAGE, "line_number", F.lit(1).alias("line_count"), "record",
                   F.when(F.col("record").rlike(BANNER), "kafka-log-dirs banner line (not data)")
                    .otherwise("not a kafka-log-dirs JSON line").alias("reason")))
    good = docs.where(F.col("doc").isNotNull())
    dirs = F.flatten(F.transform("doc.brokers", lambda b: F.transform(
        F.coalesce(b["logDirs"], F.array()), lambda d: F.struct(b["broker"].alias("broker"), d["logDir"].alias("log_dir"),
                                                                 d["error"].alias("error"),
                                                                 F.size(F.coalesce(d["partitions"], F.array())).alias("n")))))
    n_partitions = F.aggregate(dirs, F.lit(0), lambda acc, d: acc + d["n"])
    checked = good.select("*", F.coalesce(dirs, F.array()).alias("dirs"),
                          F.coalesce(n_partitions, F.lit(0)).alias("n_partitions"))
    failed = F.filter("dirs", lambda d: d["error"].isNotNull())
    offline = (checked.select(*LINEAGE, "line_number", "record", "n_partitions",
                              F.posexplode(failed).alias("k", "d"))
               .select(*LINEAGE, "line_number",
                       F.when((F.col("n_partitions") == 0) & (F.col("k") == 0), 1).otherwise(0).alias("line_count"),
                       "record",
                       F.format_string("kafka-log-dirs: log dir %s of broker %s is offline: %s",
                                       F.col("d.log_dir"), F.col("d.broker").cast("string"), F.col("d.error"))
                       .alias("reason")))
    empty = (checked.where((F.col("n_partitions") == 0) & (F.size(failed) == 0))
             .select(*LINEAGE, "line_number", F.lit(1).alias("line_count"), "record",
                     F.lit("kafka-log-dirs snapshot without partitions").alias("reason")))
    rows = (good.withColumn("captured_at", captured_at(F.col("file"), timezone, F.col("hour")))
            .select("cluster", "host", "captured_at", "source", "file", "line_number", "hour",
                    F.explode("doc.brokers").alias("b"))
            .select("*", F.explode("b.logDirs").alias("d"))
            .select("*", F.explode("d.partitions").alias("p")))
    sizes = rows.select(
        "cluster", "host", F.col("b.broker").alias("broker_id"), F.col("d.logDir").alias("log_dir"),
        F.regexp_extract("p.partition", r"^(.*)-(\d+)$", 1).alias("topic"),
        F.regexp_extract("p.partition", r"^(.*)-(\d+)$", 2).cast("int").alias("partition"),
        F.col("p.size").alias("size_bytes"), F.col("p.offsetLag").alias("offset_lag"),
        F.col("p.isFuture").alias("is_future"), "captured_at", "source", "file", "line_number", "hour")
    return sizes, bad.unionByName(offline).unionByName(empty)
