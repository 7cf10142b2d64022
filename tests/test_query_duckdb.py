"""`fleethealth query` on DuckDB (the default engine): the lakehouse's tables by their usual names, read
only, nothing outside them, the same output options as the Spark engine; and no table a reader
without Spark cannot read (deletion vectors). The lakehouse here is written by delta-rs, no Spark,
except the last test's (written by the jobs' own code, tables.py)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import pytest

from fleethealth.lake.catalog import Lakehouse
from fleethealth.cli import main as cli
from fleethealth.runtime.frames import local_frame

PROJECT = Path(__file__).resolve().parents[1]
TAIL = ("; `query` only reads (SELECT/WITH/VALUES/FROM, SHOW, DESCRIBE, SUMMARIZE, EXPLAIN). Writes and "
        "maintenance run in the DAGs (spark/maintenance.py)")
SANDBOX = ("fleethealth: query refused: Permission Error: Cannot access file \"{}\" - file system operations "
           "are disabled by configuration; `query` reads the lakehouse's tables only")


def _hour(h: int) -> datetime:
    return datetime(2026, 11, 20, h, tzinfo=timezone.utc)


@pytest.fixture
def lake(tmp_path) -> Path:
    """gold.incidents (one file), silver.kafka_events (hourly: partitioned by hour), bronze.records."""
    import pyarrow as pa
    from deltalake import write_deltalake

    root = tmp_path / "lakehouse"
    write_deltalake(str(root / "gold" / "incidents"), pa.table({
        "cluster": ["c1", "c1", "c2"], "kind": ["broker_deadlock", "log_cleaner_dead", "data_missing"]}))
    write_deltalake(str(root / "silver" / "kafka_events"), pa.table({
        "host": ["k1", "k1", "k2", "k2"], "level": ["INFO", "WARN", "ERROR", "INFO"],
        "hour": pa.array([_hour(10), _hour(10), _hour(11), _hour(11)], pa.timestamp("us", tz="UTC"))}),
        partition_by=["hour"])
    write_deltalake(str(root / "bronze" / "records"), pa.table({
        "host": ["k1"], "record": ["[2026-11-20 10:00:00,000] INFO started"],
        "hour": pa.array([_hour(10)], pa.timestamp("us", tz="UTC"))}), partition_by=["hour"])
    return root


def query(lake: Path, *args: str) -> int:
    return cli.main(["query", "--lakehouse", str(lake), *args])


def test_every_layer_is_read_by_its_usual_name(lake, capsys):
    sql = "SELECT kind, count(*) AS n FROM gold.incidents GROUP BY kind ORDER BY kind"
    assert query(lake, "--format", "csv", sql) == 0
    assert capsys.readouterr().out == "kind,n\nbroker_deadlock,1\ndata_missing,1\nlog_cleaner_dead,1\n"
    assert query(lake, sql) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split() == ["|", "kind", "|", "n", "|"]
    assert [line.split()[1:4:2] for line in out[3:6]] == [["broker_deadlock", "1"], ["data_missing", "1"],
                                                         ["log_cleaner_dead", "1"]]
    # the hourly table's partition column, in UTC; one hour of it; a join across layers
    assert query(lake, "--format", "json", "SELECT hour, count(*) AS n FROM silver.kafka_events "
                 "GROUP BY hour ORDER BY hour") == 0
    assert [json.loads(x) for x in capsys.readouterr().out.splitlines()] == [
        {"hour": "2026-11-20T10:00:00.000Z", "n": 2}, {"hour": "2026-11-20T11:00:00.000Z", "n": 2}]
    assert query(lake, "--format", "csv", "SELECT level FROM silver.kafka_events "
                 "WHERE hour = TIMESTAMPTZ '2026-11-20 11:00:00+00' ORDER BY level") == 0
    assert capsys.readouterr().out == "level\nERROR\nINFO\n"
    assert query(lake, "--format", "csv", 'SELECT b.host, count(*) AS n FROM "bronze"."records" b '
                 "JOIN SILVER.KAFKA_EVENTS s USING (host, hour) GROUP BY ALL") == 0
    assert capsys.readouterr().out == "host,n\nk1,2\n"


def test_a_statement_opens_only_the_tables_it_names(lake, monkeypatch, capsys):
    import deltalake

    opened = []
    real = deltalake.DeltaTable

    class Recording(real):
        def __init__(self, path, *args, **kwargs):
            opened.append(Path(path).relative_to(lake).as_posix())
            super().__init__(path, *args, **kwargs)

    monkeypatch.setattr(deltalake, "DeltaTable", Recording)
    assert query(lake, "--format", "csv", "SELECT count(*) AS n FROM gold.incidents") == 0
    assert capsys.readouterr().out == "n\n3\n" and opened == ["gold/incidents"]
    opened.clear()
    # naming none of them (the catalog's own views): every table
    assert query(lake, "--format", "csv", "SELECT schema_name, view_name FROM duckdb_views() "
                 "WHERE NOT internal AND schema_name <> 'main' ORDER BY ALL") == 0
    assert capsys.readouterr().out == ("schema_name,view_name\nbronze,records\ngold,incidents\n"
                                       "silver,kafka_events\n")
    assert sorted(opened) == ["bronze/records", "gold/incidents", "silver/kafka_events"]


@pytest.mark.parametrize("sql, first", [
    ("WITH k AS (SELECT kind FROM gold.incidents) SELECT count(*) AS n FROM k", {"n": 3}),
    ("VALUES (1), (2)", {"col0": 1}),
    ("FROM gold.incidents SELECT kind ORDER BY kind LIMIT 1", {"kind": "broker_deadlock"}),
    ("DESCRIBE gold.incidents", {"column_name": "cluster", "column_type": "VARCHAR", "null": "YES",
                                 "key": None, "default": None, "extra": None}),
    ("SHOW TABLES FROM gold", {"name": "incidents"}),
    ("SUMMARIZE SELECT kind FROM gold.incidents", None),
    ("EXPLAIN SELECT * FROM gold.incidents", None),
    ("EXPLAIN ANALYZE SELECT count(*) FROM gold.incidents", None),
    ("SELECT count(*) AS n FROM range(3)", {"n": 3}),
    ("SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = 'silver'", {"n": 1}),
])
def test_what_only_reads_runs(lake, capsys, sql, first):
    assert query(lake, "--format", "json", sql) == 0, capsys.readouterr().err
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert rows and (first is None or rows[0] == first)


# (statement, what the refusal says); <T> is a path under the test's folder that must stay absent
REFUSED = [
    ("INSERT INTO gold.incidents VALUES ('c9', 'made_up')", "INSERT writes rows (INSERT)"),
    ("INSERT OR REPLACE INTO gold.incidents VALUES ('c9', 'made_up')", "INSERT writes rows (INSERT)"),
    ("WITH d AS (SELECT 'c9' AS cluster, 'made_up' AS kind) INSERT INTO gold.incidents SELECT * FROM d",
     "INSERT writes rows (INSERT)"),
    ("DELETE FROM gold.incidents WHERE kind = 'broker_deadlock'", "DELETE/TRUNCATE removes rows (DELETE)"),
    ("TRUNCATE gold.incidents", "DELETE/TRUNCATE removes rows (DELETE)"),
    ("UPDATE gold.incidents SET kind = 'x'", "UPDATE changes rows (UPDATE)"),
    ("MERGE INTO gold.incidents t USING gold.incidents s ON t.kind = s.kind WHEN MATCHED THEN DELETE",
     "MERGE changes rows (MERGE_INTO)"),
    ("DROP VIEW gold.incidents", "DROP removes tables (DROP)"),
    ("DROP SCHEMA gold CASCADE", "DROP removes tables (DROP)"),
    ("CREATE TABLE gold.copy AS SELECT * FROM gold.incidents", "CREATE makes tables, views or secrets (CREATE)"),
    ("CREATE OR REPLACE VIEW gold.incidents AS SELECT 'pwned' AS x", "CREATE makes tables, views or secrets (CREATE)"),
    ("CREATE MACRO m(x) AS x + 1", "CREATE makes tables, views or secrets (CREATE)"),
    ("CREATE SECRET s (TYPE s3, KEY_ID 'k', SECRET 's')", "CREATE makes tables, views or secrets (CREATE)"),
    ("ALTER VIEW gold.incidents RENAME TO gone", "ALTER changes tables (ALTER)"),
    ("SET enable_external_access = true", "SET, RESET and USE change the session (SET)"),
    ("SET lock_configuration = false", "SET, RESET and USE change the session (SET)"),
    ("RESET enable_external_access", "SET, RESET and USE change the session (SET)"),
    ("SET VARIABLE x = 1", "SET, RESET and USE change the session (SET)"),
    ("USE gold", "SET, RESET and USE change the session (SET)"),
    ("PRAGMA enable_profiling", "PRAGMA changes or reads the database's settings (PRAGMA)"),
    ("PRAGMA database_list", "PRAGMA changes or reads the database's settings (PRAGMA)"),
    ("CALL pragma_version()", "CALL runs a procedure (CALL)"),
    ("CHECKPOINT", "CALL runs a procedure (CALL)"),
    ("COPY (SELECT 1 AS x) TO '<T>.csv'", "COPY writes or reads files (COPY)"),
    ("COPY gold.incidents TO '<T>.parquet' (FORMAT parquet)", "COPY writes or reads files (COPY)"),
    ("COPY gold.incidents FROM '/etc/hostname'", "COPY writes or reads files (COPY)"),
    ("EXPORT DATABASE '<T>'", "EXPORT DATABASE writes files (EXPORT)"),
    ("ATTACH '<T>.db' AS x", "ATTACH opens a database file (ATTACH)"),
    ("DETACH memory", "DETACH closes a database (DETACH)"),
    ("INSTALL httpfs", "INSTALL and LOAD add extensions (LOAD)"),
    ("LOAD httpfs", "INSTALL and LOAD add extensions (LOAD)"),
    ("FORCE INSTALL httpfs FROM core_nightly", "INSTALL and LOAD add extensions (LOAD)"),
    ("VACUUM", "VACUUM rewrites storage (VACUUM)"),
    ("BEGIN TRANSACTION", "transactions are for writes (TRANSACTION)"),
    ("PREPARE p AS SELECT 1", "PREPARE keeps a statement to run later (PREPARE)"),
    ("EXECUTE p", "EXECUTE runs another statement (EXECUTE)"),
    ("PIVOT gold.incidents ON kind", "it runs several statements (a PIVOT without IN (...)) (MULTI)"),
    ("SELECT 1; SELECT 2", "one statement at a time (2 given)"),
    ("SELECT 1; COPY (SELECT 1) TO '<T>.csv'", "one statement at a time (2 given)"),
    ("SELECT 1; DELETE FROM gold.incidents", "one statement at a time (2 given)"),
    ("EXPLAIN COPY (SELECT 1) TO '<T>.csv'", "EXPLAIN of COPY writes or reads files (COPY)"),
    ("EXPLAIN ANALYZE COPY (SELECT 1) TO '<T>.csv'", "EXPLAIN of COPY writes or reads files (COPY)"),
    ("EXPLAIN ANALYZE INSERT INTO gold.incidents VALUES ('c9', 'made_up')", "EXPLAIN of INSERT writes rows (INSERT)"),
    ("EXPLAIN (FORMAT json) DELETE FROM gold.incidents", "EXPLAIN of DELETE/TRUNCATE removes rows (DELETE)"),
    ("SELECT * FROM '/etc/hostname'",
     "/etc/hostname is not a table of the lakehouse (bronze, silver, gold.<table>): files are not read by path"),
    ("SELECT * FROM '<T>.csv'",
     "<T>.csv is not a table of the lakehouse (bronze, silver, gold.<table>): files are not read by path"),
    ("SELECT * FROM _delta_gold_incidents",
     "_delta_gold_incidents is not a table of the lakehouse (bronze, silver, gold.<table>): files are not read by path"),
]

# file reads by a table function: DuckDB's own sandbox refuses them (file, as its message names it)
FILE_READS = [
    ("SELECT * FROM read_csv('/etc/hostname')", "/etc/hostname"),
    ("SELECT * FROM read_text('/etc/hostname')", "/etc/hostname"),
    ("SELECT * FROM read_blob('/etc/hostname')", "/etc/hostname"),
    ("SELECT * FROM read_json('/etc/hostname')", "/etc/hostname"),     # its bind opens the file: sandbox first
    ("SELECT * FROM parquet_scan('/etc/hostname')", "/etc/hostname"),
    ("SELECT * FROM sniff_csv('/etc/hostname')", "/etc/hostname"),
    ("SELECT * FROM glob('/etc/*')", "/etc/*"),
    ("SELECT * FROM read_parquet('<L>/gold/incidents/*.parquet')", "<L>/gold/incidents/*.parquet"),
    ("WITH t AS (SELECT * FROM read_text('/etc/hostname')) SELECT * FROM t", "/etc/hostname"),
    ("SELECT * FROM gold.incidents WHERE kind IN (SELECT content FROM read_text('/etc/hostname'))", "/etc/hostname"),
]


def _state(lake: Path):
    from deltalake import DeltaTable

    table = DeltaTable(str(lake / "gold" / "incidents"))
    return table.version(), sorted(table.to_pyarrow_table().column("kind").to_pylist()), sorted(
        p.relative_to(lake).as_posix() for p in lake.rglob("*"))


def test_every_statement_that_is_not_a_read_is_refused_and_nothing_is_written(lake, tmp_path, capsys):
    before = _state(lake)
    target = tmp_path / "target"
    for sql, what in REFUSED:
        sql, what = (x.replace("<T>", str(target)) for x in (sql, what))
        assert query(lake, sql) == 2, sql
        captured = capsys.readouterr()
        assert (captured.out, captured.err) == ("", f"fleethealth: query refused: {what}{TAIL}\n"), sql
    for sql, path in FILE_READS:
        sql, path = (x.replace("<L>", str(lake)) for x in (sql, path))
        assert query(lake, sql) == 2, sql
        captured = capsys.readouterr()
        assert (captured.out, captured.err) == ("", SANDBOX.format(path) + "\n"), sql
    # a setting changed by a table function (logging to a file, profiling): the locked configuration
    for sql in (f"SELECT * FROM enable_logging(storage='file', storage_path='{target}')",
                "SELECT * FROM enable_profiling()"):
        assert query(lake, sql) == 2, sql
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err.startswith(
            "fleethealth: query error: Invalid Input Error: Cannot change configuration option "), sql
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lakehouse"]       # no <T>.csv, .db, .parquet, logs
    assert _state(lake) == before                    # no commit, the same rows, no file added


def test_the_spark_engines_write_forms_are_refused_too(lake, tmp_path, capsys):
    """tests/test_cli.py's WRITES (Spark SQL's forms): each one line and exit 2, a refusal, or DuckDB's
    syntax error or unknown function (RESTORE, OPTIMIZE, ADD JAR, TRANSFORM, reflect(), IDENTIFIER() are
    not DuckDB SQL); nothing changes."""
    from test_cli import WRITES

    before = _state(lake)
    for sql in WRITES:
        sql = sql.replace("<table>", str(lake / "gold" / "incidents"))
        assert query(lake, sql) == 2, sql
        captured = capsys.readouterr()
        line = captured.err.splitlines()[0]          # DuckDB's hints and caret line may follow
        assert captured.out == "" and line.startswith((
            "fleethealth: query refused: ", "fleethealth: query error: Parser Error: ",
            "fleethealth: query error: Catalog Error: Scalar Function with name reflect does not exist!",
            "fleethealth: query error: Catalog Error: Table Function with name identifier does not exist!")), (sql, line)
    assert _state(lake) == before


def test_errors_say_what_is_wrong(lake, tmp_path, capsys):
    assert query(lake, "SELECT * FROM gold.nope") == 2
    assert capsys.readouterr().err == (f"fleethealth: unknown table gold.nope in query; tables in {lake}: "
                                       "bronze.records, gold.incidents, silver.kafka_events\n")
    assert query(lake, "SELECT * FROM gold.incident_history") == 2       # in the catalog, not in this lakehouse
    assert capsys.readouterr().err.startswith("fleethealth: unknown table gold.incident_history in query; ")
    assert query(lake, "SELEC kind FROM gold.incidents") == 2
    assert capsys.readouterr().err == ('fleethealth: query error: Parser Error: syntax error at or near "SELEC"\n'
                                       "LINE 1: SELEC kind FROM gold.incidents\n"
                                       "        ^^^^^\n")
    assert query(lake, "SELECT nope FROM gold.incidents") == 2
    assert capsys.readouterr().err.startswith('fleethealth: query error: Binder Error: Referenced column "nope" not found')
    assert query(lake, "") == 2
    assert capsys.readouterr().err == f"fleethealth: query refused: no statement given{TAIL}\n"
    assert query(lake, "SELECT CAST('x' AS INTEGER) AS n") == 1
    assert capsys.readouterr().err.startswith("fleethealth: query failed: Conversion Error: ")
    missing = tmp_path / "no-such-lakehouse"
    assert query(missing, "SELECT 1") == 2
    assert capsys.readouterr().err == (f"fleethealth: no lakehouse at {missing} (give --lakehouse, or set "
                                       "$FLEETHEALTH_LAKEHOUSE)\n")


def test_output_is_bounded_and_files_are_written_whole(lake, tmp_path, capsys):
    import pyarrow.parquet as pq

    sql = "SELECT kind FROM gold.incidents ORDER BY kind"
    assert query(lake, "--format", "csv", "--limit", "2", sql) == 0
    captured = capsys.readouterr()
    assert captured.out == "kind\nbroker_deadlock\ndata_missing\n"
    assert captured.err == ("fleethealth: showing the first 2 rows (--limit N for more, --limit 0 for all, "
                            "--out FILE for a file)\n")
    assert query(lake, "--format", "json", "SELECT i FROM range(1005) t(i)") == 0
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 1000 and "showing the first 1000 rows" in captured.err
    assert query(lake, "--format", "csv", "--limit", "0", "SELECT i FROM range(1005) t(i)") == 0
    assert len(capsys.readouterr().out.splitlines()) == 1006

    for name in ("kinds.parquet", "kinds.csv", "kinds.json"):
        out = tmp_path / name
        assert query(lake, "--out", str(out), sql) == 0
        assert capsys.readouterr().err == f"fleethealth: wrote {out}\n"
        kinds = (pq.read_table(out).column("kind").to_pylist() if name.endswith("parquet")
                 else out.read_text().splitlines()[1:] if name.endswith("csv")
                 else [json.loads(x)["kind"] for x in out.read_text().splitlines()])
        assert kinds == ["broker_deadlock", "data_missing", "log_cleaner_dead"]
    assert query(lake, "--out", str(tmp_path / "two.parquet"), "--limit", "2", sql) == 0
    assert pq.read_table(tmp_path / "two.parquet").column("kind").to_pylist() == ["broker_deadlock", "data_missing"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "kinds.csv", "kinds.json", "kinds.parquet", "lakehouse", "two.parquet"]      # no temporary file left
    capsys.readouterr()
    assert query(lake, "--out", str(lake / "x.csv"), sql) == 2
    assert "inside the lakehouse" in capsys.readouterr().err
    kinds = tmp_path / "kinds.csv"
    assert query(lake, "--out", str(kinds), "SELECT 1 AS one") == 2
    assert capsys.readouterr().err == f"fleethealth: --out {kinds}: exists (--overwrite to replace it)\n"
    assert query(lake, "--out", str(kinds), "--overwrite", "SELECT 1 AS one") == 0
    assert kinds.read_text() == "one\n1\n"


def test_a_query_stops_at_its_timeout(lake, capsys):
    import time

    t0 = time.monotonic()
    assert query(lake, "--timeout", "1", "SELECT count(*) FROM range(1000000000000) t(i) WHERE i % 7 = 3") == 1
    assert capsys.readouterr().err == "fleethealth: query stopped after 1 s (--timeout)\n"
    assert time.monotonic() - t0 < 30


def test_the_command_answers_without_spark(lake):
    """A fresh process, as a user runs it: the exact answer, nothing on stderr, nothing written into the
    lakehouse, and neither pyspark nor airflow nor great_expectations imported."""
    before = sorted(lake.rglob("*"))
    env = {**os.environ, "PYTHONPATH": str(PROJECT / "include")}
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "fleethealth.cli.main", "query",
                           "--lakehouse", str(lake), "--format", "csv",
                           "SELECT host, level FROM silver.kafka_events ORDER BY hour, level"],
                          capture_output=True, text=True, timeout=120, env=env, cwd=PROJECT)
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    rest = [line for line in proc.stderr.splitlines() if not line.startswith("import time:")]
    assert (proc.returncode, proc.stdout, rest) == (0, "host,level\nk1,INFO\nk1,WARN\nk2,ERROR\nk2,INFO\n", [])
    assert "_duckdb" in imported and "fleethealth.cli.query_duckdb" in imported
    assert not {m.split(".")[0] for m in imported} & {"pyspark", "py4j", "airflow", "great_expectations"}
    # pyarrow loaded without pandas and numpy (query_duckdb.import_engine): a Parquet file is still written
    out = lake.parent / "levels.parquet"
    proc = subprocess.run([sys.executable, "-m", "fleethealth.cli.main", "query", "--lakehouse", str(lake),
                           "--out", str(out), "SELECT hour, level FROM silver.kafka_events ORDER BY hour, level"],
                          capture_output=True, text=True, timeout=120, env=env, cwd=PROJECT)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", f"fleethealth: wrote {out}\n")
    import pyarrow.parquet as pq

    assert pq.read_table(out).to_pylist() == [
        {"hour": _hour(10), "level": "INFO"}, {"hour": _hour(10), "level": "WARN"},
        {"hour": _hour(11), "level": "ERROR"}, {"hour": _hour(11), "level": "INFO"}]
    assert sorted(lake.rglob("*")) == before


@pytest.mark.spark
def test_tables_spark_writes_have_no_deletion_vectors_and_duckdb_reads_them(spark, lakehouse, capsys):
    """The jobs' own writes (tables.overwrite, tables.write_hour), then a DELETE as maintenance could run
    one: every table says delta.enableDeletionVectors=false, its protocol has no deletionVectors
    feature, no file carries a deletion vector, and the DuckDB engine (delta-rs) reads it."""
    from delta.tables import DeltaTable as SparkDelta
    from deltalake import DeltaTable

    from fleethealth.lake import tables as lake

    lake.overwrite(local_frame(spark, [("c1", "broker_deadlock"), ("c1", "log_cleaner_dead"), ("c2", "x")],
                                         "cluster string, kind string"), "gold.incidents", Lakehouse.at(str(lakehouse)))
    hourly = local_frame(spark, [("k1", "INFO", _hour(10)), ("k2", "WARN", _hour(10))],
                                   "host string, level string, hour timestamp")
    lake.write_hour(hourly, "silver.kafka_events", _hour(10).replace(tzinfo=None), Lakehouse.at(str(lakehouse)))
    SparkDelta.forPath(spark, lake.table("gold.incidents").path(Lakehouse.at(lakehouse))).delete("kind = 'x'")
    for qualified in ("gold.incidents", "silver.kafka_events"):
        path = lake.table(qualified).path(Lakehouse.at(lakehouse))
        table = DeltaTable(path)
        assert table.metadata().configuration.get("delta.enableDeletionVectors") == "false", qualified
        assert "deletionVectors" not in (table.protocol().reader_features or []), qualified
        actions = [json.loads(line) for f in sorted(Path(path, "_delta_log").glob("*.json"))
                   for line in f.read_text().splitlines()]
        assert not [a for a in actions if (a.get("add") or a.get("remove") or {}).get("deletionVector")], qualified
    assert query(lakehouse, "--format", "csv", "SELECT kind FROM gold.incidents ORDER BY kind") == 0
    assert capsys.readouterr().out == "kind\nbroker_deadlock\nlog_cleaner_dead\n"
    assert query(lakehouse, "--format", "csv", "SELECT host, hour FROM silver.kafka_events ORDER BY host") == 0
    assert capsys.readouterr().out == "host,hour\nk1,2026-11-20T10:00:00.000Z\nk2,2026-11-20T10:00:00.000Z\n"


# -- issue 47: hostile input, round four ------------------------------------------------------------------------------

def _listing(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


def test_out_never_writes_into_the_tables_nor_through_a_link_to_nothing(tmp_path, monkeypatch, capsys):
    """The tables in a folder of their own ($FLEETHEALTH_TABLES): --out of a Delta commit there (named
    directly or through a link) is refused before anything is created; a link to nothing is not
    followed, with --overwrite either; a missing folder is one line. No commit, the same rows, no file
    anywhere but the test's own."""
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake

    root, tables = tmp_path / "lakehouse", tmp_path / "tables"
    root.mkdir()
    write_deltalake(str(tables / "gold" / "incidents"), pa.table({"cluster": ["c1"], "kind": ["broker_deadlock"]}))
    monkeypatch.setenv("FLEETHEALTH_LAKEHOUSE", str(root))
    monkeypatch.setenv("FLEETHEALTH_TABLES", str(tables))
    log = tables / "gold" / "incidents" / "_delta_log"
    [part] = [p.name for p in log.parent.glob("*.parquet")]
    before = _listing(tmp_path)
    remove = (f"SELECT {{'path': '{part}', 'deletionTimestamp': 1764547200000, 'dataChange': true}} AS remove")
    commit = log / "00000000000000000001.json"
    (tmp_path / "elsewhere").symlink_to(log)
    (tmp_path / "out.json").symlink_to(tmp_path / "planted.json")
    cases = [
        ([str(commit)], f"{commit}: inside the lakehouse's tables; `query` never writes there"),
        ([str(tmp_path / "elsewhere" / commit.name)],
         f"{tmp_path / 'elsewhere' / commit.name}: inside the lakehouse's tables; `query` never writes there"),
        ([str(root / "x.json")], f"{root / 'x.json'}: inside the lakehouse; `query` never writes there"),
        ([str(tmp_path / "out.json")], f"{tmp_path / 'out.json'}: a link to nothing; `query` does not follow it"),
        ([str(tmp_path / "out.json"), "--overwrite"],
         f"{tmp_path / 'out.json'}: a link to nothing; `query` does not follow it"),
        ([str(tmp_path / "no" / "such" / "x.json")],
         f"{tmp_path / 'no' / 'such' / 'x.json'}: no folder {tmp_path / 'no' / 'such'}; `query` creates none"),
        ([str(tmp_path / "tables")], f"{tmp_path / 'tables'}: name it .parquet, .csv or .json"),
    ]
    before = _listing(tmp_path)
    for out, message in cases:
        assert query(root, "--out", *out, "--format", "json", remove) == 2, out
        captured = capsys.readouterr()
        assert (captured.out, captured.err) == ("", f"fleethealth: --out {message}\n"), out
    assert _listing(tmp_path) == before                     # no commit, no planted.json, nothing created
    table = DeltaTable(str(tables / "gold" / "incidents"))
    assert table.version() == 0 and table.to_pyarrow_table().column("kind").to_pylist() == ["broker_deadlock"]


