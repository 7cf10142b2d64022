"""dags/fleet_health_backfill.py: a window of hours through Airflow in one Spark application (issue 49
item 3). The DAG's shape and its window check parse with Airflow only; the slow test runs it
(`airflow dags test`) and compares its gold tables with `fleethealth backfill` of the same window."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from fleethealth.lake import tables as lake
from fleethealth.lake.catalog import Lakehouse
from fleethealth.runtime import config

PROJECT = Path(__file__).resolve().parents[1]
DAG_ID = "fleet_health_backfill"


@pytest.fixture(scope="module")
def dag():
    os.environ["AIRFLOW__CORE__LOAD_EXAMPLES"] = "False"
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(PROJECT / "dags" / "fleet_health_backfill.py"))
    assert bag.import_errors == {}
    return bag.dags[DAG_ID]


def test_pull_per_host_then_one_spark_application_then_notify_and_report(dag):
    up = {t.task_id: sorted(t.upstream_task_ids) for t in dag.tasks}
    assert up == {"window": [], "list_hosts": [], "pull": ["list_hosts", "window"],
                  "bronze_silver_gold": ["pull"], "notify": ["bronze_silver_gold"], "report": ["bronze_silver_gold"]}
    layers = dag.get_task("bronze_silver_gold")
    assert layers.application == str(PROJECT / "spark" / "backfill.py")
    assert layers.trigger_rule == "all_done"       # a host that failed is data_missing, not a lost window
    assert dag.max_active_runs == 1


def test_the_window_is_whole_hours_and_at_most_a_week(dag):
    window = dag.get_task("window").python_callable
    assert window(params={"from": "2026-11-20T10:00Z", "to": "2026-11-20T13:00Z"}) == [
        "2026-11-20T10:00:00+00:00", "2026-11-20T11:00:00+00:00", "2026-11-20T12:00:00+00:00"]
    with pytest.raises(ValueError, match="from 2026-11-20T10:30Z: not on the hour"):
        window(params={"from": "2026-11-20T10:30Z", "to": "2026-11-20T13:00Z"})
    with pytest.raises(ValueError, match="169 hours; a run backfills at most 168"):
        window(params={"from": "2026-11-01T00:00Z", "to": "2026-11-08T01:00Z"})


def test_a_run_cannot_choose_which_files_are_read_or_written(dag):
    import copy

    from airflow.sdk.definitions.param import ParamValidationError

    for name in ("inventory", "lakehouse"):
        params = copy.deepcopy(dag.params)
        with pytest.raises(ParamValidationError, match=f"Invalid input for param {name}"):
            params.update({name: "/tmp/elsewhere"})


@pytest.mark.slow
def test_an_airflow_backfill_equals_fleethealth_backfill(spark, tmp_path):
    from fleethealth.cli.demo import SCENARIOS, START
    from fleethealth.simulate import simulate

    end = START + timedelta(hours=2)
    # only the MBeans fleethealth reads (the simulator's default adds 20,000 other samples a broker-hour:
    # minutes of both runs, nothing this comparison needs)
    inventory = simulate(tmp_path / "fleet", SCENARIOS, START, end, jmx_samples_per_broker_hour=0)
    window = {"from": START.isoformat(), "to": end.isoformat()}
    bin_dir = Path(sys.executable).parent
    env = dict(os.environ, **{config.ENV_INVENTORY: str(inventory), config.ENV_LAKEHOUSE: str(tmp_path / "dag")})
    dag_run = subprocess.run([str(bin_dir / "airflow"), "dags", "test", DAG_ID, "--conf", json.dumps(window)],
                             env=env, capture_output=True, text=True, timeout=1500)
    log = dag_run.stdout + dag_run.stderr
    assert dag_run.returncode == 0 and "state=success" in log, log[-3000:]
    assert f"backfill {START.isoformat()} - {end.isoformat()}: 2 of 2 hours published" in log
    cli = subprocess.run([str(bin_dir / "fleethealth"), "backfill", "--inventory", str(inventory),
                          "--lakehouse", str(tmp_path / "cli"), "--from", window["from"], "--to", window["to"]],
                         capture_output=True, text=True, timeout=1500)
    assert cli.returncode == 0, cli.stderr[-3000:]
    by_dag, by_cli = (lake.contents(spark, "gold", Lakehouse.at(tmp_path / x)) for x in ("dag", "cli"))
    assert by_dag.keys() == by_cli.keys() and "gold.incidents" in by_dag
    for name in by_dag:
        assert by_dag[name] == by_cli[name], name
    assert any("log_cleaner_dead" in row for row in map(" ".join, by_dag["gold.incidents"]))
