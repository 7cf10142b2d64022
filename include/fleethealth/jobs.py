"""Jobs: layer and window orchestration — one function per layer, each ending in its quality gate.

Each is write-audit-publish: validated before it is published.

Each layer job reads the *published* hour of the layer below and computes the layer's tables once
(bronze.records and silver's written into the tables' files, uncommitted: fleethealth.lake.staged;
the others materialized); `gate(layer)` validates them with their GX suites, records the results in
gold.quality_results (and Data Docs), and only if no critical expectation failed writes
them into the published tables (replaceWhere of the hour). A failed gate raises QualityGateError
naming the expectations and a few offending rows, leaves the published tables exactly as they
were, and writes the rejected tables to <lakehouse>/_staging/<hour>/<layer>/ for inspection.

spark/<layer>.py call these under spark-submit (the DAG: bronze -> silver -> gold, one Spark step
per layer); `fleethealth run` calls the same functions in one session for a window of hours (the
backfill path, `run_window`): silver and gold are computed once for the window, each hour is
validated on its own (`audit`: the gate without its write, exactly as above), and the hours that
passed are published together, one commit per table (`publish`).
"""
from __future__ import annotations

import logging
from datetime import datetime, timedelta

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from fleethealth.bronze import tables as bronze
from fleethealth.fleet.inventory import load_inventory
from fleethealth.gold import incidents as gold_incidents
from fleethealth.gold import thresholds as thresholds_mod
from fleethealth.gold.detectors import DETECTORS, detect_all
from fleethealth.gold.facts import core as gold_facts
from fleethealth.gold.facts import registry as fact_tables
from fleethealth.lake import locks
from fleethealth.lake import staged as lake_staged
from fleethealth.lake import tables as lake
from fleethealth.lake.catalog import Lakehouse
from fleethealth.pull import landing
from fleethealth.quality.gate import GateReport, audit, gate, publish
from fleethealth.quality.suites import QualityGateError
from fleethealth.runtime import interrupt
from fleethealth.runtime.frames import materialize, materialize_all
from fleethealth.runtime.session import settings
from fleethealth.runtime.spark_conf import SMALL_HOUR_BYTES, SMALL_INPUT_CONF
from fleethealth.silver import tables as silver

log = logging.getLogger("fleethealth.jobs")
DETECTOR_KINDS = frozenset(DETECTORS)


# ------------------------------------------------------------------------------------ the layers
@locks.holding_hour("bronze job")
def run_bronze(spark: SparkSession, hour: datetime, lakehouse: Lakehouse) -> tuple[int, GateReport]:
    """Landing files of `hour` -> bronze.records and bronze.files, gated. Returns the record count
    and the gate's report."""
    landed = landing.read_manifests(hour, lakehouse)
    read = bronze.read(spark, landed, lakehouse.landing(hour), hour)
    staged = {}
    try:
        with small_input(spark, landed):
            # the records are written once, into bronze.records' files, uncommitted (lake.staged)
            rows, cuts = bronze.records_observing_cuts(read)
            staged = {"bronze.records": lake_staged.Staged(spark, rows, "bronze.records", [hour], lakehouse)}
            records = staged["bronze.records"].frame
            files = materialize(bronze.files(spark, landed, records, hour, cuts))
            report = gate(spark, "bronze", hour, {"bronze.records": records, "bronze.files": files}, lakehouse,
                          staged=staged)
            return records.count(), report
    finally:
        lake_staged.discard_all(staged)
        spark.catalog.clearCache()


@locks.holding_hour("silver job")
def run_silver(spark: SparkSession, hour: datetime, inventory_path: str, lakehouse: Lakehouse
               ) -> tuple[list[dict], GateReport]:
    """Published bronze.records of `hour` -> silver tables, quarantine and reconciliation, gated.
    Returns the reconciliation rows and the gate's report."""
    return _settled(silver_window(spark, [hour], inventory_path, lakehouse)[hour])


