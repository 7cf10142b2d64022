"""`fleethealth check`'s warning for a KRaft cluster listed without its controllers (issue 61 item 5),
with real files: a 3.9 cluster listed with brokers only whose server.log holds real KRaft lines, a 4.x one
(KRaft whatever its logs), and two that get no warning: brokers-only ZooKeeper-era logs, and a KRaft
cluster whose controller is listed. A warning does not fail the check: the hour runs.

The KRaft broker lines are quoted from bitnami/charts issue #25456 (2024-04-30,
https://github.com/bitnami/charts/issues/25456) and kroxylicious/kroxylicious-junit5-extension issue
#165 (2023-08-18, https://github.com/kroxylicious/kroxylicious-junit5-extension/issues/165, its own layout);
the ZooKeeper-era line from the Kafka 2.8 broker's start (apache/kafka core ZooKeeperClient.scala,
"[ZooKeeperClient Kafka server] Initializing a new session to ...")."""
from __future__ import annotations

from pathlib import Path

from fleethealth.cli import main as cli
from fleethealth.fleet.inventory import NO_CONTROLLERS

KRAFT_LINES = (
    "[2024-04-30 08:06:02,073] INFO [RaftManager id=0] Beginning graceful shutdown (org.apache.kafka.raft.KafkaRaftClient)\n"
    "[2024-04-30 08:06:02,074] INFO [RaftManager id=0] Failed to handle fetch from 2 at 124689 due to "
    "NOT_LEADER_OR_FOLLOWER (org.apache.kafka.raft.KafkaRaftClient)\n")
KRAFT_OTHER_LAYOUT = ("2023-08-18 11:45:55 INFO  MetadataLoader:231 - [MetadataLoader id=0] initializeNewPublishers: "
                      "the loader is still catching up because we still don't know the high water mark yet.\n")
ZK_LINES = ("[2021-05-04 10:00:00,120] INFO Starting (kafka.server.KafkaServer)\n"
            "[2021-05-04 10:00:00,121] INFO [ZooKeeperClient Kafka server] Initializing a new session to zk-1:2181. "
            "(kafka.zookeeper.ZooKeeperClient)\n")


def fleet(tmp_path: Path, clusters: dict[str, tuple[list[str], str]]) -> Path:
    """An inventory of `clusters` (name -> (host entries, the text of each host's server.log)) with
    each host's kafka and jmx folders written."""
    root = tmp_path / "fleet"
    text = "clusters:\n"
    for name, (hosts, log) in clusters.items():
        text += f"  - name: {name}\n    timezone: UTC\n    root: {root}\n    hosts:\n"
        for entry in hosts:
            host = entry.split("host: ")[1].split(",")[0]
            (root / name / host / "kafka").mkdir(parents=True)
            (root / name / host / "kafka" / "server.log").write_text(log)
            (root / name / host / "jmx").mkdir()
            (root / name / host / "jmx" / "jmx.jsonl").write_text("{}\n")
            text += f"      - {{{entry}}}\n"
    path = tmp_path / "inventory.yaml"
    path.write_text(text)
    return path


def test_a_kraft_cluster_without_its_controllers_is_a_warning(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FLEETHEALTH_LAKEHOUSE", str(tmp_path / "lake"))
    inventory = fleet(tmp_path, {
        "pay": (["host: pay-1, role: broker, node_id: 0, kafka_version: 3.9.0",
                 "host: pay-2, role: broker, node_id: 1, kafka_version: 3.9.0"], KRAFT_LINES),
        "strimzi": (["host: st-1, role: broker, node_id: 0, kafka_version: 3.5.1"], KRAFT_OTHER_LAYOUT),
        "new": (["host: new-1, role: broker, node_id: 1, kafka_version: 4.1.0"], ZK_LINES[:0]),
        "old": (["host: old-1, role: kafka, broker_id: 1, kafka_version: 2.8.1"], ZK_LINES),
        "listed": (["host: ls-1, role: broker, node_id: 1, kafka_version: 3.9.0",
                    "host: ls-c, role: controller, node_id: 3000, kafka_version: 3.9.0"], KRAFT_LINES),
    })
    rc = cli.main(["check", "--inventory", str(inventory)])
    out, err = capsys.readouterr()
    assert (rc, err) == (0, "")
    assert out.splitlines() == [
        "warning: cluster pay runs in KRaft mode (pay-1's logs show it: server.log: [2024-04-30 08:06:02,073] INFO "
        "[RaftManager id=0] Beginning graceful shutdown (org.apache.kafka.raft.KafkaRaftClient)) and lists no "
        "controller: " + NO_CONTROLLERS,
        "warning: cluster strimzi runs in KRaft mode (st-1's logs show it: server.log: " + KRAFT_OTHER_LAYOUT.strip()[:160]
        + ") and lists no controller: " + NO_CONTROLLERS,
        "warning: cluster new runs in KRaft mode (Kafka 4.1.0 runs KRaft only) and lists no controller: " + NO_CONTROLLERS,
        "check: 5 cluster(s), 7 host(s), 0 channel(s) not tested (--notify sends each a test message): an hour would run"]
    assert not (tmp_path / "lake").exists()
