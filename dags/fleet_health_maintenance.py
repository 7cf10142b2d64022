"""
### fleet_health_maintenance

Daily: compact the small files the hourly runs leave (Delta `OPTIMIZE`) and remove files no
version of the last 7 days needs (`VACUUM`), on every lakehouse table; prune the GX Data Docs
(validation results and their pages) older than the same retention.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import DAG, Param

from fleethealth.lake.catalog import Lakehouse
from fleethealth.lake.maintenance import DEFAULT_RETAIN_HOURS
from fleethealth.runtime import config
from fleethealth.runtime.spark_conf import SecretsInFile, spark_conf

CATALOG = Lakehouse.from_settings()
LAKEHOUSE = str(CATALOG)


class SparkSubmit(SecretsInFile, SparkSubmitOperator):
    """Settings that may hold secrets reach spark-submit in a file only its owner reads."""


with DAG(
    dag_id=config.MAINTENANCE_DAG_ID,
    doc_md=__doc__,
    schedule="30 3 * * *",
    start_date=datetime(2026, 1, 1, tzinfo=timezone.utc),
    catchup=False,
    max_active_runs=1,
    tags=["fleethealth", "maintenance"],
    default_args={"retries": 2, "retry_delay": timedelta(minutes=10)},
    params={"lakehouse": Param(LAKEHOUSE, type="string", const=LAKEHOUSE,   # not a run's choice
                               description="the lakehouse folder (FLEETHEALTH_LAKEHOUSE; fixed per deployment)"),
            "retain_hours": Param(DEFAULT_RETAIN_HOURS, type="number", minimum=0,
                                  description="VACUUM retention, and the Data Docs'")},
) as dag:
    SparkSubmit(
        task_id="optimize_vacuum",
        application=str(config.spark_dir() / "maintenance.py"),
        conn_id=config.SPARK_CONN_ID,
        name="fleethealth-maintenance",
        conf=spark_conf(CATALOG.warehouse, tables=CATALOG.tables, short_lived=True, deployment=False),
        application_args=["--lakehouse", "{{ params.lakehouse }}",
                          "--retain-hours", "{{ params.retain_hours }}"],
    )
