"""jstack thread dumps -> threads (name, state, top frames) with the capture time (first line)."""
from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from fleethealth.parsers.log4j import LINEAGE

_CAPTURE = r"^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})"
TOP_FRAMES = 5


def parse(bronze: DataFrame, timezone: Column) -> tuple[DataFrame, DataFrame]:
    """(threads, quarantine) from bronze `threaddumps` records (one record per dump)."""
    # try_to_timestamp: NULL (-> quarantine) instead of an ANSI error for a missing/impossible time
    captured = F.to_utc_timestamp(F.try_to_timestamp(F.regexp_extract("record", _CAPTURE, 1),
                                                     F.lit("yyyy-MM-dd HH:mm:ss")), timezone)
    dumps = bronze.withColumn("captured_at", captured).withColumn(
        "blocks", F.filter(F.split("record", r"\n[ \t]*\n"), lambda b: F.ltrim(b).startswith('"')))
    bad = (dumps.where(F.col("captured_at").isNull() | (F.size("blocks") == 0))
           .select(*LINEAGE, "line_number", F.lit(1).alias("line_count"), "record",
                   F.when(F.col("captured_at").isNull(), "thread dump without a capture time on its first line")
                    .otherwise("thread dump without threads").alias("reason")))
    threads = (dumps.where(F.col("captured_at").isNotNull() & (F.size("blocks") > 0))
               .select(*LINEAGE, "line_number", "captured_at", F.explode("blocks").alias("block"))
               .select("cluster", "host", "captured_at",
                       F.regexp_extract(F.ltrim("block"), r'^"([^"]+)"', 1).alias("thread_name"),
                       F.nullif(F.regexp_extract("block", r"java\.lang\.Thread\.State: (\w+)", 1),
                                F.lit("")).alias("state"),
                       F.slice(F.regexp_extract_all("block", F.lit(r"\n\s+at ([^\n]+)"), F.lit(1)), 1,
                               TOP_FRAMES).alias("top_frames"),
                       "source", "file", "line_number", "hour"))
    return threads, bad
