"""The hourly jobs, one function per layer, and the quality gate between layers (write-audit-publish).

Each layer job reads the *published* hour of the layer below, transforms it and writes the result
to staging (lake.stage); `audit_publish(layer)` validates the staged tables with their GX suites,
records the results in gold.quality_results (and Data Docs), and only if no critical expectation
failed publishes them (replaceWhere of the hour). A failed gate raises QualityGateError naming the
expectations and a few offending rows, and leaves the published tables exactly as they were.

spark/<layer>.py and spark/validate.py call these under spark-submit (the DAG: bronze ->
validate_bronze -> silver -> validate_silver -> gold -> validate_gold); `fleethealth run` calls the
same functions in one session for a window of hours (the backfill path, `run_hour`).
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


def materialize(df: DataFrame) -> DataFrame:
    """Compute `df` once and cut its lineage. The optimizer of every plan that scans a Delta table
    runs Delta's file pruning again (about a second per plan, far more on a cold JVM); the layer
    functions plan the same hour dozens of times, so they start from the materialized hour."""
    return df.localCheckpoint(eager=True)


def materialize_all(frames: dict) -> dict:
    return dict(zip(frames, _concurrently(materialize, frames.values())))


def stage_all(tables: dict, hour: datetime, lakehouse=None) -> None:
    _concurrently(lambda item: lake.stage(item[1], item[0], hour, lakehouse), tables.items())


# ------------------------------------------------------------------------------------ the layers
@locks.holding_hour("bronze job")
def run_bronze(spark: SparkSession, hour: datetime, lakehouse=None) -> int:
    """Landing files of `hour` -> staged bronze.records and bronze.files. Returns the record count."""
    landed = pull.read_manifests(hour, lakehouse)
    df = bronze.records(spark, landed, pull.landing_hour_dir(hour, lakehouse), hour)
    lake.stage(df, "bronze.records", hour, lakehouse)
    staged = lake.read_staged(spark, "bronze.records", hour, lakehouse)
    lake.stage(bronze.files(spark, landed, staged, hour), "bronze.files", hour, lakehouse)
    return staged.count()


@locks.holding_hour("silver job")
def run_silver(spark: SparkSession, hour: datetime, inventory_path: str, lakehouse=None) -> list[dict]:
    """Published bronze.records of `hour` -> staged silver tables, quarantine, reconciliation.
    Returns the reconciliation rows."""
    inventory = load_inventory(inventory_path)
    records = materialize(lake.read(spark, "bronze.records", lakehouse, hour))
    files = bronze_files(spark, hour, lakehouse)
    try:
        tables = materialize_all(silver.build(spark, records, inventory, files))
        stage_all(tables, hour, lakehouse)
        return stage_reconciliation(spark, hour, lakehouse, records, tables, files)
    finally:
        spark.catalog.clearCache()


def bronze_files(spark: SparkSession, hour: datetime, lakehouse=None) -> DataFrame:
    """The published bronze.files of `hour` (empty for a lakehouse written before it existed)."""
    return lake.read_or_empty(spark, "bronze.files", bronze.FILES_SCHEMA, lakehouse, hour)


def stage_reconciliation(spark: SparkSession, hour: datetime, lakehouse=None, records=None,
                         tables: dict | None = None, files=None) -> list[dict]:
    """silver.reconciliation of the silver tables (`tables`, as staged; default: read from staging)
    against the published bronze hour and its files."""
    if records is None:
        records = lake.read(spark, "bronze.records", lakehouse, hour)
    if files is None:
        files = bronze_files(spark, hour, lakehouse)
    staged = tables or {name: lake.read_staged(spark, name, hour, lakehouse)
                        for name in lake.layer_tables("silver") if name != "silver.reconciliation"}
    recon = silver.reconciliation(records, staged, staged["silver.quarantine"], files)
    lake.stage(recon, "silver.reconciliation", hour, lakehouse)
    rows = (lake.read_staged(spark, "silver.reconciliation", hour, lakehouse)
            .orderBy("cluster", "host", "source").collect())
    return [r.asDict() for r in rows]


GOLD_INPUTS = ("kafka_events", "jmx_samples", "threads", "partition_sizes", "reconciliation", "zk_events",
               "deadlocks")


def hour_facts(hour: datetime, hosts: DataFrame, silver_tables: dict) -> gold_facts.Facts:
    """The Facts of one hour from its silver tables (`silver_tables`: GOLD_INPUTS name -> frame)."""
    t = silver_tables
    return gold_facts.Facts(
        hour=hour, hosts=hosts, kafka_events=t["kafka_events"], jmx=t["jmx_samples"], threads=t["threads"],
        partition_sizes=t["partition_sizes"], reconciliation=t["reconciliation"], zk_events=t["zk_events"],
        deadlocks=t["deadlocks"])


def gold_tables(facts: gold_facts.Facts, limits: dict) -> dict[str, DataFrame]:
    """Every hourly gold table of one hour (all but gold.incidents), each computed once: the facts
    first, then the detectors that read them."""
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
             thresholds_path: str | None = None) -> int:
    """Published silver of `hour` -> staged gold facts and findings, and gold.incidents rebuilt from
    the published findings of the other hours plus this hour's. Returns the findings count."""
    limits = thresholds_mod.load(thresholds_path)
    inventory = load_inventory(inventory_path)
    inputs = materialize_all({name: lake.read(spark, f"silver.{name}", lakehouse, hour) for name in GOLD_INPUTS})
    outputs = gold_tables(hour_facts(hour, silver.hosts_frame(spark, inventory), inputs), limits)
    stage_all(outputs, hour, lakehouse)
    findings = outputs["gold.incident_findings"]
    all_findings = findings
    if lake.exists(spark, "gold.incident_findings", lakehouse):
        others = lake.read(spark, "gold.incident_findings", lakehouse).where(
            ~F.expr(lake.hour_predicate(hour)))
        all_findings = others.unionByName(findings)
    lake.stage(gold_incidents.merge(all_findings), "gold.incidents", hour, lakehouse)
    return findings.count()


