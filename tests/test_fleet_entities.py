"""fleet.entities: the one format of an entity name and its parse, back to the keys it was made of."""
from __future__ import annotations

import pytest

from fleethealth.fleet import entities


@pytest.mark.parametrize(("name", "keys"), [
    (entities.broker(2), {"broker": 2}),
    (entities.controller(3000), {"controller": 3000}),
    (entities.zookeeper(3), {"zk": 3}),
    (entities.replica("__consumer_offsets", 38, 2), {"topic": "__consumer_offsets", "partition": 38, "broker": 2}),
    (entities.replica("orders-eu", 0, 7), {"topic": "orders-eu", "partition": 0, "broker": 7}),
    ("c1-kafka-1:kafka", {"host": "c1-kafka-1"}),
    (entities.QUORUM, {"host": "quorum"}),
])
def test_a_name_parses_back_to_its_keys(name, keys):
    assert entities.parse(name) == keys


def test_the_names_as_incidents_give_them():
    assert [entities.broker(2), entities.controller(3000), entities.zookeeper(3),
            entities.replica("__consumer_offsets", 38, 2), entities.at_broker("p3", 1)] == [
        "broker-2", "controller-3000", "zk-3", "__consumer_offsets-38@broker-2", "p3@broker-1"]
    assert [entities.process(role, 7, 2) for role in ("kafka", "controller", "zookeeper")] == [
        "broker-7", "controller-7", "zk-2"]
