"""The `fleethealth` command line: clear one-line errors with exit 2, and query output."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from fleethealth.lake.catalog import Lakehouse
from fleethealth.cli import main as cli
from fleethealth.runtime.frames import local_frame

FLEETHEALTH = str(Path(sys.executable).with_name("fleethealth"))


def test_malformed_inventory_names_file_and_key_exit_2(tmp_path):
    bad = tmp_path / "inventory.yaml"
    bad.write_text("clusters:\n  - name: c1\n    timezone: Mars/Olympus\n    root: /tmp\n"
                   "    hosts:\n      - {host: k1, role: kafka, broker_id: 1, kafka_version: 2.8.1}\n")
    proc = subprocess.run([FLEETHEALTH, "run", "--inventory", str(bad), "--from", "2026-11-20T10:00Z",
                           "--to", "2026-11-20T11:00Z"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"fleethealth: {bad}: clusters[c1].timezone: unknown IANA timezone 'Mars/Olympus'"]
    assert "Traceback" not in proc.stderr


def test_bad_time_is_one_line_exit_2(tmp_path, capsys):
    inv = tmp_path / "inventory.yaml"
    inv.write_text("clusters:\n  - name: c1\n    root: /tmp\n    hosts:\n      - {host: z1, role: zookeeper, zk_myid: 1}\n")
    assert cli.main(["run", "--inventory", str(inv), "--from", "yesterday", "--to", "2026-11-20T11:00Z"]) == 2
    err = capsys.readouterr().err
    assert err == "fleethealth: not an ISO-8601 time: 'yesterday' (e.g. 2026-11-20T10:00Z)\n"


@pytest.mark.parametrize("start, end, message", [
    ("2026-11-20T10:15Z", "2026-11-20T12:00Z", "--from 2026-11-20T10:15Z: not on the hour (a window runs from one "
                                               "HH:00 to another, e.g. --from 2026-11-20T10:00Z --to 2026-11-20T13:00Z)"),
    ("2026-11-20T09:00Z", "2026-11-20T11:30Z", "--to 2026-11-20T11:30Z: not on the hour (a window runs from one "
                                               "HH:00 to another, e.g. --from 2026-11-20T10:00Z --to 2026-11-20T13:00Z)"),
    ("2026-11-20T12:00Z", "2026-11-20T10:00Z", "--from 2026-11-20T12:00Z is not before --to 2026-11-20T10:00Z: a window "
                                               "[--from, --to) holds at least one hour"),
    ("2026-11-20T10:00Z", "2026-11-20T10:00Z", "--from 2026-11-20T10:00Z is not before --to 2026-11-20T10:00Z: a window "
                                               "[--from, --to) holds at least one hour"),
])
@pytest.mark.parametrize("command", ["simulate", "pull", "run", "backfill", "report"])
def test_every_command_reads_a_window_by_one_rule(tmp_path, capsys, command, start, end, message):
    inv = tmp_path / "inventory.yaml"
    inv.write_text("clusters:\n  - name: c1\n    root: /tmp\n    hosts:\n      - {host: z1, role: zookeeper, zk_myid: 1}\n")
    where = ["--out", str(tmp_path / "sim")] if command in ("simulate", "report") else ["--inventory", str(inv)]
    assert cli.main([command, *where, "--from", start, "--to", end]) == 2
    assert capsys.readouterr().err == f"fleethealth: {message}\n"
    assert not (tmp_path / "sim").exists() and not (tmp_path / "lakehouse").exists()


@pytest.mark.spark
def test_query_reads_gold_and_rejects_unknown_tables(spark, lakehouse, capsys):
    from fleethealth.lake import tables as lake

    rows = [("c1", "log_cleaner_dead"), ("c1", "log_cleaner_dead"), ("c2", "data_missing")]
    lake.overwrite(local_frame(spark, rows, "cluster string, kind string"), "gold.incidents", Lakehouse.at(str(lakehouse)))
    sql = "SELECT kind, count(*) AS n FROM gold.incidents GROUP BY kind ORDER BY kind"
    assert cli.main(["query", "--engine", "spark", "--lakehouse", str(lakehouse), sql]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split() == ["|", "kind", "|", "n", "|"]
    assert [line.split()[1:4:2] for line in out[3:5]] == [["data_missing", "1"], ["log_cleaner_dead", "2"]]

    assert cli.main(["query", "--engine", "spark", "--lakehouse", str(lakehouse), "--format", "json", sql]) == 0
    assert [json.loads(x) for x in capsys.readouterr().out.splitlines()] == [
        {"kind": "data_missing", "n": 1}, {"kind": "log_cleaner_dead", "n": 2}]

    assert cli.main(["query", "--engine", "spark", "--lakehouse", str(lakehouse), "--format", "csv", sql]) == 0
    assert capsys.readouterr().out.splitlines() == ["kind,n", "data_missing,1", "log_cleaner_dead,2"]

    assert cli.main(["query", "--engine", "spark", "--lakehouse", str(lakehouse), "SELECT * FROM gold.nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fleethealth: unknown table gold.nope in query; tables in ")
    assert err[0].endswith("gold.incidents")
    # a table without its layer: the name it means (issue 48)
    assert cli.main(["query", "--engine", "spark", "--lakehouse", str(lakehouse), "SELECT * FROM incidents"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fleethealth: unknown table incidents in query: did you mean "
                                               "gold.incidents? Tables in ")
    # timestamps as the DuckDB engine (and `parse`) prints them: ISO-8601 UTC to the millisecond
    assert cli.main(["query", "--engine", "spark", "--lakehouse", str(lakehouse), "--format", "csv",
                     "SELECT TIMESTAMP '2026-11-20 10:20:00.25' AS t, DATE '2026-11-20' AS d"]) == 0
    assert capsys.readouterr().out == "t,d\n2026-11-20T10:20:00.250Z,2026-11-20\n"


@pytest.mark.spark
def test_query_of_a_lakehouse_after_another_one_was_deleted_reads_its_own(spark, tmp_path, capsys):
    """A session keeps its catalog: querying lakehouse B after A's folder is gone re-points gold.incidents
    at B (dropping A's entry must not read A's table) and prints B's rows."""
    import shutil

    from fleethealth.lake import tables as lake

    sql = "SELECT kind FROM gold.incidents ORDER BY kind"
    for name, kind in (("a", "broker_deadlock"), ("b", "data_missing")):
        lake.overwrite(local_frame(spark, [("c1", kind)], "cluster string, kind string"), "gold.incidents",
                       Lakehouse.at(str(tmp_path / name)))
    assert cli.main(["query", "--engine", "spark", "--lakehouse", str(tmp_path / "a"), "--format", "csv", sql]) == 0
    assert capsys.readouterr().out.splitlines() == ["kind", "broker_deadlock"]
    shutil.rmtree(tmp_path / "a")
    assert cli.main(["query", "--engine", "spark", "--lakehouse", str(tmp_path / "b"), "--format", "csv", sql]) == 0
    assert capsys.readouterr().out.splitlines() == ["kind", "data_missing"]


