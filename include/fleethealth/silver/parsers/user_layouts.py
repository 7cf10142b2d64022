"""The layouts of a log4j source beyond its built-in one: a host's `log_pattern:` (the inventory's log4j
ConversionPattern, compiled by fleet.conversion_pattern) and log4j 2's JSON layout (JsonTemplateLayout,
a record per line opening with `{"`).

`record_start` and `header` are the columns silver.tables `_log_events` reads records with: a host with
a pattern has its records started and read by the pattern (the engine's pattern_start, pattern_log:
io.fleethealth.engine.RegexLayout), a JSON line is a record of its own read by json_log
(io.fleethealth.engine.JsonLayout), any other line as the source's layout says (log4j.LogFormat).
"""
from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from fleethealth.silver.parsers import log4j
from fleethealth.silver.parsers.rules import ENGINE_FUNCTIONS

PATTERN_COLUMNS = ("log_start", "log_regex", "log_time_format")   # hosts frame: NULL for a host without a pattern


def _fn(name: str, *args: Column) -> Column:
    return F.call_function(f"{ENGINE_FUNCTIONS}.{name}", *args)


def record_start(fmt: log4j.LogFormat, hosts: DataFrame) -> Column:
    """Whether a bronze line (`record`, of `cluster` and `host`) starts a record. The hosts with a
    pattern are literals in the column, one branch per distinct pattern: no join of the hour's lines."""
    by_start: dict[str, list[str]] = {}     # host names are unique in an inventory
    for h in hosts.where(F.col("log_start").isNotNull()).select("host", "log_start").collect():
        by_start.setdefault(h.log_start, []).append(h.host)
    start = _fn("json_start", F.col("record")) | _fn(f"{fmt.name}_start", F.col("record"))
    for regex, names in by_start.items():
        start = F.when(F.col("host").isin(names), _fn("pattern_start", F.col("record"), F.lit(regex))).otherwise(start)
    return start


def header(fmt: log4j.LogFormat, zone: Column) -> Column:
    """The struct (ts, level, thread, logger, message, detail) of an assembled record (`text`, with its
    host's PATTERN_COLUMNS joined)."""
    text = F.col("text")
    return (F.when(F.col("log_regex").isNotNull(),
                   _fn("pattern_log", text, zone, F.col("log_regex"), F.col("log_time_format")))
            .when(_fn("json_start", text), _fn("json_log", text, zone))
            .otherwise(_fn(f"{fmt.name}_log", text, zone)))


def not_read(fmt: log4j.LogFormat) -> Column:
    """Why a record `header` gave no level is quarantined, by the layout it was read in."""
    return (F.when(F.col("log_regex").isNotNull(), F.lit("not in the host's log_pattern"))
            .when(_fn("json_start", F.col("text")), F.lit("not a JSON layout record (log4j 2 JsonTemplateLayout)"))
            .otherwise(F.lit(f"not a {fmt.name} log4j header")))


def parse_records(records: DataFrame, fmt: log4j.LogFormat, zone: Column) -> DataFrame:
    """log4j.parse_records, with the header read by `header`."""
    parsed = records.withColumn("_h", header(fmt, zone))
    return parsed.select(*records.columns, *[F.col(f"_h.{c}").alias(c) for c in log4j.PARSED])