def test_out_never_writes_into_a_delta_table_of_any_lakehouse(lake, tmp_path, capsys):
    """--out in a Delta table of another lakehouse than the one queried (named directly or through a
    link), or a folder above one, is one line before anything is created, as is `report --out` there:
    that table gets no commit and keeps its rows (issue 59: such a commit emptied its gold.incidents)."""
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake

    other = tmp_path / "other"
    incidents = other / "gold" / "incidents"
    write_deltalake(str(incidents), pa.table({"cluster": ["c9"], "kind": ["broker_deadlock"]}))
    write_deltalake(str(tmp_path / "shelf.json" / "gold" / "incidents"), pa.table({"cluster": ["c9"]}))
    [part] = [p.name for p in incidents.glob("*.parquet")]
    remove = f"SELECT {{'path': '{part}', 'deletionTimestamp': 1764547200000, 'dataChange': true}} AS remove"
    commit = incidents / "_delta_log" / "00000000000000000001.json"
    (tmp_path / "link").symlink_to(incidents)
    cases = [
        ([str(commit)], f"{commit}: inside a Delta table ({incidents})"),
        ([str(incidents / part), "--overwrite"], f"{incidents / part}: inside a Delta table ({incidents})"),
        ([str(tmp_path / "link" / "x.parquet")], f"{tmp_path / 'link' / 'x.parquet'}: inside a Delta table ({incidents})"),
        ([str(tmp_path / "shelf.json"), "--overwrite"],
         f"{tmp_path / 'shelf.json'}: above a Delta table ({tmp_path / 'shelf.json' / 'gold' / 'incidents'})"),
    ]
    before = _listing(tmp_path)
    for out, message in cases:
        assert query(lake, "--out", *out, "--format", "json", remove) == 2, out
        captured = capsys.readouterr()
        assert (captured.out, captured.err) == ("", f"fleethealth: --out {message}; `query` never writes there\n"), out
    for out, where in ((other, "above"), (incidents / "_delta_log", "inside")):
        assert cli.main(["report", "--lakehouse", str(lake), "--from", "2026-11-20T10:00Z", "--to", "2026-11-20T12:00Z",
                         "--out", str(out)]) == 2
        assert capsys.readouterr().err == (f"fleethealth: --out {out}: {where} a Delta table ({incidents}); give a "
                                           "folder of its own\n")
    assert _listing(tmp_path) == before                     # no commit, no file created anywhere
    table = DeltaTable(str(incidents))
    assert table.version() == 0 and table.to_pyarrow_table().column("kind").to_pylist() == ["broker_deadlock"]


