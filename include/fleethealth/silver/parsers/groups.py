"""`kafka-consumer-groups.sh --describe` snapshots -> silver.consumer_offsets: one row per group,
topic and partition (or member without partitions) with its offsets, lag, consumer and, where the
snapshot has a `--state` table, the group's state and coordinator.

A snapshot is one bronze record (the whole file): the tool's output, stdout and stderr, of
`--describe` (per group, or `--all-groups` from 2.2) and optionally `--describe --state`. The layouts,
from Kafka's ConsumerGroupCommand (tests/fixtures/golden/ORIGIN.md):

- 0.10: `TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID` in fixed widths (%-30s …),
  then `HOST CLIENT-ID` for the Java consumer (the old ZooKeeper consumer has neither);
- 1.1 to 2.2: the same columns sized to the widest value, and a `--state` table
  `COORDINATOR (ID) ASSIGNMENT-STRATEGY STATE #MEMBERS`;
- 2.3 on (3.7+ and 4.x: the Java tool, same printf): `GROUP` first in both tables.

A table without a GROUP column speaks for the group the file is named after (`<group>-<stamp>.txt`:
the collector runs the tool once per group). Columns are split on white space (no value of these
columns holds a space); `-` (no committed offset, no consumer) is NULL. The tool's notices ("Consumer
group 'g' has no active members.", "Note: ...") and `--members` tables are quarantined as not read, a
line that does not fit its table with the reason; those rows stand for no record (line_count 0) when
the snapshot gave offsets, and a snapshot without any offsets row is quarantined as such (line_count
1), so every record is accounted for.
"""
from __future__ import annotations

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from fleethealth.lake.hours import NAME_STAMP
from fleethealth.silver.parsers.log4j import LINEAGE
from fleethealth.silver.parsers.logdirs import captured_at

OFFSETS_HEADER = (r"^\s*(GROUP\s+)?TOPIC\s+PARTITION\s+CURRENT-OFFSET\s+LOG-END-OFFSET\s+LAG\s+CONSUMER-ID"
                  r"(\s+HOST\s+CLIENT-ID)?\s*$")
STATE_HEADER = r"^\s*(GROUP\s+)?COORDINATOR \(ID\)\s+ASSIGNMENT-STRATEGY\s+STATE\s+#MEMBERS\s*$"
MEMBERS_HEADER = r"^\s*(GROUP\s+)?CONSUMER-ID\s+.*#PARTITIONS"
NOTICE = (r"^\s*(Note: |Warning: |Error: |WARN: |Consumer group '.*' (has no active members|does not exist|is "
          r"rebalancing)|The consumer group '.*' does not exist)")
# a --state row: [group] host:port  (id) [strategy] state members
STATE_ROW = r"^\s*(?:(\S+)\s+)?(\S+)\s+\((-?\d+)\)\s+(\S*)\s+(\S+)\s+(\d+)\s*$"
STATE_ROW_NO_GROUP = r"^\s*()(\S+)\s+\((-?\d+)\)\s+(\S*)\s+(\S+)\s+(\d+)\s*$"
NUMBERS = {"PARTITION": "int", "CURRENT-OFFSET": "bigint", "LOG-END-OFFSET": "bigint", "LAG": "bigint"}
_RECORD = [*LINEAGE, "line_number"]


def file_group(file: Column) -> Column:
    """The group a snapshot without a GROUP column is of: its file name before the time stamp (or
    before its extension when it has none)."""
    named = F.regexp_extract(file, r"([^/]*?)[-_.]*" + NAME_STAMP + r"[^/]*$", 1)
    return F.when(named != "", named).otherwise(F.regexp_extract(file, r"([^/]+?)(?:\.[^./]*)?$", 1))


def _cell(m: Column, name: str) -> Column:
    value = m[name]
    return F.when(value != "-", value)


