"""Issue 33: the pipeline on a real Spark standalone cluster (a master and two one-core workers on
loopback, from the pip-installed pyspark). `fleethealth run --master spark://...` and the DAG's Spark
step (spark/layers.py through the SparkSubmitOperator's hook, spark_default pointed at the master)
each run one hour with executors in both workers' JVMs, and publish the tables a local[*] run of the
same hour publishes.

The workers start without PYTHONPATH (and without anything naming the jars): the Delta and engine
jars reach the executors by spark.jars, the fleethealth package by the zip build_session ships."""
from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from datetime import timedelta
from pathlib import Path

import pytest
from realservers import free_port

from fleethealth.cli import demo
from fleethealth.lake import tables as lake

pytestmark = [pytest.mark.spark, pytest.mark.slow]

HOUR = demo.START
SCENARIOS = "healthy,pm3-dead-cleaner"
FLEETHEALTH = str(Path(sys.executable).with_name("fleethealth"))
SPARK_CLASS = Path(__import__("pyspark").__file__).parent / "bin" / "spark-class"
INCLUDE = Path(__file__).resolve().parents[1] / "include"
# the only values a run writes about itself rather than about the fleet: when each gate validated
# (wall clock; every other column of every table is a function of the landed hour)
RUN_COLUMNS = {"gold.quality_results": {"validated_at"}}


def driver_env(**extra) -> dict:
    """The driver's environment: the test's (PYTHONPATH=include for the driver's own imports)."""
    return {**os.environ, "PYTHONPATH": str(INCLUDE), "PYSPARK_PYTHON": sys.executable,
            "SPARK_LOCAL_IP": "127.0.0.1", **extra}


