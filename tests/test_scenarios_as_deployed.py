"""Fleets as people deploy them (issue 61) through the pipeline, as one fleet whose clusters are each
in a different form: one run, two hours. The layouts of simulate/layouts.py (Strimzi's before and since
Kafka 4, ZooKeeper in Kafka's layout, `%d %p [%t] %c - %m`), the layouts operators choose
(simulate/patterns.py: log4j 2's JSON layout, a ConversionPattern given as `log_pattern:`), a pod's
container log files (simulate/containers.py: CRI, Docker's json-file, `kubectl logs --timestamps`), each
of the eleven scenarios (ZooKeeper-era and KRaft) in one of them, and the
half-hour zones (Asia/Kolkata, UTC+05:30; Australia/Adelaide, UTC+10:30 in November: files rolled on
local hours that overlap two UTC hours each). Every record parses and reconciles; each cluster gives
exactly its scenario's incidents (recall 1.0, no false positive, first_seen within 5 minutes); a cluster
written in Asia/Kolkata but listed without `timezone:` (read as UTC) gives one timezone_mismatch
finding per hour naming the offset and the zone, not host_silent for each of its hosts.

make test's mixed fleet (containers, a half-hour zone) is tests/test_scenarios_containers.py; the
brokers-only KRaft fleet is tests/test_scenarios_kraft_brokers_only.py.
"""
from __future__ import annotations

import json
import os
import re
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import yaml
from incident_match import first_seen, key, known_bugs_differ, mismatches
from window import run_window

from fleethealth.cli import demo
from fleethealth.fleet.inventory import load_inventory
from fleethealth.lake.catalog import Lakehouse
from fleethealth.lake.hours import hours_between
from fleethealth.simulate import patterns, simulate

pytestmark = [pytest.mark.spark, pytest.mark.slow]

START = demo.START                      # 10:00 UTC: 15:30 in Kolkata, 20:30 in Adelaide
END = START + timedelta(hours=2)
FORMS = {"pm3-dead-cleaner": "json-ecs", "pm4-zk-expiry-storm": "custom-pattern",
         "pm1-deadlock": "strimzi", "kraft-quorum-unstable": "strimzi-kafka4",
         "pm2-zk-follower-reset": "kafka-zk", "healthy": "thread-logger",
         "pm5-metadata-divergence": "cri", "kraft-broker-fenced": "kubectl", "kraft-dead-cleaner": "docker-json",
         "kraft-metadata-lag": "strimzi", "kraft-healthy": "json-ecs"}
ZONES = {"pm1-deadlock": "Asia/Kolkata", "pm2-zk-follower-reset": "Australia/Adelaide", "healthy": "Asia/Kolkata",
         "kraft-broker-fenced": "Australia/Adelaide", "pm5-metadata-divergence": "Asia/Kolkata"}
CONTAINERS = {"cri": "pods/*/kafka/0.log", "kubectl": "kubectl/*/kafka.log", "docker-json": "docker/*/*/*-json.log"}
# the forms whose lines carry no thread: Kafka's own layout (under a container runtime's wrapper too)
UNTHREADED = {"kafka-zk", *CONTAINERS}
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
    root = tmp_path_factory.mktemp("as_deployed")
    path = simulate(root, list(FORMS), START, END, brokers=3, jmx_samples_per_broker_hour=0,
                    bytes_per_broker_hour=20_000, log_format=FORMS, timezone=ZONES)
    doc = yaml.safe_load(path.read_text())
    for cluster in doc["clusters"]:
        if cluster["name"] == WRONG:
            del cluster["timezone"]
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    _as_written(root / "fleet" / WRONG, ZONES[WRONG])
    inventory = load_inventory(path)
    out = run_window(spark, inventory, hours_between(START, END), Lakehouse.at(root / "lakehouse"))
    silver = out["silver"]
    result = {"root": root, "inventory": inventory,
              "events": [r.asDict() for r in silver["silver.kafka_events"].select(
                  "cluster", "host", "log", "logger", "level", "thread", "ts", "message", "detail",
                  "event_type").collect()],
              "quarantine": [r.asDict() for r in silver["silver.quarantine"].collect()],
              "recon": [r.asDict() for r in out["recon"].collect()], "records": out["records"].count(),
              "findings": out["findings"], "expected": json.loads((root / "expected_incidents.json").read_text())}
    spark.catalog.clearCache()
    return result


