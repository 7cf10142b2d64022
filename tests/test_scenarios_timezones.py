"""Any time zone (issue 61 item 4) through the pipeline: a fleet whose clusters write their logs in
Asia/Kolkata (UTC+05:30) and Australia/Adelaide (UTC+10:30 in November), files rolled on local hours that
overlap two UTC hours each, gives exactly the scenarios' incidents (recall 1.0, no false positive,
first_seen within 5 minutes); a third cluster written in Asia/Kolkata but listed without `timezone:`
(read as UTC) gives one timezone_mismatch finding naming the offset and the zone, not host_silent for
each of its hosts."""
from __future__ import annotations

import json
import os
import re
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import yaml
from window import run_window

from fleethealth.cli import demo
from fleethealth.fleet.inventory import load_inventory
from fleethealth.lake.catalog import Lakehouse
from fleethealth.lake.hours import hours_between
from fleethealth.simulate import simulate

pytestmark = [pytest.mark.spark, pytest.mark.slow]   # a fleet run: make test's is tests/test_scenarios_containers.py

START = demo.START                      # 10:00 UTC: 15:30 in Kolkata, 20:30 in Adelaide
END = START + timedelta(hours=2)
TOLERANCE = timedelta(minutes=5)
ZONES = {"pm3-dead-cleaner": "Asia/Kolkata", "pm2-zk-follower-reset": "Australia/Adelaide", "healthy": "Asia/Kolkata"}
WRONG = "healthy"                       # listed without timezone: (UTC)
STAMP = re.compile(rb"^\[?(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)", re.M)


def _as_written(fleet: Path, zone: str) -> None:
    """Each log file's mtime its last line's time, as a host's filesystem keeps it (the simulator
    leaves the time it wrote them)."""
    for path in fleet.glob("*/*/*"):              # <host>/<source>/<file>
        if path.parent.name in ("kafka", "zookeeper") and path.is_file():
            stamps = STAMP.findall(path.read_bytes())
            if stamps:
                at = datetime.strptime(stamps[-1].decode(), "%Y-%m-%d %H:%M:%S").replace(tzinfo=ZoneInfo(zone))
                os.utime(path, (at.timestamp(), at.timestamp()))


@pytest.fixture(scope="module")
def run(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("timezones")
    path = simulate(root, list(ZONES), START, END, brokers=2, jmx_samples_per_broker_hour=0,
                    bytes_per_broker_hour=20_000, timezone=ZONES)
    doc = yaml.safe_load(path.read_text())
    for cluster in doc["clusters"]:
        if cluster["name"] == WRONG:
            del cluster["timezone"]
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    _as_written(root / "fleet" / WRONG, ZONES[WRONG])
    inventory = load_inventory(path)
    out = run_window(spark, inventory, hours_between(START, END), Lakehouse.at(root / "lakehouse"))
    result = {"findings": out["findings"], "expected": json.loads((root / "expected_incidents.json").read_text()),
              "inventory": inventory}
    spark.catalog.clearCache()
    return result


def first_seen(v) -> datetime:
    return datetime.fromisoformat(v.replace("Z", "+00:00")).replace(tzinfo=None) if isinstance(v, str) else v


@pytest.mark.parametrize("cluster", [c for c in ZONES if c != WRONG])
def test_a_cluster_in_a_half_hour_zone_gives_exactly_its_incidents(run, cluster):
    found = {}
    for f in run["findings"]:
        if f["cluster"] == cluster:
            k = (f["kind"], f["entity"])
            found[k] = min(found.get(k, f["first_seen"]), f["first_seen"])
    expected = {(i["kind"], i["entity"]): first_seen(i["first_seen"]) for i in run["expected"]
                if i["cluster"] == cluster}
    assert expected, cluster
    missed = sorted(k for k in expected if k not in found)
    late = sorted(k for k in expected if k in found and abs(found[k] - expected[k]) > TOLERANCE)
    false = sorted(k for k in found if k not in expected)
    assert (missed, late, false) == ([], [], [])


def test_a_cluster_read_in_the_wrong_zone_is_one_timezone_finding_not_silent_hosts(run):
    findings = [f for f in run["findings"] if f["cluster"] == WRONG]
    assert sorted((f["kind"], f["entity"], f["hour"]) for f in findings) == [
        ("timezone_mismatch", "timezone", h.replace(tzinfo=None)) for h in hours_between(START, END)]
    hosts = ", ".join(sorted(h.host for h in run["inventory"].cluster(WRONG).hosts))
    evidence = findings[0]["evidence"]
    assert evidence.startswith(f"log lines of {hosts} fall outside this hour: the cluster's timezone: is likely "
                               "wrong; e.g. "), evidence
    assert "read in the cluster's timezone UTC, is stamped 5:30 ahead of the file's mtime" in evidence, evidence
    assert evidence.endswith("(timezone: Asia/Kolkata?)"), evidence
