"""Deployment forms that rewrite a cluster's log4j files into another known layout (forms.FORMS).

The simulator writes Kafka's default layout (`[%d] %p %m (%c)`) and ZooKeeper's own
(`%d{ISO8601} [myid:%X{myid}] - %-5p [%t:%C{1}@%L] - %m`); each form here rewrites every record
of the cluster's Kafka and ZooKeeper files, keeping time, level, logger and message:
- `strimzi`: Strimzi's layout before Kafka 4, `%d{ISO8601} %p %m (%c) [%t]`, on brokers and ZooKeeper;
- `strimzi-kafka4`: Strimzi's Kafka 4 layout `%d{yyyy-MM-dd HH:mm:ss} %-5p [%t] %c{1}:%L - %m`;
- `kafka-zk`: ZooKeeper run by Kafka's bin/zookeeper-server-start.sh, writing Kafka's layout into
  Kafka's files: `server.log` rolled hourly (`server.log.<yyyy-MM-dd-HH>`, local hours, as Kafka's
  config/log4j.properties rolls its kafkaAppender) in place of ZooKeeper's size-rolled `zookeeper.log.<k>`;
- `thread-logger`: `%d %p [%t] %c - %m` on brokers and ZooKeeper.
Where the source layout has no thread (Kafka's), a plausible one is made up from the logger; where
it names only the class (ZooKeeper's %C{1}), the package is ZooKeeper's.
"""
from __future__ import annotations

import gzip
import re
import zlib
from pathlib import Path
from typing import Callable, NamedTuple

from .fleet import Cluster


class Record(NamedTuple):
    ts: str            # yyyy-MM-dd HH:mm:ss,SSS
    level: str
    thread: str
    logger: str        # qualified
    message: list[str]  # the message's lines (the first: the header line's)
    after: list[str]    # lines after the message (a stack trace)


_KAFKA = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] ([A-Z]+) (.*)$")
_ZK = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) (?:\[myid:\d*\] )?- ([A-Z]+) +\[(.*):([\w$.]+)@\d+\] - (.*)$")
_TRAILING = re.compile(r"^(.*) \(([\w.$-]+)\)$")

# threads of Kafka's loggers (Kafka's layout has none); others: a request handler
_THREADS = (("LogCleaner", "kafka-log-cleaner-thread-0"), ("Controller", "controller-event-thread"),
            ("state.change", "controller-event-thread"), ("ReplicaFetcher", "ReplicaFetcherThread-0-1"),
            ("ZooKeeperClient", "main-EventThread"), ("ClientCnxn", "main-SendThread(zk:2181)"),
            ("KafkaServer", "main"), ("KafkaConfig", "main"), ("BrokerLifecycleManager", "broker-0-lifecycle-manager-event-handler"),
            (".raft.", "kafka-0-raft-io-thread"), ("MetadataLoader", "kafka-0-metadata-loader-event-handler"),
            ("Selector", "data-plane-kafka-network-thread-0-ListenerName(PLAINTEXT)-PLAINTEXT-0"),
            ("Acceptor", "data-plane-kafka-socket-acceptor-ListenerName(PLAINTEXT)-PLAINTEXT-9092"))
_ZK_PACKAGE = {"Follower": "quorum", "Leader": "quorum", "Learner": "quorum", "LearnerHandler": "quorum",
               "QuorumPeer": "quorum", "FastLeaderElection": "quorum", "QuorumCnxManager": "quorum",
               "QuorumPeerMain": "quorum", "QuorumPeerConfig": "quorum", "LearnerSessionTracker": "quorum",
               "FileTxnSnapLog": "persistence", "FileSnap": "persistence", "FileTxnLog": "persistence"}


def _thread(logger: str) -> str:
    return next((t for key, t in _THREADS if key in logger), "kafka-request-handler-3")


def _zk_logger(cls: str) -> str:
    package = _ZK_PACKAGE.get(cls.split("$")[0], "")
    return "org.apache.zookeeper.server." + (package + "." if package else "") + cls


def _kafka_records(lines: list[str]):
    """Records of a file in Kafka's layout: the logger ends the first line, else the first line after
    it that ends with ` (logger)`; lines after the message (a stack trace) follow it."""
    i = 0
    while i < len(lines):
        m = _KAFKA.match(lines[i])
        if not m:
            raise ValueError(f"not in Kafka's layout: {lines[i][:80]!r}")
        j = i + 1
        while j < len(lines) and not _KAFKA.match(lines[j]):
            j += 1
        body = [m.group(3), *lines[i + 1:j]]
        end = next((k for k, line in enumerate(body) if _TRAILING.match(line)), None)
        if end is None:
            yield Record(m.group(1), m.group(2), "main", "", body, [])
        else:
            t = _TRAILING.match(body[end])
            yield Record(m.group(1), m.group(2), _thread(t.group(2)), t.group(2), [*body[:end], t.group(1)],
                         body[end + 1:])
        i = j


