"""Time is guarded (issue 59 item 3): `run`, `backfill` and `pull` refuse a window that ends after the
current hour, with one line and exit 2, before anything is pulled, written, started or sent; the
spark-submit entry points refuse it too; the current, still-live hour itself is allowed (the hourly
DAG's runs and a live pull read it). Each command runs as a user runs it; none starts Spark."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from fleethealth.runtime import config

FLEETHEALTH = str(Path(sys.executable).with_name("fleethealth"))
PROJECT = Path(__file__).resolve().parents[1]
UTC = timezone.utc
H = timedelta(hours=1)


def now_hour() -> datetime:
    return datetime.now(UTC).replace(minute=0, second=0, microsecond=0)


def z(hour: datetime) -> str:
    return f"{hour:%Y-%m-%dT%H:%MZ}"


@pytest.fixture
def receiver():
    """A listening socket standing for the inventory's webhook: it counts the connections it gets."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.5)
    yield server

    server.close()


def connections(server: socket.socket) -> int:
    n = 0
    while True:
        try:
            conn, _ = server.accept()
        except TimeoutError:
            return n
        conn.close()
        n += 1


@pytest.fixture
def fleet(tmp_path, receiver) -> Path:
    """One local host with a file of the current hour, a webhook channel, and an empty lakehouse."""
    log = tmp_path / "fleet" / "c1" / "k1" / "kafka" / f"server.log.{now_hour():%Y-%m-%d-%H}"
    log.parent.mkdir(parents=True)
    log.write_text(f"[{now_hour():%Y-%m-%d %H}:00:01,000] INFO hello (kafka.Kafka)\n")
    (tmp_path / "inventory.yaml").write_text(
        "clusters:\n  - name: c1\n    root: fleet\n    timezone: UTC\n    hosts:\n"
        "      - {host: k1, role: kafka, broker_id: 1, kafka_version: 3.6.1}\n"
        f"notifications:\n  - {{name: hook, webhook: 'http://127.0.0.1:{receiver.getsockname()[1]}/hook'}}\n")
    (tmp_path / "lakehouse").mkdir()
    return tmp_path


def fleethealth(fleet: Path, *args: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in config.SETTINGS}
    return subprocess.run([FLEETHEALTH, *args], capture_output=True, text=True, timeout=120, cwd=fleet,
                          env={**clean, "FLEETHEALTH_LAKEHOUSE": str(fleet / "lakehouse")})


def refusals(start: datetime, end: datetime, prefix: str, before: datetime) -> set[str]:
    """The refusal's one line, for the current hour when the test started or the next one (the clock
    may pass an hour's end while the command starts)."""
    return {f"{prefix}--from {z(start)} --to {z(end)}: the window ends after the current hour {z(now)}; "
            f"--to is at most {z(now + H)}\n" for now in (before, before + H)}


@pytest.mark.parametrize("command, start", [("run", 5), ("backfill", 5), ("pull", 1)])
def test_a_window_after_the_current_hour_is_refused_before_anything(fleet, receiver, command, start):
    """`run` / `backfill --from` five hours ahead (issue 59's input: it opened host_silent for every
    host, paged and became gold's last processed hour), `pull` of the next hour: one line, exit 2,
    no lakehouse file (no landing, no lock, no warehouse, no Delta commit) and no connection to the
    webhook."""
    before = now_hour()
    first, end = before + start * H, before + (start + 1) * H
    proc = fleethealth(fleet, command, "--inventory", "inventory.yaml", "--from", z(first), "--to", z(end))
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr in refusals(first, end, "fleethealth: ", before)
    assert list((fleet / "lakehouse").rglob("*")) == []
    assert connections(receiver) == 0


def test_the_current_hour_is_pulled(fleet):
    """The boundary: a window ending with the current, still-live hour is a window of the past and now."""
    before = now_hour()
    proc = fleethealth(fleet, "pull", "--inventory", "inventory.yaml", "--from", z(before), "--to", z(before + H))
    assert proc.returncode == 0, proc.stderr
    if now_hour() == before:        # else the clock passed the hour's end: nothing to compare
        assert proc.stdout == f"{before.isoformat()}: 1 files landed\n"


def test_simulate_keeps_its_window(tmp_path):
    """A simulated fleet may be of any hours, tomorrow's too."""
    first = now_hour() + 5 * H
    proc = subprocess.run([FLEETHEALTH, "simulate", "--out", str(tmp_path / "sim"), "--scenario", "healthy",
                           "--from", z(first), "--to", z(first + H), "--brokers", "1",
                           "--bytes-per-broker-hour", "1000", "--jmx-samples-per-broker-hour", "0"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "sim" / "inventory.yaml").is_file() and list((tmp_path / "sim").rglob("server.log.*"))


@pytest.mark.parametrize("start, hours, says", [
    (5, 1, None),
    (-200, 169, "--from {start} --to {end}: 169 hours; a run backfills at most 168 (trigger one run per week)\n"),
])
def test_spark_backfill_checks_the_window_again(fleet, start, hours, says):
    """spark/backfill.py, run as spark-submit runs it (the driver's Python): the DAG's `window` task's
    rule, one line and exit 2 before a session starts."""
    before = now_hour()
    first, end = before + start * H, before + (start + hours) * H
    clean = {k: v for k, v in os.environ.items() if k not in config.SETTINGS}
    proc = subprocess.run([sys.executable, str(PROJECT / "spark" / "backfill.py"), "--from", z(first), "--to", z(end),
                           "--inventory", "inventory.yaml"], capture_output=True, text=True, timeout=120, cwd=fleet,
                          env={**clean, "FLEETHEALTH_LAKEHOUSE": str(fleet / "lakehouse")})
    assert (proc.returncode, proc.stdout) == (2, "")
    if says is None:
        assert proc.stderr in refusals(first, end, "backfill.py: ", before)
    else:
        assert proc.stderr == "backfill.py: " + says.format(start=z(first), end=z(end))
    assert list((fleet / "lakehouse").rglob("*")) == []


def test_spark_layers_refuses_an_hour_after_the_current_one(fleet):
    """spark/layers.py (the hourly DAG's Spark step): its --hour is the current one at the latest."""
    ahead = now_hour() + 5 * H
    clean = {k: v for k, v in os.environ.items() if k not in config.SETTINGS}
    proc = subprocess.run([sys.executable, str(PROJECT / "spark" / "layers.py"), "--hour", z(ahead),
                           "--inventory", "inventory.yaml"], capture_output=True, text=True, timeout=120, cwd=fleet,
                          env={**clean, "FLEETHEALTH_LAKEHOUSE": str(fleet / "lakehouse")})
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1].startswith(
        f"layers.py: error: argument --hour: --hour {z(ahead)}: after the current hour ")
    assert list((fleet / "lakehouse").rglob("*")) == []