@pytest.mark.spark
def test_parse_prints_silver_records_as_json_lines(spark, capsys, tmp_path):
    sample = Path(__file__).parent / "fixtures" / "samples" / "andreinedelciu_kafka-0.10.2_server.log"
    assert cli.main(["parse", "--source", "kafka", "--timezone", "Europe/Berlin", str(sample)]) == 0
    captured = capsys.readouterr()
    records = [json.loads(x) for x in captured.out.splitlines()]
    assert len(records) == 285          # 1252 lines, multi-line records joined (see test_silver_samples.py)
    assert sum(r["line_count"] for r in records) == 1252
    first = records[0]
    assert (first["logger"], first["line_count"], first["ts"]) == (
        "kafka.server.KafkaConfig", 143, "2021-04-28T10:11:56.161Z")   # 12:11:56 CEST -> UTC
    assert captured.err.splitlines()[-1] == f"fleethealth: {sample}: 285 parsed, 0 quarantined"
    garbage = tmp_path / "garbage.log"
    garbage.write_bytes(b"not a log line\n\x00\xff binary\n" * 3)
    assert cli.main(["parse", "--source", "kafka", str(garbage)]) == 1      # nothing parsed: the verdict shows
    captured = capsys.readouterr()
    assert captured.out == ""
    quarantined = [json.loads(x) for x in captured.err.splitlines()[:-1]]
    assert [q["line_number"] for q in quarantined] == [1, 2, 3, 4, 5, 6]
    [reason] = {q["quarantine"] for q in quarantined}
    assert captured.err.splitlines()[-1] == f"fleethealth: {garbage}: 0 parsed, 6 quarantined: {reason} (6)"


