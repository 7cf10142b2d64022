"""Silver: typed events from an hour of bronze, a quarantine for what does not parse, and the
reconciliation that proves nothing was lost (per host, source and hour: bronze = silver + quarantine).
"""
from __future__ import annotations

import importlib
from functools import reduce

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from fleethealth.bronze import wrappers
from fleethealth.bronze.tables import is_prometheus
from fleethealth.fleet import conversion_pattern
from fleethealth.fleet.inventory import Cluster, Host, Inventory
from fleethealth.fleet.sources import SOURCES, Source
from fleethealth.runtime.frames import local_frame
from fleethealth.silver.parsers import containers, jolokia, log4j, prometheus, threaddump, user_layouts

MAX_QUARANTINED_RECORD_CHARS = 4000
MAX_FILE_PROBLEMS = 5   # per host, source and hour in silver.reconciliation (all are in silver.quarantine)

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
# what hosts_frame adds to HOSTS_SCHEMA, each computed once here from the inventory's Host: its
# cluster's mode (zookeeper or kraft), whether the host runs a KRaft controller (role controller, or a
# combined broker), how incidents name its process (fleet.entities) and the processes it runs (as
# mbeans.yaml and known_bugs.yaml name them). Gold joins on these; it computes none of them again (the
# mode of a cluster whose logs tell it: gold.job.found_modes, before its hosts frame).
HOSTS_NAMED_FIELDS = [T.StructField("mode", T.StringType(), False), T.StructField("controller", T.BooleanType(), False),
                      T.StructField("entity", T.StringType(), False),
                      T.StructField("processes", T.ArrayType(T.StringType(), False), False)] + [
    # its log_pattern compiled (fleet.conversion_pattern; NULL without one): silver.parsers.user_layouts
    T.StructField(c, T.StringType(), True) for c in user_layouts.PATTERN_COLUMNS]
HOSTS_FRAME_SCHEMA = T.StructType(HOSTS_SCHEMA.fields + HOSTS_NAMED_FIELDS)

ID_COLUMNS = ("broker_id", "zk_myid")   # the inventory ids a source's rows may carry (its `id_column`)
QUARANTINE_COLUMNS = ["cluster", "host", "source", "file", "line_number", "line_count", "record", "reason", "hour"]


def hosts_frame(spark: SparkSession, inventory: Inventory) -> DataFrame:
    """The inventory as a small DataFrame (one row per host): HOSTS_FRAME_SCHEMA."""
    return _hosts(spark, [(c, h) for c in inventory.clusters for h in c.hosts])


def hosts_of(spark: SparkSession, rows) -> DataFrame:
    """The hosts frame (HOSTS_FRAME_SCHEMA) of HOSTS_SCHEMA rows, a unit test's: a cluster with a host of
    role controller is in KRaft mode (its controllers dedicated ones), any other in ZooKeeper mode."""
    rows = [tuple(r) for r in rows]
    kraft = {r[0] for r in rows if r[2] == "controller"}
    clusters = {r[0]: Cluster(r[0], r[6], r[7], (), "kraft" if r[0] in kraft else "zookeeper") for r in rows}
    return _hosts(spark, [(clusters[r[0]], Host(r[0], r[1], r[2], "local", None, broker_id=r[3],
                                                controller=r[2] == "controller", mode=clusters[r[0]].mode,
                                                zk_myid=r[4], kafka_version=r[5], expect=tuple(r[8])))
                          for r in rows])


def _hosts(spark: SparkSession, hosts: list[tuple[Cluster, Host]]) -> DataFrame:
    def pattern(h: Host) -> tuple:
        p = h.log_pattern and conversion_pattern.compile_pattern(h.log_pattern)
        return (p.start, p.regex, p.time_format) if p else (None, None, None)
    rows = [(h.cluster, h.host, h.role, h.broker_id, h.zk_myid, h.kafka_version, c.timezone,
             c.offsets_topic_partitions, list(h.expect), c.mode, h.controller, h.entity, list(h.processes),
             *pattern(h)) for c, h in hosts]
    return local_frame(spark, rows, HOSTS_FRAME_SCHEMA)


def _quarantine(df: DataFrame) -> DataFrame:
    return df.select(
        "cluster", "host", "source", "file", F.col("line_number").cast("int"), F.col("line_count").cast("int"),
        F.substring("record", 1, MAX_QUARANTINED_RECORD_CHARS).alias("record"), "reason", "hour")


