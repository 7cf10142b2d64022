"""The hourly jobs, one function per layer: read the hour, call the transforms, validate, write.

spark/<layer>.py calls these under spark-submit (the DAG); `fleethealth run` calls the same
functions in one session for a window of hours (the backfill path).
"""
from __future__ import annotations

import logging
import os
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

from pyspark import StorageLevel
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from fleethealth import bronze, lake, pull, quality, silver, thresholds as thresholds_mod
from fleethealth.gold import facts as gold_facts
from fleethealth.gold import incidents as gold_incidents
from fleethealth.gold.detectors import DETECTORS, detect_all
from fleethealth.inventory import load_inventory

log = logging.getLogger("fleethealth.jobs")
WRITE_THREADS = 4
DETECTOR_KINDS = frozenset(DETECTORS)


def write_all(tables: dict, hour: datetime, lakehouse=None) -> None:
    """Write several tables' hour concurrently: Spark runs jobs of several threads at once, and most
    of a small write is driver-side work (planning, Delta commit) that overlaps well."""
    with ThreadPoolExecutor(max_workers=WRITE_THREADS) as pool:
        for future in [pool.submit(lake.write_hour, df, name, hour, lakehouse) for name, df in tables.items()]:
            future.result()


def run_bronze(spark: SparkSession, hour: datetime, lakehouse=None) -> int:
    """Landing files of `hour` -> bronze.records (the hour replaced). Returns the record count."""
    landed = pull.read_manifests(hour, lakehouse)
    df = bronze.records(spark, landed, pull.landing_hour_dir(hour, lakehouse), hour)
    lake.write_hour(df, "bronze.records", hour, lakehouse)
    return lake.read(spark, "bronze.records", lakehouse, hour).count()


def run_silver(spark: SparkSession, hour: datetime, inventory_path: str, lakehouse=None) -> list[dict]:
    """bronze.records of `hour` -> silver tables, quarantine, reconciliation. Returns reconciliation rows."""
    inventory = load_inventory(inventory_path)
    records = lake.read(spark, "bronze.records", lakehouse, hour).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        tables = silver.build(spark, records, inventory)
        write_all(tables, hour, lakehouse)
        written = {name: lake.read(spark, name, lakehouse, hour) for name in tables}
        recon = silver.reconciliation(records, written, written["silver.quarantine"])
        lake.write_hour(recon, "silver.reconciliation", hour, lakehouse)
    finally:
        spark.catalog.clearCache()
    rows = lake.read(spark, "silver.reconciliation", lakehouse, hour).orderBy("cluster", "host", "source").collect()
    return [r.asDict() for r in rows]


def run_gold(spark: SparkSession, hour: datetime, inventory_path: str, lakehouse=None,
             thresholds_path: str | None = None) -> int:
    """silver of `hour` -> gold facts and findings; gold.incidents rebuilt. Returns the findings count."""
    limits = thresholds_mod.load(thresholds_path)
    inventory = load_inventory(inventory_path)

    def hour_of(name):
        return lake.read(spark, name, lakehouse, hour)

    facts = gold_facts.Facts(
        hour=hour, hosts=silver.hosts_frame(spark, inventory),
        kafka_events=hour_of("silver.kafka_events"), jmx=hour_of("silver.jmx_samples"),
        threads=hour_of("silver.threads"), partition_sizes=hour_of("silver.partition_sizes"),
        reconciliation=hour_of("silver.reconciliation"))
    facts.offsets_partitions = gold_facts.offsets_partitions(facts).persist()
    facts.cleaner_status = gold_facts.cleaner_status(facts, limits["log_cleaner_dead.stale_ms"]).persist()
    facts.broker_health = gold_facts.broker_health(facts).persist()
    findings = detect_all(facts, limits).persist()
    # write-audit-publish: nothing of the hour is published unless the critical gates pass
    gate(spark, facts.offsets_partitions, "gold.consumer_offsets_partitions", hour, lakehouse)
    gate(spark, findings, "gold.incident_findings", hour, lakehouse)
    outputs = {
        "gold.consumer_offsets_partitions": facts.offsets_partitions,
        "gold.log_cleaner_status": facts.cleaner_status,
        "gold.broker_health_hourly": facts.broker_health,
        "gold.incident_findings": findings,
    }
    write_all(outputs, hour, lakehouse)
    all_findings = lake.read(spark, "gold.incident_findings", lakehouse)
    lake.overwrite(gold_incidents.merge(all_findings), "gold.incidents", lakehouse)
    n = lake.read(spark, "gold.incident_findings", lakehouse, hour).count()
    for df in outputs.values():
        df.unpersist()
    return n


def gate(spark: SparkSession, df, table: str, hour: datetime, lakehouse=None) -> None:
    """Validate `df` with its GX suite, record the results in gold.quality_results (and Data Docs),
    then raise QualityGateError if a critical expectation failed."""
    docs = lake.quality_dir(lakehouse) if os.environ.get("FLEETHEALTH_DATA_DOCS", "1") != "0" else None
    results = quality.validate(df, table, hour=hour, data_docs_dir=docs)
    rows = spark.createDataFrame(quality.results_rows(results, hour), quality.RESULTS_SCHEMA_DDL)
    lake.write_hour(rows, "gold.quality_results", hour, lakehouse, where=f"`table` = '{table}'")
    failed = [r for r in results if not r.success]
    log.info("%s %s: %d expectations, %d failed; Data Docs: %s", table, hour.isoformat(), len(results),
             len(failed), lake.quality_dir(lakehouse) / "index.html")
    quality.enforce(results)


def incident_summary(spark: SparkSession, lakehouse=None):
    return (lake.read(spark, "gold.incidents", lakehouse)
            .orderBy(F.col("first_seen"), "cluster", "kind", "entity").collect())
