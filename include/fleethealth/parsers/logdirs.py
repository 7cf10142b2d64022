"""`kafka-log-dirs.sh --describe` snapshots -> partition sizes per broker and log dir."""
from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from fleethealth.parsers.log4j import LINEAGE

SNAPSHOT = ("struct<version:int,brokers:array<struct<broker:int,logDirs:array<struct<logDir:string,"
            "error:string,partitions:array<struct<partition:string,size:bigint,offsetLag:bigint,"
            "isFuture:boolean>>>>>>>")
_STAMP = r"(\d{4}-\d{2}-\d{2})T(\d{2})[-:]?(\d{2})[-:]?(\d{2})"
BANNER = r"^(Querying brokers for log directories information|Received log directory information from brokers .*)$"


def captured_at(file: Column, timezone: Column, fallback: Column) -> Column:
    """The capture time from the file name (local time of the cluster), else `fallback`."""
    stamp = F.concat(F.regexp_extract(file, _STAMP, 1), F.lit(" "), F.regexp_extract(file, _STAMP, 2),
                     F.lit(":"), F.regexp_extract(file, _STAMP, 3), F.lit(":"), F.regexp_extract(file, _STAMP, 4))
    # try_to_timestamp: a name without a stamp gives " ::", which to_timestamp rejects under ANSI
    local = F.try_to_timestamp(stamp, F.lit("yyyy-MM-dd HH:mm:ss"))
    return F.coalesce(F.to_utc_timestamp(local, timezone), fallback)


def parse(bronze: DataFrame, timezone: Column) -> tuple[DataFrame, DataFrame]:
    """(partition sizes, quarantine) from bronze `logdirs` records (one per line)."""
    docs = bronze.withColumn("doc", F.when(F.ltrim("record").startswith("{"), F.from_json("record", SNAPSHOT)))
    bad = (docs.where(F.col("doc").isNull())
           .select(*LINEAGE, "line_number", F.lit(1).alias("line_count"), "record",
                   F.when(F.col("record").rlike(BANNER), "kafka-log-dirs banner line (not data)")
                    .otherwise("not a kafka-log-dirs JSON line").alias("reason")))
    rows = (docs.where(F.col("doc").isNotNull())
            .withColumn("captured_at", captured_at(F.col("file"), timezone, F.col("hour")))
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
    return sizes, bad
