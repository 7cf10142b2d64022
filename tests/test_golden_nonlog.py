"""Golden files for the non-log parsers: tests/fixtures/golden/{jolokia,prometheus,jstack,logdirs}/.

Each `<case>.<ext>` there is a realistic raw file of one source and version (named after both);
`<case>-expected.json` holds its silver rows (and the quarantine rows and the reconciliation of its
records) with sorted keys, lineage columns that are the same for every row left out. All cases are
landed as the files of one hour, one host per case, in a cluster in America/New_York (not UTC, so
time-zone mistakes show), and go through bronze.records -> silver.build -> silver.reconciliation once.

    GENERATE=1 pytest tests/test_golden_nonlog.py     # rewrite the -expected.json files, then review the diff
"""
from __future__ import annotations

import json
import math
import os
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from fleethealth import bronze, pull, silver
from fleethealth.inventory import parse_inventory
from fleethealth.pull import Landed

GOLDEN = Path(__file__).parent / "fixtures" / "golden"
TIMEZONE = "America/New_York"
HOUR = datetime(2026, 11, 20, 10, tzinfo=timezone.utc)
# golden folder -> (landing source folder, silver tables of its rows)
SOURCES = {
    "jolokia": ("jmx", ("silver.jmx_samples",)),
    "prometheus": ("jmx", ("silver.jmx_samples",)),
    "jstack": ("threaddumps", ("silver.threads", "silver.deadlocks")),
    "logdirs": ("logdirs", ("silver.partition_sizes",)),
}
CONSTANT = {"cluster", "host", "broker_id", "zk_myid", "hour", "source", "file", "file_sha256"}
GENERATE = os.environ.get("GENERATE") == "1"


def cases() -> list[tuple[str, Path]]:
    return [(kind, f) for kind in SOURCES for f in sorted((GOLDEN / kind).iterdir())
            if f.is_file() and not f.name.endswith("-expected.json")]


def expected_path(raw: Path) -> Path:
    return raw.with_name(raw.stem + "-expected.json") if raw.suffix in (".json", ".jsonl", ".txt", ".prom") \
        else raw.with_name(raw.name + "-expected.json")


def _plain(value):
    if isinstance(value, datetime):      # collected timestamps are naive local time
        return datetime.fromtimestamp(value.timestamp(), timezone.utc).isoformat()
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return str(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _rows(rows: list[dict]) -> list[dict]:
    out = [_plain({k: v for k, v in r.items() if k not in CONSTANT}) for r in rows]
    return sorted(out, key=lambda r: json.dumps(r, sort_keys=True))


@pytest.fixture(scope="module")
def parsed(spark, tmp_path_factory):
    """{case file: {table: rows}} for every golden case, from one bronze -> silver run."""
    base = tmp_path_factory.mktemp("golden-nonlog")
    all_cases = cases()
    hosts = [{"host": f"case-{i}", "role": "kafka", "broker_id": i + 1, "kafka_version": "2.8.1"}
             for i in range(len(all_cases))]
    inventory = parse_inventory({"clusters": [{"name": "golden", "timezone": TIMEZONE, "root": str(base),
                                               "hosts": hosts}]}, "golden")
    landing = pull.landing_hour_dir(HOUR, base)
    landed, by_file = [], {}
    for i, (kind, raw) in enumerate(all_cases):
        rel = f"golden/case-{i}/{SOURCES[kind][0]}/{raw.name}"
        (landing / rel).parent.mkdir(parents=True)
        shutil.copyfile(raw, landing / rel)
        landed.append(Landed("golden", f"case-{i}", SOURCES[kind][0], rel, raw.stat().st_size, "sha", 0.0, 0.0))
        by_file[rel] = raw
    records = bronze.records(spark, landed, landing, HOUR).cache()
    tables = silver.build(spark, records, inventory)
    recon = silver.reconciliation(records, tables, tables["silver.quarantine"]).collect()
    collected = {name: [r.asDict(recursive=True) for r in tables[name].collect()]
                 for name in {t for _, names in SOURCES.values() for t in names} | {"silver.quarantine"}}
    records.unpersist()
    out = {}
    for i, (kind, raw) in enumerate(all_cases):
        rel = next(f for f, r in by_file.items() if r == raw)
        got = {name: _rows([r for r in collected[name] if r["file"] == rel])
               for name in (*SOURCES[kind][1], "silver.quarantine")}
        r = next(x for x in recon if x.host == f"case-{i}")
        got["reconciliation"] = {"bronze_records": r.bronze_records, "silver_records": r.silver_records,
                                 "quarantined_records": r.quarantined_records, "unaccounted": r.unaccounted}
        out[raw] = got
    return out


@pytest.mark.parametrize("kind,raw", cases(), ids=[f"{k}/{f.name}" for k, f in cases()])
def test_golden(parsed, kind, raw):
    got = parsed[raw]
    path = expected_path(raw)
    if GENERATE or not path.exists():
        path.write_text(json.dumps(got, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
        if not GENERATE:
            pytest.fail(f"{path.name} was missing: written, review it and commit")
    assert got == json.loads(path.read_text())
    assert got["reconciliation"]["unaccounted"] == 0


def test_every_source_has_golden_cases():
    assert {k for k, _ in cases()} == set(SOURCES)
    assert len(cases()) >= 2 * len(SOURCES)