def silver_window(spark: SparkSession, hours: list[datetime], inventory_path: str, lakehouse: Lakehouse) -> dict:
    """Published bronze.records of `hours` -> their silver tables computed at once (one plan per
    table: silver keeps each row's hour), each hour audited on its own, then the hours that passed
    published together. Per hour: (reconciliation rows, gate report), or the QualityGateError of its
    failed gate."""
    inventory = load_inventory(inventory_path)
    with locks.hours_lock(hours, lakehouse, "silver job"):
        # not materialized: each part reads its own source's rows (and reconciliation four columns)
        # from the Parquet files, less than a copy of the whole hour costs to make and to read back
        records = lake.read(spark, "bronze.records", lakehouse, hours)
        files = bronze_files(spark, hours, lakehouse)
        staged = {}
        try:
            # written once, into the tables' files, uncommitted: the gate reads them, publishing commits them
            staged = lake_staged.stage_all(spark, silver.build(spark, records, inventory, files), hours, lakehouse)
            tables = {name: s.frame for name, s in staged.items()}
            tables["silver.reconciliation"] = materialize(reconciliation(records, tables, files))
            out, passed = {}, []
            for hour in hours:
                hourly = of_hours(tables, hour)
                try:
                    report = audit(spark, "silver", hour, hourly, lakehouse)
                except QualityGateError as exc:
                    out[hour] = exc
                    continue
                passed.append(hour)
                recon = hourly["silver.reconciliation"].orderBy("cluster", "host", "source").collect()
                out[hour] = ([r.asDict() for r in recon], report)
            _publish_passed(tables, passed, out, lakehouse, staged)
            return out
        finally:
            lake_staged.discard_all(staged)
            spark.catalog.clearCache()


def small_input(spark: SparkSession, landed: list):
    """The session set for a small input (runtime.spark_conf.SMALL_INPUT_CONF) for a block, if the
    files `landed` (pull.landing.Landed) of the hours it computes are that small; bronze and gold use
    it, silver's parse is faster compiled even then."""
    return settings(spark, SMALL_INPUT_CONF if sum(x.size for x in landed) < SMALL_HOUR_BYTES else {})


def of_hours(tables: dict, hours) -> dict:
    """The rows of `hours` (or of one hour) of each hourly table of a window (a table that is not
    hourly as it is)."""
    return {name: df.where(F.expr(lake.hour_predicate(hours))) if lake.table(name).hourly else df
            for name, df in tables.items()}


def _publish_passed(tables: dict, passed: list[datetime], out: dict, lakehouse: Lakehouse, staged=None) -> None:
    """Publish the rows of the hours of a window (`tables`) that passed their audit, at once
    (`staged`: see quality.gate.publish)."""
    if passed:
        publish(of_hours(tables, passed), passed, lakehouse, [out[hour][1] for hour in passed], staged)
        for hour in passed:
            out[hour][1].published = [name for name in lake.TABLES if name in tables]


def _settled(outcome):
    """A window function's outcome for one hour: its result, or the exception that failed it, raised."""
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome


def bronze_files(spark: SparkSession, hour, lakehouse: Lakehouse) -> DataFrame:
    """The published bronze.files of `hour` (or hours; empty for a lakehouse written before it existed)."""
    return lake.read_or_empty(spark, "bronze.files", bronze.FILES_SCHEMA, lakehouse, hour)


def reconciliation(records: DataFrame, tables: dict, files: DataFrame) -> DataFrame:
    """silver.reconciliation of the silver `tables` (name -> frame) against the bronze hour
    (`records`) and its files."""
    return silver.reconciliation(records, tables, tables["silver.quarantine"], files)


GOLD_INPUTS = ("kafka_events", "jmx_samples", "threads", "partition_sizes", "reconciliation", "zk_events",
               "deadlocks")


def facts_of(hours, hosts: DataFrame, silver_tables: dict, lookback_minutes: int = 0,
             earlier: dict | None = None) -> gold_facts.Facts:
    """The Facts of an hour or a window of hours from their silver tables (`silver_tables`: GOLD_INPUTS
    name -> frame, rows of those hours), with their look-back (gold.facts.core.with_lookback) when
    `lookback_minutes`: from the window's own hours, and for its first hour from `earlier` (the rows
    of the hour before it: GOLD_INPUTS name -> frame, e.g. read_lookback)."""
    t = silver_tables
    facts = gold_facts.Facts(
        hours=hours, hosts=hosts, kafka_events=t["kafka_events"], jmx=t["jmx_samples"], threads=t["threads"],
        partition_sizes=t["partition_sizes"], reconciliation=t["reconciliation"], zk_events=t["zk_events"],
        deadlocks=t["deadlocks"])
    if lookback_minutes:
        before = {field: earlier[name] for field, name in LOOKBACK_INPUTS.items() if earlier and name in earlier}
        facts.lookback = gold_facts.with_lookback(facts, lookback_minutes, before)
    return facts


# the silver tables a look-back reads, by their Facts field
LOOKBACK_INPUTS = {"kafka_events": "kafka_events", "zk_events": "zk_events", "jmx": "jmx_samples"}


