"""A healthy fleet over 24 simulated hours: no incident at all (what the known-bug catalogue says of its
versions is gold.known_bug_exposure, not incidents: issue 62), and every record of the day accounted for. The fleet is a ZooKeeper-mode cluster (Kafka
2.8.2) and a KRaft one (issue 46: 3 controllers, brokers on 3.9.1 and 4.1.0), run as one day (their
own runs cost twice the planning); each assertion holds for each cluster.

The day runs through tests/window.py (bronze, silver and gold each in one pass over the 24 hours, no
Delta round trips or gates: 24 gated hours would cost ~25 minutes; gold hour by hour ~12)."""
from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timedelta, timezone

import pytest
from window import run_window

from fleethealth.lake.catalog import Lakehouse
from fleethealth.fleet.inventory import load_inventory
from fleethealth.lake.hours import hours_between
from fleethealth.simulate import simulate

pytestmark = [pytest.mark.spark, pytest.mark.slow]

START = datetime(2026, 11, 22, 0, tzinfo=timezone.utc)
END = START + timedelta(hours=24)


CLUSTERS = ["healthy", "kraft-healthy"]


@pytest.fixture(scope="module")
def fleet_day(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("healthy_day")
    inventory = load_inventory(simulate(root, CLUSTERS, START, END, jmx_samples_per_broker_hour=0))
    hours = hours_between(START, END)
    out = run_window(spark, inventory, hours, Lakehouse.at(root / "lakehouse"))
    records = {r["cluster"]: r["count"] for r in out["records"].groupBy("cluster").count().collect()}
    result = {"hours": hours, "hosts": Counter(h.cluster for h in inventory.hosts), "records": records,
              "recon": [r.asDict() for r in out["recon"].collect()], "findings": out["findings"],
              "health": out["health"], "expected": json.loads((root / "expected_incidents.json").read_text())}
    spark.catalog.clearCache()
    return result


@pytest.fixture(params=CLUSTERS)
def day(fleet_day, request):
    """The day of one cluster: its rows of each output."""
    cluster = request.param
    mine = {key: [r for r in fleet_day[key] if r["cluster"] == cluster]
            for key in ("recon", "findings", "health", "expected")}
    assert mine["health"] and mine["recon"], cluster
    return {**fleet_day, **mine, "hosts": fleet_day["hosts"][cluster], "records": fleet_day["records"][cluster]}


def test_no_incident_in_24_healthy_hours(day):
    assert day["expected"] == []
    assert [f"{f['hour']} {f['kind']} {f['entity']}: {f['evidence']}" for f in day["findings"]] == []


def test_every_host_hour_has_its_sources(day):
    assert len(day["health"]) == 24 * day["hosts"]
    assert {r["hour"] for r in day["health"]} == {h.replace(tzinfo=None) for h in day["hours"]}
    assert [r for r in day["health"] if r["sources_missing"]] == []
    cleaners = [r["log_cleaner"] for r in day["health"] if r["role"] == "kafka"]
    assert cleaners and set(cleaners) == {"alive"}


def test_every_record_of_the_day_reconciles(day):
    recon = day["recon"]
    assert {r["hour"] for r in recon} == {h.replace(tzinfo=None) for h in day["hours"]}
    assert [r for r in recon if r["unaccounted"] != 0] == []
    assert sum(r["bronze_records"] for r in recon) == day["records"]
    assert sum(r["silver_records"] + r["quarantined_records"] for r in recon) == day["records"]
