"""A healthy fleet over 24 simulated hours: no incident but what the known-bug catalogue says of its
version (issue 4), and every record of the day accounted for.

The day is pulled hour by hour into landing, then bronze and silver are built for the 24 hours in one
pass (the same functions as the bronze and silver jobs; rows keep their hour), and gold runs hour by
hour exactly as run_gold computes it (`jobs.gold_tables` on that hour's silver rows). The Delta
round trips and the gates are left out here: test_jobs, test_scenarios and the end-to-end DAG test
cover those, and 24 gated hours would cost ~25 minutes."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from functools import reduce

import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from fleethealth import bronze, jobs, pull, silver, thresholds
from fleethealth.hours import hours_between
from fleethealth.inventory import load_inventory
from fleethealth.simulate import simulate

pytestmark = pytest.mark.spark

START = datetime(2026, 11, 22, 0, tzinfo=timezone.utc)
END = START + timedelta(hours=24)


@pytest.fixture(scope="module")
def day(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("healthy_day")
    inventory_path = simulate(root, ["healthy"], START, END)
    inventory = load_inventory(inventory_path)
    lakehouse = str(root / "lakehouse")
    hours = hours_between(START, END)
    per_hour = []
    for hour in hours:
        landed = pull.pull_hour(inventory, hour, lakehouse)
        per_hour.append(bronze.records(spark, landed, pull.landing_hour_dir(hour, lakehouse), hour))
    records = jobs.materialize(reduce(DataFrame.unionByName, per_hour))
    tables = jobs.materialize_all(silver.build(spark, records, inventory))
    recon = jobs.materialize(silver.reconciliation(records, tables, tables["silver.quarantine"]))
    day_silver = {name: tables[f"silver.{name}"] for name in jobs.GOLD_INPUTS if name != "reconciliation"}
    day_silver["reconciliation"] = recon
    hosts = silver.hosts_frame(spark, inventory)
    limits = thresholds.load()
    findings, health = [], []
    for hour in hours:
        at_hour = F.col("hour") == F.lit(hour).cast("timestamp")
        facts = jobs.hour_facts(hour, hosts, {name: df.where(at_hour) for name, df in day_silver.items()})
        out = jobs.gold_tables(facts, limits)
        findings += [r.asDict() for r in out["gold.incident_findings"].collect()]
        health += [r.asDict() for r in out["gold.broker_health_hourly"].collect()]
    spark.catalog.clearCache()
    return {"hours": hours, "hosts": len(inventory.hosts), "records": records.count(),
            "recon": [r.asDict() for r in recon.collect()], "findings": findings, "health": health,
            "expected": json.loads((root / "expected_incidents.json").read_text())}


def test_no_incident_in_24_healthy_hours_but_known_bug_exposure(day):
    assert all(i["kind"] == "known_bug_exposure" for i in day["expected"])
    expected = sorted((i["cluster"], i["kind"], i["entity"]) for i in day["expected"])
    found = sorted({(f["cluster"], f["kind"], f["entity"]) for f in day["findings"]})
    assert found == expected, [f"{f['hour']} {f['kind']} {f['entity']}: {f['evidence']}" for f in day["findings"]
                               if (f["cluster"], f["kind"], f["entity"]) not in expected]


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