def read_lookback(spark: SparkSession, first: datetime, minutes: int, lakehouse: Lakehouse) -> dict:
    """The published silver rows of the last `minutes` of the hour before `first` that a look-back reads
    (LOOKBACK_INPUTS; none when that hour is not published): a bounded read, whatever the history."""
    before = first - timedelta(hours=1)
    since = F.lit(first - timedelta(minutes=minutes)).cast("timestamp")
    out = {}
    for name in LOOKBACK_INPUTS.values():
        if lake.exists(spark, f"silver.{name}", lakehouse):
            df = lake.read(spark, f"silver.{name}", lakehouse, before).where(F.col("ts") >= since)
            out[name] = gold_facts.kafka_events_read(df) if name == "kafka_events" else df
    return out


def gold_tables(facts: gold_facts.Facts, limits: dict) -> dict[str, DataFrame]:
    """Every hourly gold table of the hours of `facts` (all but gold.incidents), each computed once:
    the facts first, then the detectors that read them. A window of hours gives the rows each of its
    hours gives alone, in one plan per table (hour is a key of every fact and detector)."""
    facts.offsets_groups = materialize(facts.offsets_groups)  # read by three of the frames below
    independent = materialize_all({
        "offsets": gold_facts.offsets_partitions(facts),
        "cleaner": gold_facts.cleaner_status(facts, limits["log_cleaner_dead.stale_ms"]),
        **{name: facts.table(name, limits) for name in fact_tables.BUILDERS}})
    facts.offsets_partitions, facts.cleaner_status = independent.pop("offsets"), independent.pop("cleaner")
    facts.derived.update(independent)
    facts.broker_health = materialize(gold_facts.broker_health(facts))  # joins the two above
    if facts.lookback is not None:   # the hours' own, whatever a look-back detector reads of them
        facts.lookback.offsets_partitions, facts.lookback.cleaner_status, facts.lookback.broker_health = (
            facts.offsets_partitions, facts.cleaner_status, facts.broker_health)
    return {
        "gold.consumer_offsets_partitions": facts.offsets_partitions,
        "gold.log_cleaner_status": facts.cleaner_status,
        "gold.broker_health_hourly": facts.broker_health,
        **facts.derived,
        "gold.incident_findings": materialize(detect_all(facts, limits)),
    }


@locks.holding_hour("gold job")
def run_gold(spark: SparkSession, hour: datetime, inventory_path: str, lakehouse: Lakehouse,
             thresholds_path: str | None = None) -> tuple[int, GateReport]:
    """Published silver of `hour` -> gold facts and findings, and gold.incidents and
    gold.incident_history rebuilt from the published findings and host-hours of the other hours plus
    this hour's, gated. Returns the hour's incidents (hour_incidents) and the gate's report."""
    return _settled(gold_window(spark, [hour], inventory_path, lakehouse, thresholds_path)[hour])


def gold_window(spark: SparkSession, hours: list[datetime], inventory_path: str, lakehouse: Lakehouse,
                thresholds_path: str | None = None) -> dict:
    """Published silver of `hours` -> their gold tables computed at once (one plan per table), each
    hour in time order audited with the incident lifecycle rebuilt from the findings and host-hours as
    they will be published, then the hours that passed published together. Per hour: (its incidents,
    gate report), or the QualityGateError of its failed gate."""
    limits = thresholds_mod.load(thresholds_path)
    inventory = load_inventory(inventory_path)
    landed = [x for hour in hours for x in landing.read_manifests(hour, lakehouse)]
    with locks.hours_lock(hours, lakehouse, "gold job"), small_input(spark, landed):
        try:
            inputs = {name: lake.read(spark, f"silver.{name}", lakehouse, hours) for name in GOLD_INPUTS}
            inputs["kafka_events"] = gold_facts.kafka_events_read(inputs["kafka_events"])
            inputs = materialize_all(inputs)
            minutes = limits["incidents.lookback_minutes"]
            earlier = materialize_all(read_lookback(spark, min(hours), minutes, lakehouse)) if minutes else {}
            facts = facts_of(hours, silver.hosts_frame(spark, inventory), inputs, minutes, earlier)
            window = gold_tables(facts, limits)
            history = {name: lake.read(spark, name, lakehouse) if lake.exists(spark, name, lakehouse) else None
                       for name in LIFECYCLE_INPUTS}
            out, passed, lifecycle = {}, [], {}
            for hour in hours:
                outputs = of_hours(window, hour)
                # the findings and host-hours as they will be published: this hour's and the window's
                # hours passed so far replace theirs, every other hour keeps what is published
                replaced = lake.hour_predicate(passed + [hour])
                inputs = {name: _as_published(window[name], history[name], replaced) for name in LIFECYCLE_INPUTS}
                incidents, changes = gold_incidents.lifecycle(
                    inputs["gold.incident_findings"], inputs["gold.broker_health_hourly"],
                    limits["incidents.resolve_after_hours"])
                outputs["gold.incidents"], outputs["gold.incident_history"] = materialize_all(
                    {"gold.incidents": incidents, "gold.incident_history": changes}).values()
                try:
                    report = audit(spark, "gold", hour, outputs, lakehouse, inventory_path)
                except QualityGateError as exc:
                    out[hour] = exc
                    continue
                passed.append(hour)
                lifecycle = {name: outputs[name] for name in LIFECYCLE_TABLES}
                out[hour] = (hour_incidents(outputs["gold.incidents"], outputs["gold.incident_findings"]), report)
            _publish_passed(dict(window, **lifecycle), passed, out, lakehouse)
            return out
        finally:
            spark.catalog.clearCache()


