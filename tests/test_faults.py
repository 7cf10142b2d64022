"""Crash safety (issue 12): `fleethealth run` killed with kill -9 (the Python process and its Spark
driver JVM, as an OOM killer or a lost node would) while pulling or while a layer's gate publishes
its tables (some written, others not yet); the hour is then run again and every published table must equal,
row for row, the tables of an uninterrupted run of the same input. And two runs of one hour at once
(`fleethealth run` twice, as the DAG and a user would) leave the same tables, never duplicated or
mixed rows: the second waits for the first (fleethealth.lake.locks).

`make test` runs one crash point; `make test-faults` runs them all (marker `faults`).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from fleethealth.lake.catalog import Lakehouse
from fleethealth.pipeline import window as pipeline
from fleethealth.fleet.inventory import load_inventory
from fleethealth.lake import tables as lake
from fleethealth.pull import hour as pull
from fleethealth.simulate import simulate

pytestmark = [pytest.mark.spark, pytest.mark.slow]

HOUR = datetime(2026, 11, 21, 3, tzinfo=timezone.utc)
VOLATILE = {"gold.quality_results"}   # when each expectation ran
FLEETHEALTH = str(Path(sys.executable).with_name("fleethealth"))


def _published(root: Path, layer: str) -> bool:
    """Whether a table of `layer` has been written (gold.quality_results is the gates' own record)."""
    return any(p.parent.parent.name != "quality_results" for p in (root / layer).glob("*/_delta_log/*.json"))


# where to kill: a condition on the lakehouse that holds while that step is under way
POINTS = {
    "pull": lambda root: (root / "landing" / f"{HOUR:%Y-%m-%dT%H}").is_dir(),   # landing under way or just done
    "bronze-publish": lambda root: _published(root, "bronze"),
    "silver-publish": lambda root: _published(root, "silver"),
    "gold-publish": lambda root: _published(root, "gold"),
}


def tables(spark, root: Path) -> dict[str, list[tuple]]:
    out = {}
    for name in lake.TABLES:
        if name not in VOLATILE and lake.exists(spark, name, Lakehouse.at(str(root))):
            out[name] = sorted(tuple(str(v) for v in r) for r in lake.read(spark, name, Lakehouse.at(str(root))).collect())
    return out


def run_in_process(spark, fleet: dict, root: Path) -> None:
    """The hour as `fleethealth run` does it, in this test's Spark session."""
    pull.pull_hour(fleet["inventory"], HOUR, Lakehouse.at(str(root)))
    pipeline.run_hour(spark, HOUR, fleet["inventory_path"], Lakehouse.at(str(root)))
    spark.catalog.clearCache()


def start_run(fleet: dict, root: Path, name: str = "run") -> subprocess.Popen:
    """`fleethealth run` of the hour in its own process group; its output goes to <root>.<name>.log."""
    root.parent.mkdir(parents=True, exist_ok=True)
    with root.with_name(f"{root.name}.{name}.log").open("w") as out:   # a file: a pipe left unread would fill
        return subprocess.Popen(
            [FLEETHEALTH, "run", "--inventory", fleet["inventory_path"], "--from", HOUR.isoformat(),
             "--to", (HOUR + timedelta(hours=1)).isoformat(), "--lakehouse", str(root)],
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def output(root: Path, name: str = "run") -> str:
    return root.with_name(f"{root.name}.{name}.log").read_text()[-3000:]


def kill_at(proc: subprocess.Popen, root: Path, point: str, timeout_s: float = 600) -> None:
    """kill -9 the run's whole process group (Python and the driver JVM) once `point` is reached."""
    deadline = time.monotonic() + timeout_s
    while not POINTS[point](root):
        if proc.poll() is not None:
            pytest.fail(f"the run ended before {point}:\n{output(root)}")
        if time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            pytest.fail(f"{point} not reached in {timeout_s} s")
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


@pytest.fixture(scope="module")
def fleet(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("faults")
    inventory_path = simulate(root / "sim", ["pm3-dead-cleaner"], HOUR, HOUR + timedelta(hours=1),
                              jmx_samples_per_broker_hour=0)
    fleet = {"inventory_path": str(inventory_path), "inventory": load_inventory(inventory_path), "root": root}
    run_in_process(spark, fleet, root / "uninterrupted")
    fleet["expected"] = tables(spark, root / "uninterrupted")
    assert fleet["expected"]["gold.incidents"] and fleet["expected"]["silver.kafka_events"]
    return fleet


def crash_then_rerun(spark, fleet, point: str) -> None:
    root = fleet["root"] / f"killed-at-{point}"
    kill_at(start_run(fleet, root), root, point)
    run_in_process(spark, fleet, root)
    got = tables(spark, root)
    assert sorted(got) == sorted(fleet["expected"])
    for name, rows in fleet["expected"].items():
        assert got[name] == rows, name


def test_killed_while_silver_publishes_then_rerun_equals_an_uninterrupted_run(spark, fleet):
    crash_then_rerun(spark, fleet, "silver-publish")


@pytest.mark.faults
@pytest.mark.parametrize("point", [p for p in POINTS if p != "silver-publish"])
def test_killed_then_rerun_equals_an_uninterrupted_run(spark, fleet, point):
    crash_then_rerun(spark, fleet, point)


@pytest.mark.faults
def test_two_runs_of_one_hour_at_once_leave_the_tables_of_one(spark, fleet):
    root = fleet["root"] / "concurrent"
    first, second = start_run(fleet, root, "first"), start_run(fleet, root, "second")
    codes = [proc.wait(timeout=1800) for proc in (first, second)]
    assert codes == [0, 0], [output(root, "first"), output(root, "second")]
    assert tables(spark, root) == fleet["expected"]
