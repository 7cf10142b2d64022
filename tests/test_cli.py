"""The `fleethealth` command line: clear one-line errors with exit 2, and query output."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fleethealth import cli

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


@pytest.mark.spark
def test_query_reads_gold_and_rejects_unknown_tables(spark, lakehouse, capsys):
    from fleethealth import lake

    rows = [("c1", "log_cleaner_dead"), ("c1", "log_cleaner_dead"), ("c2", "data_missing")]
    lake.overwrite(spark.createDataFrame(rows, "cluster string, kind string"), "gold.incidents", str(lakehouse))
    sql = "SELECT kind, count(*) AS n FROM gold.incidents GROUP BY kind ORDER BY kind"
    assert cli.main(["query", "--lakehouse", str(lakehouse), sql]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split() == ["|", "kind", "|", "n", "|"]
    assert [line.split()[1:4:2] for line in out[3:5]] == [["data_missing", "1"], ["log_cleaner_dead", "2"]]

    assert cli.main(["query", "--lakehouse", str(lakehouse), "--format", "json", sql]) == 0
    assert [json.loads(x) for x in capsys.readouterr().out.splitlines()] == [
        {"kind": "data_missing", "n": 1}, {"kind": "log_cleaner_dead", "n": 2}]

    assert cli.main(["query", "--lakehouse", str(lakehouse), "--format", "csv", sql]) == 0
    assert capsys.readouterr().out.splitlines() == ["kind,n", "data_missing,1", "log_cleaner_dead,2"]

    assert cli.main(["query", "--lakehouse", str(lakehouse), "SELECT * FROM gold.nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fleethealth: unknown table gold.nope in query; tables in ")
    assert err[0].endswith("gold.incidents")


@pytest.mark.spark
def test_parse_prints_silver_records_as_json_lines(spark, capsys):
    sample = Path(__file__).parent / "fixtures" / "samples" / "andreinedelciu_kafka-0.10.2_server.log"
    assert cli.main(["parse", "--source", "kafka", "--timezone", "Europe/Berlin", str(sample)]) == 0
    records = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert len(records) == 285          # 1252 lines, multi-line records joined (see test_samples.py)
    assert sum(r["line_count"] for r in records) == 1252
    first = records[0]
    assert (first["logger"], first["line_count"], first["ts"]) == (
        "kafka.server.KafkaConfig", 143, "2021-04-28T10:11:56.161Z")   # 12:11:56 CEST -> UTC
    assert cli.main(["parse", "--source", "graphite", str(sample)]) == 2


@pytest.mark.spark
def test_parse_prometheus_and_jstack_deadlocks(spark, capsys, tmp_path):
    golden = Path(__file__).parent / "fixtures" / "golden"
    scrape = tmp_path / "scrape.txt"      # not named *.prom: --source prometheus says what it is
    scrape.write_bytes((golden / "prometheus" / "jmx_exporter-0.20-kafka-2.8-2026-11-20T05-15-00.prom").read_bytes())
    assert cli.main(["parse", "--source", "prometheus", str(scrape)]) == 0
    out = capsys.readouterr()
    samples = [json.loads(x) for x in out.out.splitlines()]
    assert len(samples) == 11
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
