"""A mixed fleet, as `make demo` has it (issue 46's acceptance): one `fleethealth run` over an inventory of a
ZooKeeper-mode cluster (pm3-dead-cleaner, Kafka 1.1.0 and a ZooKeeper server) and a KRaft cluster
(kraft-broker-fenced: three controllers on 4.1.0, brokers on 3.9.1 and 4.1.0, no ZooKeeper) for the demo's
three hours gives each cluster exactly its own incidents, no data_missing (a KRaft cluster has no ZooKeeper
host to miss), prints what README shows `make demo` printing, and README's query runs on its lakehouse.
`make demo` runs the same fleet through the DAG (test_e2e_dag: the DAG's path to the same gold)."""
from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from incident_match import known_bugs_differ, mismatches

from fleethealth.cli import demo
from fleethealth.cli import main as cli
from fleethealth.fleet.inventory import load_inventory
from fleethealth.lake import tables as lake
from fleethealth.lake.catalog import Lakehouse
from fleethealth.lake.hours import hours_between
from fleethealth.pipeline import window as pipeline
from fleethealth.simulate import simulate

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def mixed(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("mixed")
    inventory = simulate(root, demo.SCENARIOS, demo.START, demo.END, jmx_samples_per_broker_hour=0)
    lakehouse = root / "lakehouse"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = cli.main(["run", "--inventory", str(inventory), "--from", demo.START.isoformat(),
                       "--to", demo.END.isoformat(), "--lakehouse", str(lakehouse), "--no-notify"])
    assert rc == 0, out.getvalue()[-3000:]
    return {"stdout": out.getvalue(), "lakehouse": lakehouse, "inventory": load_inventory(inventory),
            "inventory_path": inventory,
            "found": [r.asDict() for r in lake.read(spark, "gold.incidents", Lakehouse.at(lakehouse)).collect()],
            "expected": json.loads((root / "expected_incidents.json").read_text()),
            "health": [r.asDict() for r in lake.read(spark, "gold.broker_health_hourly", Lakehouse.at(lakehouse))
                       .select("cluster", "host").distinct().collect()]}


def test_the_fleet_is_one_zookeeper_and_one_kraft_cluster_with_39_and_41_brokers(mixed):
    clusters = {c.name: c for c in mixed["inventory"].clusters}
    assert {n: c.mode for n, c in clusters.items()} == {"pm3-dead-cleaner": "zookeeper", "kraft-broker-fenced": "kraft"}
    kraft = clusters["kraft-broker-fenced"].hosts
    assert {h.kafka_version for h in kraft if h.role == "kafka"} == {"3.9.1", "4.1.0"}
    assert {h.role for h in kraft} == {"kafka", "controller"}


@pytest.mark.parametrize("cluster", demo.SCENARIOS)
def test_each_cluster_gets_exactly_its_own_incidents(mixed, cluster):
    found = [i for i in mixed["found"] if i["cluster"] == cluster]
    expected = [i for i in mixed["expected"] if i["cluster"] == cluster]
    assert expected
    assert mismatches(found, expected) == ([], [], [])
    assert known_bugs_differ(found, expected) == []


def test_no_data_missing_and_every_inventory_host_processed(mixed):
    """Every host of the inventory has its hours in gold and none is data_missing or host_silent: the KRaft
    cluster is not expected to have the ZooKeeper hosts it does not have, nor a controller partitions."""
    assert [(i["cluster"], i["kind"], i["entity"]) for i in mixed["found"]
            if i["kind"] in ("data_missing", "host_silent")] == []
    inventory = {(h.cluster, h.host) for h in mixed["inventory"].hosts}
    assert {(r["cluster"], r["host"]) for r in mixed["health"]} == inventory
    assert ("kraft-broker-fenced", "broker_fenced") in {(i["cluster"], i["kind"]) for i in mixed["found"]}


def test_the_demo_pages_its_real_incidents_and_tables_its_versions_bugs(spark, mixed):
    """No incident per broker for a version's catalogued bugs (issue 62): gold.known_bug_exposure has each
    cluster's versions, hosts and bugs in each hour, and the dead cleaner's incident names KAFKA-7215."""
    assert {i["kind"] for i in mixed["found"]} == {"log_cleaner_dead", "offsets_partition_bloat", "slow_group_load",
                                                  "broker_fenced", "leader_election_storm", "partitions_under_min_isr"}
    rows = lake.read(spark, "gold.known_bug_exposure", Lakehouse.at(mixed["lakehouse"])).collect()
    assert {(r.cluster, r.kafka_version, tuple(r.hosts), r.bug_id) for r in rows} == {
        *{("pm3-dead-cleaner", "1.1.0", tuple(f"pm3-dead-cleaner-kafka-{b}" for b in (1, 2, 3)), bug)
          for bug in ("KAFKA-6834", "KAFKA-6854", "KAFKA-7215", "KAFKA-8335")},
        *{("kraft-broker-fenced", "3.9.1", ("kraft-broker-fenced-kafka-1", "kraft-broker-fenced-kafka-2"), bug)
          for bug in ("KAFKA-17076", "KAFKA-19895")},
        ("kraft-broker-fenced", "4.1.0", ("kraft-broker-fenced-kafka-3",), "KAFKA-19895")}
    assert len(rows) == 3 * 7 and {r.hour for r in rows} == {h.replace(tzinfo=None) for h in hours_between(demo.START, demo.END)}
    [dead] = [i for i in mixed["found"] if i["kind"] == "log_cleaner_dead"]
    assert dead["known_bug"] == "KAFKA-7215"


def test_readme_shows_what_the_demo_prints_and_its_query_runs(spark, mixed, tmp_path):
    """README's demo output, line by line (`…` for any text), is what the run printed (the demo prints the
    same report of gold.incidents), and README's query of the demo's lakehouse runs as written from a
    folder where demo/lakehouse is this run's."""
    from readme_blocks import block, matches_shown

    from fleethealth.report import text as incidents

    lakehouse = Lakehouse.at(mixed["lakehouse"])
    printed = incidents.incidents_report(incidents.incident_rows(lakehouse), exposure=incidents.exposure_rows(lakehouse))
    assert printed in mixed["stdout"]
    assert matches_shown(block("output", "make demo").text, printed) == [], printed

    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "lakehouse").symlink_to(mixed["lakehouse"])
    (tmp_path / ".venv").symlink_to(Path(sys.executable).parents[1])
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", block("run", "demo-query").text], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    kinds = {i["kind"] for i in mixed["found"]}
    assert {line.split()[1] for line in proc.stdout.splitlines() if line.startswith("| ")} == kinds | {"kind"}


