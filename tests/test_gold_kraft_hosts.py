"""A KRaft cluster's hosts through gold's completeness kinds and the incident lifecycle (issue 46):
controllers expect their Kafka logs and JMX, are named `controller-<node id>`, and a KRaft cluster
gets no data_missing for ZooKeeper servers it does not have; a ZooKeeper-mode cluster beside it is
judged as before."""
from __future__ import annotations

from datetime import datetime, timedelta

from fleethealth.fleet.inventory import parse_inventory
from fleethealth.gold import thresholds
from fleethealth.gold.detectors import data_missing, host_silent
from fleethealth.gold.facts.core import Facts, broker_health
from fleethealth.gold.incidents import lifecycle
from fleethealth.silver.tables import hosts_frame
from fleethealth.runtime.frames import local_frame

HOUR = datetime(2026, 11, 21, 10)
INVENTORY = {"clusters": [
    {"name": "kr", "root": "/r", "hosts": [
        {"host": "kr-ctl-1", "role": "controller", "node_id": 3000, "kafka_version": "3.9.0"},
        {"host": "kr-ctl-2", "role": "controller", "node_id": 3001, "kafka_version": "3.9.0"},
        {"host": "kr-kafka-1", "role": "kafka", "broker_id": 1, "kafka_version": "4.1.0"},
        {"host": "kr-kafka-2", "role": "kafka", "broker_id": 2, "kafka_version": "3.9.0", "controller": True}]},
    {"name": "zk", "root": "/r", "hosts": [
        {"host": "zk-kafka-1", "role": "kafka", "broker_id": 1, "kafka_version": "3.6.1"},
        {"host": "zk-zk-1", "role": "zookeeper", "zk_myid": 1}]}]}
# (cluster, host) -> the sources that arrived this hour
ARRIVED = {("kr", "kr-ctl-1"): ["kafka"], ("kr", "kr-kafka-1"): ["kafka", "jmx"], ("kr", "kr-kafka-2"): ["jmx"],
           ("zk", "zk-kafka-1"): ["kafka", "jmx"]}
RECONCILIATION = ("cluster string, host string, source string, hour timestamp, bronze_records long, "
                  "silver_records long, quarantined_records long")


def test_controllers_expect_logs_and_jmx_and_no_zookeeper_is_missing(spark):
    inventory = parse_inventory(INVENTORY)
    rec = local_frame(spark, [(c, h, s, HOUR, 5, 5, 0) for (c, h), sources in ARRIVED.items() for s in sources],
                                RECONCILIATION)
    facts = Facts(HOUR, hosts_frame(spark, inventory), None, None, None, None, rec, None, None)
    facts.broker_health = broker_health(facts)
    health = {r.host: (r.role, r.broker_id, r.sources_expected, r.sources_missing)
              for r in facts.broker_health.collect()}
    assert health == {
        "kr-ctl-1": ("controller", 3000, ["jmx", "kafka"], ["jmx"]),
        "kr-ctl-2": ("controller", 3001, ["jmx", "kafka"], ["jmx", "kafka"]),
        "kr-kafka-1": ("kafka", 1, ["jmx", "kafka"], []),
        "kr-kafka-2": ("kafka", 2, ["jmx", "kafka"], ["kafka"]),
        "zk-kafka-1": ("kafka", 1, ["jmx", "kafka"], []),
        "zk-zk-1": ("zookeeper", None, ["zookeeper"], ["zookeeper"])}
    limits = thresholds.load()
    found = sorted((r.cluster, r.kind, r.entity, r.evidence) for r in
                   data_missing.detect(facts, limits).unionByName(host_silent.detect(facts, limits)).collect())
    assert found == [
        ("kr", "data_missing", "kr-ctl-1:jmx", "no jmx records from kr-ctl-1 for this hour (expected: jmx, kafka)"),
        ("kr", "data_missing", "kr-kafka-2:kafka",
         "no kafka records from kr-kafka-2 for this hour (expected: jmx, kafka)"),
        ("kr", "host_silent", "controller-3001", "nothing from kr-ctl-2 for this hour (expected: jmx, kafka)"),
        ("zk", "host_silent", "zk-1", "nothing from zk-zk-1 for this hour (expected: zookeeper)")]


def test_a_controllers_incident_is_resolved_by_its_own_data_only(spark):
    findings = local_frame(spark, 
        [("kr", "host_silent", "major", "controller-3000", HOUR, HOUR + timedelta(minutes=59), "nothing", None, HOUR)],
        "cluster string, kind string, severity string, entity string, first_seen timestamp, last_seen timestamp, "
        "evidence string, known_bug string, hour timestamp")
    hours = [HOUR + timedelta(hours=n) for n in range(3)]
    broker = [("kr", "kr-kafka-1", "kafka", 1, None, h, ["jmx", "kafka"]) for h in hours]
    controller = [("kr", "kr-ctl-1", "controller", 3000, None, h, []) for h in hours]
    schema = ("cluster string, host string, role string, broker_id int, zk_myid int, hour timestamp, "
              "sources_arrived array<string>")
    hosts = hosts_frame(spark, parse_inventory(INVENTORY))
    # the controller stays silent while a broker of its cluster sends data: still open
    incidents = lifecycle(findings, local_frame(spark, broker + controller, schema), 1, hosts).incidents.collect()
    assert [(i.entity, i.status) for i in incidents] == [("controller-3000", "open")]
    # its own data in hour 2 resolves it
    controller[2] = ("kr", "kr-ctl-1", "controller", 3000, None, hours[2], ["kafka"])
    incidents = lifecycle(findings, local_frame(spark, broker + controller, schema), 1, hosts).incidents.collect()
    assert [(i.entity, i.status, i.resolved_at) for i in incidents] == [("controller-3000", "resolved", hours[2])]


def test_the_report_shows_a_controllers_own_health_rows():
    """A host_silent incident of controller-3000: the report's rows are that controller's, not a broker's."""
    import pandas as pd

    from fleethealth.fleet.entities import parse as entity_keys
    from fleethealth.report.html.incidents import fact_rows
    from fleethealth.report.html.read import Gold

    assert entity_keys("controller-3000") == {"controller": 3000}
    assert entity_keys("zk-3") == {"zk": 3}
    at = pd.Timestamp(HOUR, tz="UTC")
    health = pd.DataFrame([
        {"cluster": "kr", "host": h, "role": role, "broker_id": i, "zk_myid": None, "hour": at,
         "sources_expected": ["jmx", "kafka"], "sources_missing": missing}
        for h, role, i, missing in (("kr-ctl-1", "controller", 3000, ["jmx", "kafka"]),
                                    ("kr-kafka-1", "kafka", 1, []))])
    gold = Gold(HOUR, HOUR + timedelta(hours=1), {"broker_health_hourly": health})
    incident = pd.Series({"cluster": "kr", "kind": "host_silent", "entity": "controller-3000",
                          "first_hour": at, "last_hour": at, "first_seen": at, "last_seen": at})
    _, table, rows = fact_rows(gold, incident)
    assert table == "broker_health_hourly"
    assert [(r["host"], r["sources_missing"]) for r in rows] == [("kr-ctl-1", ["jmx", "kafka"])]
