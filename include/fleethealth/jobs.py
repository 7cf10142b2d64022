"""The hourly jobs, one function per layer, each ending in the layer's quality gate
(write-audit-publish, validated before the one write).

Each layer job reads the *published* hour of the layer below and computes the layer's tables
(materialized: computed once); `gate(layer)` validates them with their GX suites, records the
results in gold.quality_results (and Data Docs), and only if no critical expectation failed writes
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
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from fleethealth import bronze, lake, locks, pull, quality, silver, thresholds as thresholds_mod
from fleethealth.gold import fact_tables
from fleethealth.gold import facts as gold_facts
from fleethealth.gold import incidents as gold_incidents
from fleethealth.gold.detectors import DETECTORS, detect_all
from fleethealth.inventory import load_inventory
from fleethealth.quality import QualityGateError
from fleethealth.session import local_frame

log = logging.getLogger("fleethealth.jobs")
WRITE_THREADS = 4
DETECTOR_KINDS = frozenset(DETECTORS)
LAYERS = ("bronze", "silver", "gold")
# checks over several tables of a layer: a derived frame validated with expectations/<name>.json
COMPLETENESS = "gold.completeness"


def _concurrently(fn, items) -> list:
    """Run fn(item) for several tables at once: Spark runs jobs of several threads concurrently, and
    most of a small write is driver-side work (planning, Delta commit) that overlaps well."""
    with ThreadPoolExecutor(max_workers=WRITE_THREADS) as pool:
        return [future.result() for future in [pool.submit(fn, item) for item in items]]


def _run_all(calls) -> None:
    """Call each of `calls` at once (e.g. the writes of a layer)."""
    _concurrently(lambda call: call(), calls)


def materialize(df: DataFrame) -> DataFrame:
    """Compute `df` once and cut its lineage. The optimizer of every plan that scans a Delta table
    runs Delta's file pruning again (about a second per plan, far more on a cold JVM); the layer
    functions plan the same hour dozens of times, so they start from the materialized hour."""
    return df.localCheckpoint(eager=True)


def materialize_all(frames: dict) -> dict:
    return dict(zip(frames, _concurrently(materialize, frames.values())))


# ------------------------------------------------------------------------------------ the layers
@locks.holding_hour("bronze job")
def run_bronze(spark: SparkSession, hour: datetime, lakehouse=None) -> tuple[int, "GateReport"]:
    """Landing files of `hour` -> bronze.records and bronze.files, gated. Returns the record count
    and the gate's report."""
    landed = pull.read_manifests(hour, lakehouse)
    records = materialize(bronze.records(spark, landed, pull.landing_hour_dir(hour, lakehouse), hour))
    try:
        files = materialize(bronze.files(spark, landed, records, hour))
        report = gate(spark, "bronze", hour, {"bronze.records": records, "bronze.files": files}, lakehouse)
        return records.count(), report
    finally:
        spark.catalog.clearCache()


@locks.holding_hour("silver job")
def run_silver(spark: SparkSession, hour: datetime, inventory_path: str, lakehouse=None
               ) -> tuple[list[dict], "GateReport"]:
    """Published bronze.records of `hour` -> silver tables, quarantine and reconciliation, gated.
    Returns the reconciliation rows and the gate's report."""
    return _settled(silver_window(spark, [hour], inventory_path, lakehouse)[hour])


def silver_window(spark: SparkSession, hours: list[datetime], inventory_path: str, lakehouse=None) -> dict:
    """Published bronze.records of `hours` -> their silver tables computed at once (one plan per
    table: silver keeps each row's hour), each hour audited on its own, then the hours that passed
    published together. Per hour: (reconciliation rows, gate report), or the QualityGateError of its
    failed gate."""
    inventory = load_inventory(inventory_path)
    with locks.hours_lock(hours, lakehouse, "silver job"):
        records = materialize(lake.read(spark, "bronze.records", lakehouse, hours))
        files = bronze_files(spark, hours, lakehouse)
        try:
            tables = materialize_all(silver.build(spark, records, inventory, files))
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
            _publish_passed(tables, passed, out, lakehouse)
            return out
        finally:
            spark.catalog.clearCache()


def of_hours(tables: dict, hours) -> dict:
    """The rows of `hours` (or of one hour) of each hourly table of a window (a table that is not
    hourly as it is)."""
    return {name: df.where(F.expr(lake.hour_predicate(hours))) if lake.table(name).hourly else df
            for name, df in tables.items()}


