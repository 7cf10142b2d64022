"""Silver parsing of a tiny hand-written fleet (every source; silver + quarantine + reconciliation).

One cluster in America/New_York (UTC-5 in November), one broker and one ZooKeeper server. The hour
processed is 2026-11-20T10:00Z = 05:00-06:00 local, so hourly-rolled files are named `...-05`.
Every input below is written out explicitly; every expected value is spelled out. The fleet is
pulled, loaded into bronze and parsed once per module; the tests assert on collected Python rows.
"""
from __future__ import annotations

import gzip
import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest

from fleethealth.lake.catalog import Lakehouse
from fleethealth.bronze import tables as bronze
from fleethealth.fleet.inventory import load_inventory
from fleethealth.fleet.sources import SOURCES
from fleethealth.pull import hour as pull
from fleethealth.pull import landing
from fleethealth.silver import tables as silver
from fleethealth.runtime.frames import local_frame

UTC = timezone.utc
HOUR = datetime(2026, 11, 20, 10, tzinfo=UTC)            # 05:00-06:00 America/New_York (EST, -05:00)
IN_HOUR = datetime(2026, 11, 20, 10, 30, tzinfo=UTC).timestamp()
EPOCH = 1795168800                                        # 2026-11-20T10:00:00Z in epoch seconds
BROKER, ZK = "nyc-kafka-1", "nyc-zk-1"

INVENTORY = """\
clusters:
  - name: nyc
    timezone: America/New_York
    offsets_topic_partitions: 50
    root: fleet
    hosts:
      - {host: nyc-kafka-1, role: kafka, broker_id: 1, kafka_version: 2.8.1}
      - {host: nyc-zk-1, role: zookeeper, zk_myid: 1}
"""

# --- Kafka server.log (hourly rolled, local hour 05) ---------------------------------------------
SERVER_LOG = [
    "\tat an.orphan.Frame(Before.java:1)",                                                          # 1
    "[2026-11-20 05:00:01,123] INFO [KafkaServer id=1] started (kafka.server.KafkaServer)",          # 2
    "[2026-11-20 05:00:02,000] WARN [ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] "          # 3
    "Error in response for fetch request (kafka.server.ReplicaFetcherThread)",
    "java.io.IOException: Connection to 2 was disconnected before the response was read",            # 4
    "\tat org.apache.kafka.clients.NetworkClientUtils.sendAndReceive(NetworkClientUtils.java:100)",  # 5
    "\tat kafka.server.ReplicaFetcherBlockingSend.sendRequest(ReplicaFetcherBlockingSend.scala:108)",  # 6
    "[2026-11-20 05:00:03,000] INFO KafkaConfig values: ",                                           # 7
    "\tadvertised.listeners = null",                                                                 # 8
    "\tbroker.id = 1",                                                                               # 9
    "\tzookeeper.connect = zk:2181",                                                                 # 10
    " (kafka.server.KafkaConfig)",                                                                   # 11
    "[2026-11-20 05:30:00,000] INFO [GroupMetadataManager brokerId=1] Finished loading offsets and "  # 12
    "group metadata from __consumer_offsets-38 in 95123 milliseconds. "
    "(kafka.coordinator.group.GroupMetadataManager)",
    "[2026-11-20 05:31:00,000] WARN [GroupMetadataManager brokerId=1] Failed to append 363 "         # 13
    "tombstones to __consumer_offsets-38 for expired/deleted offsets and/or metadata for group "
    "consumer-group. (kafka.coordinator.group.GroupMetadataManager)",
    "java.io.IOException: Map failed",                                                               # 14
    "\tat sun.nio.ch.FileChannelImpl.map(FileChannelImpl.java:940)",                                 # 15
    "[2026-11-20 05:40:00,000] [WARN ] [ReplicaFetcherThread-0-2] "                                  # 16
    "[kafka.server.ReplicaFetcherThread] - [ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] "
    "Error sending fetch request",
    "[2026-11-31 05:50:00,000] INFO on a day that does not exist (kafka.server.KafkaServer)",        # 17
    "[2026-11-20 05:59:59,999] INFO [kafka-request-handler-3]: last record, ends the hour "           # 18
    "(kafka.server.KafkaRequestHandler)",
]

