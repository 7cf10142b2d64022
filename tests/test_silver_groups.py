"""The `groups` source (kafka-consumer-groups.sh --describe snapshots -> silver.consumer_offsets): its
declaration, and the parser's edges on tiny snapshots (the layouts per Kafka version are the golden
cases under tests/fixtures/golden/groups/)."""
from __future__ import annotations

from pathlib import Path

import pytest

from fleethealth.bronze.tables import record_mode
from fleethealth.cli.parse import parsed_file
from fleethealth.fleet import sources
from fleethealth.fleet.inventory import parse_inventory
from fleethealth.pull.host import placed_by_lines
from fleethealth.pull.landing import Landed

HEADER = ("GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             "
          "CONSUMER-ID     HOST            CLIENT-ID")


def test_groups_is_an_optional_cluster_wide_snapshot_placed_by_its_name():
    groups = sources.SOURCES["groups"]
    assert (groups.silver_table, groups.scope, groups.id_column, groups.reader) == (
        "silver.consumer_offsets", "cluster", None, "snapshot")
    assert all("groups" not in expected for expected in sources.EXPECTED.values())
    assert placed_by_lines("groups", "g-2026-11-20T05-00-00.txt") == placed_by_lines("groups", "g.txt") == ""
    assert record_mode(Landed("c", "h", "groups", "c/h/groups/g.txt", 1, "", 0.0, 0.0)) == "w"


def test_a_host_expects_groups_only_when_its_expect_lists_it():
    hosts = [{"host": "k1", "role": "kafka", "broker_id": 1, "kafka_version": "3.6.1"},
             {"host": "k2", "role": "kafka", "broker_id": 2, "kafka_version": "3.6.1", "expect": ["kafka", "groups"]}]
    inventory = parse_inventory({"clusters": [{"name": "c", "timezone": "UTC", "root": "/x", "hosts": hosts}]})
    assert inventory.host("k1").expect == ("kafka", "jmx")
    assert inventory.host("k2").expect == ("kafka", "groups")


def _parse(spark, tmp_path: Path, text: str, name: str = "orders-2026-11-20T05-00-00.txt"):
    raw = tmp_path / name
    raw.write_text(text)
    with parsed_file(spark, raw, "groups") as (rows, quarantine, _):
        return ([r.asDict() for r in rows.orderBy("snapshot_line").collect()],
                [(r.line_count, r.reason) for r in quarantine.collect()])


def test_dashes_are_null_and_every_line_is_read_or_quarantined(spark, tmp_path):
    text = "\n".join(["", HEADER,
                      "orders          orders          0          10              12              2               c-1             /10.0.0.1       client-1",
                      "orders          orders          1          -               7               -               -               -               -",
                      "orders          orders          2          x9              7               -               -               -               -",
                      "orders          orders          3          5"])
    rows, quarantine = _parse(spark, tmp_path, text)
    assert [(r["group"], r["partition"], r["current_offset"], r["log_end_offset"], r["lag"], r["consumer_id"],
             r["consumer_host"], r["client_id"]) for r in rows] == [
        ("orders", 0, 10, 12, 2, "c-1", "/10.0.0.1", "client-1"), ("orders", 1, None, 7, None, None, None, None)]
    assert sorted(quarantine) == [(0, "line 5: CURRENT-OFFSET 'x9' is not a number"),
                                  (0, "line 6: 4 cells, its table has 9 columns")]


def test_a_table_without_group_column_is_the_group_the_file_is_named_after(spark, tmp_path):
    text = ("TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID\n"
            "payments        0          5               5               0               -               -               -\n\n"
            "COORDINATOR (ID)             ASSIGNMENT-STRATEGY       STATE                #MEMBERS\n"
            "kafka-2.example.net:9092 (2)                           Empty                0\n")
    rows, quarantine = _parse(spark, tmp_path, text, "billing-app_2026-11-20T05-00-00.txt")
    assert [(r["group"], r["group_state"], r["coordinator"], r["coordinator_id"]) for r in rows] == [
        ("billing-app", "Empty", "kafka-2.example.net:9092", 2)]
    assert quarantine == []


@pytest.mark.parametrize("text,reason", [
    ("", "kafka-consumer-groups snapshot without offsets rows"),
    ("Error: Executing consumer group command failed due to timeout\n",
     "kafka-consumer-groups snapshot without offsets rows"),
])
def test_a_snapshot_without_offsets_stands_for_its_record(spark, tmp_path, text, reason):
    rows, quarantine = _parse(spark, tmp_path, text or "\n")
    assert rows == []
    assert (1, reason) in quarantine and sum(n for n, _ in quarantine) == 1
