"""fleethealth: Kafka and ZooKeeper fleet health facts and incidents from raw logs, JMX and dumps."""

__version__ = "0.1.0"