def causes_of(found: list[dict]) -> dict[tuple, list[tuple]]:
    return {(i["cluster"], i["kind"], i["entity"]): [(c["kind"], c["entity"], c["first_seen"]) for c in i["caused_by"]]
            for i in found}


def test_each_incident_names_what_explains_it_and_a_rerun_keeps_it(spark, mixed):
    """Issue 62 item 4 (last in this file: it re-runs an hour of the module's lakehouse): the storm is
    explained by the fence, the bloat by the dead cleaner, the slow group load by the bloat, each named by
    its key (kind, entity, first_seen); a re-run of the middle hour's gold (where they are computed) gives
    the same. Item 6: the re-run is given a thresholds file in which the dead cleaner's cluster has a
    severity of its own: its bloat escalates, and nothing else changes."""
    first = {i["kind"]: i["first_seen"] for i in mixed["found"]}
    bloat = "__consumer_offsets-38@broker-2"
    want = {
        ("pm3-dead-cleaner", "log_cleaner_dead", "broker-2"): [],
        ("pm3-dead-cleaner", "offsets_partition_bloat", bloat): [("log_cleaner_dead", "broker-2", first["log_cleaner_dead"])],
        ("pm3-dead-cleaner", "slow_group_load", bloat): [("offsets_partition_bloat", bloat, first["offsets_partition_bloat"])],
        ("kraft-broker-fenced", "broker_fenced", "broker-2"): [],
        ("kraft-broker-fenced", "leader_election_storm", "broker-2"): [("broker_fenced", "broker-2", first["broker_fenced"])],
        **{("kraft-broker-fenced", "partitions_under_min_isr", f"broker-{b}"): [
            ("broker_fenced", "broker-2", first["broker_fenced"])] for b in (1, 3)}}
    assert causes_of(mixed["found"]) == want
    middle = demo.START + (demo.END - demo.START) / 3
    own = mixed["lakehouse"].parent / "thresholds.yaml"
    own.write_text("clusters:\n  pm3-dead-cleaner: {offsets_partition_bloat.severity: critical}\n")
    outcome = pipeline.run_window(spark, [middle], str(mixed["inventory_path"]), Lakehouse.at(mixed["lakehouse"]),
                                  str(own), layers=("gold",))
    assert not isinstance(outcome[middle], BaseException), outcome
    again = [r.asDict(recursive=True) for r in lake.read(spark, "gold.incidents", Lakehouse.at(mixed["lakehouse"])).collect()]
    assert causes_of(again) == want
    assert sorted(i["incident_id"] for i in again) == sorted(i["incident_id"] for i in mixed["found"])
    severity = {(i["cluster"], i["kind"]): i["severity"] for i in mixed["found"]}
    assert severity[("pm3-dead-cleaner", "offsets_partition_bloat")] == "major"
    severity[("pm3-dead-cleaner", "offsets_partition_bloat")] = "critical"
    assert {(i["cluster"], i["kind"]): i["severity"] for i in again} == severity
