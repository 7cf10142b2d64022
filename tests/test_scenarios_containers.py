"""Issue 61 item 2 through the pipeline: a fleet whose clusters run in pods, one per container log form
(kubelet's CRI files with rotation, gzip'd rotations and a split line; Docker's json-file; `kubectl logs
--timestamps` saved to a file), pulled by the globs of `paths:`, unwrapped in silver and detected in gold:
the same incidents as in Kafka's own files, every line reconciled."""
from __future__ import annotations

import json
from collections import Counter
from datetime import timedelta

import pytest
from incident_match import mismatches
from window import run_window

from fleethealth.cli import demo
from fleethealth.fleet.inventory import load_inventory
from fleethealth.lake.catalog import Lakehouse
from fleethealth.lake.hours import hours_between
from fleethealth.simulate import simulate

pytestmark = pytest.mark.spark

START = demo.START
END = START + timedelta(hours=2)
FORMS = {"pm3-dead-cleaner": "cri", "kraft-quorum-unstable": "docker-json", "pm2-zk-follower-reset": "kubectl"}
# make test's small mixed fleet: a wrapper per cluster, and one of them in a half-hour zone
ZONES = {"pm3-dead-cleaner": "Asia/Kolkata"}


@pytest.fixture(scope="module")
def run(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("containers")
    inventory = load_inventory(simulate(root, list(FORMS), START, END, brokers=2, jmx_samples_per_broker_hour=0,
                                        bytes_per_broker_hour=20_000, log_format=FORMS, timezone=ZONES))
    out = run_window(spark, inventory, hours_between(START, END), Lakehouse.at(root / "lakehouse"))
    kafka = out["silver"]["silver.kafka_events"]
    result = {"inventory": inventory, "findings": out["findings"],
              "expected": json.loads((root / "expected_incidents.json").read_text()),
              "recon": [r.asDict() for r in out["recon"].collect()],
              "quarantine": [r.asDict() for r in out["silver"]["silver.quarantine"].collect()],
              "logs": Counter((r.cluster, r.log) for r in kafka.select("cluster", "log").collect()),
              "unwrapped": kafka.where("wrapped_at IS NULL").count(),
              "files": [r.asDict() for r in out["files"].collect()]}
    spark.catalog.clearCache()
    return result


def test_every_kafka_host_is_read_from_its_container_files(run):
    kafka_hosts = {(h.cluster, h.host) for h in run["inventory"].hosts if h.role != "zookeeper"}
    assert all(h.paths for h in run["inventory"].hosts if (h.cluster, h.host) in kafka_hosts)
    read = {(f["cluster"], f["host"]) for f in run["files"] if f["source"] == "kafka" and f["status"] == "read"}
    assert read == kafka_hosts
    assert [f for f in run["files"] if f["status"] != "read" or f["reason"]] == []
    assert run["unwrapped"] == 0       # every Kafka record came out of a wrapper


def test_every_line_reconciles_and_no_kafka_line_is_quarantined(run):
    assert [r for r in run["recon"] if r["unaccounted"] != 0] == []
    assert [q for q in run["quarantine"] if q["source"] == "kafka"] == []


def test_each_record_gets_the_log_of_its_logger(run):
    logs = run["logs"]
    assert {log for (_, log) in logs} == {"server", "controller", "state-change", "log-cleaner"}
    assert logs[("pm3-dead-cleaner", "log-cleaner")] > 0 and logs[("pm3-dead-cleaner", "controller")] > 0


def test_recall_one_no_false_positive_first_seen_within_five_minutes(run):
    assert run["expected"]
    first = {}                      # an incident: its findings of each hour, first seen in the first
    for f in sorted(run["findings"], key=lambda f: f["first_seen"], reverse=True):
        first[(f["cluster"], f["kind"], f["entity"])] = f
    assert mismatches(list(first.values()), run["expected"]) == ([], [], [])
