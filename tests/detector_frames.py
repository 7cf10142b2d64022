"""Small silver-shaped frames for detector unit tests (explicit schemas, only the columns detectors read)."""
from __future__ import annotations

from datetime import datetime

from pyspark.sql.types import (ArrayType, DoubleType, IntegerType, LongType, MapType, StringType, StructField,
                               StructType, TimestampType)

from fleethealth.gold.facts.core import Facts
from fleethealth.runtime.frames import local_frame

HOUR = datetime(2026, 11, 21, 6)
EVENT_FIELDS = [("cluster", StringType()), ("broker_id", IntegerType()), ("ts", TimestampType()),
                ("event_type", StringType()), ("broker", IntegerType()), ("peer_broker", IntegerType()),
                ("topic", StringType()), ("partition", IntegerType()), ("leader", IntegerType()),
                ("leader_epoch", IntegerType()), ("transition", StringType()),
                ("added_brokers", ArrayType(IntegerType())), ("deleted_brokers", ArrayType(IntegerType())),
                ("message", StringType()), ("detail", StringType()), ("group", StringType()),
                # KRaft
                ("controller", IntegerType()), ("node", IntegerType()), ("controller_epoch", IntegerType()),
                ("from_state", StringType()), ("to_state", StringType()), ("reason", StringType()),
                ("error", StringType()), ("fault", StringType()), ("count", LongType()), ("offset", LongType()),
                ("high_watermark", LongType()),
                # a leader's "starts at leader epoch" (gold.leader_elections: read by broker_fenced too)
                ("role", StringType()), ("prev_leader", IntegerType()), ("isr", ArrayType(IntegerType())),
                ("brokers", ArrayType(IntegerType()))]
EVENTS = StructType([StructField(n, t) for n, t in EVENT_FIELDS])
JMX = StructType([StructField("cluster", StringType()), StructField("broker_id", IntegerType()),
                  StructField("ts", TimestampType()), StructField("domain", StringType()),
                  StructField("props", MapType(StringType(), StringType())), StructField("attribute", StringType()),
                  StructField("value", DoubleType()), StructField("value_text", StringType())])


def at(minute: int, second: float = 0) -> datetime:
    return HOUR.replace(minute=minute, second=int(second), microsecond=int(round((second % 1) * 1e6)))


def event(broker_id: int, ts: datetime, event_type: str, cluster: str = "c1", **fields) -> tuple:
    row = {"cluster": cluster, "broker_id": broker_id, "ts": ts, "event_type": event_type, **fields}
    unknown = set(row) - {n for n, _ in EVENT_FIELDS}
    assert not unknown, unknown
    return tuple(row.get(n) for n, _ in EVENT_FIELDS)


def events(spark, rows):
    return local_frame(spark, rows, EVENTS)


def jmx_sample(broker_id: int, ts: datetime, mbean, value: float | str, cluster: str = "c1") -> tuple:
    """A sample of `mbean`; a text attribute's (a str value) in value_text, as silver keeps it."""
    text = isinstance(value, str)
    return (cluster, broker_id, ts, mbean.domain, dict(mbean.keys), mbean.attribute, None if text else float(value),
            value if text else None)


def jmx(spark, rows):
    return local_frame(spark, rows, JMX)


def facts(spark, kafka_events=None, jmx_samples=None, hosts=None) -> Facts:
    return Facts(hours=HOUR, hosts=hosts, kafka_events=kafka_events if kafka_events is not None else events(spark, []),
                 jmx=jmx_samples if jmx_samples is not None else jmx(spark, []), threads=None, partition_sizes=None,
                 reconciliation=None, zk_events=None, deadlocks=None)


def findings(df) -> list[dict]:
    return sorted((r.asDict() for r in df.collect()), key=lambda r: (r["entity"], r["first_seen"]))


# a KRaft cluster c1: three dedicated controllers (3000 active) and brokers 1-3; a ZooKeeper-mode cluster z1
KRAFT_INVENTORY = {"clusters": [
    {"name": "c1", "root": "/r", "hosts": [
        *[{"host": f"c1-ctl-{n}", "role": "controller", "node_id": n, "kafka_version": "3.9.0"} for n in (3000, 3001, 3002)],
        *[{"host": f"c1-kafka-{n}", "role": "kafka", "broker_id": n, "kafka_version": "4.1.0"} for n in (1, 2, 3)]]},
    {"name": "z1", "root": "/r", "hosts": [
        {"host": "z1-kafka-1", "role": "kafka", "broker_id": 1, "kafka_version": "3.6.1"},
        {"host": "z1-zk-1", "role": "zookeeper", "zk_myid": 1}]}]}


def kraft_hosts(spark):
    """The hosts frame of KRAFT_INVENTORY, as the gold job makes it (silver.hosts_frame)."""
    from fleethealth.fleet.inventory import parse_inventory
    from fleethealth.silver.tables import hosts_frame

    return hosts_frame(spark, parse_inventory(KRAFT_INVENTORY))
