"""End to end, the one Airflow run of the suite (`airflow dags test`: real task runs, pulls mapped per
host, SparkSubmitOperator on spark_default, Delta, the GX gates) for one hour of a fleet of three
clusters:

- `healthy` and `pm3-dead-cleaner`, simulated (local transport): post-mortem 3 found, nothing on healthy;
- `loop`, pulled over SFTP from a real sshd on 127.0.0.1 and live Jolokia from a real ZooKeeper JVM,
  with one broker whose port is closed: that host's pull task alone fails (after its retry), every
  other host lands, gold marks the dead host-hour `host_silent` (one major incident, not one
  `data_missing` per source); re-running the hour once the host is back (its pull, then the same gated
  jobs in-process, to keep CI time down) fills it in and the incident is gone.

The hour is the current one (the real ZooKeeper writes its log now), given as `--conf hour`; the
derivation of the hour from a cron data interval is tested in test_dag.py.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml
from realservers import Sshd, ZooKeeper, free_port

from fleethealth.lake.catalog import Lakehouse
from fleethealth.pipeline import window as pipeline
from fleethealth.fleet.inventory import load_inventory
from fleethealth.lake import tables as lake
from fleethealth.lake.hours import floor_hour
from fleethealth.pull import hour as pull
from fleethealth.pull import landing
from fleethealth.runtime import config
from fleethealth.simulate import simulate

pytestmark = [pytest.mark.e2e, pytest.mark.spark, pytest.mark.slow]
UTC = timezone.utc
SIMULATED = ["healthy", "pm3-dead-cleaner"]
SECRET = "pw-of-fleet-ssh-never-written-7f3a9c"     # the SSH connection's password (the key authenticates)


def loop_cluster(root: Path, zk: ZooKeeper, hour: datetime) -> dict:
    """The real-servers cluster: zk-1 (real ZooKeeper, live Jolokia), kafka-1 (files over SFTP, live
    Jolokia of the same JVM), kafka-9 (its SSH connection points at a closed port)."""
    kafka = root / "remote" / "kafka" / f"server.log.{hour:%Y-%m-%d-%H}"
    kafka.parent.mkdir(parents=True)
    kafka.write_text("".join(f"[{hour:%Y-%m-%d %H}:{m:02d}:00,000] INFO [KafkaServer id=1] started "
                             "(kafka.server.KafkaServer)\n" for m in range(0, 60, 10)))
    broker = {"role": "kafka", "kafka_version": "3.9.1", "jolokia_url": zk.jolokia_url,
              "paths": {"kafka": str(kafka.parent)}}
    return {"name": "loop", "timezone": "UTC", "transport": "sftp", "ssh_conn_id": "fleet_ssh", "hosts": [
        {"host": "zk-1", "role": "zookeeper", "zk_myid": 1, "jolokia_url": zk.jolokia_url,
         "paths": {"zookeeper": str(zk.log_file.parent)}},
        {"host": "kafka-1", "broker_id": 1, **broker},
        {"host": "kafka-9", "broker_id": 9, "ssh_conn_id": "fleet_dead", **broker},
    ]}


@pytest.fixture(scope="module")
def runs(tmp_path_factory, spark):
    root = tmp_path_factory.mktemp("e2e")
    sshd = Sshd(root / "sshd")
    zk = None
    try:
        zk = ZooKeeper(root / "zk", root / "remote" / "zk-1" / "zookeeper")
        hour = floor_hour(datetime.fromtimestamp(zk.log_file.stat().st_mtime, UTC))
        simulated = simulate(root / "sim", SIMULATED, hour, hour + timedelta(hours=1), jmx_samples_per_broker_hour=0)
        doc = yaml.safe_load(simulated.read_text())
        doc["clusters"].append(loop_cluster(root, zk, hour))
        inventory = root / "inventory.yaml"
        inventory.write_text(yaml.safe_dump(doc))
        lakehouse = root / "lakehouse"
        env = dict(os.environ, **{config.ENV_INVENTORY: str(inventory), config.ENV_LAKEHOUSE: str(lakehouse),
                                  "FLEETHEALTH_DATA_DOCS": "1",
                                  "AIRFLOW_CONN_FLEET_SSH": json.dumps({**json.loads(sshd.connection()),
                                                                        "password": SECRET}),
                                  "AIRFLOW_CONN_FLEET_DEAD": sshd.connection(port=free_port()),
                                  "FLEETHEALTH_PULL_RETRIES": "1", "FLEETHEALTH_PULL_RETRY_DELAY_S": "1"})
        airflow = str(Path(sys.executable).with_name("airflow"))
        proc = subprocess.run([airflow, "dags", "test", config.DAG_ID, datetime.now(UTC).isoformat(),
                               "--conf", json.dumps({"hour": hour.isoformat()})],
                              env=env, capture_output=True, text=True, timeout=1500)
        log = proc.stdout + proc.stderr
        (root / "dags-test.log").write_text(log)
        landed_first = sorted({(r.cluster, r.host, r.source) for r in landing.read_manifests(hour, Lakehouse.at(lakehouse))})
        incidents_first = incidents(spark, Lakehouse.at(lakehouse))
        # the host is back: re-run the hour (its pull, then the gated bronze -> silver -> gold)
        os.environ["AIRFLOW_CONN_FLEET_DEAD"] = sshd.connection()
        try:
            pull.pull_host(load_inventory(inventory).host("kafka-9"), "UTC", hour, Lakehouse.at(lakehouse))
        finally:
            del os.environ["AIRFLOW_CONN_FLEET_DEAD"]
        pipeline.run_hour(spark, hour, str(inventory), Lakehouse.at(lakehouse))
        yield {"hour": hour, "lakehouse": Lakehouse.at(lakehouse), "log": log, "rc": proc.returncode,
               "landed_first": landed_first, "incidents_first": incidents_first}
    finally:
        if zk:
            zk.stop()
        sshd.stop()


def incidents(spark, lakehouse: Lakehouse) -> set[tuple[str, str, str]]:
    return {(r.cluster, r.kind, r.entity) for r in lake.read(spark, "gold.incidents", Lakehouse.at(lakehouse)).collect()}


def test_the_run_has_one_spark_job_with_three_gates(runs):
    log = runs["log"]
    # only the dead host's pull task failed: the run itself is failed, every other task succeeded
    assert "kafka-9: cannot connect to " in log, log[-4000:]
    assert log.count("Spark-Submit cmd") == 1, log[-4000:]       # bronze, silver, gold, each with its gate
    assert "reconciled: bronze = silver + quarantine" in log
    hour = runs["hour"].isoformat()
    for layer in ("bronze", "silver", "gold"):
        assert f"validate_{layer} {hour}: " in log
        assert f"0 failed (0 critical); published {layer}." in log
    docs = Path(runs["lakehouse"]) / "quality" / "data_docs" / "index.html"
    assert f"Data Docs: {docs}" in log and docs.is_file()


def test_no_connection_secret_is_written_to_a_log_or_a_table(runs):
    """The run's output, every Airflow task log and every file of the lakehouse (tables, manifests,
    quality results, Data Docs) are searched for the SSH connection's password."""
    assert SECRET not in runs["log"]
    logs = Path(os.environ["AIRFLOW_HOME"]) / "logs"
    files = [p for root in (Path(runs["lakehouse"]), logs) if root.is_dir() for p in root.rglob("*") if p.is_file()]
    assert len(files) > 100
    assert [str(p) for p in files if SECRET.encode() in p.read_bytes()] == []


