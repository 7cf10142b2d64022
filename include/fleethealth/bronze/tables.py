"""Bronze: one row per raw record of the landed files of an hour, with lineage; nothing parsed away
(bronze.records), and one row per file listed for the hour (bronze.files: read or rejected, why,
and how many records it gave), the ledger that says which input never became records.

Records are lines, read by the engine's streaming reader (engine/: no file is ever one string on
the heap; a record holds at most MAX_RECORD_BYTES, the rest of an over-long one is counted in
bronze.files), except thread dumps (one record per file), pretty-printed JSON documents in
JMX exports and Prometheus scrapes (`*.prom`, jmx_exporter text exposition) in JMX exports (one
record per file: a scrape is one document, its comment lines go with it); JSON-lines exports give
one record per line.
"""
from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from pyspark.sql import Column, DataFrame, Observation, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from fleethealth.bronze import wrappers
from fleethealth.fleet.sources import SOURCES
from fleethealth.pull.landing import PROMETHEUS_FILE, Landed
from fleethealth.runtime.frames import local_frame

# the engine's streaming reader (engine/, built into jars/ at set-up): a file's lines with their
# numbers, never a whole file in one string; a record holds at most MAX_RECORD_BYTES
ENGINE_READER = "io.fleethealth.engine.LineFiles"
MAX_RECORD_BYTES = 64 * 1024**2
WHOLE_FILE_SOURCES = tuple(s.name for s in SOURCES.values() if s.whole_file)
JSON_SOURCES = tuple(s.name for s in SOURCES.values() if s.reader == "json_lines")

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
    # the container runtime's wrapper of its lines (bronze.wrappers: cri, docker, kubectl), NULL if none
    T.StructField("wrapper", T.StringType(), True),
])

_MANIFEST_SCHEMA = T.StructType([
    T.StructField("file_index", T.IntegerType(), False),
    T.StructField("file", T.StringType(), False),
    T.StructField("cluster", T.StringType(), False),
    T.StructField("host", T.StringType(), False),
    T.StructField("source", T.StringType(), False),
    T.StructField("file_sha256", T.StringType(), False),
])

_READ_SCHEMA = T.StructType([*SCHEMA.fields, T.StructField("cut", T.LongType(), False)])


def is_prometheus(source: Column, file: Column) -> Column:
    """Whether a landed file is a jmx_exporter scrape (else a JMX file holds Jolokia JSON)."""
    return (source == "jmx") & file.rlike(PROMETHEUS_FILE)


def record_mode(x: Landed) -> str:
    """How the engine's reader makes records of a landed file, by its source's reader
    (fleethealth.fleet.sources): l (lines), w (the whole file: a snapshot, or a jmx_exporter scrape) or
    j (a JSON file: whole when pretty-printed, else JSON lines)."""
    if x.source in WHOLE_FILE_SOURCES or (x.source == "jmx" and re.search(PROMETHEUS_FILE, x.file)):
        return "w"
    return "j" if x.source in JSON_SOURCES else "l"


def read(spark: SparkSession, landed: list[Landed], landing_dir: Path, hour: datetime) -> DataFrame:
    """Bronze rows of the landed files of `hour` (rejected files have none), plus `cut`: the bytes of
    a record over MAX_RECORD_BYTES that were not kept (files() reports them)."""
    readable = [x for x in landed if x.status == "read"]
    if not readable:
        return local_frame(spark, [], _READ_SCHEMA)
    lines = (spark.read.format(ENGINE_READER)
             .option("paths", "\0".join(str(landing_dir / x.read_path) for x in readable))
             .option("modes", "".join(record_mode(x) for x in readable))
             .option("max_record_bytes", str(MAX_RECORD_BYTES))
             .option("parallelism", str(spark.sparkContext.defaultParallelism))
             .load())
    manifest = local_frame(spark, [(i, x.file, x.cluster, x.host, x.source, x.sha256)
                                   for i, x in enumerate(readable)], _MANIFEST_SCHEMA)
    return lines.join(F.broadcast(manifest), "file_index").select(
        "cluster", "host", "source", "file", "file_sha256", "line_number", "record",
        F.lit(hour).cast("timestamp").alias("hour"), "cut")


def records(spark: SparkSession, landed: list[Landed], landing_dir: Path, hour: datetime) -> DataFrame:
    """bronze.records of the landed files of `hour` (rejected files have none)."""
    return read(spark, landed, landing_dir, hour).select(*SCHEMA.fieldNames())


def records_observing_cuts(read_df: DataFrame) -> tuple[DataFrame, Observation]:
    """read()'s rows as bronze.records rows, and an Observation that, once they are written, holds
    `cuts`: (file, cut) of each record that was cut, and `wrappers`: (file, wrapper) of each wrapped
    file (files() takes them: the rows are written once, without a column of their own for it)."""
    cuts = Observation("bronze cuts")
    wrapper = wrappers.kind(F.col("record"))
    observed = read_df.observe(
        cuts, F.collect_list(F.when(F.col("cut") > 0, F.struct("file", "cut"))).alias("cuts"),
        F.collect_set(F.when(wrapper.isNotNull(), F.struct("file", wrapper.alias("wrapper")))).alias("wrappers"))
    return observed.select(*SCHEMA.fieldNames()), cuts


def files(spark: SparkSession, landed: list[Landed], read_df: DataFrame, hour: datetime,
          cuts: Observation | None = None) -> DataFrame:
    """bronze.files of `hour`: every file listed for it, read or rejected, with its record count
    (`read_df`: read()'s rows, or bronze.records), and what of it was cut from an over-long record
    (read_df's `cut`, or `cuts` of records_observing_cuts), and the wrapper of its lines (read from
    read_df's records, or `cuts`)."""
    rows = [(x.cluster, x.host, x.source, x.file, x.size, x.sha256 or None, x.status, x.reason or None, 0, hour,
             None) for x in landed]
    listed = local_frame(spark, rows, FILES_SCHEMA).drop("records", "wrapper")
    cut = F.sum("cut") if "cut" in read_df.columns else F.lit(0)
    if cuts is None:
        counts = read_df.groupBy("file").agg(F.count(F.lit(1)).alias("records"), cut.cast("long").alias("cut"),
                                             F.max(wrappers.kind(F.col("record"))).alias("wrapper"))
    else:
        counts = read_df.groupBy("file").agg(F.count(F.lit(1)).alias("records"))
        observed = cuts.get
        cut_rows = local_frame(spark, [(r.file, r.cut) for r in observed["cuts"]], "file string, cut long")
        kinds = {}
        for r in observed["wrappers"]:          # a file of several wrappers (never seen): the greatest name
            kinds[r.file] = max(kinds.get(r.file, r.wrapper), r.wrapper)
        counts = (counts.join(cut_rows.groupBy("file").agg(F.sum("cut").alias("cut")), "file", "left")
                  .fillna(0, ["cut"])
                  .join(local_frame(spark, list(kinds.items()), "file string, wrapper string"), "file", "left"))
    out = listed.join(counts, "file", "left").withColumn("records", F.coalesce("records", F.lit(0)).cast("long"))
    was_cut = F.format_string(f"%d bytes not kept: a record holds at most {MAX_RECORD_BYTES} bytes", "cut")
    out = out.withColumn("reason", F.when(F.col("cut") > 0, F.concat_ws("; ", "reason", was_cut))
                         .otherwise(F.col("reason")))
    return out.select(*FILES_SCHEMA.fieldNames())
