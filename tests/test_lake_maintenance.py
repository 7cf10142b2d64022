"""Maintenance: OPTIMIZE compacts an hour's small files into one, VACUUM keeps what time travel needs;
the daily DAG submits spark/maintenance.py on spark_default."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from fleethealth.lake.catalog import Lakehouse
from fleethealth.lake import maintenance
from fleethealth.lake import tables as lake
from fleethealth.runtime.frames import local_frame

PROJECT = Path(__file__).resolve().parents[1]


def test_optimize_compacts_small_files_and_keeps_rows(spark, lakehouse):
    path = lake.table("silver.reconciliation").path(Lakehouse.at(lakehouse))
    for i in range(3):  # three small writes -> three files
        local_frame(spark, [(i, "2026-11-20 10:00:00")], "n INT, hour STRING").coalesce(1) \
            .write.format("delta").mode("append").save(path)
    [done] = maintenance.maintain(spark, Lakehouse.at(lakehouse), tables=["silver.reconciliation", "gold.incidents"])
    assert done == maintenance.Maintained("silver.reconciliation", files_before=3, files_after=1,
                                          files_compacted=3)
    assert sorted(r.n for r in spark.read.format("delta").load(path).collect()) == [0, 1, 2]
    # within the retention the version before OPTIMIZE is still readable
    assert spark.read.format("delta").option("versionAsOf", 2).load(path).count() == 3


def test_negative_retention_is_refused(spark, lakehouse):
    with pytest.raises(ValueError, match="retain_hours"):
        maintenance.maintain(spark, Lakehouse.at(lakehouse), retain_hours=-1)


def test_maintenance_dag_submits_the_maintenance_job():
    os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
    from airflow.dag_processing.dagbag import DagBag
    from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

    bag = DagBag(dag_folder=str(PROJECT / "dags" / "fleet_health_maintenance.py"))
    assert bag.import_errors == {}
    dag = bag.dags["fleet_health_maintenance"]
    [task] = dag.tasks
    assert isinstance(task, SparkSubmitOperator) and task._conn_id == "spark_default"
    assert Path(task.application) == PROJECT / "spark" / "maintenance.py"
    assert task.retries >= 2
    assert "--retain-hours" in task.application_args
    # one retention, lake.maintenance's: VACUUM's and the Data Docs' (spark/maintenance.py prunes them)
    assert dag.params["retain_hours"] == maintenance.DEFAULT_RETAIN_HOURS