def _log_events(bronze: DataFrame, hosts: DataFrame, source: Source,
                wrapped: bool = True) -> tuple[DataFrame, DataFrame]:
    fmt = log4j.LAYOUTS[source.layout]
    lines = bronze.where(F.col("source") == source.name)
    # container wrappers off and split lines joined (containers; `wrapped`: the lines may hold any); a
    # host's log_pattern and JSON lines (user_layouts), else the source's layout
    records, orphans = containers.assemble(lines, fmt, user_layouts.record_start(fmt, hosts), wrapped)
    records = records.join(F.broadcast(hosts.select("cluster", "host", "timezone", "broker_id", "zk_myid",
                                                    *user_layouts.PATTERN_COLUMNS)), ["cluster", "host"], "left")
    parsed = user_layouts.parse_records(records, fmt, F.coalesce(F.col("timezone"), F.lit("UTC")))
    parsed = parsed.withColumn("ts", F.coalesce("ts", "wrapped_at"))   # a wrapper's time: the fallback
    bad_reason = (F.when(F.col("level").isNull(), user_layouts.not_read(fmt))
                   .when(F.col("ts").isNull(), F.lit("unparseable timestamp")))
    # parsed feeds both the events and the quarantine: parsing again (the engine's functions) costs
    # less than caching the parsed hour (a third of the Kafka part's time, and memory)
    parsed = parsed.withColumn("_bad", bad_reason)
    quarantine = (parsed.where(F.col("_bad").isNotNull())
                  .select(*log4j.LINEAGE, "line_number", "line_count", F.col("text").alias("record"),
                          F.col("_bad").alias("reason"))
                  .unionByName(orphans.select(*log4j.LINEAGE, "line_number", "line_count", "record", "reason")))
    events = log4j.with_events(parsed.where(F.col("_bad").isNull()).drop("_bad", "text", *user_layouts.PATTERN_COLUMNS),
                               source.name)
    # the log's name from its file's: one regex per file, not per record
    logs = lines.select("file").distinct().withColumn("log", F.regexp_extract("file", r"([^/]+?)\.log(?:\.[^/]*)?$", 1))
    other_ids = [c for c in ID_COLUMNS if c != source.id_column]
    events = events.join(F.broadcast(logs), "file", "left").drop("timezone", "file_sha256", *other_ids)
    if wrapped:
        events = containers.with_log(events)   # a pod's stream: the log of each record's logger
    lead = ["cluster", "host", *[c for c in (source.id_column,) if c], "log", "ts", "level", "logger", "thread",
            "message", "detail", "event_type"]
    rest = [c for c in events.columns if c not in lead]
    return events.select(*lead, *rest), _quarantine(quarantine)


def file_quarantine(files: DataFrame) -> DataFrame:
    """A quarantine row (line 0, standing for no bronze record) for each file listed for the hour that
    was rejected, or read only in part (a damaged .gz: its lines that decompressed are in bronze)."""
    return _quarantine(files.where((F.col("status") != "read") | F.col("reason").isNotNull()).select(
        "cluster", "host", "source", "file", F.lit(0).alias("line_number"), F.lit(0).alias("line_count"),
        F.lit("").alias("record"), F.concat(F.lit("file "), F.col("status"), F.lit(": "), F.col("reason"))
        .alias("reason"), "hour"))


def _with_id(df: DataFrame, hosts: DataFrame, id_column: str = "broker_id") -> DataFrame:
    """`df` with its host's inventory id (`hosts`: any frame with cluster, host and the id) after host."""
    df = df.join(F.broadcast(hosts.select("cluster", "host", id_column)), ["cluster", "host"], "left")
    return df.select("cluster", "host", id_column, *[c for c in df.columns if c not in ("cluster", "host", id_column)])


def _tz(hosts: DataFrame) -> DataFrame:
    return hosts.select("cluster", "host", "timezone", "broker_id")


def _zone() -> Column:
    return F.coalesce(F.col("timezone"), F.lit("UTC"))


