"""The MBeans fleethealth reads, by role: one place for ObjectName domains, keys and attributes."""
from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column
from pyspark.sql import functions as F


@dataclass(frozen=True)
class MBean:
    domain: str
    keys: tuple[tuple[str, str], ...]
    attribute: str
    since: str = "0.10.0"   # first Kafka version exposing it

    @property
    def pattern(self) -> str:
        """ObjectName pattern of every instance (e.g. each partition of a topic's Log Size)."""
        return f"{self.domain}:{','.join(f'{k}={v}' for k, v in self.keys)},*"

    def matches(self) -> Column:
        cond = (F.col("domain") == self.domain) & (F.col("attribute") == self.attribute)
        for key, value in self.keys:
            cond = cond & (F.col("props")[key] == value)
        return cond


OFFSETS_LOG_SIZE = MBean("kafka.log", (("type", "Log"), ("name", "Size"), ("topic", "__consumer_offsets")), "Value")
CLEANER_DEAD_THREADS = MBean("kafka.log", (("type", "LogCleaner"), ("name", "DeadThreadCount")), "Value", "2.4.0")
CLEANER_TIME_SINCE_LAST_RUN = MBean(
    "kafka.log", (("type", "LogCleanerManager"), ("name", "time-since-last-run-ms")), "Value", "0.10.2")
OPEN_FDS = MBean("java.lang", (("type", "OperatingSystem"),), "OpenFileDescriptorCount")
MAX_FDS = MBean("java.lang", (("type", "OperatingSystem"),), "MaxFileDescriptorCount")
ZK_EXPIRES = MBean("kafka.server", (("type", "SessionExpireListener"), ("name", "ZooKeeperExpiresPerSec")), "Count")
UNDER_REPLICATED = MBean("kafka.server", (("type", "ReplicaManager"), ("name", "UnderReplicatedPartitions")), "Value")
# request saturation: requests waiting for a handler (bounded by queued.max.requests), and the idle
# share (0..1) of the request handler (a Meter: its one-minute rate) and network processor threads
REQUEST_QUEUE_SIZE = MBean("kafka.network", (("type", "RequestChannel"), ("name", "RequestQueueSize")), "Value")
REQUEST_HANDLER_IDLE = MBean(
    "kafka.server", (("type", "KafkaRequestHandlerPool"), ("name", "RequestHandlerAvgIdlePercent")), "OneMinuteRate")
NETWORK_PROCESSOR_IDLE = MBean(
    "kafka.network", (("type", "SocketServer"), ("name", "NetworkProcessorAvgIdlePercent")), "Value")

ALL = (OFFSETS_LOG_SIZE, CLEANER_DEAD_THREADS, CLEANER_TIME_SINCE_LAST_RUN, OPEN_FDS, MAX_FDS,
       ZK_EXPIRES, UNDER_REPLICATED, REQUEST_QUEUE_SIZE, REQUEST_HANDLER_IDLE, NETWORK_PROCESSOR_IDLE)


def for_role(role: str) -> tuple[MBean, ...]:
    """The MBeans to read live from a host of `role`: JVM ones everywhere, kafka.* on brokers."""
    return tuple(m for m in ALL if role == "kafka" or not m.domain.startswith("kafka."))


def jolokia_requests(role: str) -> list[dict]:
    """The Jolokia bulk read of a host's MBeans: one pattern read per MBean attribute."""
    return [{"type": "read", "mbean": m.pattern, "attribute": m.attribute} for m in for_role(role)]