def _publish_passed(tables: dict, passed: list[datetime], out: dict, lakehouse=None) -> None:
    """Publish the rows of the hours of a window (`tables`) that passed their audit, at once."""
    if passed:
        publish(of_hours(tables, passed), passed, lakehouse, [out[hour][1] for hour in passed])
        for hour in passed:
            out[hour][1].published = [name for name in lake.TABLES if name in tables]


def _settled(outcome):
    """A window function's outcome for one hour: its result, or the exception that failed it, raised."""
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome


def bronze_files(spark: SparkSession, hour, lakehouse=None) -> DataFrame:
    """The published bronze.files of `hour` (or hours; empty for a lakehouse written before it existed)."""
    return lake.read_or_empty(spark, "bronze.files", bronze.FILES_SCHEMA, lakehouse, hour)


def reconciliation(records: DataFrame, tables: dict, files: DataFrame) -> DataFrame:
    """silver.reconciliation of the silver `tables` (name -> frame) against the bronze hour
    (`records`) and its files."""
    return silver.reconciliation(records, tables, tables["silver.quarantine"], files)


GOLD_INPUTS = ("kafka_events", "jmx_samples", "threads", "partition_sizes", "reconciliation", "zk_events",
               "deadlocks")


def facts_of(hours, hosts: DataFrame, silver_tables: dict) -> gold_facts.Facts:
    """The Facts of an hour or a window of hours from their silver tables (`silver_tables`: GOLD_INPUTS
    name -> frame, rows of those hours)."""
    t = silver_tables
    return gold_facts.Facts(
        hours=hours, hosts=hosts, kafka_events=t["kafka_events"], jmx=t["jmx_samples"], threads=t["threads"],
        partition_sizes=t["partition_sizes"], reconciliation=t["reconciliation"], zk_events=t["zk_events"],
        deadlocks=t["deadlocks"])


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
    return {
        "gold.consumer_offsets_partitions": facts.offsets_partitions,
        "gold.log_cleaner_status": facts.cleaner_status,
        "gold.broker_health_hourly": facts.broker_health,
        **facts.derived,
        "gold.incident_findings": materialize(detect_all(facts, limits)),
    }


@locks.holding_hour("gold job")
def run_gold(spark: SparkSession, hour: datetime, inventory_path: str, lakehouse=None,
             thresholds_path: str | None = None) -> tuple[int, "GateReport"]:
    """Published silver of `hour` -> gold facts and findings, and gold.incidents rebuilt from the
    published findings of the other hours plus this hour's, gated. Returns the findings count and
    the gate's report."""
    return _settled(gold_window(spark, [hour], inventory_path, lakehouse, thresholds_path)[hour])


def gold_window(spark: SparkSession, hours: list[datetime], inventory_path: str, lakehouse=None,
                thresholds_path: str | None = None) -> dict:
    """Published silver of `hours` -> their gold tables computed at once (one plan per table), each
    hour in time order audited with gold.incidents rebuilt from the findings as they will be published,
    then the hours that passed published together. Per hour: (findings count, gate report), or the
    QualityGateError of its failed gate."""
    limits = thresholds_mod.load(thresholds_path)
    inventory = load_inventory(inventory_path)
    with locks.hours_lock(hours, lakehouse, "gold job"):
        try:
            inputs = materialize_all({name: lake.read(spark, f"silver.{name}", lakehouse, hours)
                                      for name in GOLD_INPUTS})
            window = gold_tables(facts_of(hours, silver.hosts_frame(spark, inventory), inputs), limits)
            published = (lake.read(spark, "gold.incident_findings", lakehouse)
                         if lake.exists(spark, "gold.incident_findings", lakehouse) else None)
            out, passed, incidents = {}, [], None
            for hour in hours:
                outputs = of_hours(window, hour)
                # the findings as they will be published: this hour's and the window's hours passed
                # so far replace theirs, every other hour keeps what is published
                replaced = lake.hour_predicate(passed + [hour])
                all_findings = window["gold.incident_findings"].where(F.expr(replaced))
                if published is not None:
                    all_findings = published.where(~F.expr(replaced)).unionByName(all_findings)
                outputs["gold.incidents"] = materialize(gold_incidents.merge(all_findings))
                try:
                    report = audit(spark, "gold", hour, outputs, lakehouse, inventory_path)
                except QualityGateError as exc:
                    out[hour] = exc
                    continue
                passed.append(hour)
                incidents = outputs["gold.incidents"]
                out[hour] = (outputs["gold.incident_findings"].count(), report)
            _publish_passed(dict(window, **{"gold.incidents": incidents}), passed, out, lakehouse)
            return out
        finally:
            spark.catalog.clearCache()