def _jolokia(bronze: DataFrame, hosts: DataFrame) -> tuple[dict[str, DataFrame], list[DataFrame]]:
    reads = bronze.where((F.col("source") == "jmx") & ~is_prometheus(F.col("source"), F.col("file")))
    samples, q = jolokia.parse(reads)
    return {"silver.jmx_samples": _with_id(samples, _tz(hosts))}, [_quarantine(q)]


def _prometheus(bronze: DataFrame, hosts: DataFrame) -> tuple[dict[str, DataFrame], list[DataFrame]]:
    tz = _tz(hosts)
    scrapes = (bronze.where(is_prometheus(F.col("source"), F.col("file")))
               .join(F.broadcast(tz.drop("broker_id")), ["cluster", "host"], "left"))
    samples, q = prometheus.parse(scrapes, _zone())
    return {"silver.jmx_samples": _with_id(samples, tz)}, [_quarantine(q)]


def _threaddumps(bronze: DataFrame, hosts: DataFrame) -> tuple[dict[str, DataFrame], list[DataFrame]]:
    tz = _tz(hosts)
    dumps = bronze.where(F.col("source") == "threaddumps").join(F.broadcast(tz), ["cluster", "host"], "left")
    threads, q_dumps = threaddump.parse(dumps, _zone())
    threads = threads.join(F.broadcast(tz.select("cluster", "host", "broker_id")), ["cluster", "host"], "left")
    cycles, q_cycles = threaddump.deadlocks(dumps, _zone())
    return ({"silver.threads": threads, "silver.deadlocks": _with_id(cycles, tz)},
            [_quarantine(q_dumps), _quarantine(q_cycles)])


def _snapshot(source: Source, parser: str):
    """The part of a format read by `fleethealth.silver.parsers.<parser>.parse(rows, timezone)` ->
    (rows, quarantine): the source's bronze rows with their host's time zone; its id column added
    from the inventory when the parser does not give it."""
    def part(bronze: DataFrame, hosts: DataFrame) -> tuple[dict[str, DataFrame], list[DataFrame]]:
        module = importlib.import_module(f"fleethealth.silver.parsers.{parser}")
        rows = (bronze.where(F.col("source") == source.name)
                .join(F.broadcast(_tz(hosts).drop("broker_id")), ["cluster", "host"], "left"))
        table, q = module.parse(rows, _zone())
        if source.id_column and source.id_column not in table.columns:
            table = _with_id(table, hosts, source.id_column)
        return {source.silver_table: table}, [_quarantine(q)]
    return part


def _logs(source: Source):
    def part(bronze: DataFrame, hosts: DataFrame, wrapped: bool = True) -> tuple[dict[str, DataFrame], list[DataFrame]]:
        events, q = _log_events(bronze, hosts, source, wrapped)
        return {source.silver_table: events}, [q]
    return part


# the parts of silver that are code of their own (the JMX formats and thread dumps, which also feed
# silver.deadlocks); every other format's part is derived from its source's declaration
_OWN_PARTS = {"jolokia": _jolokia, "prometheus": _prometheus, "jstack": _threaddumps}


def _parts() -> dict:
    parts = {}
    for source in SOURCES.values():
        for i, fmt in enumerate(source.formats):
            if source.reader == "log4j":
                parts[fmt] = _logs(source)
            elif fmt in _OWN_PARTS:
                parts[fmt] = _OWN_PARTS[fmt]
            else:
                parts[fmt] = _snapshot(source, source.parsers[i])
    return parts


# the parts of silver, one per format of a source (fleethealth.fleet.sources): (tables, quarantines)
# of bronze and the hosts (a log source's part: and whether its lines may be wrapped)
PARTS = _parts()
LOG_PARTS = {fmt: s.name for s in SOURCES.values() if s.reader == "log4j" for fmt in s.formats}


def wrapped_sources(bronze: DataFrame, files: DataFrame | None) -> set[str]:
    """The log sources whose lines a container runtime wrapped (bronze.wrappers), from bronze.files'
    `wrapper` (one small job), else from the lines (a pass over `bronze`'s log lines)."""
    if files is not None and "wrapper" in files.columns:
        wrapped = files.where(F.col("wrapper").isNotNull())
    else:
        wrapped = bronze.where(F.col("source").isin(sorted(set(LOG_PARTS.values())))
                               & wrappers.kind(F.col("record")).isNotNull())
    return {r.source for r in wrapped.select("source").distinct().collect()}


