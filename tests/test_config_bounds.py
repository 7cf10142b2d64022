"""Configuration is bounded (issue 59, item 7): the operator's YAML files (the inventory, the
thresholds) through one reader (runtime/yamlfile.py: a regular file, a size cap, an alias-expansion
limit), versions as strings, KRaft from 3.3, every setting and `ends_after_seconds` with an upper
bound, and no secret in a message. Each mistake is one exact line."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import tracemalloc
from pathlib import Path

import pytest

from fleethealth.fleet.inventory import InventoryError
from fleethealth.gold import thresholds
from fleethealth.gold.thresholds import ThresholdError
from fleethealth.notify.inventory import load_inventory  # with notifications: (their bounds are tested too)
from fleethealth.runtime import config, yamlfile

PROJECT = Path(__file__).resolve().parents[1]


def inventory(tmp_path: Path, host: str, *, controller: str = "") -> Path:
    path = tmp_path / "inventory.yaml"
    path.write_text("clusters:\n  - name: c1\n    root: /archive\n    hosts:\n"
                    "      - {host: k1, role: kafka, broker_id: 1, kafka_version: '3.6.1'}\n"
                    f"      - {host}\n" + (f"      - {controller}\n" if controller else ""))
    return path


def refusal(path: Path) -> str:
    with pytest.raises(InventoryError) as err:
        load_inventory(path)
    [line] = err.value.problems
    return line


def bomb() -> str:
    """457 bytes of YAML aliases nested nine deep: 9**10 values once expanded."""
    head = "a: &a [lolol, lolol, lolol, lolol, lolol, lolol, lolol, lolol, lolol]\n"
    return head + "".join(f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]\n" for a, b in zip("abcdefghi", "bcdefghij"))


def test_nested_aliases_in_a_thresholds_file_are_refused_fast(tmp_path):
    path = tmp_path / "thresholds.yaml"
    path.write_text(bomb())
    assert path.stat().st_size == 457
    t0 = time.monotonic()
    with pytest.raises(ThresholdError) as err:
        thresholds.load(path)
    seconds = time.monotonic() - t0
    assert str(err.value) == (f"{path}: its YAML expands to more than 100000 values (aliases nested in aliases); "
                              "a thresholds file needs far fewer")
    assert seconds < 1, seconds                                   # 44 s and 2.6 GB before


def test_an_unquoted_version_is_refused_with_the_hint_to_quote_it(tmp_path):
    path = inventory(tmp_path, "{host: k2, role: kafka, broker_id: 2, kafka_version: 0.10}")
    assert refusal(path) == (f"{path}: clusters[c1].hosts[k2].kafka_version: expected a Kafka version in quotes, "
                             "e.g. \"0.10\" (YAML reads an unquoted 0.10 as the number 0.1), got 0.1")
    path = inventory(tmp_path, "{host: k2, role: kafka, broker_id: 2, kafka_version: '0.10'}")
    assert load_inventory(path).host("k2").kafka_version == "0.10"


def test_a_kraft_controller_before_3_3_is_refused(tmp_path):
    path = inventory(tmp_path, "{host: k2, role: kafka, broker_id: 2, kafka_version: '3.6.1'}",
                     controller="{host: q1, role: controller, node_id: 3000, kafka_version: '3.2.3'}")
    assert refusal(path) == (f"{path}: clusters[c1].hosts[q1].kafka_version: a KRaft controller of Kafka 3.2.3; "
                             "KRaft needs Kafka 3.3 or later")
    path.write_text(path.read_text().replace("'3.2.3'", "'3.3.1'"))
    assert load_inventory(path).cluster("c1").mode == "kraft"


@pytest.mark.parametrize("env, value, line", [
    ("FLEETHEALTH_PULL_TIMEOUT_S", "inf", "expected at most 86,400 seconds (a day), got inf"),
    ("FLEETHEALTH_LOCK_WAIT_S", "1e300", "expected at most 86,400 seconds (a day), got 1e+300"),
    ("FLEETHEALTH_PULL_RETRY_DELAY_S", "86401", "expected at most 86,400 seconds (a day), got 86401.0"),
    ("FLEETHEALTH_NOTIFY_TIMEOUT_S", "1e9", "expected at most 86,400 seconds (a day), got 1000000000.0"),
    ("FLEETHEALTH_PULL_RETRIES", "1000000", "expected at most 100, got 1000000"),
    ("FLEETHEALTH_WINDOW_MAX_HOURS", "99999999", "expected at most 87,660 hours (ten years), got 99999999"),
    ("FLEETHEALTH_RUN_WINDOW_MB", "1e12", "expected at most 1,048,576 MB (a TB), got 1000000000000.0"),
    ("FLEETHEALTH_GX_PANDAS_MAX_ROWS", "1000000000", "expected at most 100,000,000, got 1000000000"),
])
def test_a_setting_above_its_bound_is_one_line(monkeypatch, env, value, line):
    monkeypatch.setenv(env, value)
    with pytest.raises(config.SettingError) as err:
        config.settings()
    assert str(err.value) == f"{env}: {line}"


MAXIMA = {"FLEETHEALTH_LOCK_WAIT_S": "86400", "FLEETHEALTH_PULL_RETRY_DELAY_S": "86400",
          "FLEETHEALTH_PULL_TIMEOUT_S": "86400", "FLEETHEALTH_NOTIFY_SEND_TIMEOUT_S": "86400",
          "FLEETHEALTH_NOTIFY_TIMEOUT_S": "86400", "FLEETHEALTH_PULL_RETRIES": "100",
          "FLEETHEALTH_WINDOW_MAX_HOURS": "87660", "FLEETHEALTH_RUN_WINDOW_HOURS": "87660",
          "FLEETHEALTH_NOTIFY_MAX_AGE_HOURS": "87660", "FLEETHEALTH_RUN_WINDOW_MB": "1048576",
          "FLEETHEALTH_GX_PANDAS_MAX_ROWS": "100000000"}


def test_the_dags_import_with_every_setting_at_its_maximum(tmp_path):
    code = ("from airflow.dag_processing.dagbag import DagBag\n"
            f"bag = DagBag(dag_folder={str(PROJECT / 'dags')!r})\n"
            "assert bag.import_errors == {}, bag.import_errors\n"
            "print(sorted(bag.dags))\n")
    env = dict(os.environ, AIRFLOW__CORE__LOAD_EXAMPLES="False", **MAXIMA)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=180,
                          cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == str(sorted(
        [config.BACKFILL_DAG_ID, config.DAG_ID, config.MAINTENANCE_DAG_ID]))


def test_ends_after_seconds_has_an_upper_bound(tmp_path):
    path = inventory(tmp_path, "{host: k2, role: kafka, broker_id: 2, kafka_version: '3.6.1'}")
    path.write_text(path.read_text() + "notifications:\n"
                    "  - {name: am, alertmanager: 'http://am:9093', ends_after_seconds: 99999999999999}\n")
    assert refusal(path) == (f"{path}: notifications[am].ends_after_seconds: expected at most 604800 (a week), "
                             "got 99999999999999")


def _refused_within(path: Path, seconds: float) -> str:
    """The one line load_inventory refuses `path` with, in a thread given `seconds` (a hang fails)."""
    out: list[str] = []
    worker = threading.Thread(target=lambda: out.append(refusal(path)), daemon=True)
    worker.start()
    worker.join(seconds)
    assert out, f"{path}: no answer within {seconds} s"
    return out[0]


def test_an_inventory_that_is_no_regular_file_or_too_big_is_one_line(tmp_path):
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    assert _refused_within(Path("/dev/zero"), 2) == ("/dev/zero: cannot read inventory: a device, not a regular file")
    assert _refused_within(fifo, 2) == f"{fifo}: cannot read inventory: a named pipe, not a regular file"
    assert _refused_within(tmp_path, 2) == f"{tmp_path}: cannot read inventory: a folder, not a regular file"
    big = tmp_path / "big.yaml"
    with big.open("wb") as f:                                  # sparse: 4 GiB of nothing on disk
        f.truncate(4 * 2**30)
    tracemalloc.start()
    try:
        line = _refused_within(big, 5)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert line == f"{big}: cannot read inventory: larger than 8 MiB; an inventory needs far less"
    assert peak < 3 * yamlfile.MAX_BYTES, peak                  # read up to the cap, never the whole file
    with pytest.raises(ThresholdError) as err:
        thresholds.load(fifo)
    assert str(err.value) == f"{fifo}: cannot read thresholds: a named pipe, not a regular file"


@pytest.mark.parametrize("url, line", [
    ("http://admin:s3cr3tpw@[jolokia:8778/jolokia",
     "expected an http(s) URL such as http://host:8778/jolokia (not shown: it may hold a secret)"),
    ("http://admin:s3cr3tpw@jolokia:port/jolokia",
     "expected an http(s) URL such as http://host:8778/jolokia (not shown: it may hold a secret)"),
    ("jolokia:s3cr3tpw@host/jolokia",
     "expected an http(s) URL such as http://host:8778/jolokia (not shown: it may hold a secret)"),
    ("http://admin:s3cr3tpw@jolokia:8778/jolokia",
     "must not carry credentials (user:password@, a query or fragment): keep secrets in Airflow connections"),
])
def test_a_malformed_jolokia_url_never_echoes_its_password(tmp_path, url, line):
    path = inventory(tmp_path, "{host: k2, role: kafka, broker_id: 2, kafka_version: '3.6.1', transport: http, "
                     f"jolokia_url: '{url}'}}")
    got = refusal(path)
    assert got == f"{path}: clusters[c1].hosts[k2].jolokia_url: {line}"
    assert "s3cr3tpw" not in got


def test_a_tables_uri_with_a_password_is_refused_without_it(monkeypatch):
    monkeypatch.setenv("FLEETHEALTH_TABLES", "hdfs://fleet:s3cr3tpw@namenode:8020/fleet/tables")
    with pytest.raises(config.SettingError) as err:
        config.settings()
    assert str(err.value) == ("FLEETHEALTH_TABLES: expected a folder, or an s3a:// or file:/ URI (what Spark and "
                              "delta-rs both read), got 'hdfs://…@namenode:8020/fleet/tables'")
