"""Golden files of the layouts a user chooses (issue 61 item 1; silver.parsers.user_layouts): log4j 2's
JSON layout (tests/fixtures/layouts/json/) and a host's `log_pattern:` (tests/fixtures/layouts/pattern/,
the pattern in `<case>.pattern`), each landed as one broker's server.log of a cluster in
America/New_York (JSON times are UTC whatever the zone; a pattern's are local) and compared exactly
with `<case>-expected.json`: its silver.kafka_events rows, quarantine rows and reconciliation (bronze
lines = silver + quarantined lines, as silver.reconciliation counts a log source).
Sources: tests/fixtures/layouts/json/ORIGIN.md, tests/fixtures/layouts/pattern/ORIGIN.md.

    GENERATE=1 pytest tests/test_silver_user_layouts.py     rewrite the expected files (then review the diff!)
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from fleethealth.bronze import tables as bronze
from fleethealth.cli.parse import CONSTANT_COLUMNS, utc_text
from fleethealth.fleet.inventory import parse_inventory
from fleethealth.lake.catalog import Lakehouse
from fleethealth.pull.landing import Landed
from fleethealth.silver import tables as silver

pytestmark = pytest.mark.spark

LAYOUTS = Path(__file__).parent / "fixtures" / "layouts"
CASES = sorted(p for folder in ("json", "pattern") for p in (LAYOUTS / folder).glob("*.log"))
GENERATE = os.environ.get("GENERATE") == "1"
HOUR = datetime(2026, 11, 20, 10, tzinfo=timezone.utc)
DROP = {*CONSTANT_COLUMNS, "file_sha256"} - {"host"}
TABLES = ("silver.kafka_events", "silver.quarantine")


def _rows(rows) -> list[dict]:
    compact = [{k: v for k, v in r.asDict(recursive=True).items() if k not in DROP and v is not None} for r in rows]
    return sorted(compact, key=lambda r: (r.get("line_number") or 0, json.dumps(r, sort_keys=True, default=str)))


@pytest.fixture(scope="module")
def corpus(spark, tmp_path_factory):
    landing = Lakehouse.at(tmp_path_factory.mktemp("user_layouts") / "lakehouse").landing(HOUR)
    hosts, landed, case_of = [], [], {}
    for i, raw in enumerate(CASES, start=1):
        host = {"host": f"case-{i}", "role": "kafka", "broker_id": i, "kafka_version": "3.9.1"}
        pattern = raw.with_suffix(".pattern")
        if pattern.exists():
            host["log_pattern"] = pattern.read_text().strip()
        hosts.append(host)
        case_of[host["host"]] = raw
        rel = f"ny/{host['host']}/kafka/server.log"
        (landing / rel).parent.mkdir(parents=True)
        shutil.copyfile(raw, landing / rel)
        data = raw.read_bytes()
        landed.append(Landed("ny", host["host"], "kafka", rel, len(data), hashlib.sha256(data).hexdigest(),
                             raw.stat().st_mtime, 0.0))
    inventory = parse_inventory({"clusters": [{"name": "ny", "timezone": "America/New_York", "root": "/nonexistent",
                                               "hosts": hosts}]}, "user-layouts")
    records = bronze.records(spark, landed, landing, HOUR).cache()
    tables = silver.build(spark, records, inventory, parts=("kafka",))
    lines = {r.host: r[1] for r in records.groupBy("host").count().collect()}
    out = {raw: {t: [] for t in TABLES} for raw in CASES}
    for t in TABLES:
        for r in _rows(utc_text(tables[t]).collect()):
            out[case_of[r.pop("host")]][t].append(r)
    for host, raw in case_of.items():   # silver.reconciliation's counts of a log source: lines
        events = sum(r["line_count"] for r in out[raw]["silver.kafka_events"])
        quarantined = sum(r["line_count"] for r in out[raw]["silver.quarantine"])
        out[raw]["reconciliation"] = {"bronze_records": lines[host], "silver_records": events,
                                      "quarantined_records": quarantined,
                                      "unaccounted": lines[host] - events - quarantined}
    records.unpersist()
    spark.catalog.clearCache()
    return out


@pytest.mark.parametrize("sample", CASES, ids=[f"{p.parent.name}/{p.name}" for p in CASES])
def test_golden(corpus, sample):
    got = json.loads(json.dumps(corpus[sample], default=str))
    path = sample.with_name(sample.stem + "-expected.json")
    if GENERATE:
        path.write_text(json.dumps(got, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
        pytest.skip(f"wrote {path.name}")
    assert got == json.loads(path.read_text(encoding="utf-8"))
    assert got["reconciliation"]["unaccounted"] == 0