# ------------------------------------------------------------------------------------- the gate
@dataclass
class GateReport:
    layer: str
    hour: datetime
    results: list = field(default_factory=list)
    published: list = field(default_factory=list)
    data_docs: Path | None = None

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


def audits(spark: SparkSession, layer: str, staged: dict, inventory_path: str | None) -> dict:
    """Derived frames checked across tables of a layer (validated, never stored)."""
    if layer != "gold" or inventory_path is None:
        return {}
    return {COMPLETENESS: completeness(silver.hosts_frame(spark, load_inventory(inventory_path)),
                                       staged["gold.broker_health_hourly"],
                                       staged["gold.incident_findings"])}


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
def audit_publish(spark: SparkSession, layer: str, hour: datetime, lakehouse=None,
                  inventory_path: str | None = None) -> GateReport:
    """The quality gate of `layer` for `hour`: validate the staged tables (and the layer's audits),
    record the results, raise QualityGateError on a critical failure (nothing published), else
    publish the staged tables and drop the staging folder."""
    if layer not in LAYERS:
        raise ValueError(f"unknown layer {layer!r}; one of {', '.join(LAYERS)}")
    names = lake.layer_tables(layer)
    staged = {name: lake.read_staged(spark, name, hour, lakehouse) for name in names}
    frames = dict(staged, **audits(spark, layer, staged, inventory_path))
    docs = data_docs_dir(lakehouse)
    report = GateReport(layer, hour, data_docs=docs / "index.html" if docs else None)
    report.results = quality.validate_tables(frames, hour=hour, data_docs_dir=docs)
    rows = spark.createDataFrame(quality.results_rows(report.results, hour), quality.RESULTS_SCHEMA_DDL)
    validated = ", ".join(f"'{name}'" for name in frames)
    lake.write_hour(rows, "gold.quality_results", hour, lakehouse, where=f"`table` IN ({validated})")
    log.info(report.summary())
    quality.enforce(report.results)
    _concurrently(lambda name: lake.publish(spark, name, hour, lakehouse), names)
    lake.drop_staging(hour, layer, lakehouse)
    report.published = names
    return report


def run_hour(spark: SparkSession, hour: datetime, inventory_path: str, lakehouse=None,
             thresholds_path: str | None = None, echo=None) -> dict:
    """Bronze, silver and gold of one (already pulled) hour, each gated: the DAG's six Spark steps
    in one session. `echo(text)` receives each gate's summary. Raises QualityGateError."""
    echo = echo or log.info
    out = {"bronze_records": run_bronze(spark, hour, lakehouse)}
    echo(audit_publish(spark, "bronze", hour, lakehouse).summary())
    out["reconciliation"] = run_silver(spark, hour, inventory_path, lakehouse)
    echo(audit_publish(spark, "silver", hour, lakehouse).summary())
    out["findings"] = run_gold(spark, hour, inventory_path, lakehouse, thresholds_path)
    echo(audit_publish(spark, "gold", hour, lakehouse, inventory_path).summary())
    return out


def incident_summary(spark: SparkSession, lakehouse=None):
    return (lake.read(spark, "gold.incidents", lakehouse)
            .orderBy(F.col("first_seen"), "cluster", "kind", "entity").collect())
