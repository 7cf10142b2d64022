"""A real scheduler whose DAG runs its Spark step on a real Spark standalone cluster, and `fleethealth
run` on that cluster: one local reference run of the hours both are compared with.

The scheduler is set up as docs/deployment.md's "Run a scheduler" says: its block runs as written (bash, from the
checkout) with this test's folders and port in place of the doc's, in a fresh AIRFLOW_HOME, and with
docs/deployment.md's "Run on a Spark cluster" connection line (spark_default pointing at this test's master) after
`. scripts/env.sh`: `airflow db migrate`, scheduler, dag-processor and api-server on SQLite, then the
backfill of the doc's two hours of a small simulated fleet (post-mortem 3). Both runs succeed one after
the other, process the backfilled hours, publish what `fleethealth run --master local[*]` publishes for
the same hours (every table, but the gates' validated_at), and the REST API (a token for the doc's login)
lists them, their task instances and a task's log.

The cluster (issue 33): a master and two one-core workers on loopback, from the pip-installed pyspark.
Each DAG run's spark/layers.py (the SparkSubmitOperator's hook, in client mode on spark_default's master)
and `fleethealth run --master spark://...` of the same hours run with executors in both workers' JVMs
and publish what the local run publishes. The workers start without PYTHONPATH (and without anything
naming the jars): the Delta and engine jars reach the executors by spark.jars, the fleethealth package
by the zip build_session ships.

FLEETHEALTH_START_DATE is in the future: the unpaused DAG makes no scheduled run beside the backfill.
Every process started for Airflow has this test's AIRFLOW_HOME in its environment, which is how the
finalizer finds them all (the api-server's workers, the executor's, spark-submit's JVM), whatever
happened; the cluster's daemons are each a process group of their own, stopped whatever happened.
"""
from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from datetime import datetime, timedelta, timezone
from pathlib import Path

import psutil
import pytest
from deltalake import DeltaTable
from readme_blocks import block, blocks
from realservers import free_port

from fleethealth.lake.catalog import Lakehouse
from fleethealth.lake import tables as lake
from fleethealth.runtime import config
from fleethealth.simulate import simulate

pytestmark = [pytest.mark.spark, pytest.mark.slow]

PROJECT = Path(__file__).resolve().parents[1]
INCLUDE = PROJECT / "include"
FLEETHEALTH = str(Path(sys.executable).with_name("fleethealth"))
SPARK_CLASS = Path(__import__("pyspark").__file__).parent / "bin" / "spark-class"
H0 = datetime(2026, 11, 20, 10, tzinfo=timezone.utc)     # README's --from-date; --to-date is H0 + 1 h, included
HOURS = [H0, H0 + timedelta(hours=1)]
# gold tables a run writes with the time it ran: not compared
VOLATILE = {"quality_results"}
# the only values a run writes about itself rather than about the fleet: when each gate validated
# (wall clock; every other column of every table is a function of the landed hours)
RUN_COLUMNS = {"gold.quality_results": {"validated_at"}}
README_MASTER = "spark://127.0.0.1:7077"     # README's cluster block's master


def readme_script(home: Path, inventory: Path, lakehouse: Path, port: int, master: str) -> str:
    """The doc's block with this test's values for its example folders and port (each must be there),
    and the doc's cluster block's spark_default line, with this test's master, after `. scripts/env.sh`."""
    text = block("run", "scheduler").text
    for shown, ours in (("~/fleethealth-airflow", home), ("~/fleet.yaml", inventory), ("~/lakehouse", lakehouse),
                        ("AIRFLOW__API__PORT=8080", f"AIRFLOW__API__PORT={port}")):
        assert text.count(shown) == 1, f"docs/deployment.md's scheduler block no longer has {shown!r}"
        text = text.replace(shown, str(ours))
    [connection] = [line for line in cluster_block().splitlines() if line.startswith("export AIRFLOW_CONN_SPARK_DEFAULT=")]
    assert connection.count(README_MASTER) == 1, connection
    assert text.count(". scripts/env.sh\n") == 1, text
    return text.replace(". scripts/env.sh\n", f". scripts/env.sh\n{connection.replace(README_MASTER, master)}\n")


def cluster_block() -> str:
    [found] = [b for b in blocks() if b.kind == "not-run" and b.name.startswith("tests/test_scheduler.py starts this master")]
    assert f"fleethealth run --master {README_MASTER} " in found.text, found.text
    return found.text


# the sessions of the doc's script's shells: the daemons it starts with `&` stay in them (the api-server
# retitles itself with setproctitle, which overwrites the environment /proc shows, so AIRFLOW_HOME alone
# missed it and left it running)
SESSIONS: set[int] = set()