# --- Kafka log-cleaner.log ------------------------------------------------------------------------
CLEANER_LOG = [
    "[2026-11-20 05:10:00,000] INFO [kafka-log-cleaner-thread-0]: ",                                 # 1
    "\tLog cleaner thread 0 cleaned log __consumer_offsets-7 (dirty section = [0, 1000])",           # 2
    "\t100.0 MB of log processed in 1.2 seconds (83.3 MB/sec).",                                     # 3
    "\tIndexed 100.0 MB in 0.6 seconds (166.7 Mb/sec, 50.0% of total time)",                         # 4
    "\tStart size: 100.0 MB (1000 messages)",                                                        # 5
    "\tEnd size: 1.0 MB (10 messages)",                                                              # 6
    " (kafka.log.LogCleaner)",                                                                       # 7
    "[2026-11-20 05:20:00,000] ERROR [kafka-log-cleaner-thread-0]: Error due to (kafka.log.LogCleaner)",  # 8
    "java.lang.IllegalStateException: This log contains a message larger than maximum allowable size",  # 9
    "\tat kafka.log.Cleaner.growBuffers(LogCleaner.scala:622)",                                      # 10
    "[2026-11-20 05:20:00,001] INFO [kafka-log-cleaner-thread-0]: Stopped (kafka.log.LogCleaner)",   # 11
    "[2026-11-20 05:25:00,000] ERROR [kafka-log-cleaner-thread-0], Error due to  (kafka.log.LogCleaner)",  # 12
    "java.io.IOException: Map failed",                                                               # 13
]

# --- ZooKeeper (size-rolled file, hour from mtime); CRLF on some lines ----------------------------
ZK_LOG = (
    "2026-11-20 05:00:05,100 [myid:1] - INFO  [QuorumPeer[myid=1](plain=0.0.0.0:2181)(secure=disabled)"
    ":Follower@75] - FOLLOWING - LEADER ELECTION TOOK - 104 MS\r\n"                                  # 1
    "2026-11-20 05:00:06,200 - WARN  [SendWorker:188978561024:QuorumCnxManager$SendWorker@688] - "
    "Send worker leaving thread\r\n"                                                                 # 2
    "2026-11-20 05:00:07,300 [myid:1] - INFO  [NIOServerCxn.Factory:0.0.0.0/0.0.0.0:2181:"
    "ZooKeeperServer@617] - Established session 0x14ed93111f20005 with negotiated timeout 10000 "
    "for client /10.10.34.11:50990\n"                                                                # 3
    "2026-11-20 05:00:08,000 [myid:1] - WARN  [QuorumPeer[myid=1]/0:0:0:0:0:0:0:0:2181:Follower@89] - "
    "Exception when following the leader\r\n"                                                        # 4
    "java.net.SocketException: Connection reset\r\n"                                                # 5
    "\tat java.net.SocketInputStream.read(SocketInputStream.java:196)\r\n"                           # 6
)

# --- JMX: Jolokia JSON lines (hourly rolled) and one pretty-printed response --------------------
_SINGLE = {"request": {"mbean": "java.lang:type=OperatingSystem", "attribute": "OpenFileDescriptorCount",
                       "type": "read"}, "value": 12800, "timestamp": EPOCH + 5, "status": 200}
_WHOLE = {"request": {"mbean": "java.lang:type=Memory", "type": "read"},
          "value": {"HeapMemoryUsage": {"init": 1073741824, "committed": 1073741824, "max": 4294967296,
                                        "used": 123456789},
                    "ObjectPendingFinalizationCount": 0, "Verbose": False},
          "timestamp": EPOCH + 6, "status": 200}
_PATTERN = {"request": {"mbean": "kafka.log:type=Log,name=Size,topic=__consumer_offsets,partition=*",
                        "attribute": "Value", "type": "read"},
            "value": {"kafka.log:name=Size,partition=38,topic=__consumer_offsets,type=Log": {"Value": 536870912000},
                      "kafka.log:name=Size,partition=7,topic=__consumer_offsets,type=Log": {"Value": 10485760}},
            "timestamp": EPOCH + 7, "status": 200}
_BULK = [
    {"request": {"mbean": "kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions",
                 "attribute": "Value", "type": "read"}, "value": 3, "timestamp": EPOCH + 8, "status": 200},
    {"request": {"mbean": "kafka.log:type=LogCleanerManager,name=time-since-last-run-ms",
                 "attribute": "Value", "type": "read"}, "value": 1500000, "timestamp": EPOCH + 8, "status": 200},
    {"request": {"mbean": "kafka.log:type=LogCleaner,name=DeadThreadCount", "type": "read"},
     "error_type": "javax.management.InstanceNotFoundException",
     "error": "javax.management.InstanceNotFoundException : kafka.log:type=LogCleaner,name=DeadThreadCount",
     "status": 404},
]
JMX_LINES = [json.dumps(_SINGLE), json.dumps(_WHOLE), json.dumps(_PATTERN), json.dumps(_BULK),
             "curl: (7) Failed to connect to localhost port 8778"]
