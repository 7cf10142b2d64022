"""jstack thread dumps -> threads (name, state, top frames) and Java-level deadlock cycles.

The capture time is the dump's first line (`2026-11-20 05:45:00`, cluster-local). Thread blocks are
the paragraphs whose first line is a thread header (`"name" #12 daemon prio=5 os_prio=0 ... tid=`,
JDK 8 to 21, with or without `#N`, `cpu=`/`elapsed=` or `[nid]`); the deadlock report's
`"name":` paragraphs are not threads. Each "Found one Java-level deadlock:" block gives one row
per thread of its cycle: the lock it waits for (monitor or ownable synchronizer, object address and
class), the thread holding it, the cycle's locks it holds, and its top frames from "Java stack
information for the threads listed above". Spark SQL expressions only (no Python UDF).
"""
from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from fleethealth.silver.parsers.log4j import LINEAGE

_CAPTURE = r"^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})"
TOP_FRAMES = 5
THREAD_HEADER = r'^"(.*)"[ \t]+(?:#\d+[ \t]+)?(?:daemon[ \t]+)?(?:\[\d+\][ \t]+)?(?:prio|os_prio|tid)='
DEADLOCK_START = "Found one Java-level deadlock:"
STACKS_START = "Java stack information for the threads listed above:"
# "t1":\n  waiting to lock monitor 0x.. (object 0x.., a C),\n  which is held by "t2"
# "t1":\n  waiting for ownable synchronizer 0x.., (a C),\n  which is held by "t2"
_WAIT = (r'"([^"\n]*)":[ \t]*\n[ \t]+waiting (to lock monitor|for ownable synchronizer|to lock)[ \t]+'
         r'(0x[0-9a-fA-F]+)?,?[ \t]*\((?:object (0x[0-9a-fA-F]+), )?a ([^\n]*?)\),?[ \t]*\n'
         r'[ \t]+which is held by "?([^"\n]*)"?')
_RECORD = [*LINEAGE, "line_number"]
_STACK = r'"([^"\n]*)":[ \t]*\n((?:[ \t]+[^\n]*(?:\n|$))*)'

DEADLOCK_COLUMNS = ["cluster", "host", "captured_at", "deadlock", "cycle_threads", "cycle_lock_classes",
                    "thread_name", "waiting_lock_kind", "waiting_lock_id", "waiting_lock_class", "held_by",
                    "holds_lock_classes", "top_frames", "source", "file", "line_number", "hour"]


def _normalized(bronze: DataFrame, timezone: Column) -> DataFrame:
    # try_to_timestamp: NULL (-> quarantine) instead of an ANSI error for a missing/impossible time
    captured = F.to_utc_timestamp(F.try_to_timestamp(F.regexp_extract("record", _CAPTURE, 1),
                                                     F.lit("yyyy-MM-dd HH:mm:ss")), timezone)
    return (bronze.withColumn("record", F.regexp_replace("record", "\r\n", "\n"))
            .withColumn("captured_at", captured))


def parse(bronze: DataFrame, timezone: Column) -> tuple[DataFrame, DataFrame]:
    """(threads, quarantine) from bronze `threaddumps` records (one record per dump)."""
    dumps = _normalized(bronze, timezone).withColumn(
        "blocks", F.filter(F.split("record", r"\n[ \t]*\n"), lambda b: F.ltrim(b).rlike(THREAD_HEADER)))
    bad = (dumps.where(F.col("captured_at").isNull() | (F.size("blocks") == 0))
           .select(*LINEAGE, "line_number", F.lit(1).alias("line_count"), "record",
                   F.when(F.col("captured_at").isNull(), "thread dump without a capture time on its first line")
                    .otherwise("thread dump without threads").alias("reason")))
    threads = (dumps.where(F.col("captured_at").isNotNull() & (F.size("blocks") > 0))
               .select(*LINEAGE, "line_number", "captured_at", F.explode("blocks").alias("block"))
               .select("cluster", "host", "captured_at",
                       F.regexp_extract(F.ltrim("block"), THREAD_HEADER, 1).alias("thread_name"),
                       F.nullif(F.regexp_extract("block", r"java\.lang\.Thread\.State: (\w+)", 1),
                                F.lit("")).alias("state"),
                       F.slice(F.regexp_extract_all("block", F.lit(r"\n\s+at ([^\n]+)"), F.lit(1)), 1,
                               TOP_FRAMES).alias("top_frames"),
                       "source", "file", "line_number", "hour"))
    return threads, bad