LIFECYCLE_INPUTS = ("gold.incident_findings", "gold.broker_health_hourly")
LIFECYCLE_TABLES = ("gold.incidents", "gold.incident_history")


def _as_published(window: DataFrame, published: DataFrame | None, replaced: str) -> DataFrame:
    """The rows of an hourly table as publishing the window's `replaced` hours will leave it."""
    rows = window.where(F.expr(replaced))
    return rows if published is None else published.where(~F.expr(replaced)).unionByName(
        rows, allowMissingColumns=True).select(*rows.columns)


def hour_incidents(incidents: DataFrame, findings: DataFrame) -> list[dict]:
    """The incidents an hour's findings belong to (the gold step's log lists them), most severe first."""
    keys = findings.select(*gold_incidents.KEY, "hour").distinct()
    hit = incidents.join(keys, gold_incidents.KEY).where(F.col("hour").between(F.col("first_hour"), F.col("last_hour")))
    return [r.asDict() for r in hit.drop("hour").distinct().orderBy(
        gold_incidents.severity_rank().desc(), "first_seen", *gold_incidents.KEY).collect()]


def run_hour(spark: SparkSession, hour: datetime, inventory_path: str, lakehouse: Lakehouse,
             thresholds_path: str | None = None, echo=None) -> dict:
    """Bronze, silver and gold of one (already pulled) hour, each gated: the DAG's three Spark steps
    in one session. `echo(text)` receives each gate's summary. Raises QualityGateError."""
    return _settled(run_window(spark, [hour], inventory_path, lakehouse, thresholds_path, echo)[hour])


def run_window(spark: SparkSession, hours: list[datetime], inventory_path: str, lakehouse: Lakehouse,
               thresholds_path: str | None = None, echo=None) -> dict:
    """Bronze, silver and gold of (already pulled) hours, each hour gated per layer as the DAG gates
    it: bronze hour by hour, then silver and gold each computed once for the hours that passed the
    layer below (a window's plan costs about what one hour's does) and published hour by hour in time
    order. An hour that fails a gate (or whose job raises) is left out of the layers above it; the
    other hours go on. If computing a window raises, its hours are retried one by one, so one hour's
    input cannot fail the others. `echo(text)` receives each gate's summary.

    Per hour: {"bronze_records", "reconciliation", "incidents"} (jobs.hour_incidents), or the exception
    that stopped it."""
    echo = echo or log.info
    out: dict = {hour: {} for hour in sorted(hours)}

    def settle(key: str, outcomes: dict) -> None:
        for hour, outcome in sorted(outcomes.items()):
            if isinstance(outcome, BaseException):
                out[hour] = outcome
            else:
                out[hour][key], report = outcome
                echo(report.summary())

    def going() -> list[datetime]:
        return [hour for hour, outcome in out.items() if not isinstance(outcome, BaseException)]

    settle("bronze_records", {hour: _outcome(run_bronze, spark, hour, lakehouse) for hour in going()})
    for key, window_fn, args in (("reconciliation", silver_window, (inventory_path, lakehouse)),
                                 ("incidents", gold_window, (inventory_path, lakehouse, thresholds_path))):
        hours_left = going()
        if not hours_left:
            break
        interrupt.check()
        try:
            outcomes = window_fn(spark, hours_left, *args)
        except Exception as exc:
            interrupt.check()     # a job the signal cancelled: not a failed window
            if len(hours_left) == 1:
                outcomes = {hours_left[0]: exc}
            else:
                log.warning("%s of %d hours failed (%s); hour by hour instead", key, len(hours_left), exc)
                outcomes = {hour: _outcome(window_fn, spark, [hour], *args, of=hour) for hour in hours_left}
        settle(key, outcomes)
    return out


def _outcome(fn, *args, of: datetime | None = None):
    """fn(*args), or the exception it raised; `of`: take that hour's outcome of a window function."""
    interrupt.check()
    try:
        result = fn(*args)
    except Exception as exc:
        interrupt.check()         # a job the signal cancelled: not a failed hour
        return exc
    return result[of] if of is not None else result
