"""Issue 33: the Delta tables on an object store. A real S3 server (S3Proxy, on loopback) holds them;
FLEETHEALTH_TABLES=s3a://… and the standard AWS variables are all a user sets.

One `fleethealth run` of an hour writes every table through Spark's S3A (hadoop-aws, jars from
Maven) and the notifications outbox through delta-rs; the readers without Spark (`fleethealth
query`, `report`) and Spark's query engine read them back from the server. The lakehouse folder keeps
the local state only: landing, locks, the report, Data Docs."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from realservers import Receiver, S3Proxy

from fleethealth.cli import demo
from fleethealth.lake import tables as lake
from fleethealth.lake.catalog import Lakehouse

pytestmark = [pytest.mark.spark, pytest.mark.slow]

HOUR = demo.START
BUCKET = "fleet"
ROOT = f"s3a://{BUCKET}/prod/tables"
FLEETHEALTH = str(Path(sys.executable).with_name("fleethealth"))
INCLUDE = Path(__file__).resolve().parents[1] / "include"
LOCAL_STATE = {"_locks", "landing", "quality", "report"}


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    with S3Proxy(tmp_path_factory.mktemp("s3"), BUCKET) as server:
        yield server


@pytest.fixture(scope="module")
def hook():
    receiver = Receiver()
    yield receiver
    receiver.stop()


def fleethealth(s3, *args: str, lakehouse: Path | None = None) -> str:
    """`fleethealth ARGS` with the tables on the server: FLEETHEALTH_TABLES is those of the deployment's
    FLEETHEALTH_LAKEHOUSE (`lakehouse`), as a deployment sets them together. The demo's hour is days
    old: a max_age of a year keeps its transitions news (the news rule is test_notify_delivery's)."""
    env = {**os.environ, **s3.env, "FLEETHEALTH_TABLES": ROOT, "PYTHONPATH": str(INCLUDE),
           "FLEETHEALTH_NOTIFY_MAX_AGE_HOURS": "8760"}
    if lakehouse is not None:
        env["FLEETHEALTH_LAKEHOUSE"] = str(lakehouse)
    t0 = time.monotonic()
    proc = subprocess.run([FLEETHEALTH, *args], env=env, capture_output=True, text=True, timeout=900)
    print(f"fleethealth {args[0]}: {time.monotonic() - t0:.0f} s")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.fixture(scope="module")
def ran(s3, hook, tmp_path_factory):
    """One hour of a dead log cleaner beside a healthy cluster, run with the tables on the server and
    a webhook channel in the inventory."""
    root = tmp_path_factory.mktemp("fleet")
    fleethealth(s3, "simulate", "--out", str(root), "--scenario", "healthy,pm3-dead-cleaner",
                "--from", HOUR.isoformat(), "--to", (HOUR + timedelta(hours=1)).isoformat(),
                "--brokers", "3", "--jmx-samples-per-broker-hour", "0")
    inventory = root / "inventory.yaml"
    with inventory.open("a") as f:
        f.write(f"notifications:\n  - name: oncall-hook\n    webhook: {hook.url}/hook\n")
    lakehouse = root / "lakehouse"
    out = fleethealth(s3, "run", "--inventory", str(inventory), "--from", HOUR.isoformat(),
                      "--to", (HOUR + timedelta(hours=1)).isoformat(), "--lakehouse", str(lakehouse),
                      lakehouse=lakehouse)
    return lakehouse, out


def objects(s3, prefix: str) -> list[str]:
    from pyarrow import fs

    return [i.path for i in s3.filesystem().get_file_info(fs.FileSelector(prefix, recursive=True, allow_not_found=True))
            if i.type == fs.FileType.File]


def test_every_table_is_on_the_server_and_the_lakehouse_keeps_local_state_only(s3, ran):
    lakehouse, out = ran
    assert "CRITICAL pm3-dead-cleaner log_cleaner_dead broker-2" in out, out
    stored = objects(s3, f"{BUCKET}/prod/tables")
    for qualified, t in lake.TABLES.items():
        first = f"{BUCKET}/prod/tables/{t.layer}/{t.name}/_delta_log/00000000000000000000.json"
        assert first in stored, qualified
    assert not [p for p in stored if "/_staging/" in p]          # the hour passed its gates: nothing staged
    assert {p.name for p in lakehouse.iterdir()} <= LOCAL_STATE
    assert not list(lakehouse.rglob("_delta_log"))
    assert (lakehouse / "report" / "index.html").is_file()


def test_counts_reconcile_and_the_outbox_on_the_server_matches_what_the_webhook_got(s3, ran, hook, monkeypatch):
    import deltalake

    lakehouse, _ = ran
    for key, value in {**s3.env, "FLEETHEALTH_TABLES": ROOT, "FLEETHEALTH_LAKEHOUSE": str(lakehouse)}.items():
        monkeypatch.setenv(key, value)                              # delta-rs here: the run's variables
    rows = {q: deltalake.DeltaTable(lake.table(q).path(Lakehouse.from_settings())).to_pyarrow_table()
            for q in ("bronze.records", "silver.reconciliation", "gold.incidents", "gold.notifications")}
    recon = rows["silver.reconciliation"].to_pylist()
    assert sum(r["bronze_records"] for r in recon) == rows["bronze.records"].num_rows > 7000
    assert all(r["unaccounted"] == 0 and r["bronze_records"] == r["silver_records"] + r["quarantined_records"]
               for r in recon), recon
    incidents = {(r["cluster"], r["kind"], r["entity"]) for r in rows["gold.incidents"].to_pylist()}
    assert ("pm3-dead-cleaner", "log_cleaner_dead", "broker-2") in incidents
    outbox = rows["gold.notifications"].to_pylist()
    assert {(r["channel"], r["status"]) for r in outbox} == {("oncall-hook", "sent")}
    assert len(outbox) == len(hook.bodies) == len(incidents)     # each incident's opening, once


def test_the_readers_without_spark_and_sparks_query_engine_read_the_server(s3, ran, tmp_path):
    lakehouse, _ = ran
    sql = "SELECT kind, entity FROM gold.incidents WHERE severity = 'critical'"
    for engine in ("duckdb", "spark"):
        out = fleethealth(s3, "query", "--lakehouse", str(lakehouse), "--format", "json", "--engine", engine, sql,
                          lakehouse=lakehouse)
        assert [json.loads(line) for line in out.splitlines() if line.startswith("{")] == [
            {"kind": "log_cleaner_dead", "entity": "broker-2"}], (engine, out)
    fleethealth(s3, "report", "--lakehouse", str(lakehouse), "--from", HOUR.isoformat(),
                "--to", (HOUR + timedelta(hours=1)).isoformat(), "--out", str(tmp_path / "report"), lakehouse=lakehouse)
    page = (tmp_path / "report" / "index.html").read_text()
    assert "log_cleaner_dead" in page and "pm3-dead-cleaner" in page
