"""Golden files, one runner for every parser: each raw sample under tests/fixtures/golden/<source>/ is
parsed to silver and compared exactly with its `-expected.json`: the rows of each silver table the
source feeds (every typed field), its quarantine rows, and its reconciliation (bronze = silver +
quarantine).

Folders: one per format of each declared source (fleethealth.fleet.sources): kafka, zookeeper
(log4j; a case is `<version>_<log name>`, e.g. `1.1.0_state-change.log`, the version going into the
inventory; `-real` after it marks a verbatim excerpt of a public log,
see ORIGIN.md), jolokia, prometheus, jstack, logdirs (a case is named after its source and version).
The expected file of `x.log…` is `x-expected.json`, of `x.json|.jsonl|.txt|.prom` `x-expected.json`.

Every case is landed as one host of the same hour and all go through bronze.records ->
silver.build -> silver.reconciliation once (one silver job for the corpus). Log cases sit in a UTC
cluster, the others in America/New_York, so time-zone mistakes show. In the expected files,
timestamps are UTC text, NULL fields and lineage that is the same for every row are left out.

    GENERATE=1 pytest tests/test_silver_golden.py     rewrite the expected files (then review the diff!)
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import pytest

from fleethealth.lake.catalog import Lakehouse
from fleethealth.bronze import tables as bronze
from fleethealth.cli.parse import CONSTANT_COLUMNS, utc_text
from fleethealth.fleet import sources as fleet
from fleethealth.fleet.inventory import parse_inventory
from fleethealth.pull.landing import Landed
from fleethealth.silver import tables as silver

GOLDEN = Path(__file__).parent / "fixtures" / "golden"
GENERATE = os.environ.get("GENERATE") == "1"
HOUR = datetime(2026, 11, 20, 10, tzinfo=timezone.utc)
DROP = {*CONSTANT_COLUMNS, "file_sha256"}
QUARANTINE = "silver.quarantine"


@dataclass(frozen=True)
class Source:
    landing: str            # the fleet source folder its files land in
    tables: tuple[str, ...]  # the silver tables its rows go to
    timezone: str = "America/New_York"
    versioned: bool = False  # case names start with `<kafka or zookeeper version>_`


def _spec(fmt: str) -> Source:
    """A format's golden cases, from its source's declaration (fleethealth.fleet.sources)."""
    source = fleet.SOURCES[fleet.FORMATS[fmt]]
    log = source.reader == "log4j"
    return Source(source.name, (source.silver_table, *source.extra_tables), "UTC" if log else "America/New_York",
                  versioned=log)


# every format of every declared source has its folder of golden cases
SOURCES = {fmt: _spec(fmt) for fmt in fleet.FORMATS}


def expected_path(raw: Path) -> Path:
    name = raw.name
    if ".log" in name:
        return raw.with_name(name[:name.index(".log")] + "-expected.json")
    if raw.suffix in (".json", ".jsonl", ".txt", ".prom"):
        return raw.with_name(raw.stem + "-expected.json")
    return raw.with_name(name + "-expected.json")


def _cases() -> list[tuple[str, Path]]:
    return [(source, f) for source in SOURCES for f in sorted((GOLDEN / source).iterdir())
            if f.is_file() and not f.name.endswith("-expected.json")]


CASES = _cases()


def _host(i: int, source: str, raw: Path) -> dict:
    spec = SOURCES[source]
    version = raw.name.split("_", 1)[0].removesuffix("-real") if spec.versioned else "2.8.1"
    if fleet.SOURCES[spec.landing].role == "zookeeper":
        return {"host": f"case-{i}", "role": "zookeeper", "zk_myid": i}
    host = {"host": f"case-{i}", "role": "kafka", "broker_id": i, "kafka_version": version}
    return dict(host, controller=True) if int(version.split(".")[0]) >= 4 else host   # 4.x: KRaft only


def _json_safe(value):
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return str(value)     # a Prometheus NaN sample: JSON has no NaN
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    return value


def _sorted(rows: list[dict]) -> list[dict]:
    compact = [{k: _json_safe(v) for k, v in r.items() if k not in DROP and v is not None} for r in rows]
    return sorted(compact, key=lambda r: (r.get("line_number") or 0, json.dumps(r, sort_keys=True)))


@pytest.fixture(scope="module")
def corpus(spark, tmp_path_factory):
    """{sample path: {table: rows, ..., "reconciliation": counts}} for every case, from one silver build."""
    base = tmp_path_factory.mktemp("golden")
    landing = Lakehouse.at(base / "lakehouse").landing(HOUR)
    clusters: dict[str, list[dict]] = {}
    landed, case_of = [], {}
    for i, (source, raw) in enumerate(CASES):
        spec = SOURCES[source]
        host = _host(i, source, raw)
        cluster = ("golden-utc" if spec.timezone == "UTC" else "golden-ny") + ("-kraft" if host.get("controller") else "")
        clusters.setdefault(cluster, []).append(host)
        case_of[host["host"]] = (source, raw)
        name = raw.name.split("_", 1)[1] if spec.versioned else raw.name   # the log name says which log
        rel = f"{cluster}/{host['host']}/{spec.landing}/{name}"
        (landing / rel).parent.mkdir(parents=True)
        shutil.copyfile(raw, landing / rel)
        data = raw.read_bytes()
        landed.append(Landed(cluster, host["host"], spec.landing, rel, len(data), hashlib.sha256(data).hexdigest(),
                             raw.stat().st_mtime, 0.0))
    zones = {"golden-utc": "UTC", "golden-ny": "America/New_York"}
    inventory = parse_inventory({"clusters": [{"name": name, "timezone": zones[name.removesuffix("-kraft")], "root": "/nonexistent",
                                               "hosts": hosts} for name, hosts in clusters.items()]}, "golden")
    records = bronze.records(spark, landed, landing, HOUR).cache()
    tables = silver.build(spark, records, inventory)
    recon = {r.host: r for r in silver.reconciliation(records, tables, tables[QUARANTINE]).collect()}
    names = {t for spec in SOURCES.values() for t in spec.tables} | {QUARANTINE}
    rows_of: dict[tuple[str, str], list[dict]] = {}
    for name in names:
        for r in utc_text(tables[name]).collect():
            rows_of.setdefault((r["host"], name), []).append(r.asDict(recursive=True))
    records.unpersist()
    spark.catalog.clearCache()
    out = {}
    for host, (source, raw) in case_of.items():
        got = {name: _sorted(rows_of.get((host, name), [])) for name in (*SOURCES[source].tables, QUARANTINE)}
        r = recon[host]
        got["reconciliation"] = {"bronze_records": r.bronze_records, "silver_records": r.silver_records,
                                 "quarantined_records": r.quarantined_records, "unaccounted": r.unaccounted}
        out[raw] = got
    return out


def test_every_source_has_golden_cases():
    by_source = {s: sum(1 for x, _ in CASES if x == s) for s in SOURCES}
    assert all(n >= 2 for n in by_source.values()), by_source
    assert len(CASES) >= 30, len(CASES)


@pytest.mark.parametrize("source,sample", CASES, ids=[f"{s}/{p.name}" for s, p in CASES])
def test_golden(corpus, source, sample):
    got = corpus[sample]
    path = expected_path(sample)
    if GENERATE:
        path.write_text(json.dumps(got, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
        pytest.skip(f"wrote {path.name}")
    assert path.exists(), f"{path.name} missing: run GENERATE=1 pytest tests/test_silver_golden.py and review it"
    expected = json.loads(path.read_text(encoding="utf-8"))
    assert got["reconciliation"]["unaccounted"] == 0, got["reconciliation"]
    for table in SOURCES[source].tables:    # the first differing row, for a readable failure
        for i, (g, e) in enumerate(zip(got[table], expected.get(table, []))):
            assert g == e, f"{sample.name}: {table} row {i} (line {e.get('line_number')}) differs"
    assert got == expected
