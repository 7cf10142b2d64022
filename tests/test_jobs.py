"""The hourly jobs in one session on a simulated fleet: incidents found, reconciliation, idempotency,
data_missing, and the gold quality gate (write-audit-publish)."""
from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta, timezone

import pytest

from fleethealth import jobs, lake, pull
from fleethealth.inventory import load_inventory
from fleethealth.simulate import simulate

pytestmark = pytest.mark.spark

H10 = datetime(2026, 11, 20, 10, tzinfo=timezone.utc)
H11 = H10 + timedelta(hours=1)


def run_hour(spark, inventory_path, hour, lakehouse):
    pull.pull_hour(load_inventory(inventory_path), hour, lakehouse)
    jobs.run_bronze(spark, hour, lakehouse)
    recon = jobs.run_silver(spark, hour, str(inventory_path), lakehouse)
    jobs.run_gold(spark, hour, str(inventory_path), lakehouse)
    return recon


@pytest.fixture(scope="module")
def fleet(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("fleet")
    inventory = simulate(root, ["healthy", "pm3-dead-cleaner"], H10, H11 + timedelta(hours=1))
    # the healthy cluster's broker 3 exports no JMX in the second hour
    for f in (root / "fleet" / "healthy" / "healthy-kafka-3" / "jmx").glob("jolokia.jsonl.2026-11-20-12"):
        f.unlink()
    lakehouse = str(root / "lakehouse")
    recon = run_hour(spark, inventory, H10, lakehouse)
    return {"root": root, "inventory": inventory, "lakehouse": lakehouse, "recon": recon,
            "expected": json.loads((root / "expected_incidents.json").read_text())}


def incidents(spark, lakehouse):
    return [r.asDict() for r in lake.read(spark, "gold.incidents", lakehouse).collect()]


def snapshot(spark, lakehouse, name):
    df = lake.read(spark, name, lakehouse)
    return sorted(tuple(str(v) for v in r) for r in df.collect())


def test_reconciliation_balances_for_every_host_and_source(fleet):
    recon = fleet["recon"]
    assert {r["source"] for r in recon} == {"kafka", "zookeeper", "jmx", "threaddumps", "logdirs"}
    for r in recon:
        assert r["unaccounted"] == 0, r
        assert r["bronze_records"] == r["silver_records"] + r["quarantined_records"], r
    # quarantined: one 404 MBean per JMX file stands for no record; log-dir banner lines do
    assert sum(r["quarantined_records"] for r in recon if r["source"] == "jmx") == 0
    assert sum(r["quarantined_records"] for r in recon if r["source"] == "logdirs") == 4


def test_post_mortem_3_incidents_and_none_on_healthy(spark, fleet):
    found = incidents(spark, fleet["lakehouse"])
    assert {(i["cluster"], i["kind"], i["entity"]) for i in found} == {
        ("pm3-dead-cleaner", "log_cleaner_dead", "broker-2"),
        ("pm3-dead-cleaner", "offsets_partition_bloat", "__consumer_offsets-38@broker-2"),
    }
    for exp in fleet["expected"]:
        if exp["kind"] not in jobs.DETECTOR_KINDS or datetime.fromisoformat(exp["first_seen"]) >= H11:
            continue
        got = next(i for i in found if (i["kind"], i["entity"]) == (exp["kind"], exp["entity"]))
        expected = datetime.fromisoformat(exp["first_seen"]).replace(tzinfo=None)
        assert abs(got["first_seen"] - expected) <= timedelta(minutes=5), (exp, got)
    bloat = next(i for i in found if i["kind"] == "offsets_partition_bloat")
    assert "> 1.00 GiB" in bloat["evidence"] and bloat["severity"] == "major"
    dead = next(i for i in found if i["kind"] == "log_cleaner_dead")
    assert "time-since-last-run-ms" in dead["evidence"] and "Error due to" in dead["evidence"]


def test_gold_facts(spark, fleet):
    lh = fleet["lakehouse"]
    status = {(r.cluster, r.broker_id): r for r in lake.read(spark, "gold.log_cleaner_status", lh).collect()}
    assert status[("pm3-dead-cleaner", 2)].status == "dead"
    assert status[("pm3-dead-cleaner", 2)].dead_thread_count is None   # Kafka 1.1: no DeadThreadCount
    assert all(status[("healthy", b)].status == "alive" for b in (1, 2, 3))
    assert status[("healthy", 1)].dead_thread_count == 0
    health = lake.read(spark, "gold.broker_health_hourly", lh).collect()
    assert len(health) == 8   # every inventory host, 2 clusters x (3 brokers + 1 ZooKeeper)
    assert all(r.sources_missing == [] for r in health)
    parts = {(r.cluster, r.broker_id, r.partition): r
             for r in lake.read(spark, "gold.consumer_offsets_partitions", lh).collect()}
    assert parts[("pm3-dead-cleaner", 2, 38)].size_bytes > 1024 ** 3
    assert parts[("pm3-dead-cleaner", 2, 38)].compaction_seen is True   # cleaned at 10:01, died at 10:20
    assert max(r.size_bytes for k, r in parts.items() if k[0] == "healthy") < 200 * 1024 ** 2


def test_rerunning_an_hour_leaves_gold_identical(spark, fleet):
    lh = fleet["lakehouse"]
    names = ["bronze.records", "silver.kafka_events", "silver.jmx_samples", "gold.incidents",
             "gold.incident_findings", "gold.log_cleaner_status", "gold.consumer_offsets_partitions"]
    before = {n: snapshot(spark, lh, n) for n in names}
    run_hour(spark, fleet["inventory"], H10, lh)
    after = {n: snapshot(spark, lh, n) for n in names}
    for n in names:
        assert after[n] == before[n], n


def test_second_hour_missing_jmx_and_incidents_continue(spark, fleet):
    lh = fleet["lakehouse"]
    run_hour(spark, fleet["inventory"], H11, lh)
    found = incidents(spark, lh)
    missing = [i for i in found if i["kind"] == "data_missing"]
    assert [(i["cluster"], i["entity"]) for i in missing] == [("healthy", "healthy-kafka-3:jmx")]
    assert missing[0]["first_seen"] == H11.replace(tzinfo=None)
    # one incident over both hours, not one per hour
    dead = [i for i in found if i["kind"] == "log_cleaner_dead"]
    assert len(dead) == 1 and dead[0]["hours"] == 2 and dead[0]["first_hour"] == H10.replace(tzinfo=None)
    assert dead[0]["last_seen"] >= H11.replace(tzinfo=None)
    status = {(r.cluster, r.broker_id): r.status
              for r in lake.read(spark, "gold.log_cleaner_status", lh, H11).collect()}
    assert status[("pm3-dead-cleaner", 2)] == "dead"
    # the healthy broker without JMX this hour is judged on its other signals (cleaner log lines)
    assert status[("healthy", 3)] == "alive"
    p38 = lake.read(spark, "gold.consumer_offsets_partitions", lh, H11).where(
        "cluster = 'pm3-dead-cleaner' AND broker_id = 2 AND partition = 38").collect()[0]
    assert p38.compaction_seen is False and p38.growth_bytes > 2 * 1024 ** 3


def test_failed_gate_publishes_nothing_and_records_the_failure(spark, fleet, monkeypatch):
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    from fleethealth import quality
    from fleethealth.gold import detectors

    lh = fleet["lakehouse"]
    path = lake.table("gold.incident_findings").path(lh)
    version = DeltaTable.forPath(spark, path).history(1).collect()[0].version
    real = detectors.detect_all

    def corrupt(facts, limits):
        return real(facts, limits).withColumn("kind", F.lit("broker_on_fire"))

    monkeypatch.setattr(jobs, "detect_all", corrupt)
    with pytest.raises(quality.QualityGateError, match=r"expect_column_values_to_be_in_set\(column=kind\)"):
        jobs.run_gold(spark, H10, str(fleet["inventory"]), lh)
    assert DeltaTable.forPath(spark, path).history(1).collect()[0].version == version
    results = lake.read(spark, "gold.quality_results", lh, H10).where("`table` = 'gold.incident_findings'")
    failed = [r.expectation for r in results.where("NOT success").collect()]
    assert "expect_column_values_to_be_in_set(column=kind)" in failed
