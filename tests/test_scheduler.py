"""A real scheduler, set up as README's "Run a scheduler" says: its block runs as written (bash, from the
checkout) with this test's folders and port in place of README's, in a fresh AIRFLOW_HOME: `airflow db
migrate`, scheduler, dag-processor and api-server on SQLite, then the backfill of README's two hours of a
small simulated fleet (post-mortem 3). Both runs succeed one after the other, process the backfilled
hours, give the gold that `fleethealth run` gives for the same hours, and the REST API (a token for
README's login) lists them and their task instances.

FLEETHEALTH_START_DATE is in the future: the unpaused DAG makes no scheduled run beside the backfill.
Every process started here has this test's AIRFLOW_HOME in its environment, which is how the
finalizer finds them all (the api-server's workers, the executor's, spark-submit's JVM), whatever happened.
"""
from __future__ import annotations

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
from readme_blocks import block
from realservers import free_port

from fleethealth.runtime import config
from fleethealth.simulate import simulate

pytestmark = [pytest.mark.spark, pytest.mark.slow]

PROJECT = Path(__file__).resolve().parents[1]
FLEETHEALTH = str(Path(sys.executable).with_name("fleethealth"))
H0 = datetime(2026, 11, 20, 10, tzinfo=timezone.utc)     # README's --from-date; --to-date is H0 + 1 h, included
HOURS = [H0, H0 + timedelta(hours=1)]
# gold tables a run writes with the time it ran: not compared
VOLATILE = {"quality_results"}


def readme_script(home: Path, inventory: Path, lakehouse: Path, port: int) -> str:
    """README's block with this test's values for README's example folders and port (each must be there)."""
    text = block("run", "scheduler").text
    for shown, ours in (("~/fleethealth-airflow", home), ("~/fleet.yaml", inventory), ("~/lakehouse", lakehouse),
                        ("AIRFLOW__API__PORT=8080", f"AIRFLOW__API__PORT={port}")):
        assert text.count(shown) == 1, f"README's scheduler block no longer has {shown!r}"
        text = text.replace(shown, str(ours))
    return text


def ours(home: Path) -> list[psutil.Process]:
    """The processes whose environment has AIRFLOW_HOME=home: everything this test started, and their children."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.pid != os.getpid() and proc.environ().get("AIRFLOW_HOME") == str(home):
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
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
    """The api-server's REST API with a JWT from /auth/token (README's login: admin, generated password)."""

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


@pytest.fixture(scope="module")
def scheduled(tmp_path_factory):
    root = tmp_path_factory.mktemp("scheduler")
    home, lakehouse, reference = root / "airflow", root / "lakehouse", root / "reference"
    inventory = simulate(root / "fleet", ["pm3-dead-cleaner"], HOURS[0], HOURS[-1] + timedelta(hours=1),
                         jmx_samples_per_broker_hour=0)
    port = free_port()
    env = {**os.environ, "FLEETHEALTH_START_DATE": "2100-01-01T00:00:00+00:00", "FLEETHEALTH_CATCHUP": "false",
           "FLEETHEALTH_DATA_DOCS": "0", "AIRFLOW_HOME": str(home)}
    t0 = time.monotonic()
    try:
        # the same hours without Airflow, meanwhile (its own process group; it is in ours(home) too)
        with (root / "reference.log").open("w") as out:
            ref = subprocess.Popen([FLEETHEALTH, "run", "--inventory", str(inventory), "--lakehouse", str(reference),
                                    "--from", HOURS[0].isoformat(), "--to", (HOURS[-1] + timedelta(hours=1)).isoformat()],
                                   stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        script = root / "readme-scheduler.sh"
        script.write_text(readme_script(home, inventory, lakehouse, port))
        with (root / "readme-scheduler.log").open("w") as out:
            setup = subprocess.run(["bash", "-euo", "pipefail", str(script)], cwd=PROJECT, env=env,
                                   stdout=out, stderr=subprocess.STDOUT, timeout=300, start_new_session=True)
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
        assert ref.wait(timeout=600) == 0, (root / "reference.log").read_text()[-4000:]
        print(f"\nscheduler: set-up {t_setup:.0f} s, both runs done at {t_runs:.0f} s")
        for r in runs:     # where a run's time goes, for whoever reads the test's output
            spent = {}
            for t in tasks[r["dag_run_id"]]:
                spent[t["task_id"]] = spent.get(t["task_id"], 0) + (t["duration"] or 0)
            print(f"  {r['logical_date']}: {(when(r['end_date']) - when(r['start_date'])).total_seconds():.0f} s; "
                  + ", ".join(f"{k} {v:.0f} s" for k, v in spent.items()))
        yield {"runs": runs, "tasks": tasks, "hours": hours, "log": json.dumps(log), "lakehouse": lakehouse, "reference": reference,
               "home": home, "root": root}
    finally:
        stop_all(home)
        assert ours(home) == [], "processes of the test's Airflow home still running"


def when(iso: str) -> datetime:
    return datetime.fromisoformat(iso.replace("Z", "+00:00"))


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
        assert states == {(t, "success") for t in ("resolve_hour", "list_hosts", "pull", "bronze_silver_gold",
                                                    "notify", "report")}, run_id
        assert len([t for t in tasks if t["task_id"] == "pull"]) > 1, run_id     # mapped: one per host
    # the api-server reads a task's log from the home's logs (the scheduler serves none)
    assert "HTML report: " in scheduled["log"], scheduled["log"][:2000]


def test_gold_is_what_fleethealth_run_gives(scheduled):
    ours_, theirs = gold(scheduled["lakehouse"]), gold(scheduled["reference"])
    assert "incidents" in ours_ and ours_.keys() == theirs.keys()
    assert [name for name in ours_ if ours_[name] != theirs[name]] == []
    assert any("log_cleaner_dead" in row for row in ours_["incidents"])
