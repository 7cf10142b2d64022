"""The bronze job of an hour: its landed files -> bronze.records and bronze.files, gated, published."""
from __future__ import annotations

from datetime import datetime

from pyspark.sql import SparkSession

from fleethealth.bronze import tables as bronze
from fleethealth.lake import locks
from fleethealth.lake import staged as lake_staged
from fleethealth.lake.catalog import Lakehouse
from fleethealth.pull import landing
from fleethealth.quality.gate import GateReport, gate
from fleethealth.runtime.frames import materialize
from fleethealth.runtime.session import small_input


@locks.holding_hour("bronze job")
def run(spark: SparkSession, hour: datetime, lakehouse: Lakehouse) -> tuple[int, GateReport]:
    """Landing files of `hour` -> bronze.records and bronze.files, gated. Returns the record count
    and the gate's report."""
    landed = landing.read_manifests(hour, lakehouse)
    read = bronze.read(spark, landed, lakehouse.landing(hour), hour)
    staged = {}
    try:
        with small_input(spark, sum(x.size for x in landed)):
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