# ------------------------------------------------------------------------------------- the gate
@dataclass
class GateReport:
    layer: str
    hour: datetime
    results: list = field(default_factory=list)
    published: list = field(default_factory=list)
    data_docs: Path | None = None
    validated: list = field(default_factory=list)   # the tables (and audits) the results are of
    rows: DataFrame | None = None                   # the results as gold.quality_results rows

    def summary(self) -> str:
        failed = [r for r in self.results if not r.success]
        text = (f"validate_{self.layer} {self.hour.isoformat()}: {len(self.results)} expectations on "
                f"{len({r.table for r in self.results})} tables, {len(failed)} failed "
                f"({sum(r.critical for r in failed)} critical)")
        if self.published:
            text += f"; published {', '.join(self.published)}"
        return text


def data_docs_dir(lakehouse=None) -> Path | None:
    """Where Data Docs go, or None when FLEETHEALTH_DATA_DOCS=0 (validation still runs)."""
    return lake.quality_dir(lakehouse) if os.environ.get("FLEETHEALTH_DATA_DOCS", "1") != "0" else None


def audits(spark: SparkSession, layer: str, tables: dict, inventory_path: str | None) -> dict:
    """Derived frames checked across tables of a layer (validated, never stored)."""
    if layer != "gold" or inventory_path is None:
        return {}
    return {COMPLETENESS: completeness(silver.hosts_frame(spark, load_inventory(inventory_path)),
                                       tables["gold.broker_health_hourly"],
                                       tables["gold.incident_findings"])}


def completeness(hosts: DataFrame, health: DataFrame, findings: DataFrame) -> DataFrame:
    """One row per inventory host and expected source: did it arrive, or is a data_missing finding
    reporting it? `unreported` (host:source) is set when neither: no data must never look healthy."""
    expected = hosts.select("cluster", "host", F.explode("expect").alias("source"))
    arrived = health.select("cluster", "host", F.explode("sources_arrived").alias("source"),
                            F.lit(True).alias("arrived"))
    reported = (findings.where(F.col("kind") == "data_missing")
                .select("cluster", F.col("entity").alias("_entity"), F.lit(True).alias("reported")))
    out = (expected.join(arrived, ["cluster", "host", "source"], "left")
           .withColumn("_entity", F.concat_ws(":", "host", "source"))
           .join(reported, ["cluster", "_entity"], "left"))
    ok = F.coalesce("arrived", F.lit(False)) | F.coalesce("reported", F.lit(False))
    return out.select("cluster", "host", "source",
                      F.coalesce("arrived", F.lit(False)).alias("arrived"),
                      F.coalesce("reported", F.lit(False)).alias("reported"),
                      F.when(~ok, F.col("_entity")).alias("unreported"))


@locks.holding_hour("validate_{layer}")
def gate(spark: SparkSession, layer: str, hour: datetime, tables: dict, lakehouse=None,
         inventory_path: str | None = None) -> GateReport:
    """The quality gate of `layer` for `hour` on the layer's computed tables (name -> materialized
    frame): validate them (and the layer's audits), record the results, then either publish them
    (one write per table) or, on a critical failure, stage them for inspection and raise
    QualityGateError (nothing published)."""
    report = audit(spark, layer, hour, tables, lakehouse, inventory_path)
    publish(tables, [hour], lakehouse, [report])
    report.published = lake.layer_tables(layer)
    return report


@locks.holding_hour("validate_{layer}")
def audit(spark: SparkSession, layer: str, hour: datetime, tables: dict, lakehouse=None,
          inventory_path: str | None = None) -> GateReport:
    """The gate without its publishing: validate the hour's tables and the layer's audits; on a
    critical failure record the results, stage the tables for inspection and raise QualityGateError.
    The results of an hour that passed are recorded when it is published (`publish(..., reports)`,
    in the same batch of writes). A window validates each of its hours so, then publishes those that
    passed at once."""
    if layer not in LAYERS:
        raise ValueError(f"unknown layer {layer!r}; one of {', '.join(LAYERS)}")
    names = lake.layer_tables(layer)
    if sorted(tables) != sorted(names):
        raise ValueError(f"the {layer} gate needs exactly the tables {', '.join(names)}; got {', '.join(tables)}")
    frames = dict(tables, **materialize_all(audits(spark, layer, tables, inventory_path)))
    docs = data_docs_dir(lakehouse)
    report = GateReport(layer, hour, data_docs=docs / "index.html" if docs else None)
    report.results = quality.validate_tables(frames, hour=hour, data_docs_dir=docs, persist=False)
    report.validated = list(frames)
    report.rows = local_frame(spark, quality.results_rows(report.results, hour), quality.RESULTS_SCHEMA_DDL)
    log.info(report.summary())
    lake.drop_staging(hour, layer, lakehouse)   # a rejected earlier attempt of this hour
    try:
        quality.enforce(report.results)
    except quality.QualityGateError:
        _run_all([lambda: record([report], lakehouse)] + [
            lambda item=item: lake.stage(item[1], item[0], hour, lakehouse) for item in tables.items()])
        raise
    return report


