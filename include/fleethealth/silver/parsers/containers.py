"""Container log files unwrapped: each bronze line of a pod's stream becomes the log line it wraps.

A container runtime writes every line a broker prints to stdout/stderr inside a wrapper:
- CRI (containerd, CRI-O; kubelet's `/var/log/pods/.../0.log`): `<RFC3339Nano> stdout|stderr F|P <line>`;
  a line longer than the runtime's buffer is split into `P` (partial) pieces ended by an `F` piece;
- Docker's json-file driver: `{"log":"<line>\\n","stream":"stdout","time":"<RFC3339Nano>"}`; a line
  over 16 KiB is split into pieces whose `log` has no trailing newline, the last one has it;
- `kubectl logs --timestamps`: `<RFC3339Nano> <line>` (pieces already joined by kubelet).

A line is recognised by its first bytes, so a file mixing wrapped and plain lines still parses, and a
file without wrappers costs a substring test per line. The wrapper's UTC time is kept (`wrapped_at`):
the fallback timestamp of a record whose own cannot be read, and a check on the cluster's time zone.

Pieces of one split line are joined into one line at the first piece's line number. The lines after
are renumbered so log4j assembly sees consecutive lines, and the records' line numbers and counts are
mapped back to bronze's physical lines: bronze lines = records' line_count + quarantine still holds.
Only partial pieces are grouped (rare); every other line passes through.

One stream holds what Kafka writes to server.log, controller.log, state-change.log and
log-cleaner.log: a wrapped record's `log` comes from its logger (`LOG_OF_LOGGER`), not its file's name.
"""
from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from fleethealth.bronze.wrappers import CRI, KUBECTL, kind
from fleethealth.silver.parsers import log4j

# the log Kafka's default log4j configuration sends a logger to (config/log4j.properties, 3.x;
# config/log4j2.yaml, 4.x; kraft-reference.md 0.1-0.2): logger name -> log. As in log4j, a name covers
# the loggers below it (split on "." only: kafka.log.LogCleaner$CleanerThread is not below
# kafka.log.LogCleaner, and goes to server.log); any other logger: DEFAULT_LOG
LOG_OF_LOGGER: dict[str, str] = {
    "state.change.logger": "state-change",
    "kafka.controller": "controller",                            # ZooKeeper-era controller
    "org.apache.kafka.controller": "controller",                 # KRaft controller (3.3.2+)
    "kafka.log.LogCleaner": "log-cleaner",
    "org.apache.kafka.storage.internals.log.LogCleaner": "log-cleaner",                # 4.1+
    "org.apache.kafka.storage.internals.log.LogCleaner$CleanerThread": "log-cleaner",
    "org.apache.kafka.storage.internals.log.Cleaner": "log-cleaner",
}
DEFAULT_LOG = "server"

_DOCKER = T.StructType([T.StructField("log", T.StringType()), T.StructField("stream", T.StringType()),
                        T.StructField("time", T.StringType())])


def log_of_logger(logger: Column) -> Column:
    out = F.lit(DEFAULT_LOG)
    for name, log in LOG_OF_LOGGER.items():
        out = F.when((logger == name) | logger.startswith(name + "."), F.lit(log)).otherwise(out)
    return out


def _utc(stamp: Column) -> Column:
    """RFC3339Nano as a UTC timestamp (nanoseconds cut to micro); NULL if it is not one."""
    s = F.regexp_replace(stamp, r"(\.\d{6})\d+", "$1")
    return F.try_to_timestamp(s, F.lit("yyyy-MM-dd'T'HH:mm:ss[.SSSSSS][.SSSSS][.SSSS][.SSS][.SS][.S]XXX"))


def unwrap(lines: DataFrame) -> DataFrame:
    """`lines` with `record` the wrapped line (unchanged for a plain line), `wrapped_at` (the wrapper's
    UTC time, NULL for a plain line) and `_partial` (a piece of a split line, not its last)."""
    r = F.col("record")
    lines = lines.withColumn("_kind", kind(r))
    docker = F.when(F.col("_kind") == "docker", F.from_json(r, _DOCKER))
    k = F.col("_kind")
    log = docker.getField("log")
    inner = (F.when(k == "cri", F.regexp_extract(r, CRI, 4))
             .when(k == "kubectl", F.regexp_extract(r, KUBECTL, 2))
             .when(k == "docker", F.regexp_replace(log, r"\r?\n$", "")))
    stamp = (F.when(k == "cri", F.regexp_extract(r, CRI, 1)).when(k == "kubectl", F.regexp_extract(r, KUBECTL, 1))
             .when(k == "docker", docker.getField("time")))
    partial = (F.when(k == "cri", F.regexp_extract(r, CRI, 3) == "P")
               .when(k == "docker", ~log.endswith("\n")).otherwise(F.lit(False)))
    return (lines.withColumn("wrapped_at", F.when(k.isNotNull(), _utc(stamp)))
            .withColumn("_partial", F.coalesce(partial, F.lit(False)))
            .withColumn("record", F.coalesce(inner, r)).drop("_kind"))


def _numbers(first: Column, last: Column) -> Column:
    """[first, last] (empty when last < first: Spark's sequence would count down)."""
    return F.when(last >= first, F.sequence(first, last)).otherwise(F.array().cast("array<int>"))