def test_a_query_gets_a_bounded_share_of_the_host(lake, monkeypatch, capsys):
    """DuckDB's own defaults are 80 % of the memory, every core and 90 % of the disk: a query gets
    $FLEETHEALTH_QUERY_MEMORY (0.25) of the memory, as much again spilled to its own temporary folder,
    half the cores."""
    assert query(lake, "--format", "json", "SELECT current_setting('memory_limit') AS memory, "
                 "current_setting('max_temp_directory_size') AS spill, current_setting('threads') AS threads, "
                 "current_setting('temp_directory') AS folder") == 0
    [row] = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    number, unit = row["memory"].split()
    ram = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert float(number) * {"MiB": 2**20, "GiB": 2**30}[unit] == pytest.approx(0.25 * ram, rel=0.03)
    assert row["spill"] == row["memory"] and row["threads"] == max(1, os.cpu_count() // 2)
    assert Path(row["folder"]).parent == Path(tempfile.gettempdir()) and Path(row["folder"]).name.startswith(
        "fleethealth-query-")                                        # its own, removed at exit
    monkeypatch.setenv("FLEETHEALTH_QUERY_MEMORY", "2")
    assert query(lake, "SELECT 1") == 2
    assert capsys.readouterr().err == ("fleethealth: FLEETHEALTH_QUERY_MEMORY: expected a fraction > 0 and <= 0.9, "
                                       "got '2'\n")


# argv: a file for the child's peak resident set (KiB), then the child's command; exits as the child did
PEAK_OF_CHILD = """import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
open(sys.argv[1], "w").write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def test_a_memory_bomb_stops_at_its_share_and_leaves_no_spill(lake, tmp_path):
    """count(DISTINCT ...) of 30 million strings takes 1.7 GB and 8 s here unbounded: with
    FLEETHEALTH_QUERY_MEMORY=0.005 it stops at its share of memory and spill in one line, exit 1, and
    its spill folder (under TMPDIR) is gone."""
    spill = tmp_path / "spill"
    spill.mkdir()
    before = _state(lake)
    env = {**os.environ, "PYTHONPATH": str(PROJECT / "include"), "FLEETHEALTH_QUERY_MEMORY": "0.005",
           "TMPDIR": str(spill)}
    peak = tmp_path / "peak_kib"
    # started by a small Python that reports its child's peak: a child's ru_maxrss counts the image it
    # was forked from (the kernel keeps the larger of it and the new program's), and a test worker's
    # is hundreds of MB more than the command's own (890 MB measured from the worker, 310 MB this way)
    proc = subprocess.run([sys.executable, "-c", PEAK_OF_CHILD, str(peak),
                           sys.executable, "-m", "fleethealth.cli.main", "query", "--lakehouse", str(lake),
                           "SELECT count(DISTINCT i::VARCHAR || 'x') AS n FROM range(30000000) t(i)"],
                          capture_output=True, text=True, env=env, cwd=PROJECT, timeout=120)
    peak_kib = int(peak.read_text())
    assert (proc.returncode, proc.stdout) == (1, "")
    [line] = proc.stderr.splitlines()
    assert line.startswith("fleethealth: query failed: Out of Memory Error: "), line
    ram_mib = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**20
    assert peak_kib / 1024 < 200 + 2 * 0.005 * ram_mib + 400, peak_kib      # the imports, its share, slack
    assert list(spill.iterdir()) == [] and _state(lake) == before


def test_timeout_and_nesting_refusals_are_one_line(lake, capsys):
    before = _state(lake)
    for timeout in ("nan", "inf", "0", "-1"):
        assert query(lake, "--timeout", timeout, "SELECT 1") == 2, timeout
        captured = capsys.readouterr()
        assert (captured.out, captured.err) == ("", f"fleethealth: --timeout {timeout}: a number of seconds > 0\n")
    nested = "SELECT * FROM (" * 500 + "SELECT kind FROM gold.incidents" + ") t" * 500
    for sql in (nested, "SELECT " + "abs(" * 500 + "1" + ")" * 500, "EXPLAIN " + nested):
        assert query(lake, sql) == 2, sql[:20]
        captured = capsys.readouterr()
        assert (captured.out, captured.err) == (
            "", f"fleethealth: query refused: the statement nests more than 100 levels deep (subqueries or "
                f"expressions){TAIL}\n")
    assert query(lake, "--format", "csv", "SELECT * FROM (" * 90 + "SELECT count(*) AS n FROM gold.incidents"
                 + ") t" * 90) == 0
    assert capsys.readouterr().out == "n\n3\n"
    assert _state(lake) == before


def test_every_format_escapes_control_and_bidirectional_characters(lake, tmp_path, capsys):
    """A log line holding an OSC (set the terminal's title), a colour and U+202E (right-to-left
    override), in a value and in a column's name: escaped alike in the table, CSV and JSON lines; a file
    of --out keeps the data as it is."""
    import pyarrow as pa
    from deltalake import write_deltalake

    line = "[2026-11-20 10:00:01,000] INFO \x1b]0;pwned\x07\x1b[31mERROR\u202egnp.exe"
    write_deltalake(str(lake / "bronze" / "records"), pa.table({
        "host": ["k2"], "record": [line], "hour": pa.array([_hour(10)], pa.timestamp("us", tz="UTC"))}),
        mode="append", partition_by=["hour"])
    before = _state(lake)
    escaped = "[2026-11-20 10:00:01,000] INFO \\x1b]0;pwned\\x07\\x1b[31mERROR\\u202egnp.exe"
    sql = "SELECT record AS \"r\u202e\x1b[0m\" FROM bronze.records WHERE host = 'k2'"
    for fmt in ("table", "csv", "json"):
        assert query(lake, "--format", fmt, sql) == 0, fmt
        out = capsys.readouterr().out
        assert not set(out) & {"\x1b", "\x07", "\u202e"}, (fmt, out)
        if fmt == "csv":
            assert out == f"r\\u202e\\x1b[0m\n\"{escaped}\"\n"
        elif fmt == "json":
            assert out == json.dumps({"r\u202e\x1b[0m": line}) + "\n" and json.loads(out) == {"r\u202e\x1b[0m": line}
        else:
            assert f"| {escaped} |" in out and "| r\\u202e\\x1b[0m " in out
    assert query(lake, "--out", str(tmp_path / "raw.csv"), sql) == 0
    assert (tmp_path / "raw.csv").read_text() == f"r\u202e\x1b[0m\n\"{line}\"\n"
    assert _state(lake) == before


# -- issue 48: answers that help ---------------------------------------------------------------------------------------

EVIDENCE = ("inventory kafka_version 0.10.1.0 of k1 is in the affected range of 3 catalogued bug(s): "
            + "; ".join(f"bug {i}: a long summary of what goes wrong affected [0.10.0.0, 0.10.1.1)" for i in range(9)))


@pytest.fixture
def history(lake) -> Path:
    """gold.incident_history beside the lake's tables: `at` (a DuckDB keyword) to the microsecond, a
    known_bug_exposure evidence of 700+ characters."""
    import pyarrow as pa
    from deltalake import write_deltalake

    at = [datetime(2026, 11, 20, 10, 20, tzinfo=timezone.utc), datetime(2026, 11, 20, 11, 5, 7, 250999, tzinfo=timezone.utc)]
    write_deltalake(str(lake / "gold" / "incident_history"), pa.table({
        "incident_id": ["i1", "i2"], "at": pa.array(at, pa.timestamp("us", tz="UTC")),
        "evidence": [EVIDENCE, "size 4.20 GiB > 1.00 GiB (jmx)"]}))
    assert len(EVIDENCE) > 700
    return lake


def test_duckdbs_own_hints_and_caret_are_kept(lake, capsys):
    assert query(lake, "SELECT clustr FROM gold.incidents") == 2
    assert capsys.readouterr().err == ('fleethealth: query error: Binder Error: Referenced column "clustr" not found '
                                       'in FROM clause!\nCandidate bindings: "cluster"\n'
                                       "LINE 1: SELECT clustr FROM gold.incidents\n"
                                       "               ^^^^^^\n")
    # a long list of candidates is cut; the caret line stays
    assert query(lake, "SELECT cluster + 1 FROM gold.incidents") == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("fleethealth: query error: Binder Error: No function matches the given name")
    assert err[1] == "\tCandidate functions:" and len(err) == 7, err
    assert err[2].startswith('\t"+"(') and err[3].startswith('\t"+"(')
    assert err[4].startswith("\t… (") and err[4].endswith(" more)")
    assert err[5:] == ["LINE 1: SELECT cluster + 1 FROM gold.incidents", "                       ^"]


def test_a_table_without_its_layer_gets_the_name_it_means(lake, capsys):
    tables = f"{lake}: bronze.records, gold.incidents, silver.kafka_events\n"
    assert query(lake, "SELECT * FROM incidents") == 2
    assert capsys.readouterr().err == f"fleethealth: unknown table incidents in query: did you mean gold.incidents? Tables in {tables}"
    assert query(lake, "SELECT count(*) FROM Records") == 2
    assert capsys.readouterr().err == f"fleethealth: unknown table records in query: did you mean bronze.records? Tables in {tables}"
    assert query(lake, "SELECT * FROM gold.incidnts") == 2
    assert capsys.readouterr().err == f"fleethealth: unknown table gold.incidnts in query: did you mean gold.incidents? Tables in {tables}"
    assert query(lake, "SELECT * FROM glod.incidents") == 2
    assert capsys.readouterr().err == f"fleethealth: unknown table glod.incidents in query: did you mean gold.incidents? Tables in {tables}"
    assert query(lake, "SELECT * FROM nothing_like_it") == 2
    assert capsys.readouterr().err == f"fleethealth: unknown table nothing_like_it in query; tables in {tables}"


def test_show_tables_lists_the_names_query_takes(lake, capsys):
    assert query(lake, "--format", "csv", "SHOW TABLES") == 0
    names = capsys.readouterr().out.splitlines()
    assert names == ["name", "bronze.records", "gold.incidents", "silver.kafka_events"]
    for name in names[1:]:
        assert query(lake, "--format", "csv", f"SELECT count(*) AS n FROM {name}") == 0, capsys.readouterr().err
    assert capsys.readouterr().out == "n\n1\nn\n3\nn\n4\n"
    assert query(lake, "--format", "json", "show all tables;") == 0
    assert [(r["schema"], r["name"]) for r in map(json.loads, capsys.readouterr().out.splitlines())] == [
        ("bronze", "records"), ("gold", "incidents"), ("silver", "kafka_events")]
    # a query of SHOW TABLES, or its EXPLAIN, is run as it is
    assert query(lake, "--format", "csv", "SELECT count(*) AS n FROM (SHOW TABLES)") == 0
    assert capsys.readouterr().out == "n\n3\n"
    assert query(lake, "--format", "csv", "EXPLAIN SHOW TABLES") == 0
    assert capsys.readouterr().out.startswith("explain_key,explain_value\n")


def test_a_column_named_by_a_duckdb_keyword(history, capsys):
    assert query(history, "SELECT at FROM gold.incident_history") == 2
    assert capsys.readouterr().err == (
        'fleethealth: query error: Parser Error: syntax error at or near "FROM"\n'
        "LINE 1: SELECT at FROM gold.incident_history\n"
        "                  ^^^^\n"
        'hint: at is a keyword of DuckDB\'s: quote the column ("at") or qualify it with its table or alias '
        "(incident_history.at)\n")
    for sql in ('SELECT "at" FROM gold.incident_history ORDER BY 1',
                "SELECT incident_history.at FROM gold.incident_history ORDER BY 1",
                "SELECT h.at FROM gold.incident_history h ORDER BY 1"):
        assert query(history, "--format", "csv", sql) == 0, capsys.readouterr().err
        assert capsys.readouterr().out == "at\n2026-11-20T10:20:00.000Z\n2026-11-20T11:05:07.250Z\n"
    # no hint where no keyword names a column
    assert query(history, "SELECT incident_id FROM gold.incident_history WHERE") == 2
    assert "hint:" not in capsys.readouterr().err


def test_long_cells_are_cut_in_the_table_unless_wide(history, capsys):
    sql = "SELECT incident_id, evidence FROM gold.incident_history ORDER BY incident_id"
    assert query(history, sql) == 0
    captured = capsys.readouterr()
    rows = captured.out.splitlines()
    assert rows[3] == f"| i1            | {EVIDENCE[:79]}… |"
    assert rows[4] == f"| i2            | {'size 4.20 GiB > 1.00 GiB (jmx)':80} |"
    assert max(map(len, rows)) == 100
    assert captured.err == "fleethealth: 1 cell(s) cut at 80 characters (--wide to show them whole)\n"
    assert query(history, "--wide", sql) == 0
    captured = capsys.readouterr()
    assert f"| i1            | {EVIDENCE} |" in captured.out.splitlines() and captured.err == ""
    for fmt in ("csv", "json"):                        # machine formats: never cut
        assert query(history, "--format", fmt, sql) == 0
        captured = capsys.readouterr()
        assert EVIDENCE in captured.out and captured.err == ""


def test_one_timestamp_format_in_every_output(history, capsys):
    """A time to the second, one to the microsecond, a naive one (the session's UTC) and a date: the times
    all ISO-8601 UTC to the millisecond, as `parse` prints them."""
    sql = ("SELECT h.at, TIMESTAMP '2026-11-20 12:00:00' AS naive, DATE '2026-11-20' AS day "
           "FROM gold.incident_history h ORDER BY 1")
    assert query(history, "--format", "csv", sql) == 0
    assert capsys.readouterr().out == ("at,naive,day\n2026-11-20T10:20:00.000Z,2026-11-20T12:00:00.000Z,2026-11-20\n"
                                       "2026-11-20T11:05:07.250Z,2026-11-20T12:00:00.000Z,2026-11-20\n")
    assert query(history, "--format", "json", sql) == 0
    assert [json.loads(x) for x in capsys.readouterr().out.splitlines()] == [
        {"at": "2026-11-20T10:20:00.000Z", "naive": "2026-11-20T12:00:00.000Z", "day": "2026-11-20"},
        {"at": "2026-11-20T11:05:07.250Z", "naive": "2026-11-20T12:00:00.000Z", "day": "2026-11-20"}]
    assert query(history, sql) == 0
    assert capsys.readouterr().out.splitlines()[3:5] == [
        "| 2026-11-20T10:20:00.000Z | 2026-11-20T12:00:00.000Z | 2026-11-20 |",
        "| 2026-11-20T11:05:07.250Z | 2026-11-20T12:00:00.000Z | 2026-11-20 |"]
