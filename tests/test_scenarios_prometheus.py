"""The scenarios with their JMX read from a real Prometheus (issue 63): one fleet whose clusters' jmx_exporter
rules differ (Confluent's, Strimzi's before and since KRaft), each cluster's JMX put into Prometheus as its
rules name it, the hours (days old, as a backfill reads them) pulled from Prometheus with no JMX file left
on the hosts. The fleet gives the incidents the scenarios hold, first_seen within 5 minutes, as it does
from the Jolokia files; no host of it is data_missing and no Prometheus unreadable."""
from __future__ import annotations

import json
import shutil
from datetime import timedelta, timezone

import pytest
import yaml
from realservers import Prometheus
from window import against_truth, run_window

from fleethealth.bronze import tables as bronze
from fleethealth.cli import demo
from fleethealth.fleet import mbeans, namings
from fleethealth.fleet.inventory import load_inventory
from fleethealth.lake.catalog import Lakehouse
from fleethealth.lake.hours import hours_between
from fleethealth.pull import hour as pull
from fleethealth.silver import tables as silver
from fleethealth.simulate import simulate

pytestmark = [pytest.mark.spark, pytest.mark.slow]

START = demo.START
END = START + timedelta(hours=2)
TOLERANCE = timedelta(minutes=5)
# each cluster's exporter rules: every bean its detectors read has a series under them (fleet/exporter_namings)
NAMINGS = {"pm3-dead-cleaner": "confluent", "healthy": "strimzi-zookeeper", "kraft-metadata-lag": "strimzi",
           "kraft-quorum-unstable": "strimzi"}
ADDED = 'instance="{host}:9404",job="kafka",namespace="kafka",pod="{host}"'


def jolokia_samples(spark, inventory, lake: Lakehouse) -> list[dict]:
    """The catalogue beans' samples of the hours as silver reads them from the hosts' Jolokia exports."""
    from pyspark.sql import functions as F

    beans = [b for b in mbeans.ALL if b.exporter_series]
    which = F.coalesce(*[F.when(b.matches(), F.lit(b.id)) for b in beans])
    out = []
    for hour in hours_between(START, END):
        landed = pull.pull_hour(inventory, hour, lake)
        records = bronze.records(spark, landed, lake.landing(hour), hour)
        jmx = silver.build(spark, records, inventory, parts=("jolokia",))["silver.jmx_samples"]
        out += [r.asDict() for r in jmx.withColumn("bean", which).where(F.col("bean").isNotNull())
                .select("cluster", "host", "bean", "props", "ts", "value").collect()]
    return out


def openmetrics(rows: list[dict]) -> str:
    """The samples as each cluster's rules name them and Prometheus keeps them (its target labels added), a
    metric family's lines together; a bean its rules have no series of is not exported."""
    lines = []
    for r in rows:
        series = namings.naming(NAMINGS[r["cluster"]]).series.get(r["bean"])
        if series is None:
            continue
        labels = dict(series.matchers) | {label: r["props"][key] for label, key in series.labels}
        text = ",".join([*(f'{k}="{v}"' for k, v in sorted(labels.items())), ADDED.format(host=r["host"])])
        stamp = r["ts"].replace(tzinfo=timezone.utc).timestamp()
        lines.append((series.name, r["host"], text, stamp, f"{series.name}{{{text}}} {r['value']!r} {stamp:.3f}"))
    return "\n".join(line[-1] for line in sorted(lines)) + "\n# EOF\n"


@pytest.fixture(scope="module")
def run(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("scenarios_prometheus")
    path = simulate(root / "files", list(NAMINGS), START, END, jmx_samples_per_broker_hour=0,
                    bytes_per_broker_hour=20_000)
    samples = jolokia_samples(spark, load_inventory(path), Lakehouse.at(root / "files" / "lake"))
    doc = yaml.safe_load(path.read_text())
    shutil.copytree(root / "files" / "fleet", root / "prom" / "fleet", ignore=shutil.ignore_patterns("jmx"))
    with Prometheus(root / "prometheus", openmetrics(samples)) as server:
        for c in doc["clusters"]:
            c.update(root=str(root / "prom" / "fleet"), prometheus={"url": server.url, "host_label": "pod",
                                                                   "naming": NAMINGS[c["name"]]})
        (root / "prom" / "inventory.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
        inventory = load_inventory(root / "prom" / "inventory.yaml")
        out = run_window(spark, inventory, hours_between(START, END), Lakehouse.at(root / "prom" / "lake"))
    result = {"samples": samples, "findings": out["findings"], "health": out["health"],
              "expected": json.loads((root / "files" / "expected_incidents.json").read_text()),
              "jmx_files": sorted(p.name for p in (root / "prom" / "fleet").rglob("jmx/*"))}
    spark.catalog.clearCache()
    return result


def test_every_cluster_s_jmx_came_from_prometheus_as_its_rules_name_it(run):
    assert run["jmx_files"] == []
    jmx = [h for h in run["health"] if "jmx" in h["sources_expected"]]
    assert jmx and all("jmx" in h["sources_arrived"] for h in jmx), [
        (h["host"], h["hour"], h["file_problems"]) for h in jmx if "jmx" not in h["sources_arrived"]]
    # the KRaft clusters' metadata and Raft beans, the dead cleaner's, each through its cluster's naming
    assert {r["bean"] for r in run["samples"]} >= {"broker_metadata_applied_offset", "raft_current_leader",
                                                   "cleaner_dead_threads", "offsets_log_size"}


def test_the_incidents_are_the_scenarios_first_seen_within_5_minutes(run):
    assert against_truth(run["findings"], run["expected"], TOLERANCE) == ([], [], [])
    assert {i["kind"] for i in run["expected"]} >= {"log_cleaner_dead", "offsets_partition_bloat", "metadata_lag",
                                                     "controller_quorum_unstable"}