def build(spark: SparkSession, bronze: DataFrame, inventory: Inventory,
          files: DataFrame | None = None, parts: tuple[str, ...] = tuple(PARTS)) -> dict[str, DataFrame]:
    """The silver tables of one hour of bronze (DataFrames, not yet written); `files` (bronze.files)
    adds a quarantine row for each rejected or damaged file. `parts` (of PARTS; default all) limits
    the tables to those parts' (silver.quarantine is always there): `fleethealth parse` of one file
    builds one part, a fifth of the plans, on a cold JVM."""
    hosts = hosts_frame(spark, inventory)
    tables: dict[str, DataFrame] = {}
    quarantines: list[DataFrame] = []
    wrapped = wrapped_sources(bronze, files)
    for part in parts:
        if part in LOG_PARTS:
            more, qs = PARTS[part](bronze, hosts, LOG_PARTS[part] in wrapped)
        else:
            more, qs = PARTS[part](bronze, hosts)
        for name, df in more.items():
            tables[name] = tables[name].unionByName(df) if name in tables else df
        quarantines += qs
    if files is not None:
        quarantines.append(file_quarantine(files))
    tables["silver.quarantine"] = reduce(DataFrame.unionByName, quarantines)
    return tables


# Which silver table holds each source's rows; log sources count lines, others records.
# (silver.deadlocks is derived from dumps that silver.threads already counts.)
SILVER_OF_SOURCE = {s.name: s.silver_table for s in SOURCES.values()}
LINE_SOURCES = tuple(s.name for s in SOURCES.values() if s.counts_lines)


def reconciliation(bronze: DataFrame, silver_tables: dict[str, DataFrame], quarantine: DataFrame,
                   files: DataFrame | None = None) -> DataFrame:
    """Per cluster, host, source and hour: bronze records = silver records + quarantined records,
    and the files behind them: files listed = read + rejected (`files`: bronze.files).

    Log sources count lines (a silver event covers `line_count` lines); the others count records
    (distinct file + line). Quarantine rows carry how many bronze records they stand for: 0 for a
    failed MBean inside a bulk JMX read whose other MBeans made silver rows, and for a rejected or
    damaged file; `quarantine_rows` counts every row, so the ledger and silver.quarantine agree.
    `unaccounted` must be 0: the silver quality gate fails the run otherwise.
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
    q = quarantine.groupBy(*group).agg(F.sum("line_count").cast("long").alias("quarantined_records"),
                                       F.count(F.lit(1)).cast("long").alias("quarantine_rows"))
    b = bronze.groupBy(*group).agg(F.count(F.lit(1)).cast("long").alias("bronze_records"))
    parts = [b, s, q]
    if files is not None:
        is_read = (F.col("status") == "read").cast("long")
        problem = F.when((F.col("status") != "read") | F.col("reason").isNotNull(), F.concat(
            F.regexp_extract("file", r"([^/]*)$", 1), F.lit(" ("), F.col("status"), F.lit("): "), F.col("reason")))
        parts.append(files.groupBy(*group).agg(
            F.count(F.lit(1)).cast("long").alias("files_listed"),
            F.sum(is_read).cast("long").alias("files_read"),
            F.sum(1 - is_read).cast("long").alias("files_rejected"),
            F.slice(F.array_sort(F.collect_list(problem)), 1, MAX_FILE_PROBLEMS).alias("file_problems")))
    keys = reduce(DataFrame.unionByName, [p.select(*group) for p in parts]).distinct()
    out = reduce(lambda acc, p: acc.join(p, group, "left"), parts, keys)
    for c in ("files_listed", "files_read", "files_rejected"):
        if c not in out.columns:
            out = out.withColumn(c, F.lit(None).cast("long"))
    out = out.withColumn("file_problems", F.coalesce(*([F.col("file_problems")] if files is not None else []),
                                                     F.array().cast("array<string>")))
    counts = ["bronze_records", "silver_records", "quarantined_records", "quarantine_rows"]
    out = out.fillna(0, counts + (["files_listed", "files_read", "files_rejected"] if files is not None else []))
    return out.select(*group, *counts,
                      (F.col("bronze_records") - F.col("silver_records") - F.col("quarantined_records"))
                      .alias("unaccounted"), "files_listed", "files_read", "files_rejected", "file_problems")
