"""The sources a host sends are declared once (fleethealth.fleet.sources): what the inventory
accepts, what pull lists, which part of silver parses each format and which silver table holds it."""
from __future__ import annotations

import pytest

from fleethealth.cli.main import build_parser
from fleethealth.fleet import sources
from fleethealth.fleet.inventory import InventoryError, parse_inventory
from fleethealth.lake import tables as lake
from fleethealth.silver import tables as silver


def test_every_format_has_its_part_of_silver_and_every_part_a_format():
    assert set(silver.PARTS) == set(sources.FORMATS)


def test_every_source_lands_in_a_silver_table_of_the_catalogue():
    for source in sources.SOURCES.values():
        assert lake.table(source.silver_table).layer == "silver"
        assert all(lake.table(t).layer == "silver" for t in source.extra_tables)
    assert silver.SILVER_OF_SOURCE == {s: sources.silver_table(s) for s in sources.NAMES}


def test_parse_offers_exactly_the_formats():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    source = next(a for a in sub.choices["parse"]._actions if a.dest == "source")
    assert list(source.choices) == list(sources.FORMATS)
    assert source.help == f"what the file is: one of {', '.join(sources.FORMATS)}"


@pytest.mark.parametrize("source", sources.NAMES)
def test_the_inventory_accepts_each_source_and_nothing_else(source):
    doc = {"clusters": [{"name": "c", "timezone": "UTC", "root": "/x", "hosts": [
        {"host": "k1", "role": "kafka", "broker_id": 1, "kafka_version": "3.6.1", "expect": [source]}]}]}
    assert parse_inventory(doc).host("k1").expect == (source,)
    doc["clusters"][0]["hosts"][0]["expect"] = ["syslog"]
    with pytest.raises(InventoryError, match="expected a list of sources"):
        parse_inventory(doc)


def test_what_each_role_sends_every_hour_is_a_source():
    assert {s for expected in sources.EXPECTED.values() for s in expected} <= set(sources.NAMES)
