"""Kafka's own names and rules that fleethealth relies on (one place each)."""
from __future__ import annotations

# the internal topic of consumer-group offsets and metadata; a group's coordinator is the leader of
# partition abs(String.hashCode(group)) % its partition count (offsets.topic.num.partitions)
OFFSETS_TOPIC = "__consumer_offsets"
OFFSETS_TOPIC_PARTITIONS = 50   # Kafka's default offsets.topic.num.partitions

# What only a KRaft node logs (a KRaft component's prefix, 3.3+; every node's hourly metadata snapshot,
# 3.4+, `[SnapshotGenerator id=N] Creating new KRaft snapshot file`; the brokers' controller channel,
# 3.8+; KafkaConfig's `process.roles = [broker]`), and what only a ZooKeeper-mode broker logs: how a
# cluster listed with brokers only shows its mode (gold.facts.kraft.modes_shown; `fleethealth check`).
# Matched on the message (a component's prefix, whatever a layout makes of the logger's name), or on a
# whole line; Java's and Python's regex alike.
KRAFT_SIGNS = (r"(?:^|\s)\[(?:RaftManager|BrokerLifecycleManager|MetadataLoader|SnapshotGenerator|BrokerMetadataPublisher"
               r"|BrokerServer|SharedServer) id=\d+\]|Recorded new KRaft controller|process\.roles = \[?broker")
ZOOKEEPER_SIGNS = (r"(?:^|\s)\[ZooKeeperClient |Recorded new ZK controller|zookeeper\.connect = (?!null\b)\S"
                   r"|process\.roles = \[\]")
KRAFT_BROKER_METRICS = "broker-metadata-metrics"    # kafka.server:type=broker-metadata-metrics: KRaft brokers' own
