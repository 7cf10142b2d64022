"""Kafka's own names and rules that fleethealth relies on (one place each)."""
from __future__ import annotations

# the internal topic of consumer-group offsets and metadata; a group's coordinator is the leader of
# partition abs(String.hashCode(group)) % its partition count (offsets.topic.num.partitions)
OFFSETS_TOPIC = "__consumer_offsets"
OFFSETS_TOPIC_PARTITIONS = 50   # Kafka's default offsets.topic.num.partitions
