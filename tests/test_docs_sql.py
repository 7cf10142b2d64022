"""Every SQL example of README and docs/ (each ```sql block, marked `<!-- readme-test: sql -->`:
tests/readme_blocks.py) runs as written with `fleethealth query`, on its default engine (DuckDB), against a
small lakehouse (tests/report_lakehouse.py's, plus the gold.metadata_divergence it leaves out, with the
columns of its suite, and a row for each question an example asks: EVENTS), and answers with rows. No Spark."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
import report_lakehouse as lh
from readme_blocks import block, blocks

PROJECT = Path(__file__).resolve().parents[1]
SQL = [b for b in blocks() if b.kind == "sql"]
HOUR = datetime(2026, 11, 20, 11, tzinfo=timezone.utc)
TS = pa.timestamp("us", tz="UTC")


def query(lakehouse: Path, sql: str) -> subprocess.CompletedProcess:
    """`fleethealth query` as a user runs it (this checkout's library), the default engine."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(PROJECT / "include"), os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-m", "fleethealth.cli.main", "query", "--lakehouse", str(lakehouse),
                           "--format", "json", sql], capture_output=True, text=True, timeout=120, env=env)


def metadata_divergence() -> pa.Table:
    """One lag window: broker 3 stuck at epoch 426 while the controller went 427…435 (post-mortem 5)."""
    t0 = datetime(2026, 11, 20, 11, 5, tzinfo=timezone.utc)
    return pa.table({
        "cluster": ["pm5"], "topic": ["orders"], "partition": pa.array([7], pa.int32()), "broker": pa.array([3], pa.int32()),
        "hour": pa.array([HOUR], TS), "stuck_epoch": pa.array([426], pa.int32()),
        "controller_min_epoch": pa.array([427], pa.int32()), "controller_max_epoch": pa.array([435], pa.int32()),
        "epochs_not_taken": pa.array([list(range(427, 436))], pa.list_(pa.int32())),
        "lag_start": pa.array([t0], TS), "lag_end": pa.array([HOUR.replace(minute=59)], TS),
        "caught_up_ts": pa.array([None], TS), "lag_ms": pa.array([3_240_000], pa.int64()),
        "not_leader_errors": pa.array([12], pa.int64())})


def availability() -> pa.Table:
    """Post-mortem 2's cluster this hour: broker 2 gone, 4 partitions offline (counted by controller 1), 7
    under min ISR on broker 3; and an hour of last week with nothing wrong."""
    now, week = NOW, NOW - timedelta(days=8)
    rows = [(now, 1, 0, 4, 0, 1, 12), (now, 3, 31, 0, 7, 0, 0), (week, 1, 0, 0, 0, 1, 240)]
    col = lambda i: [r[i] for r in rows]
    return pa.table({
        "cluster": ["pm2"] * 3, "broker_id": pa.array(col(1), pa.int32()), "hour": pa.array(col(0), TS),
        "samples": pa.array([12, 12, 240], pa.int32()), "first_ts": pa.array(col(0), TS),
        "last_ts": pa.array([h + timedelta(minutes=55) for h in col(0)], TS),
        "max_under_replicated": pa.array(col(2), pa.int64()), "max_offline": pa.array(col(3), pa.int64()),
        "max_under_min_isr": pa.array(col(4), pa.int64()), "max_active_controller": pa.array(col(5), pa.int64()),
        "active_controller_samples": pa.array(col(6), pa.int32()), "log_dirs": pa.array([1] * 3, pa.int32()),
        "log_dir_bytes": pa.array([10**9] * 3, pa.int64()),
        "log_dir_at": pa.array([h + timedelta(minutes=45) for h in col(0)], TS),
        # broker 3's disk, from node_exporter: 80 GB of 1 TB left, falling 20 GB/h (4 h to full)
        "disk_mountpoint": [None, "/var/lib/kafka", None], "disk_free_bytes": pa.array([None, 8 * 10**10, None], pa.int64()),
        "disk_size_bytes": pa.array([None, 10**12, None], pa.int64()),
        "disk_free_change_per_hour": pa.array([None, -2e10, None], pa.float64()),
        "disk_hours_to_full": pa.array([None, 4.0, None], pa.float64()),
        "disk_first_ts": pa.array([None, now, None], TS), "disk_last_ts": pa.array([None, now + timedelta(minutes=59), None], TS)})


@pytest.fixture(scope="module")
def lakehouse(tmp_path_factory):
    root = lh.build(tmp_path_factory.mktemp("docs-sql") / "lakehouse")
    for name, table in (("metadata_divergence", metadata_divergence()), ("cluster_availability_hourly", availability())):
        suite = json.loads((PROJECT / f"expectations/gold.{name}.json").read_text())
        [columns] = [e["kwargs"]["column_set"] for e in suite["expectations"]
                     if e["type"] == "expect_table_columns_to_match_set"]
        assert sorted(table.column_names) == sorted(columns)        # the table as its definition says
        write_deltalake(str(root / "gold" / name), table, partition_by=["hour"])
    for name, change in EVENTS.items():      # what the examples look for, in the tables' own columns
        path = str(root / "gold" / name)
        rows = DeltaTable(path).to_pyarrow_table()
        more = [change(dict(rows.to_pylist()[0]))]
        write_deltalake(path, pa.Table.from_pylist(more, schema=rows.schema), mode="append", partition_by=["hour"])
    return root