@pytest.mark.spark
def test_parse_prometheus_and_jstack_deadlocks(spark, capsys, tmp_path):
    golden = Path(__file__).parent / "fixtures" / "golden"
    scrape = tmp_path / "scrape.txt"      # not named *.prom: --source prometheus says what it is
    scrape.write_bytes((golden / "prometheus" / "jmx_exporter-0.20-kafka-2.8-2026-11-20T05-15-00.prom").read_bytes())
    assert cli.main(["parse", "--source", "prometheus", str(scrape)]) == 0
    out = capsys.readouterr()
    samples = [json.loads(x) for x in out.out.splitlines()]
    assert len(samples) == 10     # and the -Inf of a `*-max` without a measurement, set aside:
    assert "jmx sample set aside: value is infinite (1)" in out.err
    assert {(s["mbean"], s["attribute"], s["value"]) for s in samples if s["props"].get("name") == "DeadThreadCount"} == {
        ("kafka.log:type=LogCleaner,name=DeadThreadCount", "Value", 1.0)}
    assert "prometheus series jvm_buffer_pool_used_bytes not in jmx_prometheus_mapping.yaml" in out.err
    dump = golden / "jstack" / "kafka-0.10.1.0-jdk8-deadlock.txt"
    assert cli.main(["parse", "--source", "jstack", "--timezone", "America/New_York", str(dump)]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    cycle = [r for r in rows if r.get("table") == "silver.deadlocks"]
    assert len(rows) - len(cycle) == 6
    assert sorted((r["thread_name"], r["waiting_lock_class"], r["held_by"]) for r in cycle) == [
        ("executor-Heartbeat", "kafka.coordinator.GroupMetadata", "group-metadata-manager-0"),
        ("group-metadata-manager-0", "java.util.LinkedList", "kafka-request-handler-3"),
        ("kafka-request-handler-3", "kafka.coordinator.GroupMetadata", "group-metadata-manager-0")]
    assert {r["captured_at"] for r in cycle} == {"2016-11-24T19:21:07.000Z"}


# -- query can only read ---------------------------------------------------------------------------------------

WRITES = [
    "DELETE FROM gold.incidents WHERE kind = 'broker_deadlock'",
    "UPDATE gold.incidents SET kind = 'x'",
    "MERGE INTO gold.incidents t USING gold.incidents s ON t.kind = s.kind WHEN MATCHED THEN DELETE",
    "INSERT INTO gold.incidents VALUES ('c9', 'made_up')",
    "INSERT OVERWRITE gold.incidents SELECT * FROM gold.incidents WHERE false",
    "WITH d AS (SELECT 'c9' AS cluster, 'made_up' AS kind) INSERT INTO gold.incidents SELECT * FROM d",
    "DROP TABLE gold.incidents",
    "TRUNCATE TABLE gold.incidents",
    "RESTORE TABLE gold.incidents TO VERSION AS OF 0",
    "VACUUM gold.incidents RETAIN 0 HOURS",
    "OPTIMIZE gold.incidents",
    "CREATE TABLE gold.copy AS SELECT * FROM gold.incidents",
    "ALTER TABLE gold.incidents SET TBLPROPERTIES ('delta.logRetentionDuration' = 'interval 1 hours')",
    "CACHE TABLE gold.incidents",
    "SET spark.databricks.delta.retentionDurationCheck.enabled = false",
    "ADD JAR /tmp/evil.jar",
    "BEGIN DELETE FROM gold.incidents; END",
    "SELECT 1; DELETE FROM gold.incidents",
    "SELECT TRANSFORM(kind) USING 'cat' AS (k) FROM gold.incidents",
    "WITH t AS (SELECT TRANSFORM(kind) USING 'cat' AS (k) FROM gold.incidents) SELECT * FROM t",
    "SELECT * FROM gold.incidents WHERE kind IN (SELECT reflect('java.lang.System', 'getProperty', 'user.home'))",
    # plans that are no Command yet write: IDENTIFIER-wrapped, INSERT ... DIRECTORY, EXECUTE IMMEDIATE
    "INSERT INTO IDENTIFIER('gold.incidents') SELECT * FROM gold.incidents",
    "INSERT OVERWRITE IDENTIFIER('gold.incidents') SELECT * FROM gold.incidents WHERE false",
    "CREATE OR REPLACE TABLE IDENTIFIER('gold.incidents') USING delta AS SELECT 'pwned' AS x",
    "INSERT OVERWRITE DIRECTORY '<table>' USING parquet SELECT 1",
    "INSERT OVERWRITE DIRECTORY USING parquet OPTIONS (path '<table>') SELECT 1",
    "WITH d AS (SELECT 1 AS x) INSERT OVERWRITE DIRECTORY '<table>' USING parquet SELECT * FROM d",
    "EXECUTE IMMEDIATE 'DELETE FROM gold.incidents'",
    "EXPLAIN EXECUTE IMMEDIATE 'DELETE FROM gold.incidents'",
    "EXPLAIN INSERT INTO gold.incidents VALUES ('c9', 'made_up')",
    # files read by path: any the user can read
    "SELECT * FROM text.`/etc/hostname`",
    "SELECT * FROM binaryFile.`/etc/hostname`",
    "SELECT * FROM IDENTIFIER('text.`/etc/hostname`')",
    "SELECT * FROM gold.incidents WHERE kind IN (SELECT value FROM text.`/etc/hostname`)",
]


@pytest.fixture
def incidents(spark, lakehouse):
    from fleethealth.lake import tables as lake

    rows = [("c1", "broker_deadlock"), ("c1", "log_cleaner_dead"), ("c2", "data_missing")]
    lake.overwrite(local_frame(spark, rows, "cluster string, kind string"), "gold.incidents", Lakehouse.at(str(lakehouse)))
    return lakehouse


@pytest.mark.spark
def test_query_refuses_every_statement_that_would_write_and_nothing_changes(spark, incidents, capsys):
    from delta.tables import DeltaTable

    path = str(incidents / "gold" / "incidents")
    version = DeltaTable.forPath(spark, path).history(1).collect()[0].version
    for sql in WRITES:
        sql = sql.replace("<table>", path)
        assert cli.main(["query", "--engine", "spark", "--lakehouse", str(incidents), sql]) == 2, sql
        captured = capsys.readouterr()
        [line] = captured.err.strip().splitlines()
        assert captured.out == "" and (line.startswith("fleethealth: query refused: ")
                                        or line.startswith("fleethealth: query error: [PARSE_SYNTAX_ERROR]")), (sql, line)
    assert DeltaTable.forPath(spark, path).history(1).collect()[0].version == version   # no commit at all
    assert sorted(r.kind for r in spark.read.format("delta").load(path).collect()) == [
        "broker_deadlock", "data_missing", "log_cleaner_dead"]
    assert not (incidents / "gold" / "copy").exists()
    assert spark.conf.get("spark.databricks.delta.retentionDurationCheck.enabled", "true") == "true"


@pytest.mark.spark
@pytest.mark.parametrize("sql, first", [
    ("SELECT kind FROM gold.incidents ORDER BY kind", "broker_deadlock"),
    ("WITH k AS (SELECT kind FROM gold.incidents) SELECT count(*) AS n FROM k", 3),
    ("VALUES (1), (2)", 1),
    ("SHOW TABLES IN gold", "gold"),
    ("DESCRIBE gold.incidents", "cluster"),
    ("DESCRIBE HISTORY gold.incidents", 0),
    ("DESCRIBE DETAIL gold.incidents", "delta"),
    ("EXPLAIN SELECT * FROM gold.incidents", None),
    ("SELECT kind FROM IDENTIFIER('gold.incidents') ORDER BY kind", "broker_deadlock"),
    ("SELECT count(*) AS n FROM range(3)", 3),
])
def test_query_runs_what_only_reads(incidents, capsys, sql, first):
    assert cli.main(["query", "--engine", "spark", "--lakehouse", str(incidents), "--format", "json", sql]) == 0, capsys.readouterr().err
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    if first is not None:
        assert first in rows[0].values()


SPARK_TAIL = ("; `query` only reads (SELECT/WITH/VALUES, SHOW, DESCRIBE, EXPLAIN). Writes and maintenance run in "
              "the DAGs (spark/maintenance.py)")


@pytest.mark.spark
def test_query_shows_and_describes_only_the_lakehouses_tables(spark, incidents, tmp_path, capsys):
    """DESCRIBE HISTORY/DETAIL and DESCRIBE of a path or a delta.`/p` identifier read any Delta log the
    process (and its AWS keys) reaches: each is refused before it runs, one line, exit 2; so is a schema
    that is not a layer. Another Delta table beside the lakehouse (<other>) stays unread and unchanged."""
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake

    other = tmp_path / "other"
    write_deltalake(str(other), pa.table({"secret": ["s3cr3t"]}))
    log = sorted(p.name for p in (other / "_delta_log").iterdir())
    path = str(incidents / "gold" / "incidents")
    version = DeltaTable(path).version()
    not_a_table = "{} is not a table of the lakehouse (bronze, silver, gold.<table>): files are not read by path"
    cases = [
        ("DESCRIBE HISTORY '/any/path'", not_a_table.format("/any/path")),
        ("DESCRIBE DETAIL 's3a://other/t'", not_a_table.format("s3a://other/t")),
        ("DESCRIBE delta.`/p`", not_a_table.format("delta./p")),
        (f"DESCRIBE HISTORY '{other}'", not_a_table.format(other)),
        (f"DESCRIBE DETAIL delta.`{other}`", not_a_table.format(f"delta.{other}")),
        (f"DESCRIBE HISTORY delta.`{other}`", not_a_table.format(f"delta.{other}")),
        (f"DESCRIBE HISTORY `{other}`", not_a_table.format(other)),
        (f"SHOW COLUMNS IN delta.`{other}`", not_a_table.format(f"delta.{other}")),
        (f"SHOW TABLES IN delta.`{other}`", f"delta.{other} is not a schema of the lakehouse (bronze, silver, gold)"),
    ]
    for sql, what in cases:
        assert cli.main(["query", "--engine", "spark", "--lakehouse", str(incidents), "--format", "json", sql]) == 2, sql
        captured = capsys.readouterr()
        assert (captured.out, captured.err) == ("", f"fleethealth: query refused: {what}{SPARK_TAIL}\n"), sql
    assert sorted(p.name for p in (other / "_delta_log").iterdir()) == log
    assert DeltaTable(path).version() == version and sorted(DeltaTable(path).to_pyarrow_table().column("kind")
                                                            .to_pylist()) == ["broker_deadlock", "data_missing",
                                                                              "log_cleaner_dead"]
    # the same --out guard as the DuckDB engine's (tests/test_query_duckdb.py): a Delta commit of the lakehouse
    commit = incidents / "gold" / "incidents" / "_delta_log" / "00000000000000000009.json"
    assert cli.main(["query", "--engine", "spark", "--lakehouse", str(incidents), "--out", str(commit),
                     "SELECT 1 AS remove"]) == 2
    assert capsys.readouterr().err == f"fleethealth: --out {commit}: inside the lakehouse; `query` never writes there\n"
    assert not commit.exists() and DeltaTable(path).version() == version


@pytest.mark.spark
def test_query_errors_are_one_line_that_says_what_is_wrong(incidents, tmp_path, capsys):
    assert cli.main(["query", "--engine", "spark", "--lakehouse", str(incidents), "SELEC kind FROM gold.incidents"]) == 2
    assert capsys.readouterr().err == ("fleethealth: query error: [PARSE_SYNTAX_ERROR] Syntax error at or near "
                                       "'SELEC'. SQLSTATE: 42601 (line 1, pos 0)\n")
    missing = tmp_path / "no-such-lakehouse"
    assert cli.main(["query", "--engine", "spark", "--lakehouse", str(missing), "SELECT * FROM gold.incidents"]) == 2
    assert capsys.readouterr().err == (f"fleethealth: no lakehouse at {missing} (give --lakehouse, or set "
                                       "$FLEETHEALTH_LAKEHOUSE)\n")


@pytest.mark.spark
def test_query_output_is_bounded_and_streamed(spark, incidents, tmp_path, capsys):
    sql = "SELECT kind FROM gold.incidents ORDER BY kind"
    assert cli.main(["query", "--engine", "spark", "--lakehouse", str(incidents), "--format", "csv", "--limit", "2", sql]) == 0
    captured = capsys.readouterr()
    assert captured.out == "kind\nbroker_deadlock\ndata_missing\n"            # \n, not \r\n
    assert captured.err == ("fleethealth: showing the first 2 rows (--limit N for more, --limit 0 for all, "
                            "--out FILE for a file)\n")
    assert cli.main(["query", "--engine", "spark", "--lakehouse", str(incidents), "--format", "csv", "--limit", "0", sql]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[1:] == ["broker_deadlock", "data_missing", "log_cleaner_dead"] and not captured.err
    # the default limit applies to what is printed
    from fleethealth.cli.query_command import DEFAULT_QUERY_LIMIT
    assert cli.main(["query", "--engine", "spark", "--lakehouse", str(incidents), "--format", "json",
                     f"SELECT id FROM range({DEFAULT_QUERY_LIMIT + 5})"]) == 0
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == DEFAULT_QUERY_LIMIT and "showing the first 1000 rows" in captured.err

    import pyarrow.parquet as pq

    for name in ("kinds.parquet", "kinds.csv", "kinds.json"):
        out = tmp_path / name
        assert cli.main(["query", "--engine", "spark", "--lakehouse", str(incidents), "--out", str(out), sql]) == 0
        assert capsys.readouterr().err == f"fleethealth: wrote {out}\n"
        kinds = (pq.read_table(out).column("kind").to_pylist() if name.endswith("parquet")
                 else out.read_text().splitlines()[1:] if name.endswith("csv")
                 else [json.loads(x)["kind"] for x in out.read_text().splitlines()])
        assert kinds == ["broker_deadlock", "data_missing", "log_cleaner_dead"]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("kinds")) == [
        "kinds.csv", "kinds.json", "kinds.parquet"]                               # no temporary folder left
    assert cli.main(["query", "--engine", "spark", "--lakehouse", str(incidents), "--out", str(incidents / "x.csv"), sql]) == 2
    assert "inside the lakehouse" in capsys.readouterr().err
    kinds = tmp_path / "kinds.csv"
    assert cli.main(["query", "--engine", "spark", "--lakehouse", str(incidents), "--out", str(kinds), "SELECT 1 AS one"]) == 2
    assert capsys.readouterr().err == f"fleethealth: --out {kinds}: exists (--overwrite to replace it)\n"
    assert kinds.read_text().splitlines()[0] == "kind"
    assert cli.main(["query", "--engine", "spark", "--lakehouse", str(incidents), "--out", str(kinds), "--overwrite", "SELECT 1 AS one"]) == 0
    assert kinds.read_text() == "one\n1\n"


@pytest.mark.spark
def test_query_stops_at_its_timeout_and_a_failure_of_the_jvm_is_one_line(incidents, capsys):
    import time

    t0 = time.monotonic()
    assert cli.main(["query", "--engine", "spark", "--lakehouse", str(incidents), "--timeout", "3",
                     "SELECT count(*) FROM range(1000000000000) WHERE id % 7 = 3"]) == 1
    assert capsys.readouterr().err == "fleethealth: query stopped after 3 s (--timeout)\n"
    assert time.monotonic() - t0 < 90
    assert cli.main(["query", "--engine", "spark", "--lakehouse", str(incidents), "SELECT raise_error('boom') AS x"]) == 1
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("fleethealth: query failed: ") and "boom" in line


@pytest.mark.spark
def test_paths_with_quotes_and_spaces_reach_sql_and_the_jvm_whole(spark, tmp_path, monkeypatch, capsys):
    """A lakehouse under a folder named with a quote and a space is queried (the path is never spliced
    into SQL), and JVM options holding such a path stay one option each for Spark's own parser."""
    from fleethealth.lake import tables as lake
    from fleethealth.runtime import config
    from fleethealth.runtime.spark_conf import spark_conf

    odd = tmp_path / "it's a lake"
    lake.overwrite(local_frame(spark, [("c1", "x")], "cluster string, kind string"), "gold.incidents", Lakehouse.at(str(odd)))
    assert cli.main(["query", "--engine", "spark", "--lakehouse", str(odd), "--format", "csv", "SELECT kind FROM gold.incidents"]) == 0
    assert capsys.readouterr().out == "kind\nx\n"

    monkeypatch.setattr(config, "PROJECT_ROOT", tmp_path / 'my "project" dir')
    options = spark_conf(str(odd), short_lived=True)["spark.driver.extraJavaOptions"]
    split = list(spark._jvm.scala.jdk.javaapi.CollectionConverters.asJava(
        spark._jvm.org.apache.spark.util.Utils.splitCommandString(options)))
    assert split[0] == f"-Dlog4j.configurationFile=file:{tmp_path}/my \"project\" dir/include/fleethealth/runtime/log4j2.properties"
    assert "-XX:+UseParallelGC" in split and "-XX:TieredStopAtLevel=1" in split


def test_the_incident_summary_leads_with_the_worst_and_says_why():
    """One line per incident, as `run` and the demo print them (rows come most severe first from
    report.incident_rows): the evidence that first fired it, what fires it now when that changed,
    a known bug with the releases that fix it, and the first step of the kind's runbook."""
    from datetime import datetime

    from fleethealth.gold import runbooks
    from fleethealth.report import text as report

    storm, cleaner = (runbooks.load()[k].first_step for k in ("leader_election_storm", "log_cleaner_dead"))
    assert cleaner.startswith("log-cleaner.log (server.log from 3.5) on the broker")

    rows = [dict(cluster="pm4", kind="leader_election_storm", severity="critical", entity="controller",
                 first_seen=datetime(2026, 11, 20, 10, 20), hours=1, evidence="40 elections in 60 s",
                 first_evidence="40 elections in 60 s", known_bug=None),
            dict(cluster="pm3", kind="log_cleaner_dead", severity="critical", entity="broker-2",
                 first_seen=datetime(2026, 11, 20, 10, 20), hours=3, evidence="'Error due to' at 12:08:57Z",
                 first_evidence="DeadThreadCount 1 at 10:20Z", known_bug="KAFKA-3994",
                 status="resolved", resolved_at=datetime(2026, 11, 20, 13))]
    assert report.incidents_text(rows).splitlines() == [
        "CRITICAL pm4 leader_election_storm controller (since 2026-11-20 10:20Z, 1 h, open): 40 elections in 60 s"
        f" | check first: {storm}",
        "CRITICAL pm3 log_cleaner_dead broker-2 (since 2026-11-20 10:20Z, 3 h, resolved 2026-11-20 13:00Z): "
        "DeadThreadCount 1 at 10:20Z; "
        "now: 'Error due to' at 12:08:57Z | matches KAFKA-3994 (Deadlock between the group coordinator's group lock "
        f"and DelayedOperationPurgatory Watchers), fixed in 0.10.1.1 / 0.10.2.0 | check first: {cleaner}"]
    exposure = dict(rows[1], kind="known_bug_exposure", first_evidence=None, evidence="1.1.0 is affected by KAFKA-3994 (...)")
    assert report.incidents_text([exposure]).count("KAFKA-3994") == 1          # its evidence names it already
    assert report.incidents_text([]) == "(no incidents)"
    assert report.incidents_report(rows).splitlines()[0] == "gold.incidents: 2 incident(s), 1 open, open first, most severe first"


def test_a_failed_runs_summary_never_reads_as_a_healthy_fleet():
    from fleethealth.report import text as report

    assert report.incidents_report([], failed="1 of 2 hours failed").splitlines()[0] == (
        "gold.incidents as of the last published hour, without the failed ones (1 of 2 hours failed): "
        "0 incident(s), 0 open, open first, most severe first")


@pytest.mark.spark
def test_incidents_come_open_first_most_severe_first_then_by_first_seen(spark, lakehouse):
    """Issue 62 item 3: a resolved CRITICAL comes after an open MINOR (the run summary lists what to act on)."""
    from datetime import datetime

    from fleethealth.lake import tables as lake
    from fleethealth.report import text as report

    rows = [("pm4", "zk_session_expired", "major", datetime(2026, 11, 20, 10, 5), "open"),
            ("pm4", "leader_election_storm", "critical", datetime(2026, 11, 20, 10, 6), "open"),
            ("pm5", "broker_fenced", "critical", datetime(2026, 11, 20, 9, 0), "resolved"),
            ("pm3", "data_missing", "minor", datetime(2026, 11, 20, 10, 0), "open"),
            ("pm3", "log_cleaner_dead", "critical", datetime(2026, 11, 20, 10, 1), "open")]
    lake.overwrite(local_frame(spark, rows, "cluster string, kind string, severity string, first_seen timestamp, "
                                            "status string").selectExpr("*", "'x' AS entity"),
                   "gold.incidents", Lakehouse.at(str(lakehouse)))
    assert [r["kind"] for r in report.incident_rows(Lakehouse.at(lakehouse))] == [
        "log_cleaner_dead", "leader_election_storm", "zk_session_expired", "data_missing", "broker_fenced"]


@pytest.mark.spark
def test_a_command_prints_no_spark_banner(incidents):
    """A fresh `fleethealth` process: its stdout is the answer, its stderr has nothing of Spark's start."""
    before = sorted(incidents.rglob("*"))
    proc = subprocess.run([FLEETHEALTH, "query", "--engine", "spark", "--lakehouse", str(incidents), "--format", "csv",
                           "SELECT count(*) AS n FROM gold.incidents"], capture_output=True, text=True, timeout=180)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "n\n3\n", "")
    assert sorted(incidents.rglob("*")) == before          # `query` wrote nothing into the lakehouse


