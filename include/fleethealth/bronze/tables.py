"""Bronze: one row per raw record of the landed files of an hour, with lineage; nothing parsed away
(bronze.records), and one row per file listed for the hour (bronze.files: read or rejected, why,
and how many records it gave), the ledger that says which input never became records.

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

from fleethealth.fleet.sources import SOURCES
from fleethealth.pull.landing import PROMETHEUS_FILE, Landed
from fleethealth.runtime.frames import local_frame

WHOLE_FILE_SOURCES = tuple(s.name for s in SOURCES.values() if s.whole_file)

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

FILES_SCHEMA = T.StructType([
    T.StructField("cluster", T.StringType(), False),
    T.StructField("host", T.StringType(), False),
    T.StructField("source", T.StringType(), False),
    T.StructField("file", T.StringType(), False),
    T.StructField("size", T.LongType(), False),
    T.StructField("file_sha256", T.StringType(), True),
    T.StructField("status", T.StringType(), False),
    T.StructField("reason", T.StringType(), True),
    T.StructField("records", T.LongType(), False),
    T.StructField("hour", T.TimestampType(), False),
])

_MANIFEST_SCHEMA = T.StructType([
    T.StructField("path", T.StringType(), False),
    T.StructField("file", T.StringType(), False),
    T.StructField("cluster", T.StringType(), False),
    T.StructField("host", T.StringType(), False),
    T.StructField("source", T.StringType(), False),
    T.StructField("file_sha256", T.StringType(), False),
])


def is_prometheus(source: Column, file: Column) -> Column:
    """Whether a landed file is a jmx_exporter scrape (else a JMX file holds Jolokia JSON)."""
    return (source == "jmx") & file.rlike(PROMETHEUS_FILE)


def lines_of(text: str) -> Column:
    """The text of column `text` as an array of lines (trailing newline and CRs removed)."""
    lines = f"split(`{text}`, '\\n')"
    lines = f"CASE WHEN element_at({lines}, -1) = '' THEN slice({lines}, 1, size({lines}) - 1) ELSE {lines} END"
    # CRLF files: a lambda per line (interpreted, not generated code) only for a text holding a CR
    return F.expr(f"CASE WHEN contains(`{text}`, '\\r') THEN transform({lines}, line -> trim(TRAILING '\\r' FROM line)) "
                  f"ELSE {lines} END")


def split_records(text: Column, lines: Column, source: Column, file: Column | None = None) -> Column:
    """The records of one file: its lines (`lines`: lines_of(text), computed once in a projection
    below, since a split decodes the whole file), or the whole text as one record."""
    first = F.trim(F.element_at(lines, 1))
    whole = F.array(F.regexp_replace(text, "\r?\n$", ""))
    return (F.when(F.length(text) == 0, F.array().cast("array<string>"))
             .when(source.isin(*WHOLE_FILE_SOURCES), whole)
             .when(is_prometheus(source, file if file is not None else F.lit("")), whole)
             .when((source == "jmx") & (F.size(lines) > 1) & first.isin("[", "{"), whole)
             .otherwise(lines))


def records(spark: SparkSession, landed: list[Landed], landing_dir: Path, hour: datetime) -> DataFrame:
    """Bronze rows of the landed files of `hour` (rejected files have none)."""
    readable = [x for x in landed if x.status == "read"]
    if not readable:
        return local_frame(spark, [], SCHEMA)
    manifest = local_frame(
        spark, [(x.read_path, x.file, x.cluster, x.host, x.source, x.sha256) for x in readable], _MANIFEST_SCHEMA)
    raw = (spark.read.text([str(landing_dir / x.read_path) for x in readable], wholetext=True)
           .select("value", F.col("_metadata.file_path").alias("file_path")))
    # file_path is a URI; its last four segments are the landed path <cluster>/<host>/<source>/<name>
    raw = raw.withColumn("path", F.url_decode(F.regexp_extract("file_path", r"([^/]+/[^/]+/[^/]+/[^/]+)$", 1)))
    joined = raw.join(F.broadcast(manifest), "path", "left")
    exploded = joined.withColumn("_lines", lines_of("value")).select(
        "cluster", "host", "source", "file", "file_sha256",
        F.posexplode(split_records(F.col("value"), F.col("_lines"), F.col("source"), F.col("file")))
        .alias("pos", "record"))
    return exploded.select(
        "cluster", "host", "source", "file", "file_sha256",
        (F.col("pos") + 1).cast("int").alias("line_number"), "record",
        F.lit(hour).cast("timestamp").alias("hour"))


def files(spark: SparkSession, landed: list[Landed], records_df: DataFrame, hour: datetime) -> DataFrame:
    """bronze.files of `hour`: every file listed for it, read or rejected, with its record count."""
    rows = [(x.cluster, x.host, x.source, x.file, x.size, x.sha256 or None, x.status, x.reason or None, 0, hour)
            for x in landed]
    listed = local_frame(spark, rows, FILES_SCHEMA).drop("records")
    counts = records_df.groupBy("file").agg(F.count(F.lit(1)).alias("records"))
    out = listed.join(counts, "file", "left").withColumn("records", F.coalesce("records", F.lit(0)).cast("long"))
    return out.select(*FILES_SCHEMA.fieldNames())
