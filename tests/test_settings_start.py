"""Every FLEETHEALTH_* setting is checked once, at the start of a command or a spark-submit entry point:
a bad value is one line naming the variable and what it accepts, exit 2, before any host is pulled or
a JVM starts (issue 47). Windows are bounded: years from 1970, at most FLEETHEALTH_WINDOW_MAX_HOURS."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fleethealth.runtime import config

FLEETHEALTH = str(Path(sys.executable).with_name("fleethealth"))
PROJECT = Path(__file__).resolve().parents[1]
HOUR = ["--from", "2026-11-20T10:00Z", "--to", "2026-11-20T11:00Z"]


@pytest.fixture
def fleet(tmp_path) -> Path:
    """One local host with one file of 2026-11-20T10 (UTC), its inventory, and an empty lakehouse."""
    log = tmp_path / "fleet" / "c1" / "k1" / "kafka" / "server.log.2026-11-20-10"
    log.parent.mkdir(parents=True)
    log.write_text("[2026-11-20 10:00:01,000] INFO hello (kafka.Kafka)\n")
    (tmp_path / "inventory.yaml").write_text(
        "clusters:\n  - name: c1\n    root: fleet\n    hosts:\n"
        "      - {host: k1, role: kafka, broker_id: 1, kafka_version: 3.6.1}\n")
    (tmp_path / "lakehouse").mkdir()
    return tmp_path


def fleethealth(fleet: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in config.SETTINGS}
    return subprocess.run([FLEETHEALTH, *args], capture_output=True, text=True, timeout=120, cwd=fleet,
                          env={**clean, "FLEETHEALTH_LAKEHOUSE": str(fleet / "lakehouse"), **env})


def test_with_good_settings_the_host_is_pulled(fleet):
    """The baseline of the tests below: the same command lands the host's file."""
    proc = fleethealth(fleet, "pull", "--inventory", "inventory.yaml", *HOUR)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "2026-11-20T10:00:00+00:00: 1 files landed\n"
    assert list((fleet / "lakehouse" / "landing").rglob("server.log.2026-11-20-10"))


def bad_settings(fleet: Path) -> list[tuple[str, str, str]]:
    """(variable, value, the line it gets) for the values issue 47 names."""
    accepts = "expected a file of Spark settings (`spark.<name> <value>` lines)"
    return [
        ("FLEETHEALTH_SPARK_CONF", str(fleet), f"{accepts}, got {str(fleet)!r}: a folder"),
        ("FLEETHEALTH_SPARK_CONF", str(fleet / "spark.conf"), f"{accepts}, got {str(fleet / 'spark.conf')!r}: no such file"),
        ("FLEETHEALTH_LOCK_WAIT_S", "abc", "expected a number of seconds >= 0, got 'abc'"),
        ("FLEETHEALTH_PULL_TIMEOUT_S", "soon", "expected a number of seconds > 0, got 'soon'"),
        ("FLEETHEALTH_TABLES", "hdfs://namenode:8020/fleet/tables",
         "expected a folder, or an s3a:// or file:/ URI (what Spark and delta-rs both read), "
         "got 'hdfs://namenode:8020/fleet/tables'"),
        ("FLEETHEALTH_WINDOW_MAX_HOURS", "a year", "expected a whole number of hours >= 1, got 'a year'"),
    ]


@pytest.mark.parametrize("case", range(6))
@pytest.mark.parametrize("command", ["pull", "run", "query"])
def test_a_bad_setting_is_one_line_before_any_host_or_jvm(fleet, command, case):
    env, value, says = bad_settings(fleet)[case]
    args = ["query", "SELECT 1"] if command == "query" else [command, "--inventory", "inventory.yaml", *HOUR]
    proc = fleethealth(fleet, *args, **{env: value})
    assert (proc.returncode, proc.stderr, proc.stdout) == (2, f"fleethealth: {env}: {says}\n", "")
    assert list((fleet / "lakehouse").iterdir()) == []      # nothing landed, no warehouse, no lock


