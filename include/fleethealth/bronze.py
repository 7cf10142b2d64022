"""Bronze: one row per raw record of the landed files of an hour, with lineage; nothing parsed away.

Records are lines, except thread dumps (one record per file), pretty-printed JSON documents in
JMX exports and Prometheus scrapes (`*.prom`, jmx_exporter text exposition) in JMX exports (one
record per file: a scrape is one document, its comment lines go with it); JSON-lines exports give
one record per line.
"""
from __future__ import annotations

from datetime import datetime
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from fleethealth.pull import Landed

WHOLE_FILE_SOURCES = ("threaddumps",)
# a JMX export file holding one Prometheus scrape (optionally rolled: metrics.prom.2026-11-20-05)
PROMETHEUS_FILE = r"\.prom(\.[^/]*)?$"

SCHEMA = T.StructType([
    T.StructField("cluster", T.StringType(), False),
    T.StructField("host", T.StringType(), False),
    T.StructField("source", T.StringType(), False),
    T.StructField("file", T.StringType(), False),
    T.StructField("file_sha256", T.StringType(), False),
    T.StructField("line_number", T.IntegerType(), False),
    T.StructField("record", T.StringType(), False),
    T.StructField("hour", T.TimestampType(), False),
])

_MANIFEST_SCHEMA = T.StructType([
    T.StructField("file", T.StringType(), False),
    T.StructField("cluster", T.StringType(), False),
    T.StructField("host", T.StringType(), False),
    T.StructField("source", T.StringType(), False),
    T.StructField("file_sha256", T.StringType(), False),
])


def is_prometheus(source: Column, file: Column) -> Column:
    """Whether a landed file is a jmx_exporter scrape (else a JMX file holds Jolokia JSON)."""
    return (source == "jmx") & file.rlike(PROMETHEUS_FILE)


def split_records(text: Column, source: Column, file: Column | None = None) -> Column:
    """The records of one file's text: an array of lines (trailing newline and CR removed)."""
    lines = F.split(text, "\n")
    lines = F.when(F.element_at(lines, -1) == "", F.slice(lines, 1, F.size(lines) - 1)).otherwise(lines)
    lines = F.transform(lines, lambda line: F.regexp_replace(line, "\r$", ""))
    first = F.trim(F.element_at(lines, 1))
    whole = F.array(F.regexp_replace(text, "\r?\n$", ""))
    return (F.when(F.length(text) == 0, F.array().cast("array<string>"))
             .when(source.isin(*WHOLE_FILE_SOURCES), whole)
             .when(is_prometheus(source, file if file is not None else F.lit("")), whole)
             .when((source == "jmx") & (F.size(lines) > 1) & first.isin("[", "{"), whole)
             .otherwise(lines))


def records(spark: SparkSession, landed: list[Landed], landing_dir: Path, hour: datetime) -> DataFrame:
    """Bronze rows of the landed files of `hour`."""
    if not landed:
        return spark.createDataFrame([], SCHEMA)
    manifest = spark.createDataFrame(
        [(x.file, x.cluster, x.host, x.source, x.sha256) for x in landed], _MANIFEST_SCHEMA)
    raw = (spark.read.text([str(landing_dir / x.file) for x in landed], wholetext=True)
           .select("value", F.col("_metadata.file_path").alias("file_path")))
    # file_path is a URI; its tail below the hour folder is the manifest's relative file name.
    raw = raw.withColumn("file", F.url_decode(F.regexp_extract("file_path", r"/landing/[^/]+/(.+)$", 1)))
    joined = raw.join(F.broadcast(manifest), "file", "left")
    exploded = joined.select(
        "cluster", "host", "source", "file", "file_sha256",
        F.posexplode(split_records(F.col("value"), F.col("source"), F.col("file"))).alias("pos", "record"))
    return exploded.select(
        "cluster", "host", "source", "file", "file_sha256",
        (F.col("pos") + 1).cast("int").alias("line_number"), "record",
        F.lit(hour).cast("timestamp").alias("hour"))