NOW = datetime.now(timezone.utc).replace(minute=0, second=0, microsecond=0)   # the examples of "today", "this week"
# a row each example's question finds: a partition shrunk to its leader at 11:00, a ZooKeeper session lost and
# a saturated request queue in the current hour
EVENTS = {
    "isr_churn": lambda r: dict(r, topic="payments", partition=7, hour=HOUR, isr_first=[1, 2, 3], isr_last=[1],
                                min_isr_size=1, shrunk_to_leader=True, under_replicated_at_end=True, dropped_brokers=[2, 3]),
    # "today" as the query's now() sees it: the hour after the one this module was imported in, so a run that
    # crosses midnight UTC between the two still finds it
    "zk_sessions": lambda r: dict(r, hour=NOW + timedelta(hours=1), expiries=1, expiry_lines=1,
                                  server_expired_ts=NOW + timedelta(hours=1, minutes=3)),
    "request_saturation": lambda r: dict(r, hour=NOW, saturated_samples=12, max_queue=500.0, min_handler_idle=0.01),
}


def test_the_docs_have_sql_examples_in_several_files():
    assert len(SQL) >= 8 and {b.path for b in SQL} >= {"README.md", "docs/gold-tables.md"}


@pytest.mark.parametrize("example", SQL, ids=[b.where for b in SQL])
def test_the_sql_example_runs_on_duckdb(lakehouse, example):
    proc = query(lakehouse, example.text)
    assert proc.returncode == 0, f"{example.where}: {proc.stderr}"
    assert proc.stderr == "", f"{example.where}: {proc.stderr}"
    assert [json.loads(line) for line in proc.stdout.splitlines()], f"{example.where}: no rows"   # it answers something


def test_the_examples_answer_what_they_say(lakehouse):
    """A few examples' answers on the small lakehouse: the open incidents, the stuck broker."""
    [open_now] = [b for b in SQL if "FROM gold.incidents WHERE status = 'open'" in b.text]
    rows = [json.loads(line) for line in query(lakehouse, open_now.text).stdout.splitlines()]
    assert {(r["cluster"], r["kind"]) for r in rows} == {(lh.DEAD, "log_cleaner_dead"), (lh.DEAD, "offsets_partition_bloat")}
    [behind] = [b for b in SQL if "FROM\ngold.metadata_divergence" in b.text or "FROM gold.metadata_divergence" in b.text]
    assert [(r["broker"], r["stuck_epoch"], r["lag_ms"]) for r in
            map(json.loads, query(lakehouse, behind.text).stdout.splitlines())] == [(3, 426, 3_240_000)]
    [available] = [b for b in SQL if "FROM gold.cluster_availability_hourly WHERE hour >= now() - INTERVAL 7 DAY\nGROUP" in b.text]
    assert [(r["cluster"], r["offline"], r["under_min_isr"], r["under_replicated"], r["controllers"]) for r in
            map(json.loads, query(lakehouse, available.text).stdout.splitlines())] == [("pm2", 4, 7, 31, [1])]
    [filling] = [b for b in SQL if "disk_hours_to_full <" in b.text]
    assert [(r["broker_id"], r["disk_mountpoint"], r["hours_to_full"]) for r in
            map(json.loads, query(lakehouse, filling.text).stdout.splitlines())] == [(3, "/var/lib/kafka", 4.0)]


def test_the_sql_of_readmes_demo_query_runs_here(lakehouse):
    """README's query of the demo (a command line: test_scenarios.py runs it on the demo's lakehouse)."""
    [sql] = re.findall(r'fleethealth query --lakehouse demo/lakehouse "([^"]+)"', block("run", "demo-query").text)
    proc = query(lakehouse, sql)
    assert proc.returncode == 0, proc.stderr
    counts = {r["kind"]: r["n"] for r in map(json.loads, proc.stdout.splitlines())}
    assert counts["log_cleaner_dead"] == 1 and counts["offsets_partition_bloat"] == 1, counts


def test_spark_sql_of_the_old_docs_fails_here(lakehouse):
    """What the harness catches: the Spark SQL these docs had (a path as a table, Spark's functions)."""
    assert query(lakehouse, "SELECT * FROM gold.request_saturation WHERE hour >= date_sub(current_date(), 7)").returncode != 0
    assert query(lakehouse, "SELECT * FROM delta.`/tmp/lakehouse/gold/isr_churn`").returncode != 0