def ours(home: Path) -> list[psutil.Process]:
    """The processes whose environment has AIRFLOW_HOME=home or that run in a session the test started:
    everything this test started, and their children."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.pid != os.getpid() and (os.getsid(proc.pid) in SESSIONS
                                            or proc.environ().get("AIRFLOW_HOME") == str(home)):
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess, ProcessLookupError):
            pass
    return found


def stop_all(home: Path) -> None:
    procs = ours(home)
    for proc in procs:
        try:
            proc.send_signal(signal.SIGTERM)
        except psutil.NoSuchProcess:
            pass
    _, alive = psutil.wait_procs(procs, timeout=20)
    for proc in alive:
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(alive, timeout=10)


class Api:
    """The api-server's REST API with a JWT from /auth/token (the doc's login: admin, generated password)."""

    def __init__(self, port: int, home: Path):
        self.base = f"http://127.0.0.1:{port}"
        password = json.loads((home / "simple_auth_manager_passwords.json.generated").read_text())["admin"]
        self.token = self._call("POST", "/auth/token", {"username": "admin", "password": password})["access_token"]

    def _call(self, method: str, path: str, body: dict | None = None, token: str | None = None) -> dict:
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base + path, data=data, headers=headers, method=method)
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def get(self, path: str) -> dict:
        return self._call("GET", "/api/v2" + path, token=self.token)


def wait_for(what: str, check, timeout_s: float, root: Path):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if result := check():
                return result
        except OSError:             # the api-server not up yet, a password file not yet written
            pass
        time.sleep(3)
    logs = sorted([*root.glob("*.log"), *root.glob("airflow/*.log")])
    tails = "\n".join(f"--- {p.name}\n{p.read_text()[-3000:]}" for p in logs)
    pytest.fail(f"timed out after {timeout_s:.0f} s waiting for {what}\n{tails}")


def gold(lakehouse: Path) -> dict[str, list[str]]:
    """Every gold table's rows (sorted), read with deltalake, but the VOLATILE ones."""
    out = {}
    for path in sorted((lakehouse / "gold").iterdir()):
        if (path / "_delta_log").is_dir() and path.name not in VOLATILE:
            out[path.name] = sorted(repr(sorted(r.items())) for r in DeltaTable(str(path)).to_pyarrow_table().to_pylist())
    return out


# --- the standalone cluster ------------------------------------------------------------------------
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

    def applications(self, name: str, count: int = 1) -> list[dict]:
        """The master's records of the `count` completed applications called `name`."""
        found = []

        def completed():
            found[:] = [a for a in status(self.ui)["completedapps"] if a["name"] == name]
            return len(found) == count
        self._wait(completed, 60, f"{count} completed application(s) {name}")
        return found

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


def driver_env(**extra) -> dict:
    """A driver's environment: the test's (PYTHONPATH=include for the driver's own imports)."""
    return {**os.environ, "PYTHONPATH": str(INCLUDE), "PYSPARK_PYTHON": sys.executable,
            "SPARK_LOCAL_IP": "127.0.0.1", **extra}


def run(cmd: list[str], **env) -> str:
    t0 = time.monotonic()
    proc = subprocess.run(cmd, env=driver_env(**env), capture_output=True, text=True, timeout=900)
    print(f"{' '.join(cmd[:2])}: {time.monotonic() - t0:.0f} s")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def window(inventory: Path, lakehouse: Path) -> list[str]:
    return ["--inventory", str(inventory), "--lakehouse", str(lakehouse),
            "--from", HOURS[0].isoformat(), "--to", (HOURS[-1] + timedelta(hours=1)).isoformat()]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, request):
    root = tmp_path_factory.mktemp("standalone")
    cluster = Standalone(root)
    request.addfinalizer(cluster.stop)     # whatever happens, a failed start included
    cluster.start()
    return cluster