def test_forms_write_their_layouts(run):
    fleet_dir = run["root"] / "fleet"
    first = {c: next(p for p in sorted((fleet_dir / c).rglob("kafka/*.log*")) if p.stat().st_size)
             .read_text().split("\n")[0] for c, form in FORMS.items() if form not in CONTAINERS}
    wrapped = {form: next(p for p in sorted((fleet_dir / c).glob(CONTAINERS[form])) if p.stat().st_size)
               .read_text().split("\n")[0] for c, form in FORMS.items() if form in CONTAINERS}
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z stdout [FP] \[\d{4}-", wrapped["cri"])
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z \[\d{4}-", wrapped["kubectl"])
    assert wrapped["docker-json"].startswith('{"log":"[')
    assert re.match(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} [A-Z]+ .* \([\w.$]+\) \[.*\]$", first["pm1-deadlock"])
    assert re.match(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [A-Z]+ +\[.*\] \w+:\d+ - ", first["kraft-quorum-unstable"])
    assert re.match(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} [A-Z]+ \[.*\] [\w.$]+ - ", first["healthy"])
    assert first["pm3-dead-cleaner"].startswith('{"@timestamp":"')
    zk = next(p for p in sorted((fleet_dir / "pm2-zk-follower-reset").rglob("zookeeper/*")) if p.stat().st_size)
    assert re.match(r"^\[\d{4}-.*\] [A-Z]+ .* \(org\.apache\.zookeeper\.[\w.$]+\)$", zk.read_text().split("\n")[0])
    # in Kafka's files too: server.log rolled on Adelaide's hours (10:00-12:00 UTC is 20:30-22:30 there)
    assert {host.name: sorted(p.name for p in (host / "zookeeper").iterdir())
            for host in (fleet_dir / "pm2-zk-follower-reset").glob("*-zk-[0-9]")} == {
        f"pm2-zk-follower-reset-zk-{i}": [f"server.log.2026-11-20-{h}" for h in (20, 21, 22)] for i in (1, 2, 3)}


def test_the_inventory_carries_the_pattern(run):
    patterns_of = {h.cluster: h.log_pattern for h in run["inventory"].hosts if h.role != "zookeeper"}
    assert patterns_of == {c: patterns.CUSTOM_PATTERN if form == "custom-pattern" else None
                           for c, form in FORMS.items()}


def test_every_record_of_every_form_parses_and_reconciles(run):
    logs = [q for q in run["quarantine"] if q["source"] in ("kafka", "zookeeper")]
    assert {q["reason"] for q in logs if q["cluster"] != WRONG} == set()
    # the wrongly zoned cluster's files: each rejected whole, saying why (no line of it in its hour)
    assert {q["reason"].split(",")[0] for q in logs if q["cluster"] == WRONG} == {
        "file rejected: its newest line"}
    assert [r for r in run["recon"] if r["unaccounted"] != 0] == []
    assert sum(r["silver_records"] + r["quarantined_records"] for r in run["recon"]) == run["records"]
    for cluster in set(FORMS) - {WRONG}:
        events = [e for e in run["events"] if e["cluster"] == cluster]
        threaded = FORMS[cluster] not in UNTHREADED
        assert events and all(e["logger"] and e["level"] and e["ts"] and (e["thread"] or not threaded)
                              for e in events), cluster


def test_the_dead_cleaner_is_read_from_its_json_stack_trace(run):
    died = [e for e in run["events"] if e["cluster"] == "pm3-dead-cleaner" and e["event_type"] == "cleaner_error"]
    assert len(died) == 1
    assert died[0]["logger"] == "kafka.log.LogCleaner" and died[0]["level"] == "ERROR"
    assert died[0]["detail"].startswith("java.io.IOException: Map failed\n\tat ")
    # the JSON layout's time is UTC whatever the cluster's zone (America/New_York)
    assert died[0]["ts"] == datetime(2026, 11, 20, 10, 20, 0, 412000)


def test_the_pattern_clusters_events_are_typed_as_the_default_layouts(run):
    types = Counter(e["event_type"] for e in run["events"] if FORMS[e["cluster"]] == "custom-pattern")
    assert types["other"] < sum(types.values())


@pytest.mark.parametrize("cluster", [c for c in FORMS if c != WRONG])
def test_each_cluster_gives_exactly_its_incidents(run, cluster):
    earliest, bugs = {}, {}   # an incident's findings, one per hour: its first; its known bug the first
    # one named (as gold.incidents has it: the line that shows the bug is in one hour only)
    for f in sorted((f for f in run["findings"] if f["cluster"] == cluster),
                    key=lambda f: (first_seen(f), f["known_bug"] is None)):
        earliest.setdefault(key(f), f)
        if f["known_bug"]:
            bugs.setdefault(key(f), f["known_bug"])
    expected = [i for i in run["expected"] if i["cluster"] == cluster]
    assert expected or cluster in ("healthy", "kraft-healthy"), cluster
    assert mismatches(list(earliest.values()), expected) == ([], [], [])
    incidents = [dict(f, known_bug=bugs.get(k)) for k, f in earliest.items()]
    assert known_bugs_differ(incidents, expected) == []


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
