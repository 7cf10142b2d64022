"""DAG integrity of dags/fleet_health_hourly.py (docs/architecture.md: hourly pull -> bronze -> silver -> gold
in one SparkSubmitOperator, each layer computed, validated (GX) and only then published, the processed
hour explicit). Parses with Airflow only, no Spark."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pendulum
import pytest

PROJECT = Path(__file__).resolve().parents[1]
DAGS = PROJECT / "dags"
DAG_FILE = DAGS / "fleet_health_hourly.py"
DAG_ID = "fleet_health_hourly"
LAYERS_TASK = "bronze_silver_gold"


@pytest.fixture(scope="module")
def dagbag():
    os.environ["AIRFLOW__CORE__LOAD_EXAMPLES"] = "False"
    assert os.environ.get("AIRFLOW_HOME"), "AIRFLOW_HOME must be set (scripts/env.sh or tests/conftest.py)"
    # Airflow 3.3: DagBag lives in airflow.dag_processing.dagbag (no include_examples argument any more).
    from airflow.dag_processing.dagbag import DagBag

    return DagBag(dag_folder=str(DAGS))


@pytest.fixture(scope="module")
def dag(dagbag):
    assert DAG_ID in dagbag.dags, f"{DAG_ID} not in {sorted(dagbag.dags)}; import errors: {dagbag.import_errors}"
    return dagbag.dags[DAG_ID]


def test_no_import_errors(dagbag):
    assert dagbag.import_errors == {}
    assert DAG_ID in dagbag.dag_ids


def test_documented_and_tagged(dag):
    assert "fleethealth" in dag.tags
    assert dag.doc_md and "fleet_health_hourly" in dag.doc_md
    assert dag.max_active_runs == 1


def test_every_task_retries_at_least_twice(dag):
    assert dag.default_args["retries"] >= 2
    for task in dag.tasks:
        assert task.retries >= 2, task.task_id


def test_task_ids_and_dependency_order(dag):
    assert sorted(dag.task_ids) == sorted(["resolve_hour", "list_hosts", "pull", LAYERS_TASK, "notify", "report",
                                           "hour_failed"])
    up = {t.task_id: sorted(t.upstream_task_ids) for t in dag.tasks}
    assert up == {
        "resolve_hour": [],
        "list_hosts": [],
        "pull": ["list_hosts", "resolve_hour"],
        LAYERS_TASK: ["pull", "resolve_hour"],
        "notify": [LAYERS_TASK],
        "report": [LAYERS_TASK, "resolve_hour"],
        "hour_failed": [LAYERS_TASK, "resolve_hour"],
    }
    assert dag.get_task("notify").trigger_rule == "all_success"   # after the gold gate passed
    assert dag.get_task("report").trigger_rule == "all_success"
    assert dag.get_task("hour_failed").trigger_rule == "one_failed"   # the layers failed after their retries


def test_notify_cannot_hold_the_next_hour(dag):
    """max_active_runs=1: a slow receiver must not stall every later hour. notify sends for at most
    FLEETHEALTH_NOTIFY_TIMEOUT_S (each send its own deadline) and the task is stopped a minute after."""
    from fleethealth.runtime import config

    assert dag.max_active_runs == 1
    timeout = dag.get_task("notify").execution_timeout
    assert timeout == timedelta(seconds=config.notify_timeout_s() + 60)
    assert timeout * (dag.get_task("notify").retries + 1) < timedelta(hours=1)


def test_pull_is_mapped_per_host(dag):
    from airflow.sdk.definitions.mappedoperator import MappedOperator

    pull = dag.get_task("pull")
    assert isinstance(pull, MappedOperator)
    # @task mapping keeps .expand() kwargs in op_kwargs_expand_input, .partial() ones in partial_kwargs
    expanded = pull.op_kwargs_expand_input.value
    assert list(expanded) == ["host"]
    assert expanded["host"].operator.task_id == "list_hosts"
    assert pull.partial_kwargs["op_kwargs"]["hour"].operator.task_id == "resolve_hour"
    # a stalled host must not hold the hour: every try has a deadline
    assert pull.partial_kwargs["execution_timeout"] == timedelta(seconds=900)


def test_bronze_runs_even_if_one_host_fails(dag):
    """One unreachable host never blocks the rest (docs/targets.md); an hour resolve_hour refused
    (after the current one) runs nothing after it: resolve_hour is the layers' upstream too."""
    assert dag.get_task(LAYERS_TASK).trigger_rule == "all_done_min_one_success"


