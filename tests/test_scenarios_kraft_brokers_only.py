"""The KRaft scenarios listed as an operator's users list them (issue 61 item 5): brokers only, no
controller, no `mode:`, `role: broker` and `node_id` (simulate form `kraft-brokers-only`), every broker
listed as Kafka 3.9.1 (the issue's cluster: a version that runs either mode, so only its logs tell).
Two hours through the pipeline: gold finds each cluster in KRaft mode from its brokers' lines, and
finds every expected incident the brokers' data shows (the quorum's instability too: brokers follow the
Raft leader and log its changes); the ones whose signal only a controller logs are the only ones
missed, and nothing else is found."""
from __future__ import annotations

import json
from datetime import timedelta

import pytest
import yaml
from window import against_truth, run_window

from fleethealth.cli import demo
from fleethealth.fleet.inventory import load_inventory
from fleethealth.gold import job as gold_job
from fleethealth.lake.catalog import Lakehouse
from fleethealth.lake.hours import hours_between
from fleethealth.simulate import KRAFT_SCENARIOS, simulate

pytestmark = [pytest.mark.spark, pytest.mark.slow]   # a fleet run: make test's is tests/test_scenarios_containers.py

START = demo.START
END = START + timedelta(hours=2)
TOLERANCE = timedelta(minutes=5)
# what rests on a line only the active controller logs, `Fencing broker N because its session has timed
# out`: the fence itself (the storm it starts is seen by the brokers: the partitions they took over from
# broker 2, out of their ISR: gold.facts.leader_elections.moved_off)
CONTROLLER_ONLY = {("kraft-broker-fenced", "broker_fenced", "broker-2"),
                   # ActiveControllerCount: a controller's bean (issue 63: not guessed from the brokers)
                   ("kraft-quorum-unstable", "no_active_controller", "controller")}


@pytest.fixture(scope="module")
def run(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("kraft_brokers_only")
    path = simulate(root, "kraft", START, END, jmx_samples_per_broker_hour=0, bytes_per_broker_hour=20_000,
                    log_format="kraft-brokers-only")
    doc = yaml.safe_load(path.read_text())
    for cluster in doc["clusters"]:
        for host in cluster["hosts"]:
            host["kafka_version"] = "3.9.1"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    inventory = load_inventory(path)
    out = run_window(spark, inventory, hours_between(START, END), Lakehouse.at(root / "lakehouse"))
    silver = out["silver"]
    found = gold_job.found_modes(inventory, silver["silver.kafka_events"], silver["silver.jmx_samples"])
    result = {"inventory": inventory, "found": found, "findings": out["findings"],
              "expected": json.loads((root / "expected_incidents.json").read_text())}
    spark.catalog.clearCache()
    return result


def test_the_listing_leaves_the_mode_to_the_logs_and_they_show_kraft(run):
    inv, found = run["inventory"], run["found"]
    assert {(c.name, c.mode, c.mode_from_logs, any(h.controller for h in c.hosts)) for c in inv.clusters} == {
        (name, "zookeeper", True, False) for name in KRAFT_SCENARIOS}
    assert {(c.name, c.mode, c.mode_from_logs) for c in found.clusters} == {
        (name, "kraft", False) for name in KRAFT_SCENARIOS}
    assert {h.processes for h in found.hosts} == {("kraft_broker",)}


def test_every_incident_the_brokers_show_is_found_and_nothing_else(run):
    assert against_truth(run["findings"], run["expected"], TOLERANCE) == (sorted(CONTROLLER_ONLY), [], [])
    expected = {(i["cluster"], i["kind"], i["entity"]) for i in run["expected"]}
    shown = set(expected) - CONTROLLER_ONLY
    assert len(shown) == len(expected) - len(CONTROLLER_ONLY) and {k[1] for k in shown} == {
        "controller_quorum_unstable", "metadata_lag", "log_cleaner_dead", "offsets_partition_bloat", "leader_election_storm",
        "partitions_under_min_isr"}


def test_the_brokers_tell_the_storm_and_the_controllers_they_followed(run):
    by_kind = {(f["cluster"], f["kind"]): f for f in run["findings"]}
    storm = by_kind[("kraft-broker-fenced", "leader_election_storm")]
    assert storm["evidence"].startswith("broker 2: leaders moved off it (brokers' state-change.log) at "), storm
    quorum = by_kind[("kraft-quorum-unstable", "controller_quorum_unstable")]
    assert "brokers recorded a new controller: " in quorum["evidence"], quorum