PRETTY = {"request": {"mbean": "kafka.server:type=KafkaRequestHandlerPool,name=RequestHandlerAvgIdlePercent",
                      "attribute": "OneMinuteRate", "type": "read"},
          "value": 0.25, "timestamp": EPOCH + 1800, "status": 200}

# --- thread dump (capture time local, first line) ---------------------------------------------
JSTACK = """\
2026-11-20 05:45:00
Full thread dump OpenJDK 64-Bit Server VM (11.0.20+8 mixed mode, sharing):

"kafka-log-cleaner-thread-0" #45 prio=5 os_prio=0 cpu=10.00ms elapsed=100.00s tid=0x00007f01 nid=0x2d waiting on condition  [0x00007f02]
   java.lang.Thread.State: TIMED_WAITING (parking)
\tat jdk.internal.misc.Unsafe.park(java.base@11.0.20/Native Method)
\t- parking to wait for  <0x00000000c0a00000> (a java.util.concurrent.CountDownLatch$Sync)
\tat java.util.concurrent.locks.LockSupport.parkNanos(java.base@11.0.20/LockSupport.java:234)
\tat kafka.utils.ShutdownableThread.pause(ShutdownableThread.scala:82)

"kafka-request-handler-3" #40 daemon prio=5 os_prio=0 cpu=5.00ms elapsed=100.00s tid=0x00007f03 nid=0x28 waiting for monitor entry  [0x00007f04]
   java.lang.Thread.State: BLOCKED (on object monitor)
\tat kafka.coordinator.group.GroupMetadataManager.storeOffsets(GroupMetadataManager.scala:300)
\t- waiting to lock <0x00000000c0b00000> (a kafka.coordinator.group.GroupMetadata)
\tat kafka.server.KafkaApis.handle(KafkaApis.scala:80)

"VM Thread" os_prio=0 cpu=1.00ms elapsed=100.00s tid=0x00007f05 nid=0x10 runnable

JNI global references: 15
"""

# --- kafka-log-dirs.sh --describe output (capture time in the name, local) --------------------
LOGDIRS = [
    "Querying brokers for log directories information",
    "Received log directory information from brokers 1",
    json.dumps({"version": 1, "brokers": [{"broker": 1, "logDirs": [{"logDir": "/var/kafka-logs", "error": None,
        "partitions": [
            {"partition": "__consumer_offsets-38", "size": 536870912000, "offsetLag": 0, "isFuture": False},
            {"partition": "orders-0", "size": 1048576, "offsetLag": 0, "isFuture": False}]}]}]}),
]
LOGDIRS_NO_STAMP = json.dumps({"version": 1, "brokers": [{"broker": 1, "logDirs": [{
    "logDir": "/var/kafka-logs", "error": None, "partitions": [
        {"partition": "__consumer_offsets-7", "size": 10485760, "offsetLag": 0, "isFuture": False}]}]}]})


def _put(path: Path, content: bytes, mtime: float = IN_HOUR) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    os.utime(path, (mtime, mtime))