def _joined(lines: DataFrame) -> tuple[DataFrame, DataFrame]:
    """(lines, split): the pieces of each split line joined into its first piece's line; `split` per
    hour and file holding any: `_absorbed`, the line numbers of the pieces after a first one (gone)."""
    pieces = lines.where(F.col("_partial"))
    w = Window.partitionBy("hour", "file").orderBy("line_number")
    runs = (pieces.withColumn("_run", F.col("line_number") - F.row_number().over(w))
            .groupBy("hour", "file", "_run")
            .agg(F.min("line_number").alias("_head"), F.max("line_number").alias("_last"),
                 F.array_sort(F.collect_list(F.struct("line_number", "record"))).alias("_p"))
            .select("hour", "file", "_head", "_last",
                    F.array_join(F.transform("_p", lambda p: p["record"]), "").alias("_text")))
    # the piece that ends a split line: the wrapped line just after its partial ones
    ends = (lines.where(F.col("wrapped_at").isNotNull() & ~F.col("_partial"))
            .join(F.broadcast(runs.select("hour", "file", (F.col("_last") + 1).alias("line_number"))),
                  ["hour", "file", "line_number"])
            .select("hour", "file", (F.col("line_number") - 1).alias("_last"), F.col("record").alias("_end")))
    runs = runs.join(ends, ["hour", "file", "_last"], "left").select(
        "hour", "file", "_head", F.concat("_text", F.coalesce("_end", F.lit(""))).alias("_text"),
        _numbers(F.col("_head") + 1, F.col("_last") + F.when(F.col("_end").isNotNull(), 1).otherwise(0))
        .alias("_gone"))
    split = runs.groupBy("hour", "file").agg(
        F.map_from_entries(F.collect_list(F.struct("_head", "_text"))).alias("_heads"),
        F.flatten(F.collect_list("_gone")).alias("_absorbed"))
    split = split.select("hour", "file", "_heads", F.array_sort(F.filter("_absorbed", lambda a: a > 0))
                         .alias("_absorbed"))
    marked = lines.join(F.broadcast(split), ["hour", "file"], "left")
    gone = F.coalesce(F.array_contains("_absorbed", F.col("line_number")), F.lit(False))
    kept = marked.where(~gone).withColumn(
        "record", F.coalesce(F.try_element_at(F.col("_heads"), F.col("line_number")), F.col("record")))
    # renumbered: consecutive again, as log4j assembly needs
    kept = kept.withColumn("line_number", F.when(F.col("_absorbed").isNull(), F.col("line_number")).otherwise(
        F.col("line_number") - F.size(F.filter("_absorbed", lambda a: a < F.col("line_number")))))
    return kept.drop("_heads", "_absorbed", "_partial"), split.select("hour", "file", "_absorbed")


def _physical(n: Column) -> Column:
    """The bronze line number of the `n`-th kept line (the pieces absorbed, `_absorbed`, skipped)."""
    return F.aggregate("_absorbed", n, lambda acc, a: F.when(a <= acc, acc + 1).otherwise(acc))


def _mapped_back(df: DataFrame, split: DataFrame, count: Column) -> DataFrame:
    """`df`'s line_number and line_count (`count` kept lines) in bronze's physical lines."""
    df = df.withColumn("_count", count).join(F.broadcast(split), ["hour", "file"], "left")
    first = _physical(F.col("line_number"))
    return (df.withColumn("line_count", F.when(F.col("_absorbed").isNull(), F.col("_count"))
                          .otherwise(_physical(F.col("line_number") + F.col("_count")) - first).cast("int"))
            .withColumn("line_number", F.when(F.col("_absorbed").isNull(), F.col("line_number"))
                        .otherwise(first).cast("int"))
            .drop("_count", "_absorbed"))


def assemble(lines: DataFrame, fmt: log4j.LogFormat, start: Column | None = None,
             wrapped: bool = True) -> tuple[DataFrame, DataFrame]:
    """log4j.assemble (`start`: its record-start test) of `lines` unwrapped: (records with `wrapped_at`,
    orphans with `line_count`), line numbers and counts in bronze's lines. `wrapped=False`: the lines
    hold no wrapped line (bronze.files says so), and are assembled as they are, without the unwrapping's
    joins (most of an hour's plan)."""
    if not wrapped:
        records, orphans = log4j.assemble(lines.withColumn("wrapped_at", F.lit(None).cast("timestamp")), fmt, start,
                                          keep=("wrapped_at",))
        return records, orphans.withColumn("line_count", F.lit(1))
    lines, split = _joined(unwrap(lines))
    records, orphans = log4j.assemble(lines, fmt, start, keep=("wrapped_at",))
    records = _mapped_back(records, split, F.col("line_count")).select(*records.columns)
    orphans = _mapped_back(orphans, split, F.lit(1)).select(*orphans.columns, "line_count")
    return records, orphans


def with_log(events: DataFrame) -> DataFrame:
    """A wrapped record's `log` from its logger (a plain file's stays its file's name)."""
    return events.withColumn("log", F.when(F.col("wrapped_at").isNotNull(), log_of_logger(F.col("logger")))
                             .otherwise(F.col("log")))
