"""Runs that stop cleanly (issue 33): Ctrl-C or SIGTERM to a real `fleethealth run` cancels its Spark
jobs, publishes nothing more of the hours under way, says so in one line on stderr and exits 130 or
143; the hours not published then run as if never started.

No Spark session in this process: the runs are subprocesses, the tables are read with delta-rs.
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
from deltalake import DeltaTable

from fleethealth.simulate import simulate

pytestmark = [pytest.mark.spark, pytest.mark.slow]

H0 = datetime(2026, 11, 21, 3, tzinfo=timezone.utc)
H1 = H0 + timedelta(hours=1)
FLEETHEALTH = str(Path(sys.executable).with_name("fleethealth"))
ENV = dict(os.environ, FLEETHEALTH_DATA_DOCS="0")     # not what is tested here, and seconds a run
# the incidents of an uninterrupted run of H0 (kind, entity, severity)
EXPECTED = {("log_cleaner_dead", "broker-2", "critical"), ("offsets_partition_bloat", "__consumer_offsets-38@broker-2", "major")}


@pytest.fixture(scope="module")
def inventory(tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("fleet")
    return str(simulate(out, ["pm3-dead-cleaner"], H0, H1 + timedelta(hours=1), jmx_samples_per_broker_hour=0))


def start(inventory: str, root: Path, end: datetime, **env: str) -> subprocess.Popen:
    """`fleethealth run` of H0 to `end`, in a process group of its own (a terminal's Ctrl-C signals the
    whole group: Python, and the driver JVM that PySpark starts ignoring SIGINT); output to files."""
    root.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        [FLEETHEALTH, "run", "--inventory", inventory, "--from", H0.isoformat(), "--to", end.isoformat(),
         "--lakehouse", str(root / "lake")],
        stdout=(root / "stdout").open("w"), stderr=(root / "stderr").open("w"), start_new_session=True,
        env=dict(ENV, **env))


def wait_for(proc: subprocess.Popen, root: Path, what: str, reached, timeout_s: float = 600) -> None:
    deadline = time.monotonic() + timeout_s
    while not reached():
        if proc.poll() is not None:
            pytest.fail(f"the run ended before {what}:\n{(root / 'stderr').read_text()[-3000:]}")
        if time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            pytest.fail(f"{what} not reached in {timeout_s} s")
        time.sleep(0.02)


def stopped(proc: subprocess.Popen, root: Path) -> tuple[int, str, str]:
    code = proc.wait(timeout=600)   # it stops after the publish in flight, which a loaded machine slows
    return code, (root / "stdout").read_text(), (root / "stderr").read_text()


def summary(out: str) -> list[str]:
    """The heading of the gold.incidents summary a run ends with, if printed."""
    return [line for line in out.splitlines() if line.startswith("gold.incidents")]


def hours_of(lake: Path, qualified: str) -> set:
    """The hours with rows in a published table (none if it was never committed; a table that is not
    hourly: {"rows"} if it has any)."""
    path = lake.joinpath(*qualified.split("."))
    if not any((path / "_delta_log").glob("*.json")):
        return set()
    rows = DeltaTable(str(path)).to_pyarrow_table()
    if "hour" not in rows.column_names:
        return {"rows"} if rows.num_rows else set()
    return set(rows.column("hour").to_pylist())


def tables(lake: Path, layer: str) -> list[str]:
    return [f"{layer}.{p.parent.name}" for p in sorted((lake / layer).glob("*/_delta_log"))]


def test_ctrl_c_in_bronze_publishes_nothing_more_and_exits_130(inventory, tmp_path):
    proc = start(inventory, tmp_path, H1 + timedelta(hours=1))
    lake = tmp_path / "lake"
    # bronze.files is written when the first hour's bronze is published: the run is inside Spark work
    wait_for(proc, tmp_path, "bronze of the first hour",
             lambda: any((lake / "bronze" / "files" / "_delta_log").glob("*.json")))
    for _ in range(3):          # an impatient user: the second and third change nothing
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
            time.sleep(0.2)
    code, out, err = stopped(proc, tmp_path)

    assert code == 130, err
    assert err.strip().splitlines() == [
        f"interrupted: 2 hours from {H0.isoformat()} to {H1.isoformat()} not published; re-run the window"]
    assert "incident(s)" not in out and not summary(out)
    # the signal came as the first hour's bronze was being published: that publish was finished
    # (every table of the layer and its gate's results), nothing was started after it
    for name in ("bronze.records", "bronze.files", "gold.quality_results"):
        assert hours_of(lake, name) == {H0}, name
    for name in tables(lake, "silver") + [t for t in tables(lake, "gold") if t != "gold.quality_results"]:
        assert not hours_of(lake, name), name
    # the second hour's staged files were deleted, not left beside the table
    assert not list((lake / "bronze" / "records").glob(f"hour={H1:%Y-%m-%d %H}*/*.parquet"))


def test_sigterm_after_an_hour_published_exits_143_and_the_window_then_runs_to_its_end(inventory, tmp_path):
    """SIGTERM while the second hour's silver runs (windows of one hour: the first hour is published):
    the first hour stays published, nothing of the second's silver or gold is, and a run of the hour
    not published then publishes it (its lock released, nothing half-done in its way), the first
    hour's incidents still there."""
    first = tmp_path / "first"
    proc = start(inventory, first, H1 + timedelta(hours=1), FLEETHEALTH_RUN_WINDOW_HOURS="1")
    lake = first / "lake"
    # silver writes the second hour's files (uncommitted) as its jobs run
    wait_for(proc, first, "the second hour's silver",
             lambda: any((lake / "silver").glob(f"*/hour={H1:%Y-%m-%d %H}*/*.parquet")))
    proc.send_signal(signal.SIGTERM)         # as `kill` does: the Python process alone
    code, out, err = stopped(proc, first)

    assert code == 143, err
    assert err.strip().splitlines() == [
        f"interrupted: hour {H1.isoformat()} not published (1 hour(s) published before); re-run the window"]
    assert not summary(out)           # the first hour's own line says its incidents; no summary after
    assert hours_of(lake, "bronze.records") == {H0, H1}
    for name in tables(lake, "silver") + ["gold.incident_findings", "gold.broker_health_hourly"]:
        assert hours_of(lake, name) <= {H0, "rows"}, name
    # (a file whose write the signal cut is in no commit: no reader sees it, VACUUM deletes it)

    rerun = subprocess.run(
        [FLEETHEALTH, "run", "--inventory", inventory, "--from", H1.isoformat(), "--to", (H1 + timedelta(hours=1)).isoformat(),
         "--lakehouse", str(lake)], capture_output=True, text=True, timeout=900, env=ENV)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert hours_of(lake, "gold.broker_health_hourly") == {H0, H1}
    incidents = DeltaTable(str(lake / "gold" / "incidents")).to_pyarrow_table().to_pylist()
    assert EXPECTED <= {(r["kind"], r["entity"], r["severity"]) for r in incidents}