def test_version_is_the_packages():
    import tomllib

    version = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]["version"]
    proc = subprocess.run([FLEETHEALTH, "--version"], capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"fleethealth {version}\n", "")


def _subcommands():
    sub = next(a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices


def test_every_subcommands_help_has_examples_and_says_what_each_option_takes():
    assert all(action.help for action in cli.build_parser()._actions)
    commands = _subcommands()
    assert sorted(commands) == sorted(cli.EXAMPLES) == sorted(
        ["simulate", "check", "pull", "run", "backfill", "parse", "query", "report"])
    for name, parser in commands.items():
        text = parser.format_help()
        assert text.endswith("examples:\n" + "".join(f"  {e}\n" for e in cli.EXAMPLES[name])), name
        assert all(e.startswith(f"fleethealth {name}") for e in cli.EXAMPLES[name]), name
        for action in parser._actions:
            assert action.help, (name, action.dest)
            if action.nargs != 0:       # takes a value: named (FILE, DIR, HOUR, ...) or its choices listed
                assert action.metavar or action.choices, (name, action.dest)


def test_shared_options_read_the_same_in_every_subcommand():
    helps: dict[str, set] = {}
    for name, parser in _subcommands().items():
        for action in parser._actions:
            if action.dest in ("start", "end", "inventory", "lakehouse") and name != "report":
                helps.setdefault(action.dest, set()).add((action.metavar, action.help))
    assert helps == {
        "start": {("HOUR", "the window's first hour, ISO-8601 UTC on the hour, e.g. --from 2026-11-20T10:00Z")},
        # simulate's window may end later; pull, run and backfill process hours that have happened
        "end": {("HOUR", "the hour the window ends before (exclusive), e.g. --to 2026-11-20T13:00Z: "
                         "hours 10:00, 11:00 and 12:00"),
                ("HOUR", "the hour the window ends before (exclusive), e.g. --to 2026-11-20T13:00Z: "
                         "hours 10:00, 11:00 and 12:00; at the latest the end of the current hour (UTC)")},
        "inventory": {("FILE", "the inventory YAML (default $FLEETHEALTH_INVENTORY), e.g. --inventory inventory.yaml")},
        "lakehouse": {("DIR", "the lakehouse folder (default $FLEETHEALTH_LAKEHOUSE), e.g. --lakehouse /data/lakehouse")},
    }


def test_choices_are_listed_and_anything_else_refused_with_the_list(capsys):
    from fleethealth.cli.parse import SOURCES
    from fleethealth.simulate import AVAILABILITY_SCENARIOS, KRAFT_SCENARIOS, SCENARIOS

    assert list(SOURCES) == ["kafka", "zookeeper", "jolokia", "prometheus", "jstack", "logdirs", "groups"]
    source = next(a for a in _subcommands()["parse"]._actions if a.dest == "source")
    assert source.help == "what the file is: one of kafka, zookeeper, jolokia, prometheus, jstack, logdirs, groups"
    with pytest.raises(SystemExit) as exit_:
        cli.main(["parse", "--source", "kafak", "server.log"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "fleethealth parse: error: argument --source: invalid choice: 'kafak' (choose from 'kafka', 'zookeeper', "
        "'jolokia', 'prometheus', 'jstack', 'logdirs', 'groups')")

    known = ", ".join(SCENARIOS + KRAFT_SCENARIOS + AVAILABILITY_SCENARIOS)
    assert known.startswith("healthy, pm1-deadlock, ") and known.endswith(", kraft-dead-cleaner, broker-lost")
    with pytest.raises(SystemExit) as exit_:
        cli.main(["simulate", "--out", "x", "--scenario", "healthy,pm9", "--from", "2026-11-20T10:00Z",
                  "--to", "2026-11-20T11:00Z"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"fleethealth simulate: error: argument --scenario: unknown scenario(s) pm9 (choose from {known}, all, kraft or availability)")


@pytest.mark.parametrize("command", ["pull", "run", "backfill"])
def test_the_inventory_comes_from_FLEETHEALTH_INVENTORY_when_not_given(tmp_path, monkeypatch, capsys, command):
    bad = tmp_path / "from-the-variable.yaml"
    bad.write_text("clusters:\n  - name: c1\n    timezone: Mars/Olympus\n    root: /tmp\n"
                   "    hosts:\n      - {host: z1, role: zookeeper, zk_myid: 1}\n")
    monkeypatch.setenv("FLEETHEALTH_INVENTORY", str(bad))
    monkeypatch.setenv("FLEETHEALTH_LAKEHOUSE", str(tmp_path / "lakehouse"))
    assert cli.main([command, "--from", "2026-11-20T10:00Z", "--to", "2026-11-20T11:00Z"]) == 2
    assert capsys.readouterr().err == f"fleethealth: {bad}: clusters[c1].timezone: unknown IANA timezone 'Mars/Olympus'\n"


def test_report_without_a_window_covers_the_last_24_processed_hours(tmp_path, capsys):
    import report_lakehouse as lh

    root, out = lh.build(tmp_path / "lakehouse"), tmp_path / "out"
    assert lh.HOURS[-1].isoformat() == "2026-11-20T12:00:00+00:00"        # the last processed hour
    assert cli.main(["report", "--lakehouse", str(root), "--out", str(out)]) == 0
    said = capsys.readouterr()
    assert said.err == "fleethealth: the last 24 processed hours: --from 2026-11-19T13:00Z --to 2026-11-20T13:00Z\n"
    assert said.out.startswith(f"HTML report: {out / 'index.html'} (2 cluster page(s), ")
    assert "window 2026-11-19 13:00Z – 2026-11-20 13:00Z (24 h)" in (out / "index.html").read_text()
    # without --out: the lakehouse's report folder, the one the DAG refreshes
    assert cli.main(["report", "--lakehouse", str(root)]) == 0
    assert capsys.readouterr().out.startswith(f"HTML report: {root / 'report' / 'index.html'} (2 cluster page(s), ")


def test_report_without_a_window_and_nothing_processed_says_so(tmp_path, capsys):
    (tmp_path / "lakehouse").mkdir()
    assert cli.main(["report", "--lakehouse", str(tmp_path / "lakehouse"), "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == (f"fleethealth: {tmp_path / 'lakehouse'}: no processed hour yet; give a window "
                                       "(--from, --to) or run `fleethealth run` or the DAG first\n")
    assert cli.main(["report", "--lakehouse", str(tmp_path / "lakehouse"), "--from", "2026-11-20T10:00Z"]) == 2
    assert capsys.readouterr().err == "fleethealth: give both --from and --to, or neither (the last 24 processed hours)\n"
    assert not (tmp_path / "o").exists()


def test_a_run_of_one_window_starts_its_jvm_short_lived_as_the_dags_jobs(monkeypatch):
    """`fleethealth run` of at most FLEETHEALTH_RUN_WINDOW_HOURS hours starts a JVM with the DAG jobs'
    settings (spark_conf short_lived); a longer run, or a session already running in the process, does not."""
    from datetime import datetime, timedelta, timezone

    from pyspark import SparkContext

    from fleethealth.cli import run as cli_run

    hours = [datetime(2026, 11, 20, tzinfo=timezone.utc) + timedelta(hours=n) for n in range(4)]
    monkeypatch.setenv("FLEETHEALTH_RUN_WINDOW_HOURS", "3")
    monkeypatch.setattr(SparkContext, "_active_spark_context", None)
    assert cli_run._one_window(hours[:3]) and not cli_run._one_window(hours)
    monkeypatch.setattr(SparkContext, "_active_spark_context", object())
    assert not cli_run._one_window(hours[:1])
