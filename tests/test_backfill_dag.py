"""dags/fleet_health_backfill.py: a window of hours through Airflow in one Spark application (issue 49
item 3). The DAG's shape and its window check parse with Airflow only; its two paths after `window`
run through Airflow (dag.test) with the Spark step marked done, not started: a refused window runs
nothing after it, a failed host pull still lets the layers run (issue 59 item 3); the slow test runs
it whole (`airflow dags test`) and compares its gold tables with `fleethealth backfill` of the same window."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from realservers import free_port

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
                  "bronze_silver_gold": ["pull", "window"], "notify": ["bronze_silver_gold", "window"],
                  "report": ["bronze_silver_gold", "window"]}
    layers = dag.get_task("bronze_silver_gold")
    assert layers.application == str(PROJECT / "spark" / "backfill.py")
    # a host that failed is data_missing, not a lost window; a refused window runs nothing after it
    for task in ("bronze_silver_gold", "notify", "report"):
        assert dag.get_task(task).trigger_rule == "all_done_min_one_success"
    assert dag.max_active_runs == 1


def test_the_window_is_whole_hours_and_at_most_a_week(dag):
    window = dag.get_task("window").python_callable
    assert window(params={"from": "2026-11-20T10:00Z", "to": "2026-11-20T13:00Z"}) == [
        "2026-11-20T10:00:00+00:00", "2026-11-20T11:00:00+00:00", "2026-11-20T12:00:00+00:00"]
    with pytest.raises(ValueError, match="from 2026-11-20T10:30Z: not on the hour"):
        window(params={"from": "2026-11-20T10:30Z", "to": "2026-11-20T13:00Z"})
    with pytest.raises(ValueError, match="169 hours; a run backfills at most 168"):
        window(params={"from": "2026-11-01T00:00Z", "to": "2026-11-08T01:00Z"})
    ahead = datetime.now(timezone.utc) + timedelta(hours=5)
    with pytest.raises(ValueError, match=r"the window ends after the current hour .*; to is at most "):
        window(params={"from": f"{ahead:%Y-%m-%dT%H:00Z}", "to": f"{ahead + timedelta(hours=1):%Y-%m-%dT%H:00Z}"})


# dag.test() in a process of its own (Airflow's ORM and logging stay out of pytest's), the Spark step
# and the tasks after it marked success instead of run: a task is marked only once its trigger rule
# lets it run, so its final state says whether the run would have submitted, notified and reported
DAG_TEST = """
import json, sys
from airflow.dag_processing.dagbag import DagBag

dag = DagBag(dag_folder=sys.argv[1]).dags[sys.argv[2]]
run = dag.test(run_conf=json.loads(sys.argv[3]), mark_success_pattern="bronze_silver_gold|notify|report")
print("STATES " + json.dumps(sorted([ti.task_id, ti.map_index, ti.state] for ti in run.get_task_instances())))
"""


def dag_test(tmp_path: Path, window: dict) -> list[list]:
    """The final state of each task instance of a run of `window` over a fleet of two hosts: k1 (local
    files) and k9 (SFTP to a closed port: its pull fails at once)."""
    (tmp_path / "fleet" / "c1" / "k1" / "kafka").mkdir(parents=True)
    (tmp_path / "inventory.yaml").write_text(
        f"clusters:\n  - name: c1\n    root: {tmp_path / 'fleet'}\n    timezone: UTC\n    hosts:\n"
        "      - {host: k1, role: kafka, broker_id: 1, kafka_version: 3.6.1}\n"
        "      - {host: k9, role: kafka, broker_id: 9, kafka_version: 3.6.1, transport: sftp, ssh_conn_id: fleet_dead}\n")
    env = dict(os.environ, **{config.ENV_INVENTORY: str(tmp_path / "inventory.yaml"),
                              config.ENV_LAKEHOUSE: str(tmp_path / "lakehouse"), "FLEETHEALTH_PULL_RETRIES": "0",
                              "AIRFLOW_CONN_FLEET_DEAD": json.dumps({"conn_type": "ssh", "host": "127.0.0.1",
                                                                     "port": free_port(), "login": "fleet"})})
    proc = subprocess.run([sys.executable, "-c", DAG_TEST, str(PROJECT / "dags" / "fleet_health_backfill.py"), DAG_ID,
                           json.dumps(window)], env=env, capture_output=True, text=True, timeout=300)
    states = [line for line in proc.stdout.splitlines() if line.startswith("STATES ")]
    assert proc.returncode == 0 and states, (proc.stdout + proc.stderr)[-4000:]
    return json.loads(states[-1].removeprefix("STATES "))


def test_a_window_over_the_cap_runs_nothing_after_it(tmp_path):
    """169 hours (issue 59: `window` failed, and the Spark step still submitted the window, notify and
    report ran): now `window` fails and every later task is upstream_failed, nothing pulled."""
    states = dag_test(tmp_path, {"from": "2026-11-01T00:00Z", "to": "2026-11-08T01:00Z"})
    assert states == [["bronze_silver_gold", -1, "upstream_failed"], ["list_hosts", -1, "success"],
                      ["notify", -1, "upstream_failed"], ["pull", -1, "upstream_failed"],
                      ["report", -1, "upstream_failed"], ["window", -1, "failed"]]
    assert not (tmp_path / "lakehouse").exists()


def test_a_failed_host_pull_still_runs_the_layers_notify_and_report(tmp_path):
    """The data_missing promise through Airflow: k9's pull fails, k1's lands, and the Spark step,
    notify and report all run (here: are marked done, which Airflow does only when their rule lets them)."""
    states = dag_test(tmp_path, {"from": "2026-11-20T10:00Z", "to": "2026-11-20T11:00Z"})
    assert states == [["bronze_silver_gold", -1, "success"], ["list_hosts", -1, "success"],
                      ["notify", -1, "success"], ["pull", 0, "success"], ["pull", 1, "failed"],
                      ["report", -1, "success"], ["window", -1, "success"]]


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
