"""The silver job of a window of hours: the published bronze -> silver tables, each hour gated, the
hours that passed published together."""
from __future__ import annotations

from datetime import datetime

from pyspark.sql import DataFrame, SparkSession

from fleethealth.bronze import tables as bronze
from fleethealth.fleet.inventory import load_inventory
from fleethealth.lake import locks
from fleethealth.lake import staged as lake_staged
from fleethealth.lake import tables as lake
from fleethealth.lake.catalog import Lakehouse
from fleethealth.pull import landing
from fleethealth.quality.gate import audit, of_hours, publish_passed
from fleethealth.quality.suites import QualityGateError
from fleethealth.runtime.frames import materialize
from fleethealth.runtime.session import small_input
from fleethealth.silver import tables as silver


def window(spark: SparkSession, hours: list[datetime], inventory_path: str, lakehouse: Lakehouse) -> dict:
    """Published bronze.records of `hours` -> their silver tables computed at once (one plan per
    table: silver keeps each row's hour), each hour audited on its own, then the hours that passed
    published together. Per hour: (reconciliation rows, gate report), or the QualityGateError of its
    failed gate."""
    inventory = load_inventory(inventory_path)
    landed = sum(x.size for hour in hours for x in landing.read_manifests(hour, lakehouse))
    with locks.hours_lock(hours, lakehouse, "silver job"), small_input(spark, landed, compiled=True):
        # not materialized: each part reads its own source's rows (and reconciliation four columns)
        # from the Parquet files, less than a copy of the whole hour costs to make and to read back
        records = lake.read_listed(spark, "bronze.records", lakehouse, hours)
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
            publish_passed(tables, passed, out, lakehouse, staged)
            return out
        finally:
            lake_staged.discard_all(staged)
            spark.catalog.clearCache()


def bronze_files(spark: SparkSession, hour, lakehouse: Lakehouse) -> DataFrame:
    """The published bronze.files of `hour` (or hours; empty for a lakehouse written before it existed)."""
    return lake.read_or_empty(spark, "bronze.files", bronze.FILES_SCHEMA, lakehouse, hour)


def reconciliation(records: DataFrame, tables: dict, files: DataFrame) -> DataFrame:
    """silver.reconciliation of the silver `tables` (name -> frame) against the bronze hour
    (`records`) and its files."""
    return silver.reconciliation(records, tables, tables["silver.quarantine"], files)
