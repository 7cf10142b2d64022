"""log4j records from bronze lines: multi-line assembly, header fields, UTC timestamps.

A record starts at a line that opens with a timestamp in its format; following lines (stack
traces, cleaner statistics, `KafkaConfig values:` blocks) belong to it. Lines before the first
start of a file cannot be placed and go to quarantine.
"""
from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from fleethealth.parsers import rules as rule_engine

TS_FORMAT = "yyyy-MM-dd HH:mm:ss,SSS"
LINEAGE = ["cluster", "host", "source", "file", "file_sha256", "hour"]


@dataclass(frozen=True)
class LogFormat:
    """Where a format's header fields sit. `header` has groups ts, level, thread, logger, body."""
    name: str
    start: str                 # regex a record's first line matches
    header: str                # regex over the first line
    groups: dict[str, int]     # field -> group in `header` (0 = not present)


KAFKA = LogFormat(
    "kafka",
    start=r"^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}\] ",
    # `[%d] %p %m (%c)` or the custom `[%d] [%-5p] [%t] [%c] - %m`
    header=(r"^\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3})\] "
            r"(?:\[([A-Z]+) *\] \[([^\]]*)\] \[([^\]]*)\] - |([A-Z]+) )(.*)$"),
    groups={"ts": 1, "alt_level": 2, "thread": 3, "alt_logger": 4, "level": 5, "body": 6},
)

ZOOKEEPER = LogFormat(
    "zookeeper",
    start=r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3} ",
    # `%d{ISO8601} [myid:%X{myid}] - %-5p [%t:%C{1}@%L] - %m`, myid optional
    header=(r"^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}) (?:\[myid:(\d*)\] )?- ([A-Z]+) *"
            r"\[(.*?):([\w$.]+)@(\d+)\] - (.*)$"),
    groups={"ts": 1, "myid": 2, "level": 3, "thread": 4, "logger": 5, "code_line": 6, "body": 7},
)

_TRAILING_LOGGER = r" \(([\w.$-]+)\)$"


def assemble(lines: DataFrame, fmt: LogFormat) -> tuple[DataFrame, DataFrame]:
    """(records, orphans) from bronze lines of one log format.

    records: lineage + line_number (of the first line), line_count, text (lines joined by \\n).
    orphans: bronze lines before the first record start of their file.
    """
    w = Window.partitionBy("hour", "file").orderBy("line_number").rowsBetween(Window.unboundedPreceding, 0)
    marked = lines.withColumn(
        "record_line",
        F.last(F.when(F.col("record").rlike(fmt.start), F.col("line_number")), ignorenulls=True).over(w))
    orphans = marked.where(F.col("record_line").isNull()).drop("record_line")
    records = (marked.where(F.col("record_line").isNotNull())
               .groupBy(*LINEAGE, "record_line")
               .agg(F.count(F.lit(1)).cast("int").alias("line_count"),
                    F.array_sort(F.collect_list(F.struct("line_number", "record"))).alias("parts"))
               .select(*LINEAGE, F.col("record_line").alias("line_number"), "line_count",
                       F.array_join(F.transform("parts", lambda p: p["record"]), "\n").alias("text")))
    return records, orphans


def local_to_utc(ts_text: Column, timezone: Column) -> Column:
    """A zone-less log timestamp in the cluster's zone -> UTC timestamp (session zone is UTC).

    NULL for an impossible date (2026-11-31): try_to_timestamp, since under ANSI mode (the Spark 4
    default) to_timestamp raises and one bad line would fail the whole hour.
    """
    return F.to_utc_timestamp(F.try_to_timestamp(ts_text, F.lit(TS_FORMAT)), timezone)


def parse_records(records: DataFrame, fmt: LogFormat, timezone: Column) -> DataFrame:
    """Header fields of assembled records: ts (UTC), level, thread, logger, message, detail, body."""
    first = F.substring_index("text", "\n", 1)
    rest = F.when(F.instr("text", "\n") > 0, F.expr("substr(text, instr(text, '\n') + 1)"))
    g = fmt.groups

    def grp(name: str) -> Column:
        return F.nullif(F.regexp_extract(first, fmt.header, g[name]), F.lit("")) if g.get(name) else F.lit(None)

    df = records.select("*", grp("ts").alias("_ts"), grp("body").alias("_body"),
                        *[grp(n).alias(f"_{n}") for n in ("level", "alt_level", "thread", "alt_logger", "logger")])
    first_logger = F.nullif(F.regexp_extract("_body", _TRAILING_LOGGER, 1), F.lit(""))
    last_line = F.substring_index("text", "\n", -1)
    last_logger = F.nullif(F.regexp_extract(last_line, _TRAILING_LOGGER, 1), F.lit(""))
    if fmt is KAFKA:
        # The logger ends the first line, unless the message itself spans lines (then the last).
        logger = F.coalesce("_alt_logger", first_logger, F.when(rest.isNotNull(), last_logger))
        in_first = F.col("_alt_logger").isNotNull() | first_logger.isNotNull()
        message = F.when(in_first, F.regexp_replace("_body", _TRAILING_LOGGER, ""))
        multi = F.concat_ws("\n", "_body", rest)
        # a logger alone on the last line (` (kafka.server.KafkaConfig)`) takes its line break along
        message = F.coalesce(message, F.when(last_logger.isNotNull(),
                                             F.regexp_replace(multi, r"\n?" + _TRAILING_LOGGER, "")), multi)
        detail = F.when(in_first, rest)
        level = F.coalesce("_alt_level", "_level")
        thread = F.col("_thread")
    else:
        logger = F.col("_logger")
        message = F.concat_ws("\n", "_body", rest)
        detail = F.lit(None).cast("string")
        level = F.col("_level")
        thread = F.col("_thread")
    return (df.withColumn("ts", local_to_utc(F.col("_ts"), timezone))
              .withColumn("level", level)
              .withColumn("logger", logger)
              .withColumn("thread", thread)
              .withColumn("message", message)
              .withColumn("detail", detail)
              .drop(*[c for c in df.columns if c.startswith("_")]))


def with_events(parsed: DataFrame, source: str) -> DataFrame:
    """Add event_type and the typed fields of the source's event rules (rules/<source>_events.yaml)."""
    rules = rule_engine.load_rules(source)
    # the body is built once per record, not once per rule (each rule's test reads it)
    df = parsed.withColumn("_body", F.concat_ws("\n", F.col("message"), F.col("detail")))
    return rule_engine.with_event_columns(df, rules, "_body", F.col("logger")).drop("_body")
