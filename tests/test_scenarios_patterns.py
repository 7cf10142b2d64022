"""A fleet whose Kafka logs are in layouts their operators chose (issue 61 item 1) through the pipeline:
one cluster in log4j 2's JSON layout (ECS template, `--log-format json-ecs`), one in a ConversionPattern
given as the inventory's `log_pattern:` (`custom-pattern`), two hours each: every record parses, with
the fields Kafka's default layout gives, and each scenario's incidents are found, nothing else."""
from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timedelta

import pytest
from window import run_window

from fleethealth.cli import demo
from fleethealth.fleet.inventory import load_inventory
from fleethealth.lake.catalog import Lakehouse
from fleethealth.lake.hours import hours_between
from fleethealth.simulate import patterns, simulate

pytestmark = [pytest.mark.spark, pytest.mark.slow]   # a fleet run: make test's is tests/test_scenarios_containers.py

START = demo.START
END = START + timedelta(hours=2)
TOLERANCE = timedelta(minutes=5)
FORMS = {"pm3-dead-cleaner": "json-ecs", "kraft-quorum-unstable": "custom-pattern"}


@pytest.fixture(scope="module")
def run(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("pattern_scenarios")
    inventory = load_inventory(simulate(root, list(FORMS), START, END, brokers=2, jmx_samples_per_broker_hour=0,
                                        bytes_per_broker_hour=20_000, log_format=FORMS))
    out = run_window(spark, inventory, hours_between(START, END), Lakehouse.at(root / "lakehouse"))
    silver = out["silver"]
    result = {"inventory": inventory,
              "events": [r.asDict() for r in silver["silver.kafka_events"].select(
                  "cluster", "host", "log", "logger", "level", "thread", "ts", "message", "detail",
                  "event_type").collect()],
              "quarantine": [r.asDict() for r in silver["silver.quarantine"].collect()],
              "recon": [r.asDict() for r in out["recon"].collect()], "records": out["records"].count(),
              "findings": out["findings"], "expected": json.loads((root / "expected_incidents.json").read_text())}
    spark.catalog.clearCache()
    return result


def test_the_inventory_carries_the_pattern(run):
    patterns_of = {h.cluster: h.log_pattern for h in run["inventory"].hosts if h.role != "zookeeper"}
    assert patterns_of == {"pm3-dead-cleaner": None, "kraft-quorum-unstable": patterns.CUSTOM_PATTERN}


def test_every_kafka_record_parses_and_reconciles(run):
    assert [q for q in run["quarantine"] if q["source"] == "kafka"] == []
    assert [r for r in run["recon"] if r["unaccounted"] != 0] == []
    assert sum(r["silver_records"] + r["quarantined_records"] for r in run["recon"]) == run["records"]
    for cluster in FORMS:
        events = [e for e in run["events"] if e["cluster"] == cluster]
        assert events and all(e["logger"] and e["level"] and e["ts"] and e["thread"] for e in events), cluster


def test_the_dead_cleaner_is_read_from_its_json_stack_trace(run):
    died = [e for e in run["events"] if e["cluster"] == "pm3-dead-cleaner" and e["event_type"] == "cleaner_error"]
    assert len(died) == 1
    assert died[0]["logger"] == "kafka.log.LogCleaner" and died[0]["level"] == "ERROR"
    assert died[0]["detail"].startswith("java.io.IOException: Map failed\n\tat ")
    # the JSON layout's time is UTC whatever the cluster's zone (America/New_York)
    assert died[0]["ts"] == datetime(2026, 11, 20, 10, 20, 0, 412000)


@pytest.mark.parametrize("cluster", FORMS)
def test_each_scenario_gives_exactly_its_incidents(run, cluster):
    found = {}
    for f in run["findings"]:
        if f["cluster"] == cluster:
            k = (f["kind"], f["entity"])
            found[k] = min(found.get(k, f["first_seen"]), f["first_seen"])
    expected = {(i["kind"], i["entity"]): first_seen(i["first_seen"]) for i in run["expected"] if i["cluster"] == cluster}
    missed = sorted(k for k in expected if k not in found)
    late = sorted(k for k in expected if k in found and abs(found[k] - expected[k]) > TOLERANCE)
    false = sorted(k for k in found if k not in expected)
    assert (missed, late, false) == ([], [], [])
    assert expected


def test_the_pattern_clusters_events_are_those_of_the_default_layout(run):
    types = Counter(e["event_type"] for e in run["events"] if e["cluster"] == "kraft-quorum-unstable")
    assert types["other"] < sum(types.values())


def first_seen(v) -> datetime:
    return datetime.fromisoformat(v.replace("Z", "+00:00")).replace(tzinfo=None) if isinstance(v, str) else v