def test_two_bad_settings_are_a_line_each(fleet):
    proc = fleethealth(fleet, "pull", "--inventory", "inventory.yaml", *HOUR,
                       FLEETHEALTH_LOCK_WAIT_S="abc", FLEETHEALTH_PULL_TIMEOUT_S="soon")
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "fleethealth: FLEETHEALTH_LOCK_WAIT_S: expected a number of seconds >= 0, got 'abc'",
        "fleethealth: FLEETHEALTH_PULL_TIMEOUT_S: expected a number of seconds > 0, got 'soon'"]


@pytest.mark.parametrize("entry, args", [
    ("layers.py", ["--hour", "2026-11-20T10:00Z", "--inventory", "inventory.yaml"]),
    ("backfill.py", ["--from", "2026-11-20T10:00Z", "--to", "2026-11-20T12:00Z", "--inventory", "inventory.yaml"]),
    ("maintenance.py", []),
])
def test_the_spark_submit_entry_points_check_the_settings_first(fleet, entry, args):
    """Run as spark-submit runs them (the driver's Python): a usage error, before the session."""
    clean = {k: v for k, v in os.environ.items() if k not in config.SETTINGS}
    proc = subprocess.run([sys.executable, str(PROJECT / "spark" / entry), *args], capture_output=True, text=True,
                          timeout=120, cwd=fleet, env={**clean, "FLEETHEALTH_LAKEHOUSE": str(fleet / "lakehouse"),
                                                       "FLEETHEALTH_LOCK_WAIT_S": "abc"})
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == \
        f"{entry}: error: FLEETHEALTH_LOCK_WAIT_S: expected a number of seconds >= 0, got 'abc'"
    assert list((fleet / "lakehouse").iterdir()) == []


@pytest.mark.parametrize("start, end, env, says", [
    ("0001-01-01T00:00Z", "9999-12-31T23:00Z", {},
     "not a time of the years 1970 to 9999: '0001-01-01T00:00Z' (e.g. 2026-11-20T10:00Z)"),
    ("1969-12-31T23:00Z", "1970-01-01T01:00Z", {},
     "not a time of the years 1970 to 9999: '1969-12-31T23:00Z' (e.g. 2026-11-20T10:00Z)"),
    ("2026-11-20T10:00Z", "9999-12-31T23:00-05:00", {},
     "not a time of the years 1970 to 9999: '9999-12-31T23:00-05:00' (e.g. 2026-11-20T10:00Z)"),
    ("1970-01-01T00:00Z", "9999-12-31T23:00Z", {},
     "--from 1970-01-01T00:00Z --to 9999-12-31T23:00Z: 70,389,527 hours; a window holds at most 8,760 "
     "(FLEETHEALTH_WINDOW_MAX_HOURS)"),
    ("2026-01-01T00:00Z", "2027-01-01T01:00Z", {},
     "--from 2026-01-01T00:00Z --to 2027-01-01T01:00Z: 8,761 hours; a window holds at most 8,760 "
     "(FLEETHEALTH_WINDOW_MAX_HOURS)"),
    ("2026-11-20T10:00Z", "2026-11-20T13:00Z", {"FLEETHEALTH_WINDOW_MAX_HOURS": "2"},
     "--from 2026-11-20T10:00Z --to 2026-11-20T13:00Z: 3 hours; a window holds at most 2 "
     "(FLEETHEALTH_WINDOW_MAX_HOURS)"),
])
def test_a_window_is_bounded(fleet, start, end, env, says):
    proc = fleethealth(fleet, "pull", "--inventory", "inventory.yaml", "--from", start, "--to", end, **env)
    assert (proc.returncode, proc.stderr, proc.stdout) == (2, f"fleethealth: {says}\n", "")
    assert list((fleet / "lakehouse").iterdir()) == []


def test_a_window_of_the_most_hours_is_pulled(fleet):
    proc = fleethealth(fleet, "pull", "--inventory", "inventory.yaml", "--from", "2026-11-20T09:00Z",
                       "--to", "2026-11-20T11:00Z", FLEETHEALTH_WINDOW_MAX_HOURS="2")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["2026-11-20T09:00:00+00:00: 0 files landed",
                                        "2026-11-20T10:00:00+00:00: 1 files landed"]
