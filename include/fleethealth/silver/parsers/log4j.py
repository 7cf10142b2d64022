"""log4j records from bronze lines: multi-line assembly, header fields, UTC timestamps.

A record starts at a line that opens with a timestamp in any known layout (whatever its source:
a file may mix layouts, a ZooKeeper host may write Kafka's); following lines (stack traces,
cleaner statistics, `KafkaConfig values:` blocks) belong to it. Lines before the first start of a
file cannot be placed and go to quarantine; a file with no start at all is in no known layout.
"""
from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from fleethealth.fleet.log_layouts import START, TS
from fleethealth.silver.parsers import rules as rule_engine

LINEAGE = ["cluster", "host", "source", "file", "file_sha256", "hour"]


@dataclass(frozen=True)
class LogFormat:
    """Where a format's header fields sit. `header` has groups ts, level, thread, logger, body."""
    name: str
    start: str                 # regex a record's first line matches (the engine's <name>_start tests it)
    # regex over the first line: the layout the engine's <name>_log function reads by position
    # (tests compare the two on every shape; the bench's plain-Python and DuckDB parsers use it)
    header: str
    groups: dict[str, int]     # field -> group in `header` (0 = not present)


_TS = TS

KAFKA = LogFormat(
    "kafka",
    start=START,
    # `[%d] %p %m (%c)` or the custom `[%d] [%-5p] [%t] [%c] - %m`
    header=(r"^\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3})\] "
            r"(?:\[([A-Z]+) *\] \[([^\]]*)\] \[([^\]]*)\] - |([A-Z]+) )(.*)$"),
    groups={"ts": 1, "alt_level": 2, "thread": 3, "alt_logger": 4, "level": 5, "body": 6},
)

ZOOKEEPER = LogFormat(
    "zookeeper",
    start=START,
    # `%d{ISO8601} [myid:%X{myid}] - %-5p [%t:%C{1}@%L] - %m`, myid optional
    header=(r"^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}) (?:\[myid:(\d*)\] )?- ([A-Z]+) *"
            r"\[(.*?):([\w$.]+)@(\d+)\] - (.*)$"),
    groups={"ts": 1, "myid": 2, "level": 3, "thread": 4, "logger": 5, "code_line": 6, "body": 7},
)

# the other layouts the engine reads, whatever the source (Log4jLayouts): their regex twins, each
# tried after the ones before it; a record's layout is the first whose header its first line matches
STRIMZI = LogFormat(
    "strimzi",
    start=START,
    # `%d{ISO8601} %p %m (%c) [%t]` (Strimzi before Kafka 4); with `%m` alone the logger ends the last line
    header=rf"^({_TS},\d{{3}}) ([A-Z]+) +(.*) \(([\w.$-]+)\) \[(.*)\]$",
    groups={"ts": 1, "level": 2, "body": 3, "logger": 4, "thread": 5},
)
THREAD_LOGGER = LogFormat(
    "thread_logger",
    start=START,
    # `%d %p [%t] %c - %m`, Strimzi's Kafka 4 `%d{yyyy-MM-dd HH:mm:ss} %-5p [%t] %c{1}:%L - %m`
    header=rf"^({_TS}(?:,\d{{3}})?) ([A-Z]+) +\[(.*?)\] ([\w.$-]+)(?::[\d?]+)? - (.*)$",
    groups={"ts": 1, "level": 2, "thread": 3, "logger": 4, "body": 5},
)
MESSAGE_ONLY = LogFormat(
    "message_only",
    start=START,
    header=rf"^({_TS}(?:,\d{{3}})?) ([A-Z]+) +(.*)$",
    groups={"ts": 1, "level": 2, "body": 3},
)
KNOWN = (KAFKA, ZOOKEEPER, STRIMZI, THREAD_LOGGER, MESSAGE_ONLY)

# the engine's log4j layouts by name (a source's `layout`, fleethealth.fleet.sources): what its records'
# message holds (ZooKeeper's: every line) and the layout of records that are not in a header of another
LAYOUTS = {f.name: f for f in (KAFKA, ZOOKEEPER)}


BEFORE_FIRST = "continuation line before the first record of its file"


