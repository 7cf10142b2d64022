"""log4j records from bronze lines: multi-line assembly, header fields, UTC timestamps.

A record starts at a line that opens with a timestamp in its format; following lines (stack
traces, cleaner statistics, `KafkaConfig values:` blocks) belong to it. Lines before the first
start of a file cannot be placed and go to quarantine.
"""
from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from fleethealth.silver.parsers import rules as rule_engine

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


# The start regexes are anchored and match at most this many characters: testing a line's head
# decodes a few bytes, not the line (Spark's regex functions decode each value to a Java String).
START_PREFIX = 64


def assemble(lines: DataFrame, fmt: LogFormat) -> tuple[DataFrame, DataFrame]:
    """(records, orphans) from bronze lines of one log format.

    records: lineage + line_number (of the first line), line_count, text (lines joined by \\n).
    orphans: bronze lines before the first record start of their file.

    Most records are one line: those pass through without a shuffle. Only continuation lines are
    grouped, into runs of consecutive lines; a run belongs to the start line just before it (a run
    from line 1 has none: orphans) and is joined to it by broadcast.
    """
    marked = lines.withColumn("_start", F.substring("record", 1, START_PREFIX).rlike(fmt.start))
    conts = marked.where(~F.col("_start"))
    # consecutive continuation lines share line_number - rank; a run from line 1 has 0
    w = Window.partitionBy("hour", "file").orderBy("line_number")
    conts = conts.withColumn("_run", F.col("line_number") - F.row_number().over(w))
    orphans = conts.where(F.col("_run") == 0).drop("_start", "_run")
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
         .otherwise(F.concat(F.col("record"), F.lit("\n"), F.col("_rest"))).alias("text"))
    return records, orphans


def local_to_utc(ts_text: Column, timezone: Column) -> Column:
    """A zone-less log timestamp (TS_FORMAT, digits where the header regex put them) in the
    cluster's zone -> UTC timestamp.

    From its fields by position (a pattern parse per record costs more than the rest of the header);
    NULL for an impossible date or time (2026-11-31, 24:00, second 60): under ANSI mode (the Spark 4
    default) make_timestamp raises and one bad line would fail the whole hour.
    """
    def part(pos: int, length: int) -> Column:
        return F.substring(ts_text, pos, length).try_cast("int")
    seconds = F.concat(F.substring(ts_text, 18, 2), F.lit("."), F.substring(ts_text, 21, 3)).try_cast("decimal(16,6)")
    return F.when(part(18, 2) < 60, F.try_make_timestamp(part(1, 4), part(6, 2), part(9, 2), part(12, 2),
                                                         part(15, 2), seconds, timezone))


def _header_fields(cut: Column, fmt: LogFormat) -> dict[str, Column]:
    """Every header group of a record's first line from one regex pass (NULL when empty or when the
    line is no header): the groups are written, each after a line break, into one string and cut out
    with substring_index. A first line holds no line break, so no group does; the body is the last
    group. Each regexp_extract would run the whole regex again."""
    order = _header_order(fmt)
    matched = cut.startswith("\n")   # a first line opens with its timestamp
    out = {}
    for i, (_, name) in enumerate(order, start=1):
        value = F.substring_index(cut, "\n", -1) if name == "body" else \
            F.substring_index(F.substring_index(cut, "\n", i + 1), "\n", -1)
        out[name] = F.when(matched, F.nullif(value, F.lit("")))
    return out


def _header_order(fmt: LogFormat) -> list[tuple[int, str]]:
    order = sorted((g, name) for name, g in fmt.groups.items() if g)
    assert order[-1][1] == "body", "the body must be the last header group"
    return order


def _header_cut(first: Column, fmt: LogFormat) -> Column:
    """The one regex pass of _header_fields (its own column: each field reads it)."""
    return F.regexp_replace(first, f"(?:{fmt.header})" + r"[\s\S]*",
                            "".join(f"\n${g}" for g, _ in _header_order(fmt)))


def _trailing_logger(line: Column) -> Column:
    """The ` (logger)` that ends `line` (_TRAILING_LOGGER's group), regex-tested only on the text
    after the line's last ` (`: no other ` (` can start that match."""
    after = F.substring_index(line, " (", -1)
    return F.when(line.contains(" ("), F.nullif(F.regexp_extract(after, r"^([\w.$-]+)\)$", 1), F.lit("")))


def parse_records(records: DataFrame, fmt: LogFormat, timezone: Column) -> DataFrame:
    """Header fields of assembled records: ts (UTC), level, thread, logger, message, detail, body."""
    first = F.substring_index("text", "\n", 1)
    rest = F.when(F.instr("text", "\n") > 0, F.expr("substr(text, instr(text, '\n') + 1)"))
    fields = _header_fields(F.col("_cut"), fmt)
    none = F.lit(None).cast("string")
    df = records.withColumn("_cut", _header_cut(first, fmt)).select("*", *[fields.get(n, none).alias(f"_{n}") for n in (
        "ts", "body", "level", "alt_level", "thread", "alt_logger", "logger")])
    if fmt is KAFKA:
        df = df.withColumn("_first_logger", _trailing_logger(F.col("_body")))
        first_logger = F.col("_first_logger")
        last_logger = _trailing_logger(F.substring_index("text", "\n", -1))
        # The logger ends the first line, unless the message itself spans lines (then the last).
        logger = F.coalesce("_alt_logger", first_logger, F.when(rest.isNotNull(), last_logger))
        in_first = F.col("_alt_logger").isNotNull() | first_logger.isNotNull()
        # the body less ` (logger)`: a first line holds no line terminator, so it ends the body
        message = F.when(in_first, F.when(first_logger.isNull(), F.col("_body")).otherwise(
            F.col("_body").substr(F.lit(1), F.length("_body") - F.length(first_logger) - 3)))
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
    return rule_engine.with_event_columns(df, rules, "_body", "logger").drop("_body")
