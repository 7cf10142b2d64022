"""The simulated fleet's static model: clusters, hosts, topics, replica placement, inventory file.

Every writer takes its facts (host names, broker ids, who leads which partition, which group lives
on which ``__consumer_offsets`` partition) from here, so the files of one fleet agree with each other.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from zoneinfo import ZoneInfo

import yaml

from fleethealth.fleet.kafka import OFFSETS_TOPIC

LOG_DIR = "/var/kafka-logs"


def java_string_hashcode(s: str) -> int:
    """Java ``String.hashCode()``: s[0]*31^(n-1) + ... over UTF-16 code units, as a signed 32-bit int."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def coordinator_partition(group: str, partitions: int = 50) -> int:
    """Offsets partition of a consumer group: ``Utils.abs(group.hashCode) % partitions`` as Kafka does.

    Kafka's ``Utils.abs`` maps Integer.MIN_VALUE to 0 (``n == Integer.MIN_VALUE ? 0 : Math.abs(n)``),
    unlike ``Math.abs``.
    """
    h = java_string_hashcode(group)
    return (h & 0x7FFFFFFF if h == -(1 << 31) else abs(h)) % partitions


def version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split(".")[:3] if p.isdigit())


@dataclass(frozen=True)
class Host:
    name: str
    role: str  # "kafka" | "zookeeper" | "controller" (a dedicated KRaft controller)
    broker_id: int | None = None
    zk_myid: int | None = None
    kafka_version: str | None = None
    node_id: int | None = None

    def inventory_entry(self) -> dict:
        if self.role == "kafka":
            return {"host": self.name, "role": "kafka", "broker_id": self.broker_id,
                    "kafka_version": self.kafka_version}
        if self.role == "controller":
            return {"host": self.name, "role": "controller", "node_id": self.node_id,
                    "kafka_version": self.kafka_version}
        return {"host": self.name, "role": "zookeeper", "zk_myid": self.zk_myid}


MIN_INSYNC_REPLICAS = 2     # every broker's min.insync.replicas


@dataclass(frozen=True)
class Topic:
    name: str
    partitions: int
    replication: int = 3
    msgs_per_sec: float = 100.0     # per partition, drives offsets and segment rolls
    segment_bytes: int = 1 << 30