def assemble(lines: DataFrame, fmt: LogFormat, start: Column | None = None,
             keep: tuple[str, ...] = ()) -> tuple[DataFrame, DataFrame]:
    """(records, orphans) from bronze lines of one log format (`start`: the record-start test of a line's
    `record`, e.g. silver.parsers.user_layouts.record_start's; default the format's own; `keep`: columns
    of a record's first line its record keeps).

    records: lineage + line_number (of the first line), line_count, text (lines joined by \\n).
    orphans: bronze lines before the first record start of their file, with the quarantine `reason`
    (a file with no record start at all is in no known layout: the reason says so, with its first line).

    Most records are one line: those pass through without a shuffle. Only continuation lines are
    grouped, into runs of consecutive lines; a run belongs to the start line just before it (a run
    from line 1 has none: orphans) and is joined to it by broadcast.
    """
    if start is None:
        start = F.call_function(f"{rule_engine.ENGINE_FUNCTIONS}.{fmt.name}_start", F.col("record"))
    marked = lines.withColumn("_start", start)
    conts = marked.where(~F.col("_start"))
    # consecutive continuation lines share line_number - rank; a run from line 1 has 0
    w = Window.partitionBy("hour", "file").orderBy("line_number")
    conts = conts.withColumn("_run", F.col("line_number") - F.row_number().over(w))
    orphans = conts.where(F.col("_run") == 0).drop("_start", "_run")
    # a file whose orphans are followed by a start (line k + 1 of k orphans) is in a known layout
    ends = (orphans.groupBy("hour", "file")
            .agg((F.max("line_number") + 1).alias("_next"), F.min_by("record", "line_number").alias("_first"))
            .select(F.col("hour").alias("_hour"), F.col("file").alias("_file"), "_next", "_first"))
    started = (marked.where(F.col("_start"))
               .join(F.broadcast(ends), (F.col("hour") == F.col("_hour")) & (F.col("file") == F.col("_file"))
                     & (F.col("line_number") == F.col("_next")), "left_semi")
               .select(F.col("hour").alias("_hour"), F.col("file").alias("_file"), F.lit(True).alias("_started")))
    no_layout = F.concat(F.lit("no line of the file starts a record in a known log4j layout; its first line: "),
                         F.substring("_first", 1, 200))
    orphans = (orphans.join(F.broadcast(ends), (F.col("hour") == F.col("_hour")) & (F.col("file") == F.col("_file")))
               .drop("_hour", "_file", "_next")
               .join(F.broadcast(started), (F.col("hour") == F.col("_hour")) & (F.col("file") == F.col("_file")), "left")
               .withColumn("reason", F.when(F.col("_started"), F.lit(BEFORE_FIRST)).otherwise(no_layout))
               .drop("_hour", "_file", "_first", "_started"))
    runs = (conts.where(F.col("_run") > 0)
            .groupBy("hour", "file", "_run")
            .agg((F.min("line_number") - 1).alias("_owner"),
                 F.count(F.lit(1)).cast("int").alias("_more"),
                 F.array_sort(F.collect_list(F.struct("line_number", "record"))).alias("_parts"))
            .select(F.col("hour").alias("_hour"), F.col("file").alias("_file"), "_owner", "_more",
                    F.array_join(F.transform("_parts", lambda p: p["record"]), "\n").alias("_rest")))
    starts = marked.where(F.col("_start"))
    joined = starts.join(F.broadcast(runs), (F.col("hour") == F.col("_hour")) & (F.col("file") == F.col("_file"))
                         & (F.col("line_number") == F.col("_owner")), "left")
    records = joined.select(
        *LINEAGE, "line_number", (F.lit(1) + F.coalesce("_more", F.lit(0))).cast("int").alias("line_count"),
        F.when(F.col("_rest").isNull(), F.col("record"))
         .otherwise(F.concat(F.col("record"), F.lit("\n"), F.col("_rest"))).alias("text"), *keep)
    return records, orphans


PARSED = ("ts", "level", "logger", "thread", "message", "detail")


def parse_records(records: DataFrame, fmt: LogFormat, timezone: Column) -> DataFrame:
    """Header fields of assembled records: ts (UTC), level, thread, logger, message, detail.

    One call per record of the engine's `<format>_log(text, zone)` (io.fleethealth.engine.Log4jRecords):
    the header cut by position from the record's bytes, as the format's `header` regex reads it; the
    Kafka logger from the first line's ` (logger)`, else the last line's when the message spans lines,
    and `message` without it; `ts` the header's local time in `timezone`, in UTC (NULL for an
    impossible date or time: under ANSI mode one bad line would otherwise fail the hour)."""
    parsed = records.withColumn("_h", F.call_function(f"{rule_engine.ENGINE_FUNCTIONS}.{fmt.name}_log", F.col("text"), timezone))
    return parsed.select(*records.columns, *[F.col(f"_h.{c}").alias(c) for c in PARSED])


def with_events(parsed: DataFrame, source: str) -> DataFrame:
    """Add event_type and the typed fields of the source's event rules (its `rules`, under rules/),
    matched on the record's body: message and detail joined by \\n."""
    return rule_engine.with_event_columns(parsed, rule_engine.load_rules(source), "message", "detail", "logger")