def _zk_records(lines: list[str]):
    i = 0
    while i < len(lines):
        m = _ZK.match(lines[i])
        if not m:
            raise ValueError(f"not in ZooKeeper's layout: {lines[i][:80]!r}")
        j = i + 1
        while j < len(lines) and not _ZK.match(lines[j]):
            j += 1
        yield Record(m.group(1), m.group(2), m.group(3), _zk_logger(m.group(4)), [m.group(5)], lines[i + 1:j])
        i = j


def _line_number(logger: str) -> int:
    return 40 + zlib.crc32(logger.encode()) % 900


def strimzi(r: Record) -> list[str]:
    """`%d{ISO8601} %p %m (%c) [%t]%n`, the throwable after it."""
    message = list(r.message)
    message[-1] += f" ({r.logger}) [{r.thread}]" if r.logger else ""
    return [f"{r.ts} {r.level} {message[0]}", *message[1:], *r.after]


def strimzi_kafka4(r: Record) -> list[str]:
    """`%d{yyyy-MM-dd HH:mm:ss} %-5p [%t] %c{1}:%L - %m%n`."""
    short = r.logger.rsplit(".", 1)[-1] or "root"
    return [f"{r.ts[:19]} {r.level:<5} [{r.thread}] {short}:{_line_number(r.logger)} - {r.message[0]}",
            *r.message[1:], *r.after]


def kafka(r: Record) -> list[str]:
    """`[%d] %p %m (%c)%n`."""
    message = list(r.message)
    message[-1] += f" ({r.logger})" if r.logger else ""
    return [f"[{r.ts}] {r.level} {message[0]}", *message[1:], *r.after]


def thread_logger(r: Record) -> list[str]:
    """`%d %p [%t] %c - %m%n`."""
    return [f"{r.ts} {r.level} [{r.thread}] {r.logger or 'root'} - {r.message[0]}", *r.message[1:], *r.after]


Layout = Callable[[Record], list[str]]


def _rewrite(folder: Path, read, write: Layout) -> None:
    for path in sorted(p for p in folder.glob("*") if p.is_file()):
        raw = path.read_bytes()
        zipped = path.name.endswith(".gz")
        text = (gzip.decompress(raw) if zipped else raw).decode("utf-8")
        if not text:
            continue
        lines = text.split("\n")
        tail = lines.pop() if lines[-1] == "" else None
        out = [line for r in read(lines) for line in write(r)]
        data = ("\n".join(out) + ("\n" if tail is not None else "")).encode("utf-8")
        path.write_bytes(gzip.compress(data, mtime=0) if zipped else data)


def _form(kafka_layout: Layout | None, zk_layout: Layout | None):
    def form(base: Path, cluster: Cluster, entry: dict) -> None:
        for host in sorted(p for p in base.iterdir() if p.is_dir()):
            if kafka_layout and (host / "kafka").is_dir():
                _rewrite(host / "kafka", _kafka_records, kafka_layout)
            if zk_layout and (host / "zookeeper").is_dir():
                _rewrite(host / "zookeeper", _zk_records, zk_layout)
    return form


def _kafka_zk(base: Path, cluster: Cluster, entry: dict) -> None:
    """Each ZooKeeper host's records in Kafka's layout and files: one `server.log.<yyyy-MM-dd-HH>` per
    local hour of its records (the layouts' time is local) in place of its `zookeeper.log.<k>`."""
    for folder in sorted(p / "zookeeper" for p in base.iterdir() if (p / "zookeeper").is_dir()):
        hours: dict[str, list[Record]] = {}
        for path in sorted(p for p in folder.glob("*") if p.is_file()):
            raw = path.read_bytes()
            lines = (gzip.decompress(raw) if path.name.endswith(".gz") else raw).decode("utf-8").split("\n")
            path.unlink()
            if lines[-1] == "":
                lines.pop()
            for r in _zk_records(lines):
                hours.setdefault(f"{r.ts[:10]}-{r.ts[11:13]}", []).append(r)
        for hour, records in sorted(hours.items()):
            lines = [line for r in sorted(records, key=lambda r: r.ts) for line in kafka(r)]
            (folder / f"server.log.{hour}").write_text("\n".join(lines) + "\n", encoding="utf-8")


FORMS = {
    "strimzi": _form(strimzi, strimzi),
    "strimzi-kafka4": _form(strimzi_kafka4, strimzi_kafka4),
    "kafka-zk": _kafka_zk,
    "thread-logger": _form(thread_logger, thread_logger),
}