def _all(text: Column, pattern: str, group: int) -> Column:
    return F.regexp_extract_all(text, F.lit(pattern), F.lit(group))


def deadlocks(bronze: DataFrame, timezone: Column) -> tuple[DataFrame, DataFrame]:
    """(deadlock threads, quarantine) from bronze `threaddumps` records.

    One row per thread of each Java-level deadlock cycle (columns DEADLOCK_COLUMNS). A deadlock
    block none of whose entries can be read is quarantined with `line_count` 0: its dump is counted
    by silver.threads already.
    """
    dumps = _normalized(bronze, timezone).where(
        F.col("captured_at").isNotNull() & F.col("record").contains(DEADLOCK_START))
    sections = (dumps.select(*_RECORD, "captured_at", "record",
                             F.posexplode(F.slice(F.split("record", DEADLOCK_START), 2, 1 << 20))
                             .alias("i", "section"))
                .withColumn("deadlock", F.col("i") + 1))
    cycle = F.substring_index("section", STACKS_START, 1)
    stacks = F.when(F.col("section").contains(STACKS_START),
                    F.regexp_extract(F.substring_index("section", STACKS_START, -1),
                                     r"(?s)^\s*=*\n(.*?)(?:\n[ \t]*\n|$)", 1))
    entries = F.arrays_zip(*[_all(cycle, _WAIT, g).alias(n) for g, n in (
        (1, "thread"), (2, "kind"), (3, "address"), (4, "object"), (5, "lock_class"), (6, "held_by"))])
    parsed = sections.select("*", entries.alias("entries"),
                             F.map_from_arrays(_all(F.coalesce(stacks, F.lit("")), _STACK, 1),
                                               _all(F.coalesce(stacks, F.lit("")), _STACK, 2)).alias("stacks"))
    bad = (parsed.where(F.size("entries") == 0)
           .select(*_RECORD, F.lit(0).alias("line_count"), F.concat(F.lit(DEADLOCK_START), "section").alias("record"),
                   F.lit("deadlock block without readable 'waiting ... which is held by' entries").alias("reason")))
    cycle_threads = F.transform("entries", lambda e: e["thread"])
    lock_classes = F.array_distinct(F.transform("entries", lambda e: e["lock_class"]))
    rows = parsed.where(F.size("entries") > 0).select(
        *_RECORD, "captured_at", "deadlock", "entries", cycle_threads.alias("cycle_threads"),
        lock_classes.alias("cycle_lock_classes"), "stacks", F.explode("entries").alias("e"))
    stack = F.coalesce(F.try_element_at("stacks", F.col("e.thread")), F.lit(""))
    holds = F.array_distinct(F.transform(F.filter("entries", lambda x: x["held_by"] == F.col("e.thread")),
                                         lambda x: x["lock_class"]))
    out = rows.select(
        "cluster", "host", "captured_at", F.col("deadlock").cast("int").alias("deadlock"), "cycle_threads",
        "cycle_lock_classes", F.col("e.thread").alias("thread_name"),
        F.when(F.col("e.kind") == "for ownable synchronizer", "ownable synchronizer").otherwise("monitor")
        .alias("waiting_lock_kind"),
        F.coalesce(F.nullif(F.col("e.object"), F.lit("")), F.nullif(F.col("e.address"), F.lit("")))
        .alias("waiting_lock_id"),
        F.col("e.lock_class").alias("waiting_lock_class"), F.nullif(F.col("e.held_by"), F.lit("")).alias("held_by"),
        holds.alias("holds_lock_classes"),
        F.slice(_all(stack, r"(?m)^[ \t]+at ([^\n]+)", 1), 1, TOP_FRAMES).alias("top_frames"),
        "source", "file", "line_number", "hour")
    return out, bad