def test_the_layers_are_one_spark_submit(dag):
    """One JVM an hour: spark/layers.py runs bronze, silver and gold, each behind its gate."""
    from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

    task = dag.get_task(LAYERS_TASK)
    assert isinstance(task, SparkSubmitOperator)
    assert task._conn_id == "spark_default"
    app = Path(task.application)
    assert app == PROJECT / "spark" / "layers.py"
    assert app.is_file()
    args = list(task.application_args)
    assert args[args.index("--hour") + 1] == "{{ ti.xcom_pull(task_ids='resolve_hour') }}"
    assert "--lakehouse" in args and "--inventory" in args
    assert "--layers" not in args   # all three, in order


def test_layers_argument():
    from fleethealth.pipeline import submit as jobargs

    assert jobargs.layers("gold,bronze") == ["bronze", "gold"]
    assert jobargs.layers("silver") == ["silver"]
    for bad in ("", "platinum", "bronze,platinum"):
        with pytest.raises(Exception, match="layers are some of bronze,silver,gold"):
            jobargs.layers(bad)


def test_gold_publishes_assets_for_gold_tables(dag):
    """The task publishes the gold tables (once the gold gate passed), so the Assets are its own."""
    from airflow.sdk import Asset

    outlets = dag.get_task(LAYERS_TASK).outlets
    assert outlets and all(isinstance(a, Asset) for a in outlets)
    names = {a.name for a in outlets}
    assert "fleethealth.gold.incidents" in names
    # one Asset per gold table, and names independent of the lakehouse path (a lakehouse moved to
    # another folder must not turn the Assets inactive by a name/URI clash)
    from fleethealth.lake import tables as lake
    assert names == {f"fleethealth.{q}" for q, t in lake.TABLES.items() if t.layer == "gold" and t.gated}


def test_hourly_cron_data_interval_timetable(dag):
    from airflow.timetables.interval import CronDataIntervalTimetable

    assert isinstance(dag.timetable, CronDataIntervalTimetable)
    assert dag.timetable._expression == "0 * * * *"
    interval = dag.timetable.infer_manual_data_interval(run_after=pendulum.datetime(2026, 11, 20, 11, tz="UTC"))
    assert (interval.end - interval.start).total_seconds() == 3600


@pytest.mark.parametrize("run_after", [pendulum.datetime(2026, 11, 20, 11, tz="UTC"),
                                       pendulum.datetime(2026, 11, 20, 11, 37, tz="UTC")])
def test_manual_run_interval_resolves_to_previous_hour(dag, run_after):
    """The processed hour is explicit; a manual run at/after 11:00Z processes 10:00Z."""
    from fleethealth.lake.hours import processed_hour

    interval = dag.timetable.infer_manual_data_interval(run_after=run_after)
    hour = processed_hour(None, interval.start, interval.end, run_after)
    assert hour == pendulum.datetime(2026, 11, 20, 10, tz="UTC")


def test_resolve_hour_task_callable(dag):
    """The task body itself: data interval -> ISO hour; the `hour` param wins."""
    fn = dag.get_task("resolve_hour").python_callable
    interval = dag.timetable.infer_manual_data_interval(run_after=pendulum.datetime(2026, 11, 20, 11, tz="UTC"))
    assert fn(params={"hour": None}, data_interval_start=interval.start, data_interval_end=interval.end,
              logical_date=interval.end) == "2026-11-20T10:00:00+00:00"
    zero = pendulum.datetime(2026, 11, 20, 11, tz="UTC")
    assert fn(params={"hour": None}, data_interval_start=zero, data_interval_end=zero,
              logical_date=zero) == "2026-11-20T10:00:00+00:00"
    assert fn(params={"hour": "2026-11-19T23:00Z"}, data_interval_start=zero, data_interval_end=zero,
              logical_date=zero) == "2026-11-19T23:00:00+00:00"


def test_report_task_refreshes_the_last_24_hours_into_the_lakehouse(dag, tmp_path):
    import report_lakehouse

    root = report_lakehouse.build(tmp_path / "lakehouse", with_jmx=False)
    index = dag.get_task("report").python_callable(hour="2026-11-20T12:00:00+00:00", params={"lakehouse": str(root)})
    assert index == str(root / "report" / "index.html")
    assert "window 2026-11-19 13:00Z – 2026-11-20 13:00Z (24 h)" in Path(index).read_text()
    assert (root / "report" / "cluster-pm3-dead-cleaner.html").is_file()