@pytest.fixture(scope="module")
def scheduled(tmp_path_factory, cluster):
    root = tmp_path_factory.mktemp("scheduler")
    home, lakehouse, reference = root / "airflow", root / "lakehouse", root / "reference"
    inventory = simulate(root / "fleet", ["pm3-dead-cleaner"], HOURS[0], HOURS[-1] + timedelta(hours=1),
                         jmx_samples_per_broker_hour=0)
    port = free_port()
    env = {**os.environ, "FLEETHEALTH_START_DATE": "2100-01-01T00:00:00+00:00", "FLEETHEALTH_CATCHUP": "false",
           "FLEETHEALTH_DATA_DOCS": "0", "AIRFLOW_HOME": str(home)}
    t0 = time.monotonic()
    try:
        # meanwhile, the same hours without Airflow: in local mode, and on the cluster (whose first application
        # holds both workers' cores; the DAG's spark-submit waits for them). Each is its own process group, and
        # in ours(home) too.
        with (root / "reference.log").open("w") as out:
            ref = subprocess.Popen([FLEETHEALTH, "run", *window(inventory, reference), "--master", "local[*]"],
                                   stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        with (root / "cluster-run.log").open("w") as out:
            on_cluster = subprocess.Popen([FLEETHEALTH, "run", *window(inventory, root / "cluster-run"),
                                           "--master", cluster.url], stdout=out, stderr=subprocess.STDOUT,
                                          env=driver_env(**env), start_new_session=True)
        script = root / "readme-scheduler.sh"
        script.write_text(readme_script(home, inventory, lakehouse, port, cluster.url))
        with (root / "readme-scheduler.log").open("w") as out:
            setup = subprocess.Popen(["bash", "-euo", "pipefail", str(script)], cwd=PROJECT, env=env,
                                     stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
            SESSIONS.add(setup.pid)
            setup.wait(300)
        assert setup.returncode == 0, (root / "readme-scheduler.log").read_text()[-4000:]
        t_setup = time.monotonic() - t0

        api = wait_for("the api-server's login", lambda: Api(port, home), 120, root)
        dag = f"/dags/{config.DAG_ID}"

        def finished():
            runs = api.get(f"{dag}/dagRuns?order_by=logical_date")["dag_runs"]
            if len(runs) == len(HOURS) and all(r["state"] in ("success", "failed") for r in runs):
                return runs
            return None

        runs = wait_for("both backfill runs to finish", finished, 1500, root)
        t_runs = time.monotonic() - t0
        tasks = {r["dag_run_id"]: api.get(f"{dag}/dagRuns/{r['dag_run_id']}/taskInstances")["task_instances"]
                 for r in runs}
        hours = {r["dag_run_id"]: api.get(f"{dag}/dagRuns/{r['dag_run_id']}/taskInstances/resolve_hour"
                                          "/xcomEntries/return_value")["value"] for r in runs}
        log = api.get(f"{dag}/dagRuns/{runs[-1]['dag_run_id']}/taskInstances/report/logs/1")
        submits = [json.dumps(api.get(f"{dag}/dagRuns/{r['dag_run_id']}/taskInstances/bronze_silver_gold/logs/1"))
                   for r in runs]
        assert ref.wait(timeout=600) == 0, (root / "reference.log").read_text()[-4000:]
        cluster_rc = on_cluster.wait(timeout=600)
        print(f"\nscheduler: set-up {t_setup:.0f} s, both runs done at {t_runs:.0f} s, "
              f"reference and the cluster's run at {time.monotonic() - t0:.0f} s")
        for r in runs:     # where a run's time goes, for whoever reads the test's output
            spent = {}
            for t in tasks[r["dag_run_id"]]:
                spent[t["task_id"]] = spent.get(t["task_id"], 0) + (t["duration"] or 0)
            print(f"  {r['logical_date']}: {(when(r['end_date']) - when(r['start_date'])).total_seconds():.0f} s; "
                  + ", ".join(f"{k} {v:.0f} s" for k, v in spent.items()))
        yield {"runs": runs, "tasks": tasks, "hours": hours, "log": json.dumps(log), "submits": submits,
               "lakehouse": lakehouse, "reference": reference, "home": home, "root": root,
               "cluster_run": (cluster_rc, root / "cluster-run.log", root / "cluster-run")}
    finally:
        stop_all(home)
        assert ours(home) == [], "processes of the test's Airflow home still running"


def when(iso: str) -> datetime:
    return datetime.fromisoformat(iso.replace("Z", "+00:00"))


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


def test_the_airflow_home_is_the_tests_own(scheduled):
    home = scheduled["home"]
    assert (home / "airflow.db").is_file() and (home / "logs" / "dag_id=fleet_health_hourly").is_dir()
    assert str(PROJECT) not in (home / "airflow.cfg").read_text()


def test_both_backfill_runs_succeed_one_at_a_time(scheduled):
    runs = scheduled["runs"]
    assert [(r["run_type"], r["state"], when(r["logical_date"])) for r in runs] == [
        ("backfill", "success", h) for h in HOURS]
    first, second = runs
    assert when(first["end_date"]) <= when(second["start_date"]), runs


def test_each_run_processed_its_hour(scheduled):
    runs = scheduled["runs"]
    assert [scheduled["hours"][r["dag_run_id"]] for r in runs] == [h.isoformat() for h in HOURS]
    hours = DeltaTable(str(scheduled["lakehouse"] / "gold" / "broker_health_hourly")).to_pyarrow_table()
    assert sorted({h.replace(tzinfo=None) for h in hours.column("hour").to_pylist()}) == [
        h.replace(tzinfo=None) for h in HOURS]


def test_every_task_instance_succeeded_and_the_api_lists_them(scheduled):
    for run_id, tasks in scheduled["tasks"].items():
        states = {(t["task_id"], t["state"]) for t in tasks}
        # hour_failed runs only when the layers failed
        assert states == {(t, "success") for t in ("resolve_hour", "list_hosts", "pull", "bronze_silver_gold",
                                                    "notify", "report")} | {("hour_failed", "skipped")}, run_id
        assert len([t for t in tasks if t["task_id"] == "pull"]) > 1, run_id     # mapped: one per host
    # the api-server reads a task's log from the home's logs (the scheduler serves none)
    assert "HTML report: " in scheduled["log"], scheduled["log"][:2000]


def test_gold_is_what_fleethealth_run_gives(scheduled):
    ours_, theirs = gold(scheduled["lakehouse"]), gold(scheduled["reference"])
    assert "incidents" in ours_ and ours_.keys() == theirs.keys()
    assert [name for name in ours_ if ours_[name] != theirs[name]] == []
    assert any("log_cleaner_dead" in row for row in ours_["incidents"])


def test_the_dags_spark_step_ran_on_the_cluster_and_publishes_what_local_publishes(scheduled, cluster):
    """Each run's bronze_silver_gold: its SparkSubmitOperator's hook submitted spark/layers.py with the
    run's hour to spark_default's master, one application an hour with executors on both workers."""
    for hour, submit in zip(HOURS, scheduled["submits"]):
        assert f"--master {cluster.url}" in submit and f"--hour {hour.isoformat()}" in submit, submit[:3000]
    # spark/layers.py names its application by the layers it runs (spark-submit's --name is overridden)
    apps = cluster.applications("fleethealth-bronze-silver-gold", len(HOURS))
    for app in apps:
        assert app["cores"] == 2, apps
        assert_worked_on_both_workers(cluster, app["id"])
    assert_same_tables(scheduled["reference"], scheduled["lakehouse"])


def test_fleethealth_run_on_the_cluster_publishes_what_local_publishes(scheduled, cluster):
    code, log, lakehouse = scheduled["cluster_run"]
    assert code == 0, log.read_text()[-4000:]
    [app] = cluster.applications("fleethealth-run")
    assert app["cores"] == 2
    assert_worked_on_both_workers(cluster, app["id"])
    assert_same_tables(scheduled["reference"], lakehouse)


def assert_worked_on_both_workers(cluster, app_id: str) -> None:
    """An executor on each worker ran tasks (its log in the worker's work folder says so)."""
    executors = cluster.executors_of(app_id)
    assert [len(e) for e in executors] == [1, 1], executors
    for i, [e] in enumerate(executors):
        log = (cluster.root / f"work{i}" / app_id / str(e["id"]) / "stderr").read_text()
        assert "Finished task" in log, log[-2000:]


def assert_same_tables(expected_lakehouse: Path, lakehouse: Path) -> None:
    """Every table of the local run, row for row (sorted), but for RUN_COLUMNS."""
    import deltalake

    compared = []
    for qualified, table in lake.TABLES.items():
        if not Path(table.path(Lakehouse.at(expected_lakehouse))).exists():
            assert not Path(table.path(Lakehouse.at(lakehouse))).exists(), qualified
            continue
        want, got = (deltalake.DeltaTable(table.path(Lakehouse.at(root))).to_pandas() for root in (expected_lakehouse, lakehouse))
        skip = RUN_COLUMNS.get(qualified, set())
        assert skip <= set(want.columns), (qualified, skip)
        assert rows(got.drop(columns=list(skip))) == rows(want.drop(columns=list(skip))), qualified
        compared.append(qualified)
    assert {"bronze.records", "bronze.files", "silver.kafka_events", "silver.jmx_samples", "silver.reconciliation",
            "gold.incidents", "gold.incident_history", "gold.log_cleaner_status", "gold.consumer_offsets_partitions",
            "gold.broker_health_hourly", "gold.quality_results"} <= set(compared), compared
    incidents = deltalake.DeltaTable(lake.table("gold.incidents").path(Lakehouse.at(lakehouse))).to_pandas()
    assert ("pm3-dead-cleaner", "log_cleaner_dead", "broker-2") in set(
        zip(incidents["cluster"], incidents["kind"], incidents["entity"]))


def rows(frame) -> list[str]:
    return sorted(frame.astype(str).apply(lambda r: json.dumps(list(r)), axis=1))
