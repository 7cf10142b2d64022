"""How incidents name what they are about: the one format (and its parse) of an entity name.

A Kafka or ZooKeeper process: `broker-<id>`, `controller-<node id>` (a dedicated KRaft controller; a
combined node is a broker) or `zk-<myid>`; a replica of a partition: `<topic>-<partition>@broker-<id>`;
a host's source: `<host>:<source>`; a KRaft cluster's controller quorum: `quorum`.

Each name has a Python form (fleet.inventory.Host.entity, the report) and a Spark Column form (gold's
detectors), side by side here; `parse` reads a name back into its keys. Importing this module needs no
Spark (the report runs without it): the Column forms import it when called.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import Column

BROKER, CONTROLLER, ZOOKEEPER = "broker", "controller", "zk"
QUORUM = "quorum"
# the role of a host (fleet.inventory.ROLES) -> the prefix of its process's name
_PREFIX = {"kafka": BROKER, "controller": CONTROLLER, "zookeeper": ZOOKEEPER}
# a process's name at the end of an entity name (a replica's too), and a `<host>:<source>` name
PROCESS_PATTERN = rf"((?:{BROKER}|{CONTROLLER}|{ZOOKEEPER})-\d+)$"
HOST_SOURCE_PATTERN = r"^(.*):[a-z_]+$"
_REPLICA = re.compile(rf"(?:(.+)-(\d+)@)?{BROKER}-(\d+)")
_NODE = re.compile(rf"({ZOOKEEPER}|{CONTROLLER})-(\d+)")


def broker(broker_id) -> str:
    return f"{BROKER}-{broker_id}"


def controller(node_id) -> str:
    return f"{CONTROLLER}-{node_id}"


def zookeeper(myid) -> str:
    return f"{ZOOKEEPER}-{myid}"


def process(role: str, broker_id, zk_myid) -> str:
    """The name of a host's process from its role (fleet.inventory.ROLES): broker, controller or zk."""
    return f"{_PREFIX[role]}-{zk_myid if role == 'zookeeper' else broker_id}"


def at_broker(what: str, broker_id) -> str:
    """`<what>@broker-<id>`: something of a broker (a chart's series: `p3@broker-1`)."""
    return f"{what}@{broker(broker_id)}"


def replica(topic: str, partition, broker_id) -> str:
    return at_broker(f"{topic}-{partition}", broker_id)


def parse(entity: str) -> dict:
    """The keys an entity name gives: broker-2 -> {broker: 2}; __consumer_offsets-38@broker-2 ->
    {topic, partition, broker}; zk-3 -> {zk: 3}; controller-3000 -> {controller: 3000}; host:source
    (or anything else) -> {host}."""
    m = _REPLICA.fullmatch(entity)
    if m:
        partition = {"topic": m.group(1), "partition": int(m.group(2))} if m.group(1) else {}
        return {BROKER: int(m.group(3)), **partition}
    m = _NODE.fullmatch(entity)
    if m:
        return {m.group(1): int(m.group(2))}
    return {"host": entity.split(":", 1)[0]}


# --- the same names as Spark Columns -----------------------------------------------------------------

def broker_col(broker_id: Column) -> Column:
    from pyspark.sql import functions as F

    return F.format_string(f"{BROKER}-%d", broker_id)


def zookeeper_col(myid: Column) -> Column:
    from pyspark.sql import functions as F

    return F.format_string(f"{ZOOKEEPER}-%d", myid)


def node_col(is_controller: Column, node_id: Column) -> Column:
    """A Kafka node's name: `controller-<id>` when `is_controller` (a dedicated controller), else `broker-<id>`."""
    from pyspark.sql import functions as F

    return F.when(is_controller, F.format_string(f"{CONTROLLER}-%d", node_id)).otherwise(broker_col(node_id))


def process_col(role: Column, broker_id: Column, zk_myid: Column) -> Column:
    """`process` of the columns of a host (silver's hosts frame carries it as `entity`: this is for a
    table that keeps the host's role and ids only, such as gold.broker_health_hourly)."""
    from pyspark.sql import functions as F

    return (F.when(role == "kafka", broker_col(broker_id))
            .when(role == "controller", F.format_string(f"{CONTROLLER}-%d", broker_id))
            .otherwise(zookeeper_col(zk_myid)))


def replica_col(topic: Column, partition: Column, broker_id: Column) -> Column:
    from pyspark.sql import functions as F

    return F.format_string(f"%s-%d@{BROKER}-%d", topic, partition, broker_id)


def process_of(entity: Column) -> Column:
    """The process an entity names (a replica's broker too), else the host of a `<host>:<source>` name, else NULL."""
    from pyspark.sql import functions as F

    named = F.regexp_extract(entity, PROCESS_PATTERN, 1)
    return F.when(named != "", named).otherwise(F.nullif(F.regexp_extract(entity, HOST_SOURCE_PATTERN, 1), F.lit("")))