@dataclass(frozen=True)
class Cluster:
    """One simulated cluster: brokers first_broker_id.., ZooKeeper servers 1..zk_servers, user topics, groups.

    A KRaft cluster (`controllers` > 0, `zk_servers` 0) has dedicated controllers first_controller_id..
    instead of ZooKeeper; `controller_id` is then its active controller, `broker_versions` may give each
    broker its own Kafka version (a rolling upgrade) and `controller_version` the controllers'."""
    name: str
    timezone: str
    kafka_version: str
    java_version: str                      # "1.8.0_382" or "11.0.20"
    brokers: int = 3
    offsets_topic_partitions: int = 50
    controller_id: int = 1
    topics: tuple[Topic, ...] = ()
    groups: tuple[str, ...] = ()
    pinned_group: tuple[str, int] | None = None   # (group, broker) that must lead the group's partition
    zk_session_timeout_ms: int = 6000
    first_broker_id: int = 1
    zk_servers: int = 1
    controllers: int = 0
    first_controller_id: int = 3000
    broker_versions: tuple[str, ...] = ()
    controller_version: str | None = None
    hosts: tuple[Host, ...] = field(init=False)

    def __post_init__(self):
        if self.controllers:
            return self._kraft_hosts()
        if self.controller_id not in self.broker_ids:
            raise ValueError(f"cluster {self.name}: controller {self.controller_id} is not one of the brokers "
                             f"{self.broker_ids.start}..{self.broker_ids.stop - 1}")
        hosts = [Host(f"{self.name}-kafka-{b}", "kafka", broker_id=b, kafka_version=self.kafka_version)
                 for b in self.broker_ids]
        hosts += [Host(f"{self.name}-zk-{i}", "zookeeper", zk_myid=i) for i in range(1, self.zk_servers + 1)]
        object.__setattr__(self, "hosts", tuple(hosts))

    def _kraft_hosts(self):
        if self.zk_servers or self.controller_id not in self.controller_ids:
            raise ValueError(f"cluster {self.name}: a KRaft cluster has no ZooKeeper servers and its active "
                             f"controller is one of {self.controller_ids.start}..{self.controller_ids.stop - 1}")
        if self.broker_versions and len(self.broker_versions) != self.brokers:
            raise ValueError(f"cluster {self.name}: {len(self.broker_versions)} broker versions for {self.brokers} brokers")
        hosts = [Host(f"{self.name}-kafka-{b}", "kafka", broker_id=b, kafka_version=self.broker_version(b))
                 for b in self.broker_ids]
        hosts += [Host(f"{self.name}-controller-{n}", "controller", node_id=n,
                       kafka_version=self.controller_version or self.kafka_version) for n in self.controller_ids]
        object.__setattr__(self, "hosts", tuple(hosts))

    @property
    def kraft(self) -> bool:
        return self.controllers > 0

    @property
    def controller_ids(self) -> range:
        return range(self.first_controller_id, self.first_controller_id + self.controllers)

    def broker_version(self, broker_id: int) -> str:
        if self.broker_versions:
            return self.broker_versions[broker_id - self.first_broker_id]
        return self.kafka_version

    def controller_host(self, node_id: int) -> Host:
        return self.hosts[self.brokers + node_id - self.first_controller_id]

    # --- identity -----------------------------------------------------------------------------
    @property
    def broker_ids(self) -> range:
        return range(self.first_broker_id, self.first_broker_id + self.brokers)

    @cached_property
    def tz(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    @property
    def version(self) -> tuple[int, ...]:
        return version_tuple(self.kafka_version)

    @property
    def jdk11(self) -> bool:
        return not self.java_version.startswith("1.")

    def broker_host(self, broker_id: int) -> Host:
        return self.hosts[broker_id - self.first_broker_id]

    @property
    def zk_host(self) -> Host:
        """The ZooKeeper server the brokers connect to (myid 1)."""
        return self.hosts[self.brokers]

    @property
    def zk_hosts(self) -> tuple[Host, ...]:
        return tuple(h for h in self.hosts[self.brokers:] if h.role == "zookeeper")

    def controller_ip(self, node_id: int) -> str:
        return f"10.{20 + self._cluster_octet}.3.{10 + node_id - self.first_controller_id}"

    def zk_server_ip(self, myid: int) -> str:
        return f"10.{20 + self._cluster_octet}.2.{10 + myid}"

    def broker_ip(self, broker_id: int) -> str:
        return f"10.{20 + self._cluster_octet}.1.{10 + broker_id}"

    @property
    def zk_ip(self) -> str:
        return f"10.{20 + self._cluster_octet}.2.11"

    @cached_property
    def _cluster_octet(self) -> int:
        return java_string_hashcode(self.name) & 0x3F

    # --- replica placement ----------------------------------------------------------------------
    @cached_property
    def _offsets_shift(self) -> int:
        if not self.pinned_group:
            return 0
        group, broker = self.pinned_group
        return (broker - self.first_broker_id - coordinator_partition(group, self.offsets_topic_partitions)) % self.brokers

    def replicas(self, topic: str, partition: int) -> list[int]:
        """Replica list, preferred leader first (round-robin placement like Kafka's assignment)."""
        if topic == OFFSETS_TOPIC:
            rf, shift = min(3, self.brokers), self._offsets_shift
        else:
            t = self.topic(topic)
            rf, shift = min(t.replication, self.brokers), java_string_hashcode(topic) & 0xFF
        first = (partition + shift) % self.brokers
        return [self.first_broker_id + (first + k) % self.brokers for k in range(rf)]

    def leader(self, topic: str, partition: int) -> int:
        return self.replicas(topic, partition)[0]

    def topic(self, name: str) -> Topic:
        for t in self.topics:
            if t.name == name:
                return t
        raise KeyError(name)

    @cached_property
    def _hosted(self) -> dict[int, dict[str, list[int]]]:
        out: dict[int, dict[str, list[int]]] = {b: {} for b in self.broker_ids}
        for t in self.all_topics:
            for p in range(t.partitions):
                for b in self.replicas(t.name, p):
                    out[b].setdefault(t.name, []).append(p)
        return out

    @cached_property
    def all_topics(self) -> tuple[Topic, ...]:
        return (Topic(OFFSETS_TOPIC, self.offsets_topic_partitions, 3, 0.0, 100 * 1024 * 1024),) + self.topics

    def hosted(self, broker_id: int, topic: str) -> list[int]:
        """Partitions of `topic` with a replica on `broker_id`."""
        return self._hosted[broker_id].get(topic, [])

    def offsets_partitions(self, broker_id: int) -> list[int]:
        return self.hosted(broker_id, OFFSETS_TOPIC)

    def group_partition(self, group: str) -> int:
        return coordinator_partition(group, self.offsets_topic_partitions)

    def coordinated_groups(self, broker_id: int) -> list[str]:
        """Groups whose coordinator (leader of their offsets partition) is `broker_id`."""
        return [g for g in self.groups if self.leader(OFFSETS_TOPIC, self.group_partition(g)) == broker_id]

    @cached_property
    def active_offsets_partitions(self) -> frozenset[int]:
        """Offsets partitions that see commits (they get dirty and are compacted often)."""
        return frozenset(self.group_partition(g) for g in self.groups)

    # --- inventory ------------------------------------------------------------------------------
    def inventory_entry(self, root: Path) -> dict:
        return {
            "name": self.name,
            "timezone": self.timezone,
            "offsets_topic_partitions": self.offsets_topic_partitions,
            "transport": "local",
            "root": str(root),
            "hosts": [h.inventory_entry() for h in self.hosts],
        }



def _flow_dict_representer(dumper: yaml.SafeDumper, data):
    return dumper.represent_mapping("tag:yaml.org,2002:map", data, flow_style=True)


class _InventoryDumper(yaml.SafeDumper):
    pass


class _FlowDict(dict):
    pass


_InventoryDumper.add_representer(_FlowDict, _flow_dict_representer)


def write_inventory(path: Path, clusters: list[Cluster], root: Path, entries: dict[str, dict] | None = None) -> Path:
    """Write the fleet inventory (the shape docs/inventory.md shows) for `clusters` whose files live under `root`
    (`entries`: cluster name -> its entry as a deployment form amended it; else `Cluster.inventory_entry`'s)."""
    doc = {"clusters": []}
    for c in clusters:
        entry = dict((entries or {}).get(c.name) or c.inventory_entry(root.resolve()))
        entry["hosts"] = [_FlowDict(h) for h in entry["hosts"]]
        doc["clusters"].append(entry)
    path.write_text(yaml.dump(doc, Dumper=_InventoryDumper, sort_keys=False, width=200))
    return path
