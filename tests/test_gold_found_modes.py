"""The mode of a KRaft cluster listed with its brokers only (issue 61 item 5) in an hour whose lines show
neither mode: KRaft when gold found it so in an hour before (a row of gold.kraft_quorum: a cluster
migrates from ZooKeeper to KRaft, never back), else the inventory's fallback."""
from __future__ import annotations

from datetime import timedelta

import pytest
from detector_frames import HOUR, at, event, events

from fleethealth.fleet.inventory import parse_inventory
from fleethealth.gold import job as gold_job
from fleethealth.lake import tables as lake
from fleethealth.lake.catalog import Lakehouse
from fleethealth.runtime.frames import local_frame

pytestmark = pytest.mark.spark
# kb: KRaft in an hour before; kl: only in an hour after; kn: never seen; ks: its lines show ZooKeeper now
CLUSTERS = ("kb", "kl", "kn", "ks")
INVENTORY = {"clusters": [{"name": c, "root": "/r", "hosts": [
    {"host": f"{c}-1", "role": "broker", "node_id": 1, "kafka_version": "3.9.1"}]} for c in CLUSTERS]}


def quiet_hour(spark):
    rows = [event(1, at(5), "segment_rolled", c, message="[LocalLog partition=orders-0, dir=/var/lib/kafka] "
                                                          "Rolled new log segment at offset 8812 in 3 ms.")
            for c in CLUSTERS[:3]]
    rows.append(event(1, at(7), "other", "ks", message="[ZooKeeperClient Kafka server] Connected."))
    return events(spark, rows)


def test_a_silent_hour_keeps_the_kraft_an_hour_before_showed(spark, tmp_path):
    lakehouse = Lakehouse.at(str(tmp_path / "lakehouse"))
    for cluster, hour in (("kb", HOUR - timedelta(hours=2)), ("kl", HOUR + timedelta(hours=1))):
        rows = local_frame(spark, [(cluster, hour, 0)], "cluster string, hour timestamp, log_lines bigint")
        lake.write_hour(rows, "gold.kraft_quorum", hour, lakehouse)
    inventory = parse_inventory(INVENTORY)
    assert {c.mode_from_logs for c in inventory.clusters} == {True}
    found = gold_job.found_modes(inventory, quiet_hour(spark), None, gold_job.kraft_before(spark, HOUR, lakehouse))
    assert {c.name: (c.mode, c.mode_from_logs) for c in found.clusters} == {
        "kb": ("kraft", False), "kl": ("zookeeper", False), "kn": ("zookeeper", False), "ks": ("zookeeper", False)}
    assert [h.processes for h in found.cluster("kb").hosts] == [("kraft_broker",)]
    # no gold.kraft_quorum yet (a first hour): the fallback
    empty = gold_job.kraft_before(spark, HOUR, Lakehouse.at(str(tmp_path / "none")))
    assert {c.mode for c in gold_job.found_modes(inventory, quiet_hour(spark), None, empty).clusters} == {"zookeeper"}


def test_clusters_whose_lines_tell_their_mode_read_no_earlier_hour(spark):
    rows = [event(1, at(9), "other", c, message="[SnapshotGenerator id=1] Creating new KRaft snapshot file snapshot "
                                                "00000000000000092577-0000000042 because we have waited at least 60 "
                                                "minute(s).") for c in CLUSTERS]

    def never(clusters):
        raise AssertionError(clusters)
    found = gold_job.found_modes(parse_inventory(INVENTORY), events(spark, rows), None, never)
    assert {c.mode for c in found.clusters} == {"kraft"}