def parse(bronze: DataFrame, timezone: Column) -> tuple[DataFrame, DataFrame]:
    """(silver.consumer_offsets rows, quarantine) from bronze `groups` records (one per snapshot)."""
    text = F.regexp_replace("text", r"\r$", "")
    lines = (bronze.select(*_RECORD, "record", captured_at(F.col("file"), timezone, F.col("hour")).alias("snapshot_at"),
                           F.posexplode(F.split("record", "\n")).alias("i", "text"))
             .withColumn("text", text)
             .withColumn("cells", F.split(F.trim("text"), r"\s+")))
    kind = (F.when(F.trim("text") == "", "blank")
            .when(F.col("text").rlike(OFFSETS_HEADER), "offsets")
            .when(F.col("text").rlike(STATE_HEADER), "state")
            .when(F.col("text").rlike(MEMBERS_HEADER), "members")
            .when(F.col("text").rlike(NOTICE), "notice")
            .otherwise("row"))
    w = Window.partitionBy("hour", "file", "line_number").orderBy("i").rowsBetween(Window.unboundedPreceding, 0)
    is_header = F.col("kind").isin("offsets", "state", "members")
    # each line with the table header above it, parsed once: read by the rows, the states and the quarantine
    lines = (lines.withColumn("kind", kind)
             .withColumn("header", F.last(F.when(is_header, F.struct(F.col("kind").alias("table"),
                                                                     F.col("cells").alias("columns"))),
                                          ignorenulls=True).over(w))
             .where(F.col("kind").isin("row", "notice"))
             .withColumn("group_of_file", file_group(F.col("file")))
             .persist(StorageLevel.MEMORY_AND_DISK))
    table = F.col("header.table")

    # the offsets rows: cells by the header's column names
    offsets = lines.where((F.col("kind") == "row") & (table == "offsets"))
    m = F.map_from_arrays("header.columns", "cells")
    fits = F.size("cells") == F.size("header.columns")
    not_number = [F.when(_cell(m, c).isNotNull() & ~_cell(m, c).rlike(r"^-?\d+$"),
                         F.format_string(f"{c} '%s' is not a number", _cell(m, c))) for c in NUMBERS]
    problem = F.when(~fits, F.format_string("%d cells, its table has %d columns", F.size("cells"),
                                            F.size("header.columns"))).otherwise(F.coalesce(*not_number))
    offsets = offsets.withColumn("problem", problem).withColumn("m", F.when(fits, m))
    good = offsets.where(F.col("problem").isNull())
    rows = good.select(
        *_RECORD, "snapshot_at", F.col("i"),
        F.coalesce(_cell(F.col("m"), "GROUP"), F.col("group_of_file")).alias("group"),
        _cell(F.col("m"), "TOPIC").alias("topic"),
        *[_cell(F.col("m"), c).cast(t).alias(c.lower().replace("-", "_")) for c, t in NUMBERS.items()],
        _cell(F.col("m"), "CONSUMER-ID").alias("consumer_id"), _cell(F.col("m"), "HOST").alias("consumer_host"),
        _cell(F.col("m"), "CLIENT-ID").alias("client_id"))

    # the --state rows: the group's state and coordinator, joined onto its offsets rows (the last row
    # of a group in the snapshot, should it be there twice)
    state_rows = lines.where((F.col("kind") == "row") & (table == "state"))
    with_group = F.element_at("header.columns", 1) == "GROUP"
    part = lambda i: F.when(with_group, F.regexp_extract("text", STATE_ROW, i)).otherwise(  # noqa: E731
        F.regexp_extract("text", STATE_ROW_NO_GROUP, i))
    parsed_state = state_rows.withColumn("fits", F.col("text").rlike(STATE_ROW) & (
        ~with_group | (F.regexp_extract("text", STATE_ROW, 1) != "")))
    states = (parsed_state.where("fits")
              .select("hour", "file", "line_number", "i",
                      F.when(with_group, part(1)).otherwise(F.col("group_of_file")).alias("group"),
                      part(2).alias("coordinator"), part(3).cast("int").alias("coordinator_id"),
                      part(5).alias("group_state"))
              .groupBy("hour", "file", "line_number", "group")
              .agg(*[F.max_by(c, "i").alias(c) for c in ("group_state", "coordinator", "coordinator_id")]))
    rows = rows.join(states, ["hour", "file", "line_number", "group"], "left")
    consumer_offsets = rows.select(
        "cluster", "host", "group", "topic", "partition", "current_offset", "log_end_offset", "lag", "consumer_id",
        "consumer_host", "client_id", "group_state", "coordinator", "coordinator_id", "snapshot_at",
        (F.col("i") + 1).cast("int").alias("snapshot_line"), "source", "file", "line_number", "hour")

    # the quarantine: every line not read, with why; a snapshot without offsets rows stands for its record
    reason = (F.when(F.col("kind") == "notice", F.lit("kafka-consumer-groups notice (not data)"))
              .when(table.isNull(), F.lit("a line before any table header"))
              .when(table == "members", F.lit("a --members table row (not read)"))
              .when((table == "state") & ~F.col("fits"), F.lit("not a --state row"))
              .when(table == "offsets", F.col("problem")))
    unread = (parsed_state.unionByName(lines.where((F.col("kind") == "notice") | F.col("header").isNull()
                                                   | (table == "members"))
                                       .withColumn("fits", F.lit(True)), allowMissingColumns=True)
              .unionByName(offsets.where(F.col("problem").isNotNull()).drop("m"), allowMissingColumns=True)
              .withColumn("reason", reason).where(F.col("reason").isNotNull())
              .select(*_RECORD, F.lit(0).alias("line_count"), F.col("text").alias("record"),
                      F.format_string("line %d: %s", F.col("i") + 1, F.col("reason")).alias("reason")))
    read = good.select("hour", "file", "line_number").distinct()
    empty = (bronze.join(read, ["hour", "file", "line_number"], "left_anti")
             .select(*_RECORD, F.lit(1).alias("line_count"), "record",
                     F.lit("kafka-consumer-groups snapshot without offsets rows").alias("reason")))
    return consumer_offsets, unread.unionByName(empty)
