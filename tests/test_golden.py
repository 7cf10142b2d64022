"""Golden files: every log sample under tests/fixtures/golden/{kafka,zookeeper}/ parsed to silver and compared
with its `-expected.json` (exact: every record's header fields, event_type and extracted fields,
and every quarantined line).

A case is `<version>_<log file name>` (e.g. `1.1.0_state-change.log`, `2.8.1_log-cleaner.log.2021-09-14-08`);
its expected file is `<version>_<log name>-expected.json` (the name up to `.log`). `-real` after the
version marks a verbatim excerpt of a public log (ORIGIN.md in the folder). The cases are landed as
one host each (kafka_version from the name) of one UTC cluster and go through bronze.records and
silver.build once for the whole corpus, so they cost one silver job.

    GENERATE=1 pytest tests/test_golden.py     rewrite the expected files (then review the diff!)
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from fleethealth import bronze, pull, silver
from fleethealth.inventory import parse_inventory
from fleethealth.parsefile import utc_text
from fleethealth.pull import Landed

GOLDEN = Path(__file__).parent / "fixtures" / "golden"
GENERATE = os.environ.get("GENERATE") == "1"
HOUR = datetime(2026, 11, 20, 10, tzinfo=timezone.utc)
# lineage that is the same for every row of a case, or says nothing about parsing
DROP = {"cluster", "host", "broker_id", "zk_myid", "hour", "source", "file", "file_sha256"}


LOG_SOURCES = ("kafka", "zookeeper")     # the other folders are tests/test_golden_nonlog.py's


def _cases() -> list[tuple[str, Path]]:
    return [(source, f) for source in LOG_SOURCES for f in sorted((GOLDEN / source).iterdir())
            if ".log" in f.name and not f.name.endswith(".json")]


CASES = _cases()


def expected_path(sample: Path) -> Path:
    return sample.with_name(sample.name[:sample.name.index(".log")] + "-expected.json")


def _compact(row: dict) -> dict:
    return {k: v for k, v in row.items() if k not in DROP and v is not None}


@pytest.fixture(scope="module")
def corpus(spark, tmp_path_factory):
    """{sample path: {"records": [...], "quarantine": [...]}} for every case, from one silver build."""
    base = tmp_path_factory.mktemp("golden")
    landing = pull.landing_hour_dir(HOUR, base / "lakehouse")
    hosts, landed, host_of = [], [], {}
    for i, (source, sample) in enumerate(CASES):
        version, log_name = sample.name.split("_", 1)
        host = f"golden-{i}"
        host_of[host] = sample
        if source == "kafka":
            hosts.append({"host": host, "role": "kafka", "broker_id": i,
                          "kafka_version": version.removesuffix("-real")})
        else:
            hosts.append({"host": host, "role": "zookeeper", "zk_myid": i})
        rel = f"golden/{host}/{source}/{log_name}"
        (landing / rel).parent.mkdir(parents=True)
        shutil.copyfile(sample, landing / rel)
        data = sample.read_bytes()
        landed.append(Landed("golden", host, source, rel, len(data), hashlib.sha256(data).hexdigest(),
                             sample.stat().st_mtime, time.time()))
    inventory = parse_inventory({"clusters": [{"name": "golden", "timezone": "UTC", "root": "/nonexistent",
                                               "hosts": hosts}]}, "golden-inventory")
    tables = silver.build(spark, bronze.records(spark, landed, landing, HOUR), inventory)
    out = {sample: {"records": [], "quarantine": []} for _, sample in CASES}
    for name in ("silver.kafka_events", "silver.zk_events"):
        for r in utc_text(tables[name]).collect():
            out[host_of[r["host"]]]["records"].append(r.asDict(recursive=True))
    for r in tables["silver.quarantine"].collect():
        out[host_of[r["host"]]]["quarantine"].append(r.asDict())
    for got in out.values():
        got["records"] = [_compact(r) for r in sorted(got["records"], key=lambda r: r["line_number"])]
        got["quarantine"] = [_compact(q) for q in sorted(got["quarantine"], key=lambda q: q["line_number"])]
    spark.catalog.clearCache()
    return out


def test_golden_corpus_is_not_empty():
    sources = {s for s, _ in CASES}
    assert {"kafka", "zookeeper"} <= sources and len(CASES) >= 10, CASES


@pytest.mark.parametrize("source,sample", CASES, ids=[f"{s}/{p.name}" for s, p in CASES])
def test_golden(corpus, source, sample):
    got = corpus[sample]
    path = expected_path(sample)
    text = json.dumps(got, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if GENERATE:
        path.write_text(text, encoding="utf-8")
        pytest.skip(f"wrote {path.name}")
    assert path.exists(), f"{path.name} missing: run GENERATE=1 pytest tests/test_golden.py and review it"
    expected = json.loads(path.read_text(encoding="utf-8"))
    # whole-record comparison first for a readable diff of the first difference
    for i, (g, e) in enumerate(zip(got["records"], expected["records"])):
        assert g == e, f"{sample.name}: record {i} (line {e.get('line_number')}) differs"
    assert got == expected
