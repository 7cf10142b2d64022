"""Tests of the fleet simulator (fleethealth.simulate): layout, formats, scenario timelines, determinism."""
from __future__ import annotations

import hashlib
import json
import os
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from fleethealth.simulate import SCENARIOS, coordinator_partition, java_string_hashcode, simulate

UTC = timezone.utc
START = datetime(2026, 11, 20, 10, tzinfo=UTC)
END = datetime(2026, 11, 20, 13, tzinfo=UTC)
PM3 = "pm3-dead-cleaner"
GIB = 1 << 30
TS = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) ")
ZK_TS = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) \[myid:1\] - (INFO |WARN |ERROR|DEBUG) \[")


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sim")
    simulate(out, "all", START, END)
    return out


def host_dir(out: Path, cluster: str, host: str) -> Path:
    return out / "fleet" / cluster / host


def parse_local(s: str) -> datetime:
    return datetime.strptime(s, "%Y-%m-%d %H:%M:%S,%f")


def test_coordinator_partition_java_semantics():
    assert java_string_hashcode("consumer-group") == -1738392088
    assert coordinator_partition("consumer-group", 50) == 38
    assert java_string_hashcode("") == 0
    assert java_string_hashcode("a") == 97
    # overflowing hash: "polygenelubricants".hashCode() == Integer.MIN_VALUE in Java
    assert java_string_hashcode("polygenelubricants") == -(1 << 31)
    assert coordinator_partition("polygenelubricants", 50) == 0


def test_inventory_shape(fleet):
    inv = yaml.safe_load((fleet / "inventory.yaml").read_text())
    assert list(inv) == ["clusters"]
    assert [c["name"] for c in inv["clusters"]] == list(SCENARIOS)
    # the post-mortems' own broker ids (219, 8, 3) and ZooKeeper ensembles
    brokers = {"pm1-deadlock": [217, 218, 219], "pm4-zk-expiry-storm": [6, 7, 8]}
    zk_servers = {"pm2-zk-follower-reset": 3}
    for c in inv["clusters"]:
        assert list(c) == ["name", "timezone", "offsets_topic_partitions", "transport", "root", "hosts"]
        assert c["timezone"] != "UTC" and c["transport"] == "local" and c["offsets_topic_partitions"] == 50
        assert Path(c["root"]).is_absolute() and Path(c["root"]) == (fleet / "fleet").resolve()
        kafka = [h for h in c["hosts"] if h["role"] == "kafka"]
        zk = [h for h in c["hosts"] if h["role"] == "zookeeper"]
        assert [h["broker_id"] for h in kafka] == brokers.get(c["name"], [1, 2, 3])
        assert all(set(h) == {"host", "role", "broker_id", "kafka_version"} for h in kafka)
        assert all(h["host"] == f"{c['name']}-kafka-{h['broker_id']}" for h in kafka)
        assert zk == [{"host": f"{c['name']}-zk-{i}", "role": "zookeeper", "zk_myid": i}
                      for i in range(1, zk_servers.get(c["name"], 1) + 1)]
        for h in c["hosts"]:
            assert (Path(c["root"]) / c["name"] / h["host"]).is_dir()
    pm3 = next(c for c in inv["clusters"] if c["name"] == PM3)
    assert pm3["timezone"] == "America/New_York"
    assert {h.get("kafka_version") for h in pm3["hosts"]} == {"1.1.0", None}


def test_local_hour_file_names(fleet):
    kdir = host_dir(fleet, PM3, f"{PM3}-kafka-1") / "kafka"
    for name in ("server.log", "controller.log", "state-change.log", "log-cleaner.log"):
        assert sorted(p.name for p in kdir.glob(f"{name}.*")) == [f"{name}.2026-11-20-0{h}" for h in (5, 6, 7)]
    hdir = host_dir(fleet, "healthy", "healthy-kafka-1")
    assert sorted(p.name for p in (hdir / "kafka").glob("server.log.*")) == \
        [f"server.log.2026-11-20-{h}" for h in (11, 12, 13)]
    assert sorted(p.name for p in (hdir / "jmx").iterdir()) == [f"jolokia.jsonl.2026-11-20-{h}" for h in (11, 12, 13)]
    dumps = sorted(p.name for p in (hdir / "threaddumps").iterdir())
    assert len(dumps) == 3 and all(re.fullmatch(r"jstack-2026-11-20T1[123]-30-\d\d\.txt", d) for d in dumps)
    snaps = sorted(p.name for p in (hdir / "logdirs").iterdir())
    assert len(snaps) == 3 and all(re.fullmatch(r"logdirs-2026-11-20T1[123]-45-\d\d\.json", d) for d in snaps)
    assert not (host_dir(fleet, "healthy", "healthy-kafka-2") / "logdirs").exists()


def test_kafka_logs_in_their_local_hour_and_ordered(fleet):
    files = list((fleet / "fleet").glob("*/*-kafka-*/kafka/*.log.*"))
    assert len(files) == len(SCENARIOS) * 3 * 4 * 3
    nonempty = 0
    for f in files:
        label = f.name.rsplit(".", 1)[1]
        text = f.read_text()
        if not text:
            assert f.name.startswith(("controller.log", "log-cleaner.log")), f
            continue
        nonempty += 1
        assert text.startswith("["), f
        prev = None
        for line in text.splitlines():
            m = TS.match(line)
            if not m:
                assert line.startswith(("\t", " (", "Caused by: ")) or re.match(r"^[a-z][\w.$]+(Exception|Error)", line), \
                    (f, line)
                continue
            ts = parse_local(m.group(1))
            assert ts.strftime("%Y-%m-%d-%H") == label, (f, line)
            assert prev is None or ts >= prev, (f, line)
            prev = ts
    assert nonempty >= len(SCENARIOS) * 3 * 3 * 2


def test_multiline_records(fleet):
    pm3 = host_dir(fleet, PM3, f"{PM3}-kafka-2") / "kafka"
    cleaner = (host_dir(fleet, PM3, f"{PM3}-kafka-1") / "kafka" / "log-cleaner.log.2026-11-20-05").read_text()
    assert re.search(r"INFO \[kafka-log-cleaner-thread-0\]: \n\tLog cleaner thread 0 cleaned log __consumer_offsets-\d+ "
                     r"\(dirty section = \[\d+, \d+\]\)\n(\t.*\n){7} \(kafka\.log\.LogCleaner\)\n", cleaner)
    server = "".join(p.read_text() for p in sorted(pm3.glob("server.log.*")))
    assert "\tat kafka.log.Log.roll(Log.scala:1318)\n" in server
    assert "\nCaused by: java.lang.OutOfMemoryError: Map failed\n" in server
    assert re.search(r"INFO KafkaConfig values: \n(\t[\w.]+ = .*\n)+ \(kafka\.server\.KafkaConfig\)\n", server)
    healthy = "".join(p.read_text() for p in (fleet / "fleet" / "healthy").glob("*/kafka/server.log.*"))
    assert re.search(r"WARN \[SocketServer brokerId=\d\] Unexpected error from /[\d.]+; closing connection "
                     r"\(org\.apache\.kafka\.common\.network\.Selector\)\norg\.apache\.kafka\.common\.network\."
                     r"InvalidReceiveException: .*\n(\tat .*\n)+", healthy)


def test_kafka_volume_near_budget(tmp_path):
    simulate(tmp_path, "healthy", START, START + timedelta(hours=1), bytes_per_broker_hour=500_000)
    for b in (2, 3):  # brokers without the controller's log
        size = sum(p.stat().st_size for p in (host_dir(tmp_path, "healthy", f"healthy-kafka-{b}") / "kafka").iterdir())
        assert 450_000 <= size <= 560_000, size


def test_jolokia_lines(fleet):
    inv = {c["name"]: c for c in yaml.safe_load((fleet / "inventory.yaml").read_text())["clusters"]}
    for f in (fleet / "fleet").glob("*/*-kafka-*/jmx/jolokia.jsonl.*"):
        cluster = inv[f.parts[-4]]
        version = next(h["kafka_version"] for h in cluster["hosts"] if h["role"] == "kafka")
        local_hour = datetime.strptime(f.name.rsplit(".", 1)[1], "%Y-%m-%d-%H")
        lines = f.read_text().splitlines()
        assert len(lines) == 12, f
        utc_hours = set()
        errors = 0
        for line in lines:
            doc = json.loads(line)
            assert isinstance(doc, list) and doc
            for r in doc:
                assert r["request"]["type"] == "read"
                if r["status"] != 200:
                    errors += 1
                    assert r["status"] == 404 and r["error_type"] == "javax.management.InstanceNotFoundException"
                    continue
                utc_hours.add(r["timestamp"] // 3600)
            mbeans = {r["request"]["mbean"] for r in doc}
            assert "kafka.log:type=LogCleanerManager,name=time-since-last-run-ms" in mbeans
            assert "kafka.log:type=Log,name=Size,topic=__consumer_offsets,partition=*" in mbeans
            dead = "kafka.log:type=LogCleaner,name=DeadThreadCount" in mbeans
            assert dead == (tuple(map(int, version.split(".")[:2])) >= (2, 4)), f  # DeadThreadCount from 2.4
        assert errors == 1
        assert len(utc_hours) == 1
        # the samples' UTC hour is the file's local hour in the cluster's zone
        tz = cluster["timezone"]
        from zoneinfo import ZoneInfo
        utc = datetime.fromtimestamp(utc_hours.pop() * 3600, UTC)
        assert utc.astimezone(ZoneInfo(tz)).replace(tzinfo=None) == local_hour


def _jmx_sizes(fleet, broker: int, partition: int) -> list[tuple[int, int]]:
    out = []
    for f in sorted((host_dir(fleet, PM3, f"{PM3}-kafka-{broker}") / "jmx").iterdir()):
        for line in f.read_text().splitlines():
            for r in json.loads(line):
                if r["request"]["mbean"] == "kafka.log:type=Log,name=Size,topic=__consumer_offsets,partition=*":
                    key = f"kafka.log:name=Size,partition={partition},topic=__consumer_offsets,type=Log"
                    out.append((r["timestamp"], r["value"][key]["Value"]))
    return out


def test_pm3_cleaner_death_and_thread_dumps(fleet):
    k2 = host_dir(fleet, PM3, f"{PM3}-kafka-2") / "kafka"
    first = (k2 / "log-cleaner.log.2026-11-20-05").read_text()
    m = re.search(r"^\[2026-11-20 05:20:00,\d{3}\] ERROR \[kafka-log-cleaner-thread-0\]: Error due to "
                  r"\(kafka\.log\.LogCleaner\)\njava\.io\.IOException: Map failed\n", first, re.M)
    assert m
    after = first[m.end():]
    assert re.search(r"^\[2026-11-20 05:20:0\d,\d{3}\] INFO \[kafka-log-cleaner-thread-0\]: Stopped", after, re.M)
    assert "cleaned log" not in after
    assert "cleaned log" not in (k2 / "log-cleaner.log.2026-11-20-06").read_text()
    assert "cleaned log" not in (k2 / "log-cleaner.log.2026-11-20-07").read_text()
    for b in (1, 3):
        text = "".join(p.read_text() for p in (host_dir(fleet, PM3, f"{PM3}-kafka-{b}") / "kafka").glob("log-cleaner.log.*"))
        assert "cleaned log" in text and "ERROR" not in text
    for b in (1, 2, 3):
        dumps = sorted((host_dir(fleet, PM3, f"{PM3}-kafka-{b}") / "threaddumps").iterdir())
        assert len(dumps) == 3
        for d in dumps:
            text = d.read_text()
            assert text.startswith(d.name[7:17] + " ") and "\nFull thread dump OpenJDK" in text
            assert "\nJNI global refs: " in text
            assert ('"kafka-log-cleaner-thread-0"' in text) == (b != 2), d
    # JMX: time since the cleaner last ran grows steadily on broker 2 after the death
    tslr = []
    for f in sorted((host_dir(fleet, PM3, f"{PM3}-kafka-2") / "jmx").iterdir()):
        for line in f.read_text().splitlines():
            for r in json.loads(line):
                if "time-since-last-run-ms" in r["request"]["mbean"]:
                    tslr.append((r["timestamp"], r["value"]))
    mid = [v for ts, v in tslr if 10 * 3600 + 25 * 60 <= ts % 86400 < 12 * 3600]
    assert mid == sorted(mid) and mid[-1] > 3_600_000


def test_pm3_bloat_matches_ground_truth(fleet):
    truth = json.loads((fleet / "expected_incidents.json").read_text())
    assert not [t for t in truth if t["cluster"] == "healthy"]  # Kafka 2.8.2: no catalogued bug either
    truth = [t for t in truth if t["cluster"] == PM3]
    by_kind = {t["kind"]: t for t in truth}
    assert set(by_kind) == {"log_cleaner_dead", "offsets_partition_bloat", "slow_group_load"}
    assert by_kind["log_cleaner_dead"]["known_bug"] == "KAFKA-7215"
    assert by_kind["log_cleaner_dead"]["entity"] == "broker-2"
    assert by_kind["log_cleaner_dead"]["first_seen"] == "2026-11-20T10:20:00.412Z"
    bloat = by_kind["offsets_partition_bloat"]
    assert bloat["entity"] == "__consumer_offsets-38@broker-2"
    sizes = _jmx_sizes(fleet, 2, 38)
    crossing = next(ts for ts, v in sizes if v > GIB)
    assert datetime.fromtimestamp(crossing, UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z") == bloat["first_seen"]
    assert sizes[0][1] < 80 * 1024 * 1024 and sizes[-1][1] > 5 * GIB
    for b in (1, 3):
        assert max(v for _, v in _jmx_sizes(fleet, b, 38)) < 100 * 1024 * 1024
    # log-dir snapshots agree with JMX in magnitude and keep healthy partitions at tens of MB
    snap = sorted((host_dir(fleet, PM3, f"{PM3}-kafka-1") / "logdirs").iterdir())[-1].read_text().splitlines()
    assert snap[:2] == ["Querying brokers for log directories information",
                        "Received log directory information from brokers 1,2,3"]
    doc = json.loads(snap[2])
    parts = {(b["broker"], p["partition"]): p["size"] for b in doc["brokers"] for d in b["logDirs"] for p in d["partitions"]}
    assert parts[(2, "__consumer_offsets-38")] > 5 * GIB
    assert max(v for (b, p), v in parts.items() if p.startswith("__consumer_offsets") and b != 2) < 100 * 1024 * 1024
    slow = by_kind["slow_group_load"]
    assert slow["entity"] == "__consumer_offsets-38@broker-2"
    server = (host_dir(fleet, PM3, f"{PM3}-kafka-2") / "kafka" / "server.log.2026-11-20-07").read_text()
    m = re.search(r"^\[(.{23})\] INFO \[GroupMetadataManager brokerId=2\] Finished loading offsets and group metadata "
                  r"from __consumer_offsets-38 in 95123 milliseconds\.", server, re.M)
    local = parse_local(m.group(1)) + timedelta(hours=5)  # EST
    assert local.strftime("%Y-%m-%dT%H:%M:%S.%f")[:23] + "Z" == slow["first_seen"]
    assert "Failed to append 363 tombstones to __consumer_offsets-38 for expired/deleted offsets and/or metadata " \
           "for group consumer-group." in server


def test_healthy_has_no_errors(fleet):
    for f in (fleet / "fleet" / "healthy").glob("*/*/*"):
        if f.parent.name in ("kafka", "zookeeper"):
            text = f.read_text()
            assert "] ERROR " not in text and " - ERROR " not in text, f


def test_zookeeper_logs_and_mtime(fleet):
    zdir = host_dir(fleet, PM3, f"{PM3}-zk-1") / "zookeeper"
    files = sorted(zdir.iterdir())
    assert [f.name for f in files] == ["zookeeper.log.1", "zookeeper.log.2", "zookeeper.log.3"]
    for i, f in enumerate(files):
        lines = f.read_text().splitlines()
        assert lines and all(ZK_TS.match(line) for line in lines)
        last = parse_local(ZK_TS.match(lines[-1]).group(1)) + timedelta(hours=5)
        assert abs(os.stat(f).st_mtime - last.replace(tzinfo=UTC).timestamp()) < 0.01
        assert datetime.fromtimestamp(os.stat(f).st_mtime, UTC).hour == 10 + i
    text = "".join(f.read_text() for f in files)
    assert "Established session" in text and "Processed session termination" in text


def test_deterministic(tmp_path):
    def digest(out: Path) -> str:
        h = hashlib.sha256()
        for p in sorted(out.rglob("*")):
            if p.is_file():
                rel = p.relative_to(out).as_posix()
                h.update(rel.encode())
                data = p.read_bytes()
                h.update(data.replace(str(out.resolve()).encode(), b"OUT"))
        return h.hexdigest()

    end = START + timedelta(hours=1)
    lean = {"jmx_samples_per_broker_hour": 0}   # JMX volume: tests/test_simulate_volume.py
    simulate(tmp_path / "a", "all", START, end, seed=11, **lean)
    simulate(tmp_path / "b", "all", START, end, seed=11, **lean)
    simulate(tmp_path / "c", "all", START, end, seed=12, **lean)
    assert digest(tmp_path / "a") == digest(tmp_path / "b")
    assert digest(tmp_path / "a") != digest(tmp_path / "c")
    # re-simulating into the same folder replaces the files (no appended duplicates)
    simulate(tmp_path / "a", "all", START, end, seed=11, **lean)
    assert digest(tmp_path / "a") == digest(tmp_path / "b")


def test_short_window_has_no_restart_and_bad_input_is_rejected(tmp_path):
    simulate(tmp_path, PM3, START, START + timedelta(hours=1))
    truth = json.loads((tmp_path / "expected_incidents.json").read_text())
    assert [t["kind"] for t in truth] == ["log_cleaner_dead", "offsets_partition_bloat"]
    with pytest.raises(ValueError, match="unknown scenario"):
        simulate(tmp_path, "nope", START, END)
    with pytest.raises(ValueError, match="hour-aligned"):
        simulate(tmp_path, "healthy", START + timedelta(minutes=5), END)
    with pytest.raises(ValueError, match="timezone-aware"):
        simulate(tmp_path, "healthy", START.replace(tzinfo=None), END)


# --- post-mortems 1, 2, 4, 5 -------------------------------------------------------------------------
def _text(fleet, cluster: str, host: str, pattern: str) -> str:
    return "".join(p.read_text() for p in sorted((host_dir(fleet, cluster, host)).glob(pattern)))


def _truth(fleet, cluster: str) -> list[tuple[str, str, str]]:
    truth = json.loads((fleet / "expected_incidents.json").read_text())
    return sorted((t["kind"], t["entity"], t["first_seen"]) for t in truth if t["cluster"] == cluster)


def _utc(local: str, tz: str) -> str:
    from zoneinfo import ZoneInfo
    t = parse_local(local).replace(tzinfo=ZoneInfo(tz)).astimezone(UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%f")[:23] + "Z"


def test_pm1_deadlock_on_219(fleet):
    c = "pm1-deadlock"
    dumps = {b: sorted((host_dir(fleet, c, f"{c}-kafka-{b}") / "threaddumps").iterdir()) for b in (217, 218, 219)}
    assert all(len(d) == 3 for d in dumps.values())
    for b, files in dumps.items():
        for f in files:
            text = f.read_text()
            assert ("Found one Java-level deadlock:" in text) == (b == 219), f
    text = dumps[219][0].read_text()
    report = text[text.index("Found one Java-level deadlock:"):]
    assert re.findall(r'^"([\w-]+)":\n  waiting to lock monitor 0x\w+ \(object 0x\w+, a ([\w.]+)\),\n  which is held by "([\w-]+)"',
                      report, re.M) == [
        ("executor-Heartbeat", "kafka.coordinator.GroupMetadata", "group-metadata-manager-0"),
        ("group-metadata-manager-0", "java.util.LinkedList", "kafka-request-handler-3"),
        ("kafka-request-handler-3", "kafka.coordinator.GroupMetadata", "executor-Heartbeat")]
    assert report.rstrip().endswith("Found 1 deadlock.")
    assert re.search(r'"kafka-request-handler-3" #\d+ daemon .* waiting for monitor entry .*\n'
                     r'   java.lang.Thread.State: BLOCKED \(on object monitor\)\n', text)
    # peers cannot fetch from 219; 219 shrinks the ISR of the partitions it leads to itself
    for b in (217, 218):
        server = _text(fleet, c, f"{c}-kafka-{b}", "kafka/server.log.*")
        errors = re.findall(r"WARN \[ReplicaFetcherThread-[01]-219\], Error in fetch .*\n"
                            r"java\.io\.IOException: Connection to 219 was disconnected before the response was read\n", server)
        assert len(errors) > 200   # two fetchers, every 30.5 s, for 2 h 45 min
    server = _text(fleet, c, f"{c}-kafka-219", "kafka/server.log.*")
    shrinks = re.findall(r"INFO Partition \[([\w-]+),(\d+)\] on broker 219: Shrinking ISR for partition \[\1,\2\] "
                         r"from 219,21[78],21[78] to 219 \(kafka\.cluster\.Partition\)", server)
    assert len(shrinks) > 20 and ("__consumer_offsets", "2") in shrinks
    # 0.10 texts: ", " thread prefixes, the old coordinator package and prefix; nothing from the stuck coordinator
    assert "[kafka-log-cleaner-thread-0], \n\tLog cleaner thread 0 cleaned log" in _text(fleet, c, f"{c}-kafka-217",
                                                                                           "kafka/log-cleaner.log.*")
    assert "] INFO [Group Metadata Manager on Broker 217]: Removed 0 expired offsets" in \
        _text(fleet, c, f"{c}-kafka-217", "kafka/server.log.*")
    late = [line for line in server.splitlines() if "(kafka.coordinator." in line and line[1:17] >= "2026-11-20 18:15"]
    assert late == []
    # open files: 219 climbs to 326,639, the peers stay near 12,800
    fds = {}
    for b in (217, 218, 219):
        for f in sorted((host_dir(fleet, c, f"{c}-kafka-{b}") / "jmx").iterdir()):
            for line in f.read_text().splitlines():
                for r in json.loads(line):
                    if r["request"]["mbean"] == "java.lang:type=OperatingSystem":
                        fds.setdefault(b, []).append(r["value"]["OpenFileDescriptorCount"])
    assert max(fds[217] + fds[218]) < 13_100 and fds[219][0] < 13_100 and fds[219][-1] == 326_639
    assert _truth(fleet, c) == sorted([
        ("broker_deadlock", "broker-219", "2026-11-20T10:30:14.000Z"),
        ("broker_isolated", "broker-219", "2026-11-20T10:15:30.442Z"),
        ("fd_exhaustion", "broker-219", "2026-11-20T10:35:01.000Z")])
    assert dumps[219][0].name == "jstack-2026-11-20T18-30-14.txt"   # Singapore time of the first dump


def test_pm2_zookeeper_follower_reset(fleet):
    c = "pm2-zk-follower-reset"
    leader = _text(fleet, c, f"{c}-zk-2", "zookeeper/zookeeper.log.*")
    follower = _text(fleet, c, f"{c}-zk-3", "zookeeper/zookeeper.log.*")
    assert "transaction timeout" not in _text(fleet, c, f"{c}-zk-1", "zookeeper/zookeeper.log.*")
    m = re.search(r"^(\S+ \S+) \[myid:2\] - WARN  \[LearnerHandler-/[\d.]+:\d+:LearnerHandler@\d+\] - "
                  r"Closing connection to peer due to transaction timeout\.$", leader, re.M)
    assert m
    assert re.search(r"- WARN  \[QuorumPeer\[myid=3\]\(plain=\[0:0:0:0:0:0:0:0\]:2181\)\(secure=disabled\):Follower@\d+\] - "
                     r"Exception when following the leader\njava\.net\.SocketException: Connection reset\n(\tat .*\n)+",
                     follower)
    assert re.search(r"Disconnected from leader \(with address: /[\d.]+:2888\)\. Was connected for 316796607ms\. "
                     r"Sync state: true\n", follower)
    assert re.search(r"- INFO  \[QuorumPeer\[myid=3\].*:Follower@75\] - FOLLOWING - LEADER ELECTION TOOK - 104 MS\n",
                     follower)
    assert _truth(fleet, c) == [("zk_follower_disconnect", "zk-3", _utc(m.group(1), "Europe/Madrid"))]


def test_pm4_session_expiry_and_election_storm(fleet):
    c = "pm4-zk-expiry-storm"
    zk = _text(fleet, c, f"{c}-zk-1", "zookeeper/zookeeper.log.*")
    m = re.search(r"^(\S+ \S+) \[myid:1\] - INFO  \[SessionTracker:ZooKeeperServer@\d+\] - Expiring session (0x\w+), "
                  r"timeout of 6000ms exceeded$", zk, re.M)
    assert m
    b8 = _text(fleet, c, f"{c}-kafka-8", "kafka/server.log.*")
    assert f"WARN Unable to reconnect to ZooKeeper service, session {m.group(2)} has expired" in b8
    assert "INFO Registered broker 8 at path /brokers/ids/8 with addresses:" in b8
    ctl = _text(fleet, c, f"{c}-kafka-6", "kafka/controller.log.*")
    assert "INFO [Controller id=6] Broker failure callback for 8 (kafka.controller.KafkaController)" in ctl
    assert "INFO [Controller id=6] New broker startup callback for 8" in ctl
    sc = _text(fleet, c, f"{c}-kafka-6", "kafka/state-change.log.*")
    offline = re.findall(r"Changed partition ([\w-]+)-(\d+) state from OnlinePartition to OfflinePartition", sc)
    online = re.findall(r"Changed partition ([\w-]+)-(\d+) from OfflinePartition to OnlinePartition with state "
                        r"LeaderAndIsr\(leader=([67]),", sc)
    assert len(offline) == len(online) > 30 and sum(1 for t, _ in offline if t == "__consumer_offsets") >= 16
    # the new leaders start at a new epoch and load the moved offsets partitions; their groups rebalance
    leaders = _text(fleet, c, f"{c}-kafka-6", "kafka/server.log.*") + _text(fleet, c, f"{c}-kafka-7", "kafka/server.log.*")
    starts = re.findall(r"\[Partition ([\w-]+)-(\d+) broker=[67]\] \1-\2 starts at Leader Epoch", leaders)
    assert sorted(starts) == sorted((t, p) for t, p in offline)
    assert re.search(r"\[GroupCoordinator [67]\]: Preparing to rebalance group \S+ in state PreparingRebalance", leaders)
    # leadership returns to 8 at the controller's next preferred-replica check
    assert re.search(r"\[Controller id=6\] Starting preferred replica leader election for partitions .*__consumer_offsets", ctl)
    truth = _truth(fleet, c)
    assert [(k, e) for k, e, _ in truth] == [("leader_election_storm", "broker-8"), ("zk_session_expired", "broker-8")]
    assert truth[1][2] == _utc(m.group(1), "Asia/Tokyo")


def test_pm5_metadata_divergence(fleet):
    c = "pm5-metadata-divergence"
    zk = _text(fleet, c, f"{c}-zk-1", "zookeeper/zookeeper.log.*")
    expiries = re.findall(r"^(\S+ \S+) \[myid:1\] - INFO  \[SessionTracker:ZooKeeperServer@\d+\] - Expiring session", zk, re.M)
    assert len(expiries) == 4
    sc = _text(fleet, c, f"{c}-kafka-1", "kafka/state-change.log.*")
    epochs = [int(e) for e in re.findall(r"Sending become-leader LeaderAndIsr request PartitionState\(controllerEpoch=\d+, "
                                         r"leader=\d, leaderEpoch=(\d+),.* for partition payments-2", sc)]
    assert epochs == list(range(427, 436))
    b3 = _text(fleet, c, f"{c}-kafka-3", "kafka/server.log.*")
    assert re.findall(r"payments-2 starts at Leader Epoch (\d+)", b3) == ["426"]
    assert len(re.findall(r"Registered broker 3 at path /brokers/ids/3", b3)) == 4
    peers = _text(fleet, c, f"{c}-kafka-1", "kafka/server.log.*") + _text(fleet, c, f"{c}-kafka-2", "kafka/server.log.*")
    assert len(re.findall(r"ERROR \[ReplicaFetcher replicaId=[12], leaderId=3, fetcherId=0\] Error for partition payments-2 "
                          r"at offset \d+ \(kafka\.server\.ReplicaFetcherThread\)\norg\.apache\.kafka\.common\.errors\."
                          r"NotLeaderForPartitionException: This server is not the leader for that topic-partition\.\n",
                          peers)) > 300
    queue, expires = [], []
    for f in sorted((host_dir(fleet, c, f"{c}-kafka-3") / "jmx").iterdir()):
        for line in f.read_text().splitlines():
            for r in json.loads(line):
                if r["request"]["mbean"] == "kafka.network:type=RequestChannel,name=RequestQueueSize":
                    queue.append(r["value"])
                if r["request"]["mbean"].endswith("ZooKeeperExpiresPerSec"):
                    expires.append(r["value"])
    assert queue.count(500) == 10 and max(q for q in queue if q != 500) <= 3   # 50 minutes of 5-min samples
    assert sorted(set(expires)) == [0, 1, 2, 3, 4] and expires == sorted(expires)
    kinds = [(k, e) for k, e, _ in _truth(fleet, c)]
    assert kinds == [("broker_flapping", "broker-3"), ("metadata_divergence", "payments-2@broker-3"),
                     ("request_queue_saturation", "broker-3"), ("zk_session_expired", "broker-3")]


def test_the_truth_is_built_around_the_default_thresholds():
    """The ground truth's thresholds (simulate/truth.py: which sample first crosses them) are gold's defaults:
    a default changed in thresholds.yaml fails here instead of as a scenario's late or missed incident."""
    from fleethealth.gold import thresholds
    from fleethealth.simulate import truth

    limits = thresholds.load()
    assert (truth.BLOAT_THRESHOLD_BYTES, truth.SLOW_LOAD_THRESHOLD_MS, truth.NO_CONTROLLER_MIN_MS) == (
        limits["offsets_partition_bloat.max_size_bytes"], limits["slow_group_load.max_duration_ms"],
        limits["no_active_controller.min_duration_s"] * 1000)


def test_a_broker_lost_for_good_leaves_its_rf1_partitions_offline_and_its_host_silent(tmp_path):
    """broker-lost (an availability scenario, not in "all"): broker 3 shuts down at 10:41:17 UTC and is not
    started again. The active controller (broker 1) counts the partitions of replication factor 1 it led
    as offline from its first scrape after the shutdown; broker 3's host writes nothing from the next hour
    on (no appender without a JVM: not even an empty file), a peer's controller log says it left. The
    truth: partitions_offline caused by host_silent broker-3."""
    from fleethealth.simulate import AVAILABILITY_SCENARIOS, resolve

    assert resolve("availability") == list(AVAILABILITY_SCENARIOS) == ["broker-lost"]
    assert "broker-lost" not in SCENARIOS
    simulate(tmp_path, "broker-lost", START, START + timedelta(hours=2), jmx_samples_per_broker_hour=0,
             bytes_per_broker_hour=20_000)
    hosts = tmp_path / "fleet" / "broker-lost"
    death = datetime(2026, 11, 20, 10, 41, 17, 305_000, tzinfo=UTC)

    def offline(host: str) -> list[tuple[datetime, int]]:
        out = []
        for f in sorted((hosts / host / "jmx").glob("jolokia.jsonl.*")):
            for line in f.read_text().splitlines():
                for r in json.loads(line):
                    if r["request"]["mbean"] == "kafka.controller:type=KafkaController,name=OfflinePartitionsCount":
                        out.append((datetime.fromtimestamp(r["timestamp"], UTC), r["value"]))
        return out

    counted = offline("broker-lost-kafka-1")
    assert len(counted) == 24 and {v for t, v in counted if t < death} == {0}
    assert {v for t, v in counted if t > death} == {2}      # events-raw-* of 6 partitions, RF 1: 2 on broker 3
    assert {v for _, v in offline("broker-lost-kafka-2")} == {0}
    assert max(t for t, _ in offline("broker-lost-kafka-3")) < death
    # Asia/Kolkata (+05:30): UTC 10:00-12:00 is local 15:30-17:30; broker 3's last lines are in local hour 16
    assert sorted(p.name for p in (hosts / "broker-lost-kafka-3" / "kafka").iterdir() if p.name.endswith("-17")) == []
    last = max(parse_local(TS.match(line).group(1)) for line in
               (hosts / "broker-lost-kafka-3" / "kafka" / "server.log.2026-11-20-16").read_text().splitlines()
               if TS.match(line))
    assert last.strftime("%H:%M:%S") == "16:11:20"        # "shut down completed", 3 s after 16:11:17 local
    controller = (hosts / "broker-lost-kafka-1" / "kafka" / "controller.log.2026-11-20-16").read_text()
    assert "[Controller id=1] Newly added brokers: , deleted brokers: 3, all live brokers: 1,2" in controller
    assert "Newly added brokers: 3" not in controller
    truth = {(i["kind"], i["entity"]): i for i in json.loads((tmp_path / "expected_incidents.json").read_text())}
    assert sorted(truth) == [("host_silent", "broker-3"), ("partitions_offline", "partitions")]
    assert truth[("host_silent", "broker-3")]["first_seen"] == "2026-11-20T11:00:00.000Z"
    assert truth[("partitions_offline", "partitions")]["first_seen"] == "2026-11-20T10:45:01.000Z"
    assert truth[("partitions_offline", "partitions")]["caused_by"] == ["host_silent broker-3"]