def status(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/", timeout=5) as r:
        return json.load(r)


class Standalone:
    """A master and two workers (one core, 2 GB each), each its own process group."""

    def __init__(self, root: Path):
        self.root, self.procs = root, []
        self.port, self.ui = free_port(), free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.worker_uis = [free_port(), free_port()]

    def start(self) -> None:
        # nothing of the test's: executors must get fleethealth and the jars from the application
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPARK_CLASSPATH")}
        env["SPARK_LOCAL_IP"] = "127.0.0.1"
        self._start("master", env, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                    "--port", str(self.port), "--webui-port", str(self.ui))
        for i, ui in enumerate(self.worker_uis):
            self._start(f"worker{i}", env, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                        "--cores", "1", "--memory", "2g", "--webui-port", str(ui),
                        "--work-dir", str(self.root / f"work{i}"), self.url)
        self._wait(lambda: [w["state"] for w in status(self.ui)["workers"]] == ["ALIVE"] * 2, 120,
                   "two ALIVE workers")

    def _start(self, name: str, env: dict, *args: str) -> None:
        log = open(self.root / f"{name}.log", "wb")
        self.procs.append(subprocess.Popen([str(SPARK_CLASS), *args], env=env, stdout=log, stderr=subprocess.STDOUT,
                                           stdin=subprocess.DEVNULL, start_new_session=True, cwd=self.root))
        log.close()

    def _wait(self, check, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(p.poll() is not None for p in self.procs):
                break
            try:
                if check():
                    return
            except OSError:
                pass
            time.sleep(0.5)
        logs = "\n".join(f"--- {p.name}\n{p.read_text()[-3000:]}" for p in sorted(self.root.glob("*.log")))
        raise AssertionError(f"no {what} within {timeout} s\n{logs}")

    def application(self, name: str) -> dict:
        """The master's record of the one completed application called `name`."""
        found = []

        def completed():
            found[:] = [a for a in status(self.ui)["completedapps"] if a["name"] == name]
            return len(found) == 1
        self._wait(completed, 60, f"completed application {name}")
        return found[0]

    def executors_of(self, app_id: str) -> list[dict]:
        """Each worker's finished executors of the application."""
        return [[e for e in status(ui)["finishedexecutors"] if e["appid"] == app_id] for ui in self.worker_uis]

    def stop(self) -> None:
        for p in self.procs:       # the process group: spark-class execs the JVM, executors are its children
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for p in self.procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, request):
    root = tmp_path_factory.mktemp("standalone")
    cluster = Standalone(root)
    request.addfinalizer(cluster.stop)     # whatever happens, a failed start included
    cluster.start()
    return cluster


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    root = tmp_path_factory.mktemp("fleet")
    run([FLEETHEALTH, "simulate", "--out", str(root), "--scenario", SCENARIOS, "--from", HOUR.isoformat(),
         "--to", (HOUR + timedelta(hours=1)).isoformat(), "--brokers", "3", "--jmx-samples-per-broker-hour", "0"])
    return root / "inventory.yaml"


def run(cmd: list[str], **env) -> str:
    t0 = time.monotonic()
    proc = subprocess.run(cmd, env=driver_env(**env), capture_output=True, text=True, timeout=900)
    print(f"{' '.join(cmd[:2])}: {time.monotonic() - t0:.0f} s")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def window(inventory: Path, lakehouse: Path) -> list[str]:
    return ["--inventory", str(inventory), "--from", HOUR.isoformat(), "--to", (HOUR + timedelta(hours=1)).isoformat(),
            "--lakehouse", str(lakehouse)]


@pytest.fixture(scope="module")
def reference(fleet, tmp_path_factory):
    """The same hour by `fleethealth run` in local mode: what the cluster runs must publish."""
    lakehouse = tmp_path_factory.mktemp("local") / "lakehouse"
    run([FLEETHEALTH, "run", *window(fleet, lakehouse), "--master", "local[*]", "--no-notify"])
    return lakehouse


PROBE = """
import os, sys
from fleethealth.runtime.session import build_session
spark = build_session("fleethealth-probe", sys.argv[2], master=sys.argv[1])

def where(_):
    import fleethealth
    return os.path.abspath(fleethealth.__file__), os.environ.get("PYTHONPATH", "")

print(sorted(set(spark.sparkContext.parallelize(range(8), 8).map(where).collect())))
spark.stop()
"""


def test_executors_import_the_shipped_library_not_an_inherited_path(cluster, tmp_path):
    """Python on the executors (a UDF's view): fleethealth comes from the zip the driver added, in the
    application's work folder, not from a PYTHONPATH or the driver's checkout."""
    out = run([sys.executable, "-c", PROBE, cluster.url, str(tmp_path / "lakehouse")])
    seen = ast.literal_eval(out.strip().splitlines()[-1])
    work = tuple(f"{cluster.root}/work{i}/" for i in (0, 1))
    for file, path in seen:
        # <worker's work folder>/<application>/<executor>/fleethealth-<content hash>.zip
        assert file.startswith(work) and file.endswith(".zip/fleethealth/__init__.py"), seen
        assert str(INCLUDE) not in path, seen


def test_fleethealth_run_on_the_cluster_publishes_what_local_publishes(cluster, fleet, reference, tmp_path):
    lakehouse = tmp_path / "lakehouse"
    run([FLEETHEALTH, "run", *window(fleet, lakehouse), "--master", cluster.url, "--no-notify"])
    app = cluster.application("fleethealth-run")
    assert app["cores"] == 2
    assert_worked_on_both_workers(cluster, app["id"])
    assert_same_tables(reference, lakehouse)


def assert_worked_on_both_workers(cluster, app_id: str) -> None:
    """An executor on each worker ran tasks (its log in the worker's work folder says so)."""
    executors = cluster.executors_of(app_id)
    assert [len(e) for e in executors] == [1, 1], executors
    for i, [e] in enumerate(executors):
        log = (cluster.root / f"work{i}" / app_id / str(e["id"]) / "stderr").read_text()
        assert "Finished task" in log, log[-2000:]


def test_the_dags_spark_step_on_the_cluster_publishes_what_local_publishes(cluster, fleet, reference, tmp_path,
                                                                          monkeypatch):
    """The DAG's bronze_silver_gold task as the worker runs it: its SparkSubmitOperator's arguments, by
    the provider's hook, spark_default pointing at the master (the hour pulled as the DAG's pull does)."""
    lakehouse = tmp_path / "lakehouse"
    run([FLEETHEALTH, "pull", *window(fleet, lakehouse)])
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", json.dumps({"conn_type": "spark", "host": cluster.url}))
    for key, value in driver_env(FLEETHEALTH_LAKEHOUSE=str(lakehouse), FLEETHEALTH_INVENTORY=str(fleet)).items():
        monkeypatch.setenv(key, value)
    task = dag_task()
    rendered = {task.application_args[i]: v for i, v in ((1, HOUR.isoformat()), (3, str(lakehouse)), (5, str(fleet)))}
    task.application_args = [rendered.get(a, a) for a in task.application_args]
    assert task.application_args == ["--hour", HOUR.isoformat(), "--lakehouse", str(lakehouse), "--inventory", str(fleet)]
    t0 = time.monotonic()
    task.execute({})         # its hook's spark-submit, in client mode on the connection's master
    print(f"spark-submit spark/layers.py: {time.monotonic() - t0:.0f} s")
    # spark/layers.py names its application by the layers it runs (spark-submit's --name is overridden)
    app = cluster.application("fleethealth-bronze-silver-gold")
    assert app["cores"] == 2
    assert_worked_on_both_workers(cluster, app["id"])
    assert_same_tables(reference, lakehouse)


def dag_task():
    from airflow.dag_processing.dagbag import DagBag

    from fleethealth.runtime import config

    bag = DagBag(dag_folder=str(INCLUDE.parent / "dags" / "fleet_health_hourly.py"))
    assert bag.import_errors == {}
    return bag.dags[config.DAG_ID].get_task("bronze_silver_gold")


def assert_same_tables(expected_lakehouse: Path, lakehouse: Path) -> None:
    """Every table of the local run, row for row (sorted), but for RUN_COLUMNS."""
    import deltalake

    compared = []
    for qualified, table in lake.TABLES.items():
        if not Path(table.path(expected_lakehouse)).exists():
            assert not Path(table.path(lakehouse)).exists(), qualified
            continue
        want, got = (deltalake.DeltaTable(table.path(root)).to_pandas() for root in (expected_lakehouse, lakehouse))
        skip = RUN_COLUMNS.get(qualified, set())
        assert skip <= set(want.columns), (qualified, skip)
        assert rows(got.drop(columns=list(skip))) == rows(want.drop(columns=list(skip))), qualified
        compared.append(qualified)
    assert {"bronze.records", "bronze.files", "silver.kafka_events", "silver.jmx_samples", "silver.reconciliation",
            "gold.incidents", "gold.incident_history", "gold.log_cleaner_status", "gold.consumer_offsets_partitions",
            "gold.broker_health_hourly", "gold.quality_results"} <= set(compared), compared
    incidents = deltalake.DeltaTable(lake.table("gold.incidents").path(lakehouse)).to_pandas()
    assert ("pm3-dead-cleaner", "log_cleaner_dead", "broker-2") in set(
        zip(incidents["cluster"], incidents["kind"], incidents["entity"]))


def rows(frame) -> list[str]:
    return sorted(frame.astype(str).apply(lambda r: json.dumps(list(r)), axis=1))
