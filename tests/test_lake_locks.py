"""One writer per hour (issue 12): a second run of an hour waits for the first or refuses naming it,
and a holder killed with kill -9 releases the hour."""
from __future__ import annotations

import signal
import subprocess
import sys
import time
from datetime import datetime, timezone

import pytest

from fleethealth.lake.catalog import Lakehouse
from fleethealth.fleet.inventory import load_inventory
from fleethealth.lake import locks
from fleethealth.pull import hour as pull

HOUR = datetime(2026, 11, 20, 10, tzinfo=timezone.utc)

HOLDER = """
import sys, time
from datetime import datetime, timezone
from fleethealth.lake import locks
from fleethealth.lake.catalog import Lakehouse
with locks.hour_lock(datetime(2026, 11, 20, 10, tzinfo=timezone.utc), Lakehouse.at(sys.argv[1]), "the other run",
                     part=sys.argv[2]):
    print("held", flush=True)
    time.sleep(600)
"""


@pytest.fixture
def holder(tmp_path):
    """Start another process holding the hour's lock (or a part of it); yields (process, lakehouse)."""
    procs = []

    def start(part: str = ""):
        proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path / "lake"), part],
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "held"
        procs.append(proc)
        return proc

    yield start, tmp_path / "lake"
    for proc in procs:
        proc.kill()
        proc.wait()


def test_a_second_run_refuses_naming_the_holder_then_gets_the_hour_after_kill_9(holder):
    start, lake = holder
    proc = start()
    t0 = time.monotonic()
    with pytest.raises(locks.HourBusy) as busy:
        with locks.hour_lock(HOUR, Lakehouse.at(lake), "bronze job", wait_s=1.0):
            pass
    assert time.monotonic() - t0 >= 1.0                       # it waited before refusing
    assert str(busy.value).startswith(f"{HOUR.isoformat()} is being processed by another run (the other run, "
                                      f"pid {proc.pid} on ")
    assert "not starting bronze job" in str(busy.value)
    proc.send_signal(signal.SIGKILL)                           # the kernel drops a dead holder's lock
    proc.wait()
    with locks.hour_lock(HOUR, Lakehouse.at(lake), "bronze job", wait_s=5.0):
        with locks.hour_lock(HOUR, Lakehouse.at(lake), "validate_bronze", wait_s=0):   # re-entrant in one thread
            pass


def test_a_waiting_run_starts_when_the_holder_finishes(holder):
    start, lake = holder
    proc = start()
    subprocess.Popen([sys.executable, "-c", f"import time, os, signal; time.sleep(1.5); os.kill({proc.pid}, 9)"])
    t0 = time.monotonic()
    with locks.hour_lock(HOUR, Lakehouse.at(lake), "silver job", wait_s=30):
        waited = time.monotonic() - t0
    assert 1.0 <= waited < 30


def test_a_host_pulled_by_another_run_fails_alone_with_the_reason(holder, tmp_path, monkeypatch):
    monkeypatch.setenv("FLEETHEALTH_LOCK_WAIT_S", "0.5")
    (tmp_path / "inventory.yaml").write_text(
        "clusters:\n  - name: c\n    timezone: UTC\n    root: fleet\n    hosts:\n"
        "      - {host: k1, role: kafka, broker_id: 1, kafka_version: 3.6.1}\n"
        "      - {host: k2, role: kafka, broker_id: 2, kafka_version: 3.6.1}\n")
    inventory = load_inventory(tmp_path / "inventory.yaml")
    start, lake = holder
    start(part="c.k1")
    with pytest.raises(pull.HostsFailed) as failed:
        pull.pull_hour(inventory, HOUR, Lakehouse.at(lake))
    [error] = failed.value.errors
    assert error.startswith("k1: 2026-11-20T10:00:00+00:00 is being processed by another run (the other run")
    assert (Lakehouse.at(lake).landing(HOUR) / "c" / "k2").is_dir()       # the other host landed