def record(reports: list[GateReport], lakehouse=None) -> None:
    """Write the results of gates (of one layer, one or several hours) into gold.quality_results, in
    one commit replacing those hours' results of the validated tables."""
    validated = ", ".join(f"'{name}'" for name in dict.fromkeys(n for r in reports for n in r.validated))
    rows = reports[0].rows
    for report in reports[1:]:
        rows = rows.unionByName(report.rows)
    lake.write_hour(rows, "gold.quality_results", [r.hour for r in reports], lakehouse,
                    where=f"`table` IN ({validated})")


def publish(tables: dict, hours: list[datetime], lakehouse=None, reports: list[GateReport] = ()) -> None:
    """Write validated tables (name -> frame holding rows of `hours` only) into the published ones:
    one commit per table replacing those hours (a table that is not hourly, whole); `reports` (the
    gates that passed those hours) are recorded in gold.quality_results in the same batch of writes
    (a tiny Delta write costs about as much as a big one: together they overlap)."""
    def write(item):
        name, df = item
        if lake.table(name).hourly:
            lake.write_hour(df, name, hours, lakehouse)
        else:
            lake.overwrite(df, name, lakehouse)
    writes = [lambda item=item: write(item) for item in tables.items()]
    if reports:
        writes.insert(0, lambda: record(list(reports), lakehouse))
    _run_all(writes)


def run_hour(spark: SparkSession, hour: datetime, inventory_path: str, lakehouse=None,
             thresholds_path: str | None = None, echo=None) -> dict:
    """Bronze, silver and gold of one (already pulled) hour, each gated: the DAG's three Spark steps
    in one session. `echo(text)` receives each gate's summary. Raises QualityGateError."""
    return _settled(run_window(spark, [hour], inventory_path, lakehouse, thresholds_path, echo)[hour])


def run_window(spark: SparkSession, hours: list[datetime], inventory_path: str, lakehouse=None,
               thresholds_path: str | None = None, echo=None) -> dict:
    """Bronze, silver and gold of (already pulled) hours, each hour gated per layer as the DAG gates
    it: bronze hour by hour, then silver and gold each computed once for the hours that passed the
    layer below (a window's plan costs about what one hour's does) and published hour by hour in time
    order. An hour that fails a gate (or whose job raises) is left out of the layers above it; the
    other hours go on. If computing a window raises, its hours are retried one by one, so one hour's
    input cannot fail the others. `echo(text)` receives each gate's summary.

    Per hour: {"bronze_records", "reconciliation", "findings"}, or the exception that stopped it."""
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
                                 ("findings", gold_window, (inventory_path, lakehouse, thresholds_path))):
        hours_left = going()
        if not hours_left:
            break
        try:
            outcomes = window_fn(spark, hours_left, *args)
        except Exception as exc:
            if len(hours_left) == 1:
                outcomes = {hours_left[0]: exc}
            else:
                log.warning("%s of %d hours failed (%s); hour by hour instead", key, len(hours_left), exc)
                outcomes = {hour: _outcome(window_fn, spark, [hour], *args, of=hour) for hour in hours_left}
        settle(key, outcomes)
    return out


def _outcome(fn, *args, of: datetime | None = None):
    """fn(*args), or the exception it raised; `of`: take that hour's outcome of a window function."""
    try:
        result = fn(*args)
    except Exception as exc:
        return exc
    return result[of] if of is not None else result


def incident_summary(spark: SparkSession, lakehouse=None):
    """gold.incidents as the on-call engineer reads them: the most severe first, then by first seen."""
    from fleethealth.gold.incidents import SEVERITY_RANK

    rank = F.create_map(*[F.lit(x) for k, v in SEVERITY_RANK.items() for x in (k, v)])
    return (lake.read(spark, "gold.incidents", lakehouse)
            .orderBy(F.coalesce(rank[F.col("severity")], F.lit(0)).desc(), "first_seen", "cluster", "kind", "entity")
            .collect())