def _lines(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def _write_fleet(base: Path) -> Path:
    k, z = base / "fleet" / "nyc" / BROKER, base / "fleet" / "nyc" / ZK
    _put(k / "kafka" / "server.log.2026-11-20-05", _lines(SERVER_LOG))
    _put(k / "kafka" / "server.log.2026-11-20-06", b"[2026-11-20 06:00:00,000] INFO next hour (kafka.Kafka)\n")
    _put(k / "kafka" / "log-cleaner.log.2026-11-20-05", _lines(CLEANER_LOG))
    _put(k / "jmx" / "jolokia.jsonl.2026-11-20-05", _lines(JMX_LINES))
    _put(k / "jmx" / "memory-2026-11-20T05-30-00.json", json.dumps(PRETTY, indent=2).encode() + b"\n")
    _put(k / "threaddumps" / "jstack-2026-11-20T05-45-00.txt", JSTACK.encode())
    _put(k / "logdirs" / "logdirs-2026-11-20T05-00-00.txt", _lines(LOGDIRS))
    # no time in the names (landed by mtime): the dump has no capture time either -> quarantine;
    # the snapshot's capture time falls back to the hour
    _put(k / "threaddumps" / "jstack.txt", JSTACK.split("\n", 1)[1].encode())
    _put(k / "logdirs" / "logdirs.txt", _lines([LOGDIRS_NO_STAMP]))
    _put(z / "zookeeper" / "zookeeper.log", ZK_LOG.encode())
    inventory = base / "inventory.yaml"
    inventory.write_text(INVENTORY)
    return inventory


def _run(spark, base: Path):
    """pull -> bronze -> silver of HOUR; everything collected into Python."""
    inv = load_inventory(_write_fleet(base))
    lakehouse = Lakehouse.at(base / "lakehouse")
    landed = pull.pull_hour(inv, HOUR, Lakehouse.at(lakehouse))
    b = bronze.records(spark, landed, lakehouse.landing(HOUR), HOUR).cache()
    tables = silver.build(spark, b, inv)
    out = {name: [r.asDict() for r in df.collect()] for name, df in tables.items()}
    out["bronze"] = [r.asDict() for r in b.collect()]
    out["reconciliation"] = [r.asDict() for r in
                             silver.reconciliation(b, tables, tables["silver.quarantine"]).collect()]
    out["landed"] = landed
    out["inventory"] = inv
    b.unpersist()
    return out


@pytest.fixture(scope="module")
def fleet(spark, tmp_path_factory):
    return _run(spark, tmp_path_factory.mktemp("silver-fleet"))


def utc(ts: datetime | None) -> datetime | None:
    """A collected TimestampType value (naive, Python-local) as an aware UTC datetime."""
    return None if ts is None else datetime.fromtimestamp(ts.timestamp(), UTC)


def at(y, mo, d, h, mi, s, ms=0) -> datetime:
    return datetime(y, mo, d, h, mi, s, ms * 1000, tzinfo=UTC)


def one(rows, **where):
    found = [r for r in rows if all(r[k] == v for k, v in where.items())]
    assert len(found) == 1, f"{len(found)} rows with {where}: {found}"
    return found[0]


def kafka(fleet, log, line):
    return one(fleet["silver.kafka_events"], file=f"nyc/{BROKER}/kafka/{log}", line_number=line)


# --- landing / bronze ------------------------------------------------------------------------------

def test_pull_lands_the_files_of_the_local_hour(fleet):
    names = sorted((x.source, x.file.rsplit("/", 1)[1]) for x in fleet["landed"])
    assert names == [
        ("jmx", "jolokia.jsonl.2026-11-20-05"), ("jmx", "memory-2026-11-20T05-30-00.json"),
        ("kafka", "log-cleaner.log.2026-11-20-05"), ("kafka", "server.log.2026-11-20-05"),
        ("logdirs", "logdirs-2026-11-20T05-00-00.txt"), ("logdirs", "logdirs.txt"),
        ("threaddumps", "jstack-2026-11-20T05-45-00.txt"), ("threaddumps", "jstack.txt"),
        ("zookeeper", "zookeeper.log"),
    ]


def test_bronze_record_counts(fleet):
    per_file = {}
    for r in fleet["bronze"]:
        per_file.setdefault(r["file"].rsplit("/", 1)[1], []).append(r["line_number"])
    assert {k: len(v) for k, v in per_file.items()} == {
        "server.log.2026-11-20-05": len(SERVER_LOG), "log-cleaner.log.2026-11-20-05": len(CLEANER_LOG),
        "jolokia.jsonl.2026-11-20-05": 5, "memory-2026-11-20T05-30-00.json": 1,
        "jstack-2026-11-20T05-45-00.txt": 1, "logdirs-2026-11-20T05-00-00.txt": 3, "zookeeper.log": 6,
        "jstack.txt": 1, "logdirs.txt": 1}
    for lines in per_file.values():
        assert sorted(lines) == list(range(1, len(lines) + 1))
    zk = sorted((r for r in fleet["bronze"] if r["source"] == "zookeeper"), key=lambda r: r["line_number"])
    assert not any("\r" in r["record"] for r in zk)        # CRLF endings stripped
    pretty = one(fleet["bronze"], source="jmx", line_number=1, file=f"nyc/{BROKER}/jmx/memory-2026-11-20T05-30-00.json")
    assert json.loads(pretty["record"]) == PRETTY


# --- Kafka log records -------------------------------------------------------------------------

def test_kafka_info_line(fleet):
    r = kafka(fleet, "server.log.2026-11-20-05", 2)
    assert utc(r["ts"]) == at(2026, 11, 20, 10, 0, 1, 123)
    assert (r["level"], r["logger"], r["message"]) == (
        "INFO", "kafka.server.KafkaServer", "[KafkaServer id=1] started")
    assert r["thread"] is None and r["detail"] is None
    assert (r["line_count"], r["log"], r["broker_id"], r["event_type"]) == (1, "server", 1, "broker_started")
    assert r["cluster"] == "nyc" and r["host"] == BROKER


def test_kafka_warn_with_stack_trace(fleet):
    r = kafka(fleet, "server.log.2026-11-20-05", 3)
    assert utc(r["ts"]) == at(2026, 11, 20, 10, 0, 2)
    assert r["level"] == "WARN"
    assert r["logger"] == "kafka.server.ReplicaFetcherThread"
    assert r["message"] == ("[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] "
                            "Error in response for fetch request")
    assert r["detail"] == "\n".join(SERVER_LOG[3:6])
    assert r["line_count"] == 4


def test_kafka_config_block_logger_on_last_line(fleet):
    r = kafka(fleet, "server.log.2026-11-20-05", 7)
    assert r["logger"] == "kafka.server.KafkaConfig"
    assert r["level"] == "INFO"
    assert r["message"] == ("KafkaConfig values: \n\tadvertised.listeners = null\n\tbroker.id = 1\n"
                            "\tzookeeper.connect = zk:2181")
    assert r["detail"] is None
    assert r["line_count"] == 5


def test_group_load_finished(fleet):
    r = kafka(fleet, "server.log.2026-11-20-05", 12)
    assert r["event_type"] == "group_load_finished"
    assert (r["topic"], r["partition"], r["duration_ms"]) == ("__consumer_offsets", 38, 95123)
    assert r["logger"] == "kafka.coordinator.group.GroupMetadataManager"
    assert utc(r["ts"]) == at(2026, 11, 20, 10, 30, 0)


def test_tombstone_append_failed_with_trace(fleet):
    r = kafka(fleet, "server.log.2026-11-20-05", 13)
    assert r["event_type"] == "tombstone_append_failed"
    assert (r["count"], r["topic"], r["partition"], r["group"]) == (363, "__consumer_offsets", 38, "consumer-group")
    assert r["level"] == "WARN"
    assert r["detail"] == "java.io.IOException: Map failed\n\tat sun.nio.ch.FileChannelImpl.map(FileChannelImpl.java:940)"
    assert r["line_count"] == 3


def test_alternate_layout(fleet):
    r = kafka(fleet, "server.log.2026-11-20-05", 16)
    assert (r["level"], r["thread"], r["logger"]) == (
        "WARN", "ReplicaFetcherThread-0-2", "kafka.server.ReplicaFetcherThread")
    assert r["message"] == "[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Error sending fetch request"
    assert utc(r["ts"]) == at(2026, 11, 20, 10, 40, 0)


def test_thread_prefix_stays_in_message(fleet):
    r = kafka(fleet, "server.log.2026-11-20-05", 18)
    assert r["message"] == "[kafka-request-handler-3]: last record, ends the hour"
    assert r["logger"] == "kafka.server.KafkaRequestHandler"
    assert utc(r["ts"]) == at(2026, 11, 20, 10, 59, 59, 999)


def test_cleaner_summary_block(fleet):
    r = kafka(fleet, "log-cleaner.log.2026-11-20-05", 1)
    assert r["event_type"] == "cleaner_summary"
    assert (r["topic"], r["partition"], r["thread_name"]) == ("__consumer_offsets", 7, "kafka-log-cleaner-thread-0")
    assert r["logger"] == "kafka.log.LogCleaner" and r["log"] == "log-cleaner"
    assert r["line_count"] == 7
    assert r["message"].startswith("[kafka-log-cleaner-thread-0]: \n\tLog cleaner thread 0 cleaned log")
    assert r["message"].endswith("\tEnd size: 1.0 MB (10 messages)")


def test_cleaner_error_and_stopped(fleet):
    err = kafka(fleet, "log-cleaner.log.2026-11-20-05", 8)
    assert (err["event_type"], err["level"], err["thread_name"]) == ("cleaner_error", "ERROR", "kafka-log-cleaner-thread-0")
    assert err["message"] == "[kafka-log-cleaner-thread-0]: Error due to"
    assert err["detail"] == "\n".join(CLEANER_LOG[8:10]) and err["line_count"] == 3
    stopped = kafka(fleet, "log-cleaner.log.2026-11-20-05", 11)
    assert (stopped["event_type"], stopped["thread_name"]) == ("cleaner_stopped", "kafka-log-cleaner-thread-0")
    assert utc(stopped["ts"]) == at(2026, 11, 20, 10, 20, 0, 1)
    old = kafka(fleet, "log-cleaner.log.2026-11-20-05", 12)                # 0.10: `[thread], msg`
    assert (old["event_type"], old["thread_name"], old["line_count"]) == ("cleaner_error", "kafka-log-cleaner-thread-0", 2)
    assert old["detail"] == "java.io.IOException: Map failed"


def test_kafka_event_rows_are_exactly_the_records(fleet):
    got = sorted((r["log"], r["line_number"], r["line_count"]) for r in fleet["silver.kafka_events"])
    assert got == [("log-cleaner", 1, 7), ("log-cleaner", 8, 3), ("log-cleaner", 11, 1), ("log-cleaner", 12, 2),
                   ("server", 2, 1), ("server", 3, 4), ("server", 7, 5), ("server", 12, 1), ("server", 13, 3),
                   ("server", 16, 1), ("server", 18, 1)]


# --- ZooKeeper ---------------------------------------------------------------------------------

def test_zookeeper_records(fleet):
    rows = {r["line_number"]: r for r in fleet["silver.zk_events"]}
    assert sorted(rows) == [1, 2, 3, 4]
    r1, r2, r3, r4 = rows[1], rows[2], rows[3], rows[4]
    assert utc(r1["ts"]) == at(2026, 11, 20, 10, 0, 5, 100)
    assert (r1["level"], r1["thread"], r1["logger"], r1["message"]) == (
        "INFO", "QuorumPeer[myid=1](plain=0.0.0.0:2181)(secure=disabled)", "Follower",
        "FOLLOWING - LEADER ELECTION TOOK - 104 MS")
    assert (r2["level"], r2["thread"], r2["logger"], r2["message"]) == (            # no [myid:N]
        "WARN", "SendWorker:188978561024", "QuorumCnxManager$SendWorker", "Send worker leaving thread")
    assert (r3["thread"], r3["logger"], r3["event_type"], r3["session_id"]) == (
        "NIOServerCxn.Factory:0.0.0.0/0.0.0.0:2181", "ZooKeeperServer", "session_established", "0x14ed93111f20005")
    assert r3["message"].endswith("for client /10.10.34.11:50990")
    assert (r4["event_type"], r4["line_count"], r4["logger"]) == ("follower_exception", 3, "Follower")
    assert r4["thread"] == "QuorumPeer[myid=1]/0:0:0:0:0:0:0:0:2181"
    assert r4["message"] == ("Exception when following the leader\njava.net.SocketException: Connection reset\n"
                             "\tat java.net.SocketInputStream.read(SocketInputStream.java:196)")
    for r in rows.values():
        assert r["zk_myid"] == 1 and r["log"] == "zookeeper" and r["host"] == ZK
        assert "\r" not in r["message"]


# --- JMX -----------------------------------------------------------------------------------------

def _jmx(fleet, mbean, attribute):
    return one(fleet["silver.jmx_samples"], mbean=mbean, attribute=attribute)


def test_jolokia_single_attribute(fleet):
    r = _jmx(fleet, "java.lang:type=OperatingSystem", "OpenFileDescriptorCount")
    assert (r["value"], r["value_text"], r["domain"], r["props"]) == (12800.0, None, "java.lang", {"type": "OperatingSystem"})
    assert utc(r["ts"]) == datetime.fromtimestamp(EPOCH + 5, UTC)
    assert (r["broker_id"], r["line_number"]) == (1, 1)


def test_jolokia_whole_mbean_with_composite(fleet):
    rows = [r for r in fleet["silver.jmx_samples"] if r["mbean"] == "java.lang:type=Memory"]
    got = {r["attribute"]: (r["value"], r["value_text"]) for r in rows}
    assert got == {
        "HeapMemoryUsage.init": (1073741824.0, None), "HeapMemoryUsage.committed": (1073741824.0, None),
        "HeapMemoryUsage.max": (4294967296.0, None), "HeapMemoryUsage.used": (123456789.0, None),
        "ObjectPendingFinalizationCount": (0.0, None), "Verbose": (None, "false")}
    assert {utc(r["ts"]) for r in rows} == {datetime.fromtimestamp(EPOCH + 6, UTC)}


def test_jolokia_pattern_read(fleet):
    rows = [r for r in fleet["silver.jmx_samples"] if r["domain"] == "kafka.log" and r["props"].get("name") == "Size"]
    got = {r["props"]["partition"]: (r["props"]["topic"], r["attribute"], r["value"]) for r in rows}
    assert got == {"38": ("__consumer_offsets", "Value", 536870912000.0),
                   "7": ("__consumer_offsets", "Value", 10485760.0)}
    assert {r["line_number"] for r in rows} == {3}


def test_jolokia_bulk_with_a_404(fleet):
    rows = [r for r in fleet["silver.jmx_samples"] if r["line_number"] == 4 and r["file"].endswith("jsonl.2026-11-20-05")]
    assert sorted((r["mbean"], r["attribute"], r["value"]) for r in rows) == [
        ("kafka.log:type=LogCleanerManager,name=time-since-last-run-ms", "Value", 1500000.0),
        ("kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions", "Value", 3.0)]
    q = one(fleet["silver.quarantine"], source="jmx", line_number=4)
    assert q["line_count"] == 0
    assert q["reason"] == ("jolokia status 404 for kafka.log:type=LogCleaner,name=DeadThreadCount: "
                           "javax.management.InstanceNotFoundException javax.management.InstanceNotFoundException"
                           " : kafka.log:type=LogCleaner,name=DeadThreadCount")


def test_jolokia_non_json_line_and_pretty_file(fleet):
    q = one(fleet["silver.quarantine"], source="jmx", line_number=5)
    assert (q["reason"], q["line_count"], q["record"]) == (
        "not a Jolokia JSON response", 1, "curl: (7) Failed to connect to localhost port 8778")
    r = _jmx(fleet, "kafka.server:type=KafkaRequestHandlerPool,name=RequestHandlerAvgIdlePercent", "OneMinuteRate")
    assert (r["value"], r["line_number"]) == (0.25, 1)
    assert r["file"] == f"nyc/{BROKER}/jmx/memory-2026-11-20T05-30-00.json"
    assert len(fleet["silver.jmx_samples"]) == 1 + 6 + 2 + 2 + 1


# --- thread dumps and log-dir snapshots ----------------------------------------------------------

def test_thread_dump(fleet):
    assert {r["file"] for r in fleet["silver.threads"]} == {f"nyc/{BROKER}/threaddumps/jstack-2026-11-20T05-45-00.txt"}
    rows = {r["thread_name"]: r for r in fleet["silver.threads"]}
    assert sorted(rows) == ["VM Thread", "kafka-log-cleaner-thread-0", "kafka-request-handler-3"]
    assert {utc(r["captured_at"]) for r in rows.values()} == {at(2026, 11, 20, 10, 45, 0)}
    assert {n: r["state"] for n, r in rows.items()} == {
        "VM Thread": None, "kafka-log-cleaner-thread-0": "TIMED_WAITING", "kafka-request-handler-3": "BLOCKED"}
    assert rows["kafka-log-cleaner-thread-0"]["top_frames"] == [
        "jdk.internal.misc.Unsafe.park(java.base@11.0.20/Native Method)",
        "java.util.concurrent.locks.LockSupport.parkNanos(java.base@11.0.20/LockSupport.java:234)",
        "kafka.utils.ShutdownableThread.pause(ShutdownableThread.scala:82)"]
    assert rows["kafka-request-handler-3"]["top_frames"] == [
        "kafka.coordinator.group.GroupMetadataManager.storeOffsets(GroupMetadataManager.scala:300)",
        "kafka.server.KafkaApis.handle(KafkaApis.scala:80)"]
    assert rows["VM Thread"]["top_frames"] == []
    assert {r["broker_id"] for r in rows.values()} == {1}


def test_log_dirs_snapshot(fleet):
    got = sorted((r["file"].rsplit("/", 1)[1], r["broker_id"], r["log_dir"], r["topic"], r["partition"],
                  r["size_bytes"], r["line_number"], utc(r["captured_at"])) for r in fleet["silver.partition_sizes"])
    assert got == [
        ("logdirs-2026-11-20T05-00-00.txt", 1, "/var/kafka-logs", "__consumer_offsets", 38, 536870912000, 3,
         at(2026, 11, 20, 10, 0, 0)),                                    # 05:00 New York from the name
        ("logdirs-2026-11-20T05-00-00.txt", 1, "/var/kafka-logs", "orders", 0, 1048576, 3, at(2026, 11, 20, 10, 0, 0)),
        ("logdirs.txt", 1, "/var/kafka-logs", "__consumer_offsets", 7, 10485760, 1, HOUR),   # no stamp: the hour
    ]
    banners = sorted((q["line_number"], q["reason"], q["line_count"])
                     for q in fleet["silver.quarantine"] if q["source"] == "logdirs")
    assert banners == [(1, "kafka-log-dirs banner line (not data)", 1), (2, "kafka-log-dirs banner line (not data)", 1)]


# --- quarantine and reconciliation ---------------------------------------------------------------

def test_quarantine_rows(fleet):
    got = sorted((q["source"], q["file"].rsplit("/", 1)[1], q["line_number"], q["line_count"], q["reason"])
                 for q in fleet["silver.quarantine"])
    assert got == [
        ("jmx", "jolokia.jsonl.2026-11-20-05", 4, 0,
         "jolokia status 404 for kafka.log:type=LogCleaner,name=DeadThreadCount: javax.management."
         "InstanceNotFoundException javax.management.InstanceNotFoundException : "
         "kafka.log:type=LogCleaner,name=DeadThreadCount"),
        ("jmx", "jolokia.jsonl.2026-11-20-05", 5, 1, "not a Jolokia JSON response"),
        ("kafka", "server.log.2026-11-20-05", 1, 1, "continuation line before the first record of its file"),
        ("kafka", "server.log.2026-11-20-05", 17, 1, "unparseable timestamp"),
        ("logdirs", "logdirs-2026-11-20T05-00-00.txt", 1, 1, "kafka-log-dirs banner line (not data)"),
        ("logdirs", "logdirs-2026-11-20T05-00-00.txt", 2, 1, "kafka-log-dirs banner line (not data)"),
        ("threaddumps", "jstack.txt", 1, 1, "thread dump without a capture time on its first line"),
    ]
    orphan = one(fleet["silver.quarantine"], source="kafka", line_number=1)
    assert orphan["record"] == SERVER_LOG[0]
    assert one(fleet["silver.quarantine"], source="kafka", line_number=17)["record"] == SERVER_LOG[16]


def test_reconciliation_balances(fleet):
    got = {(r["host"], r["source"]): (r["bronze_records"], r["silver_records"], r["quarantined_records"],
                                      r["unaccounted"]) for r in fleet["reconciliation"]}
    assert got == {
        (BROKER, "kafka"): (31, 29, 2, 0),
        (BROKER, "jmx"): (6, 5, 1, 0),
        (BROKER, "threaddumps"): (2, 1, 1, 0),
        (BROKER, "logdirs"): (4, 2, 2, 0),
        (ZK, "zookeeper"): (6, 6, 0, 0),
    }
    assert {utc(r["hour"]) for r in fleet["reconciliation"]} == {HOUR}


# --- gzip'd rolled logs ----------------------------------------------------------------------------

def test_gzipped_rolled_log_parses_like_the_plain_file(spark, fleet, tmp_path):
    inv_path = tmp_path / "inventory.yaml"
    inv_path.write_text(INVENTORY)
    k = tmp_path / "fleet" / "nyc" / BROKER / "kafka"
    _put(k / "server.log.2026-11-20-05.gz", gzip.compress(_lines(SERVER_LOG)))
    inv = load_inventory(inv_path)
    lakehouse = Lakehouse.at(tmp_path / "lakehouse")
    landed = pull.pull_hour(inv, HOUR, Lakehouse.at(lakehouse))
    assert [x.file for x in landed] == [f"nyc/{BROKER}/kafka/server.log.2026-11-20-05.gz"]
    b = bronze.records(spark, landed, lakehouse.landing(HOUR), HOUR)
    tables = silver.build(spark, b, inv)
    keep = lambda r: {k: v for k, v in r.items() if k not in ("file",)}   # noqa: E731
    gz = sorted((keep(r.asDict()) for r in tables["silver.kafka_events"].collect()), key=lambda r: r["line_number"])
    plain = sorted((keep(r) for r in fleet["silver.kafka_events"] if r["file"].endswith("server.log.2026-11-20-05")),
                   key=lambda r: r["line_number"])
    assert gz == plain
    q = sorted((r["line_number"], r["reason"]) for r in tables["silver.quarantine"].collect())
    assert q == [(1, "continuation line before the first record of its file"), (17, "unparseable timestamp")]


@pytest.mark.parametrize("parts, expected_tables", [
    (("kafka",), {"silver.kafka_events"}),
    (("zookeeper", "logdirs"), {"silver.zk_events", "silver.partition_sizes"}),
    (("jolokia",), {"silver.jmx_samples"}),
    (("prometheus", "jstack"), {"silver.jmx_samples", "silver.threads", "silver.deadlocks"}),
])
def test_a_part_of_silver_is_exactly_its_share_of_the_whole(spark, fleet, parts, expected_tables):
    """`fleethealth parse` builds one part of silver (fast on a cold JVM): the same rows as the whole
    build's tables of that part, and the quarantine rows of its sources."""
    def part_of(row: dict) -> str:
        if row["source"] != "jmx":
            [fmt] = SOURCES[row["source"]].formats
            return fmt
        return "prometheus" if re.search(landing.PROMETHEUS_FILE, row["file"]) else "jolokia"

    tables = silver.build(spark, local_frame(spark, fleet["bronze"], bronze.SCHEMA), fleet["inventory"],
                          parts=parts)
    assert set(tables) == expected_tables | {"silver.quarantine"}
    rows = 0
    for name, df in tables.items():
        part = [r.asDict() for r in df.collect()]
        whole = [r for r in fleet[name] if name not in ("silver.quarantine", "silver.jmx_samples")
                 or part_of(r) in parts]
        assert sorted(map(str, part)) == sorted(map(str, whole)), name
        rows += len(part)
    assert rows > 0
