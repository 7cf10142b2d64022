"""Hourly health facts from silver (DataFrame -> DataFrame; no paths, no I/O)."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from fleethealth.fleet import mbeans
from fleethealth.fleet.kafka import OFFSETS_TOPIC
from fleethealth.gold import known_bugs
from fleethealth.gold.facts.coordinators import groups_by_partition

CLEANER_THREAD = "kafka-log-cleaner-thread-%"


# silver.kafka_events as gold reads it (gold.job.window): records of the event types no fact or
# detector reads are left out (`other` and the segment rolls and deletions are nearly all of a healthy
# broker's lines; every KRaft event type is read), and so are their lineage and, but for the KafkaConfig
# blocks' (request_saturation.queued_max_requests), the KRaft fault lines' (metadata_lag quotes what
# failed), the cleaner's "Error due to" (log_cleaner_dead quotes its exception) and the lines a known
# bug's signature finds (known_bugs.with_known_bugs), the record text
KAFKA_UNREAD_EVENTS = ("other", "segment_rolled", "segment_deleted")
KAFKA_TEXT_EVENTS = ("kafka_config", "server_fault", "cleaner_error")
# how much of the exception under a cleaner's "Error due to" gold.log_cleaner_status keeps (its first line)
CLEANER_ERROR_CHARS = 300
KAFKA_UNREAD_COLUMNS = ("thread", "file", "source", "line_number", "line_count")


def kafka_events_read(kafka_events: DataFrame) -> DataFrame:
    """The rows and columns of silver.kafka_events that gold reads (the same facts and findings as
    the whole table gives)."""
    text = F.col("event_type").isin(*KAFKA_TEXT_EVENTS)
    signatures = known_bugs.log_lines_regex()
    if signatures:
        text = text | F.concat_ws("\n", "message", "detail").rlike(signatures)
    return (kafka_events.where(~F.coalesce(F.col("event_type").isin(*KAFKA_UNREAD_EVENTS), F.lit(False)))
            .drop(*KAFKA_UNREAD_COLUMNS)
            .withColumns({"message": F.when(text, F.col("message")), "detail": F.when(text, F.col("detail"))}))


def jmx_read(jmx: DataFrame) -> DataFrame:
    """silver.jmx_samples as gold reads it: NaN (an idle average before its first measurement) and,
    in a table silver wrote before it set them aside, an infinity are no value (NULL)."""
    value = F.col("value")
    return jmx.withColumn("value", F.when(~F.isnan(value) & (F.abs(value) != float("inf")), value))


# what gold reads of a silver table, by table (the others as they are)
SILVER_READS = {"kafka_events": kafka_events_read, "jmx_samples": jmx_read}


def silver_read(name: str, df: DataFrame) -> DataFrame:
    """Silver table `name` (e.g. "jmx_samples") as gold reads it."""
    return SILVER_READS.get(name, lambda d: d)(df)


# gold's inputs: the silver table each frame of Facts is read from, by field
SILVER_INPUTS = {"kafka_events": "kafka_events", "jmx": "jmx_samples", "threads": "threads",
                 "partition_sizes": "partition_sizes", "reconciliation": "reconciliation", "zk_events": "zk_events",
                 "deadlocks": "deadlocks"}
SILVER_FIELDS = tuple(SILVER_INPUTS)


def hour_lit(hour: datetime):
    return F.lit(hour).cast("timestamp")


@dataclass
class Facts:
    """Everything the detectors of a window of hours may read.

    Every frame carries `hour` (the processed hour of its rows) and every fact and detector keeps it in
    its keys, joins and windows: one plan computes a window of hours exactly as it computes each hour
    alone (gold.job.gold_tables). A frame without an `hour` column (a unit test's) is given the one hour."""
    hours: datetime | Sequence[datetime]
    hosts: DataFrame            # inventory, one row per host (given one row per host and hour)
    kafka_events: DataFrame     # silver, these hours
    jmx: DataFrame              # silver, these hours
    threads: DataFrame          # silver, these hours
    partition_sizes: DataFrame  # silver, these hours
    reconciliation: DataFrame   # silver, these hours
    zk_events: DataFrame        # silver, these hours
    deadlocks: DataFrame        # silver, these hours
    offsets_partitions: DataFrame | None = None
    cleaner_status: DataFrame | None = None
    broker_health: DataFrame | None = None
    derived: dict = field(default_factory=dict)  # gold fact tables of fact_tables.BUILDERS, by name
    # the same hours, each also holding the last minutes of the hour before it (with_lookback): what
    # the detectors of episodes that may straddle an hour end read (detectors.LOOKBACK)
    lookback: Facts | None = None

    def __post_init__(self):
        self.hours = (self.hours,) if isinstance(self.hours, datetime) else tuple(self.hours)
        if not self.hours:
            raise ValueError("Facts need at least one hour")
        for name in SILVER_FIELDS:
            df = getattr(self, name)
            if df is not None and "hour" not in df.columns:
                if len(self.hours) > 1:
                    raise ValueError(f"{name} has no hour column: which of {len(self.hours)} hours are its rows of?")
                setattr(self, name, df.withColumn("hour", hour_lit(self.hours[0])))
        if self.hosts is not None and "hour" not in self.hosts.columns:
            self.hosts = self.hosts.withColumn("hour", F.explode(F.array(*[hour_lit(h) for h in self.hours])))

    def table(self, name: str, thresholds: dict) -> DataFrame:
        """A gold fact table of this hour (see fleethealth.gold.facts.registry), built once: the gold job
        materializes each before the detectors run; a detector unit test gets it built on demand."""
        if name not in self.derived:
            from fleethealth.gold.facts.registry import BUILDERS

            self.derived[name] = BUILDERS[name](self, thresholds)
        return self.derived[name]

    def of_clusters(self, clusters: Sequence[str], keep: bool = True) -> Facts:
        """These facts of `clusters` only (or, `keep=False`, of every other cluster), before any gold
        table is built from them: every fact and detector keeps the cluster in its keys, so the facts of
        a set of clusters give their rows of the whole's."""
        if self.derived or self.offsets_partitions is not None:
            raise ValueError("of_clusters: gold tables were built from these facts already")
        mine = F.col("cluster").isin(*clusters) if keep else ~F.col("cluster").isin(*clusters)
        frames = {name: None if getattr(self, name) is None else getattr(self, name).where(mine)
                  for name in ("hosts", *SILVER_FIELDS)}
        return Facts(hours=self.hours, **frames,
                     lookback=None if self.lookback is None else self.lookback.of_clusters(clusters, keep))

    @cached_property
    def offsets_groups(self) -> DataFrame:
        """(cluster, partition, groups): the consumer groups each __consumer_offsets partition
        coordinates, as far as the hour's logs name them (read by several facts and detectors)."""
        return groups_by_partition(self.kafka_events, self.hosts)


# the silver frames a look-back extends (the timestamp of their rows): the ones detectors of episodes read
LOOKBACK_FIELDS = {"kafka_events": "ts", "zk_events": "ts", "jmx": "ts"}


def with_lookback(facts: Facts, minutes: int, earlier: dict | None = None) -> Facts:
    """`facts` whose hours each also hold the rows of the last `minutes` of the hour before it, as rows of
    that hour: an episode straddling an hour end is whole in the hour it ends in. The rows come from the
    hours of `facts` and, for the hour before the first, from `earlier` (LOOKBACK_FIELDS name -> frame of
    that hour, e.g. its published silver). Hosts and the other frames are the hours' own."""
    hours = [hour_lit(h) for h in facts.hours]
    next_hour = F.col("hour") + F.expr("INTERVAL 1 HOUR")
    frames = {}
    for name, ts in LOOKBACK_FIELDS.items():
        own = getattr(facts, name)
        more = None if earlier is None else earlier.get(name)
        # the rows of the hour before, in the columns of the hours' own (either may be gold's narrower read)
        before = own if more is None else own.unionByName(
            more.select(*[c for c in more.columns if c in own.columns]), allowMissingColumns=True)
        tail = (before.where(next_hour.isin(*hours) & (F.col(ts) >= next_hour - F.expr(f"INTERVAL {minutes} MINUTES")))
                .withColumn("hour", next_hour))
        frames[name] = own.unionByName(tail)
    # what gold reads of the Kafka events (a detector's "last line of the hour" must not depend on
    # whether the caller passed the whole table)
    frames["kafka_events"] = kafka_events_read(frames["kafka_events"])
    return Facts(hours=facts.hours, hosts=facts.hosts, threads=facts.threads, partition_sizes=facts.partition_sizes,
                 reconciliation=facts.reconciliation, deadlocks=facts.deadlocks, **frames)


def offsets_size_samples(jmx: DataFrame) -> DataFrame:
    """(cluster, broker_id, partition, hour, ts, size_bytes) of __consumer_offsets partitions from JMX."""
    return (jmx.where(mbeans.OFFSETS_LOG_SIZE.matches())
            .select("cluster", "broker_id", F.col("props")["partition"].cast("int").alias("partition"), "hour",
                    "ts", F.col("value").try_cast("long").alias("size_bytes")))


def offsets_partitions(facts: Facts) -> DataFrame:
    """gold.consumer_offsets_partitions: size, growth in the hour and compaction seen per broker-partition,
    and `groups`: the consumer groups the partition coordinates, as far as the hour's logs name them
    (Facts.offsets_groups; empty when none)."""
    key = ["cluster", "broker_id", "partition", "hour"]
    samples = offsets_size_samples(facts.jmx).withColumn("src", F.lit("jmx"))
    snaps = (facts.partition_sizes.where((F.col("topic") == OFFSETS_TOPIC) & ~F.col("is_future"))
             .select("cluster", "broker_id", "partition", "hour", F.col("captured_at").alias("ts"), "size_bytes")
             .withColumn("src", F.lit("logdirs")))
    # log-dir snapshots fill in partitions that JMX does not report
    snaps = snaps.join(samples.select(*key).distinct(), key, "left_anti")
    allsamples = samples.unionByName(snaps)
    w = Window.partitionBy(*key).orderBy("ts")
    shrank = allsamples.withColumn("delta", F.col("size_bytes") - F.lag("size_bytes").over(w))
    cleaned = (facts.kafka_events.where((F.col("event_type") == "cleaner_summary") & (F.col("topic") == OFFSETS_TOPIC))
               .groupBy(*key).agg(F.count(F.lit(1)).alias("cleanings")))
    agg = (shrank.groupBy(*key)
           .agg(F.max_by("size_bytes", "ts").alias("size_bytes"),
                F.min_by("size_bytes", "ts").alias("first_size_bytes"),
                F.max("size_bytes").alias("max_size_bytes"),
                F.min("ts").alias("first_ts"), F.max("ts").alias("last_ts"),
                F.count(F.lit(1)).cast("int").alias("samples"),
                F.max(F.col("delta") < 0).alias("shrank"),
                F.first("src").alias("size_source")))
    out = (agg.join(cleaned, key, "left")
           .join(facts.offsets_groups, ["cluster", "partition", "hour"], "left"))
    return out.select(
        "cluster", "broker_id", "partition", "hour", "size_bytes", "max_size_bytes",
        (F.col("size_bytes") - F.col("first_size_bytes")).alias("growth_bytes"),
        (F.coalesce(F.col("cleanings"), F.lit(0)) > 0).alias("compaction_logged"),
        (F.coalesce(F.col("shrank"), F.lit(False)) | (F.coalesce(F.col("cleanings"), F.lit(0)) > 0))
        .alias("compaction_seen"),
        "samples", "first_ts", "last_ts", "size_source",
        F.coalesce(F.col("groups"), F.array().cast("array<string>")).alias("groups"))


ORDERLY_STOP_S = 60


def cleaner_status(facts: Facts, stale_ms: int) -> DataFrame:
    """gold.log_cleaner_status: per broker-hour, every liveness signal and the verdict.

    Each signal has limits (docs/postmortems.md, version notes for parsers): DeadThreadCount only from 2.4, time-since-last-run-ms from
    0.10.2, the cleaner's own log lines only if that log arrived, thread dumps are occasional. A
    broker with no signal at all is `unknown`, never `alive`.
    """
    key = ["cluster", "broker_id", "hour"]
    brokers = facts.hosts.where(F.col("role") == "kafka").select("cluster", "host", "broker_id", "kafka_version",
                                                                 "hour")
    jmx = facts.jmx
    dead = (jmx.where(mbeans.CLEANER_DEAD_THREADS.matches())
            .groupBy(*key)
            .agg(F.max("value").try_cast("int").alias("dead_thread_count"),
                 F.min(F.when(F.col("value") > 0, F.col("ts"))).alias("dead_threads_since")))
    tslr = (jmx.where(mbeans.CLEANER_TIME_SINCE_LAST_RUN.matches())
            .groupBy(*key)
            .agg(F.max("value").try_cast("long").alias("time_since_last_run_ms"),
                 # when a stale cleaner last ran: sample time minus the time since its last run
                 # (not before 1970: a larger time since is no time at all)
                 F.min(F.when((F.col("value") > stale_ms) & (F.col("value") <= F.unix_millis("ts")),
                              F.timestamp_millis(F.unix_millis("ts") - F.col("value").cast("long"))))
                 .alias("not_run_since"),
                 F.max(F.when(F.col("value") > stale_ms, F.col("ts"))).alias("stale_last_ts")))
    ev = facts.kafka_events.where(F.col("event_type").isin("cleaner_error", "cleaner_stopped", "cleaner_summary",
                                                           "cleaner_shutting_down"))
    # a thread's "Stopped" within ORDERLY_STOP_S of the cleaner's "Shutting down" is an orderly stop (the
    # broker shutting down), not a death
    shutting_down = F.when(F.col("event_type") == "cleaner_shutting_down", F.col("ts"))
    ev = ev.withColumn("_shutdown_ts", F.last(shutting_down, ignorenulls=True).over(
        Window.partitionBy(*key).orderBy("ts").rangeBetween(Window.unboundedPreceding, Window.currentRow)))
    orderly = F.col("_shutdown_ts") >= F.col("ts") - F.expr(f"INTERVAL {ORDERLY_STOP_S} SECONDS")
    logs = (ev.groupBy(*key)
            .agg(F.min(F.when(F.col("event_type") == "cleaner_error", F.col("ts"))).alias("cleaner_error_ts"),
                 F.min_by(F.when(F.col("event_type") == "cleaner_error", F.left(
                     F.substring_index(F.trim(F.col("detail")), "\n", 1), F.lit(CLEANER_ERROR_CHARS))),
                     F.when(F.col("event_type") == "cleaner_error", F.col("ts"))).alias("cleaner_error"),
                 F.min(F.when((F.col("event_type") == "cleaner_stopped") & ~F.coalesce(orderly, F.lit(False)),
                              F.col("ts"))).alias("cleaner_stopped_ts"),
                 F.max(F.when(F.col("event_type") == "cleaner_summary", F.col("ts"))).alias("last_cleaning_ts"),
                 F.count(F.when(F.col("event_type") == "cleaner_summary", 1)).alias("cleanings")))
    dumps = (facts.threads.groupBy(*key, "file", "captured_at")
             .agg(F.max(F.col("thread_name").like(CLEANER_THREAD)).alias("has_cleaner"))
             .groupBy(*key)
             .agg(F.count(F.lit(1)).cast("int").alias("thread_dumps"),
                  F.min(F.when(~F.col("has_cleaner"), F.col("captured_at"))).alias("dump_without_cleaner_ts"),
                  F.max(F.when(~F.col("has_cleaner"), F.col("captured_at"))).alias("dump_without_cleaner_last_ts"),
                  F.count(F.when(F.col("has_cleaner"), 1)).cast("int").alias("dumps_with_cleaner")))
    df = brokers.join(dead, key, "left").join(tslr, key, "left").join(logs, key, "left").join(dumps, key, "left")
    stopped_for_good = F.coalesce(F.col("cleaner_stopped_ts"), F.col("cleaner_error_ts"))
    stopped_for_good = F.when(F.col("last_cleaning_ts").isNull() | (F.col("last_cleaning_ts") < stopped_for_good),
                              stopped_for_good)
    dead_signals = [F.col("dead_threads_since"), F.col("not_run_since"), stopped_for_good,
                    F.col("dump_without_cleaner_ts")]
    # the cleaner's own 'Error due to' / 'Stopped' line dates its death, when the hour has it; the
    # other signals date it later (a sample or a dump after it) or earlier (its last run before it)
    dead_since = F.coalesce(stopped_for_good, F.least(*dead_signals))
    last_dead = F.greatest(F.col("dead_threads_since"), F.col("stale_last_ts"), stopped_for_good,
                           F.col("dump_without_cleaner_last_ts"))
    alive = ((F.col("dead_thread_count") == 0) | (F.col("time_since_last_run_ms") <= stale_ms)
             | (F.col("cleanings") > 0) | (F.col("dumps_with_cleaner") > 0))
    evidence = F.concat_ws("; ",
        F.when(F.col("dead_thread_count") > 0,
               F.format_string("DeadThreadCount=%d > 0", F.col("dead_thread_count"))),
        F.when(F.col("not_run_since").isNotNull(),
               F.format_string("time-since-last-run-ms=%d > %d (last run %s)", F.col("time_since_last_run_ms"),
                               F.lit(stale_ms), F.date_format("not_run_since", "yyyy-MM-dd HH:mm:ss'Z'"))),
        F.when(F.col("cleaner_error_ts").isNotNull(),
               F.concat(F.format_string("cleaner 'Error due to' at %s", F.date_format("cleaner_error_ts", "HH:mm:ss'Z'")),
                        F.coalesce(F.concat(F.lit(": "), F.nullif(F.col("cleaner_error"), F.lit(""))), F.lit("")))),
        F.when(F.col("cleaner_stopped_ts").isNotNull(),
               F.format_string("cleaner 'Stopped' at %s", F.date_format("cleaner_stopped_ts", "HH:mm:ss'Z'"))),
        F.when(F.col("dump_without_cleaner_ts").isNotNull(),
               F.format_string("thread dump at %s without kafka-log-cleaner-thread-*",
                               F.date_format("dump_without_cleaner_ts", "HH:mm:ss'Z'"))))
    return df.select(
        "cluster", "host", "broker_id", "kafka_version", "hour",
        F.when(dead_since.isNotNull(), "dead").when(alive, "alive").otherwise("unknown").alias("status"),
        dead_since.alias("dead_since"), last_dead.alias("last_dead_evidence_ts"),
        "dead_thread_count", "time_since_last_run_ms", "cleaner_error_ts", "cleaner_error", "cleaner_stopped_ts",
        F.coalesce("cleanings", F.lit(0)).cast("int").alias("cleanings"), "last_cleaning_ts",
        F.coalesce("thread_dumps", F.lit(0)).alias("thread_dumps"),
        F.coalesce("dumps_with_cleaner", F.lit(0)).alias("dumps_with_cleaner"),
        evidence.alias("evidence"))


_FILE_LEDGER = ("quarantine_rows", "files_listed", "files_rejected")


def broker_health(facts: Facts) -> DataFrame:
    """gold.broker_health_hourly: one row per inventory host-hour, which sources arrived and counts."""
    r = facts.reconciliation
    for c in _FILE_LEDGER:   # silver written before the file ledger existed
        if c not in r.columns:
            r = r.withColumn(c, F.lit(None).cast("long"))
    if "file_problems" not in r.columns:
        r = r.withColumn("file_problems", F.array().cast("array<string>"))
    rec = (r.groupBy("cluster", "host", "hour")
           .agg(F.collect_set(F.when(F.col("bronze_records") > 0, F.col("source"))).alias("arrived"),
                F.sum("bronze_records").alias("bronze_records"),
                F.sum("silver_records").alias("silver_records"),
                F.sum("quarantined_records").alias("quarantined_records"),
                *[F.sum(c).alias(c) for c in _FILE_LEDGER],
                F.flatten(F.collect_list(F.transform("file_problems", lambda p: F.concat_ws(
                    ": ", F.col("source"), p)))).alias("file_problems")))
    df = facts.hosts.join(rec, ["cluster", "host", "hour"], "left")
    arrived = F.array_sort(F.coalesce(F.col("arrived"), F.array().cast("array<string>")))
    out = df.select(
        "cluster", "broker_id", "host", "role", "zk_myid", "kafka_version", "hour",
        F.array_sort("expect").alias("sources_expected"), arrived.alias("sources_arrived"),
        F.array_sort(F.array_except("expect", arrived)).alias("sources_missing"),
        *[F.coalesce(c, F.lit(0)).cast("long").alias(c)
          for c in ("bronze_records", "silver_records", "quarantined_records", *_FILE_LEDGER)],
        F.array_sort(F.coalesce("file_problems", F.array().cast("array<string>"))).alias("file_problems"))
    columns = out.columns   # a join on a key puts its columns first: keep this order
    if facts.cleaner_status is not None:
        out = out.join(facts.cleaner_status.select("cluster", "host", "hour", F.col("status").alias("log_cleaner")),
                       ["cluster", "host", "hour"], "left")
        columns = [*columns, "log_cleaner"]
    if facts.offsets_partitions is not None:
        biggest = facts.offsets_partitions.groupBy("cluster", "broker_id", "hour").agg(
            F.max("size_bytes").alias("max_offsets_partition_bytes"))
        out = out.join(biggest, ["cluster", "broker_id", "hour"], "left")
        columns = [*columns, "max_offsets_partition_bytes"]
    return out.select(*columns)
