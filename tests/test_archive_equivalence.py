"""A backfill over an archive gives what the hourly arrangement gives (issue 12: a line
belongs to the hour its own timestamp says).

One simulated fleet (post-mortem 2, the ZooKeeper follower reset) is written
twice over 3 hours: one file per hour, and "as found on the hosts" (`simulate --layout archive`:
the last hour in live files, ZooKeeper logs size-rolled across hours, every mtime = the copy time,
one truncated .gz). Both run through pull, bronze, silver and gold (tests/window.py). The silver
rows of the lines both hold, and the incidents, must be the same; the archive loses exactly the
lines cut off its truncated .gz, and says so.
"""
from __future__ import annotations

import json
import zlib
from collections import Counter
from datetime import datetime, timedelta, timezone

import pytest
from window import run_window

from fleethealth.lake.catalog import Lakehouse
from fleethealth.fleet.inventory import load_inventory
from fleethealth.lake.hours import hours_between
from fleethealth.simulate import simulate

pytestmark = [pytest.mark.spark, pytest.mark.slow]

START = datetime(2026, 11, 23, 6, tzinfo=timezone.utc)
END = START + timedelta(hours=3)
SCENARIOS = ["pm2-zk-follower-reset"]
LINEAGE = ("file", "line_number", "log")   # where a row sat, which differs between the layouts


def rows(df) -> Counter:
    keep = [c for c in df.columns if c not in LINEAGE]
    return Counter(tuple(str(r[c]) for c in keep) for r in df.select(*keep).collect())


@pytest.fixture(scope="module")
def layouts(spark, tmp_path_factory):
    out = {}
    for layout in ("hourly", "archive"):
        root = tmp_path_factory.mktemp(layout)
        inventory = load_inventory(simulate(root, SCENARIOS, START, END, layout=layout, jmx_samples_per_broker_hour=0))
        run = run_window(spark, inventory, hours_between(START, END), Lakehouse.at(root / "lakehouse"))
        out[layout] = {
            "silver": {name: rows(df) for name, df in run["silver"].items()
                       if name not in ("silver.quarantine",)},
            "quarantine": [r.asDict() for r in run["silver"]["silver.quarantine"].collect()],
            "recon": [r.asDict() for r in run["recon"].collect()],
            "findings": sorted({(f["cluster"], f["kind"], f["entity"]) for f in run["findings"]}),
            "health": run["health"],
            "root": root,
        }
        spark.catalog.clearCache()
    return out


def test_the_archive_has_the_shapes_users_have(layouts):
    root = layouts["archive"]["root"] / "fleet"
    names = {p.name for p in root.rglob("*") if p.is_file()}
    assert {"server.log", "zookeeper.log", "zookeeper.log.1"} <= names
    assert any(n.endswith(".gz") for n in names)


def test_same_silver_rows_but_the_lines_lost_in_the_truncated_gz(layouts):
    hourly, archive = layouts["hourly"]["silver"], layouts["archive"]["silver"]
    notes = json.loads((layouts["archive"]["root"] / "archive-notes.json").read_text())
    truncated = notes["truncated"][0]
    data = (layouts["archive"]["root"] / truncated["path"]).read_bytes()
    kept = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data).count(b"\n")
    hourly_file = (layouts["hourly"]["root"] / truncated["path"]).with_name(truncated["hourly_name"])
    lines = hourly_file.read_bytes().count(b"\n")
    for name in hourly:
        if name in ("silver.kafka_events", "silver.reconciliation"):
            continue
        assert archive[name] == hourly[name], name
    lost = hourly["silver.kafka_events"] - archive["silver.kafka_events"]
    assert archive["silver.kafka_events"] - hourly["silver.kafka_events"] == Counter()
    assert lost and all(row[1] == truncated["host"] for row in lost.elements())   # (cluster, host, ...)
    assert 0 < kept < lines and 0 < sum(lost.values()) <= lines - kept


def test_every_record_reconciles_and_the_truncated_file_is_reported(layouts):
    for layout in layouts.values():
        assert [r for r in layout["recon"] if r["unaccounted"] != 0] == []
    files = [q for q in layouts["archive"]["quarantine"] if q["line_number"] == 0]
    assert len(files) == 1 and files[0]["reason"].startswith("file read: damaged gzip (truncated")
    assert [q for q in layouts["hourly"]["quarantine"] if q["line_number"] == 0] == []


def test_same_incidents_and_no_data_missing(layouts):
    hourly, archive = layouts["hourly"], layouts["archive"]
    assert archive["findings"] == hourly["findings"]
    kinds = {kind for _, kind, _ in archive["findings"]}
    assert "zk_follower_disconnect" in kinds and "data_missing" not in kinds
    assert [r for r in archive["health"] if r["sources_missing"]] == []