def test_only_the_dead_hosts_pull_fails_and_the_rest_land(runs):
    log = runs["log"]
    assert log.count("kafka-9: cannot connect to ") >= 2, log[-4000:]         # first try and its retry
    assert "kafka-1: cannot connect" not in log and "zk-1: cannot connect" not in log
    loop = [(h, s) for c, h, s in runs["landed_first"] if c == "loop"]
    assert loop == [("kafka-1", "jmx"), ("kafka-1", "kafka"), ("zk-1", "jmx"), ("zk-1", "zookeeper")]
    assert {c for c, _, _ in runs["landed_first"]} == {"loop", *SIMULATED}


def test_post_mortem_3_found_and_nothing_on_healthy(runs):
    assert {i for i in runs["incidents_first"] if i[0] != "loop"} == {
        ("pm3-dead-cleaner", "log_cleaner_dead", "broker-2"),
        ("pm3-dead-cleaner", "offsets_partition_bloat", "__consumer_offsets-38@broker-2"),
    }


def test_gold_marks_the_dead_host_hour_silent_then_the_rerun_fills_it(spark, runs):
    assert {i for i in runs["incidents_first"] if i[0] == "loop"} == {("loop", "host_silent", "broker-9")}
    # the gold step's log lists the hour's incidents
    assert re.search(r"MAJOR +loop host_silent broker-9 \(since .*, 1 h, open\): nothing from kafka-9 ",
                     runs["log"]), runs["log"][-4000:]
    assert not [i for i in incidents(spark, runs["lakehouse"]) if i[0] == "loop"]
    hosts = lake.read(spark, "bronze.records", Lakehouse.at(runs["lakehouse"])).groupBy("host", "source").count().collect()
    assert {(r.host, r.source) for r in hosts} >= {("kafka-9", "kafka"), ("kafka-9", "jmx")}
    hours = {r.hour for r in lake.read(spark, "bronze.records", Lakehouse.at(runs["lakehouse"])).select("hour").distinct().collect()}
    assert hours == {runs["hour"].replace(tzinfo=None)}


def test_live_jolokia_values_are_in_silver(spark, runs):
    samples = lake.read(spark, "silver.jmx_samples", Lakehouse.at(runs["lakehouse"])).where("domain = 'java.lang'").collect()
    by_host = {(r.host, r.attribute) for r in samples if r.value and r.value > 0}
    assert {("zk-1", "OpenFileDescriptorCount"), ("kafka-1", "MaxFileDescriptorCount")} <= by_host