def test_hour_failed_task_tells_every_channel_why(dag, tmp_path):
    """Issue 62 item 5: when the layers fail, every channel gets `hour_failed` with what the lakehouse shows
    of why (a quality gate's staged tables)."""
    from realservers import Receiver

    from fleethealth.lake.catalog import Lakehouse

    hook = Receiver()
    try:
        inventory = tmp_path / "inventory.yaml"
        inventory.write_text("clusters:\n  - name: c\n    root: fleet\n    hosts:\n"
                             "      - {host: k1, role: kafka, broker_id: 1, kafka_version: 3.6.0}\n"
                             f"notifications:\n  - {{name: oncall, webhook: '{hook.url}/hook'}}\n")
        lakehouse = tmp_path / "lakehouse"
        staged = Path(Lakehouse.at(lakehouse).staging(datetime(2026, 11, 20, 12, tzinfo=timezone.utc), "silver"))
        staged.mkdir(parents=True)
        summary = dag.get_task("hour_failed").python_callable(
            hour="2026-11-20T12:00:00+00:00", params={"inventory": str(inventory), "lakehouse": str(lakehouse)})
        assert summary.startswith("hour 2026-11-20T12:00:00+00:00 failed: the quality gate validate_silver rejected it")
        [body] = hook.bodies
        assert (body["kind"], body["severity"], body["incident_id"]) == ("hour_failed", "critical", "hour_failed-20261120T12")
        assert body["summary"].startswith("OPENED CRITICAL fleethealth hour_failed: hour 2026-11-20 12:00Z failed, "
                                          "nothing of it published past its last good layer")
        assert f"validate_silver rejected it (its tables staged in {staged}" in body["summary"]
    finally:
        hook.stop()


def test_list_hosts_task_callable(dag, tmp_path):
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text("clusters:\n  - name: c\n    root: fleet\n    hosts:\n"
                         "      - {host: k1, role: kafka, broker_id: 1, kafka_version: 3.6.0}\n"
                         "      - {host: z1, role: zookeeper, zk_myid: 1}\n")
    assert dag.get_task("list_hosts").python_callable(params={"inventory": str(inventory)}) == ["k1", "z1"]


def test_parsing_does_not_import_pyspark_and_is_fast(tmp_path):
    """Parse-time hygiene: no Spark at import, and the DAG file's own code runs in well under a second.
    Airflow and the provider are imported before the clock starts: their import takes 3-8 s on a
    loaded 2-core machine (a bound on it failed a full test run), and it is not the DAG's to reduce."""
    code = (
        "import importlib.util, json, sys, time\n"
        "import airflow.sdk, airflow.timetables.interval\n"
        "import airflow.providers.apache.spark.operators.spark_submit\n"
        "t = time.perf_counter()\n"
        f"spec = importlib.util.spec_from_file_location('fleet_health_hourly', {str(DAG_FILE)!r})\n"
        "mod = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(mod)\n"
        "print(json.dumps({'seconds': time.perf_counter() - t, 'pyspark': 'pyspark' in sys.modules,\n"
        "                  'dag_id': mod.dag.dag_id}))\n"
    )
    env = dict(os.environ, AIRFLOW__CORE__LOAD_EXAMPLES="False")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120,
                          cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["dag_id"] == DAG_ID
    assert result["pyspark"] is False
    assert result["seconds"] < 2, result


@pytest.mark.parametrize("dag_id, name", [("fleet_health_hourly", "inventory"), ("fleet_health_hourly", "lakehouse"),
                                          ("fleet_health_maintenance", "lakehouse")])
def test_a_run_cannot_choose_which_files_are_read_or_written(dagbag, dag_id, name):
    """Run parameters that name paths are fixed by the deployment: a run's conf naming another path is
    refused when the run is created; the hour stays a run's choice."""
    import copy

    from airflow.sdk.definitions.param import ParamValidationError

    params = copy.deepcopy(dagbag.dags[dag_id].params)
    with pytest.raises(ParamValidationError, match=f"Invalid input for param {name}"):
        params.update({name: "/tmp/elsewhere"})
    params.update({name: params[name]})                    # the deployment's own value is fine
    if dag_id == "fleet_health_hourly":
        params.update({"hour": "2026-11-20T10:00:00+00:00"})
