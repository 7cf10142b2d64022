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
    for c in inv["clusters"]:
        assert list(c) == ["name", "timezone", "offsets_topic_partitions", "transport", "root", "hosts"]
        assert c["timezone"] != "UTC" and c["transport"] == "local" and c["offsets_topic_partitions"] == 50
        assert Path(c["root"]).is_absolute() and Path(c["root"]) == (fleet / "fleet").resolve()
        kafka = [h for h in c["hosts"] if h["role"] == "kafka"]
        zk = [h for h in c["hosts"] if h["role"] == "zookeeper"]
        assert [h["broker_id"] for h in kafka] == [1, 2, 3]
        assert all(set(h) == {"host", "role", "broker_id", "kafka_version"} for h in kafka)
        assert all(h["host"] == f"{c['name']}-kafka-{h['broker_id']}" for h in kafka)
        assert zk == [{"host": f"{c['name']}-zk-1", "role": "zookeeper", "zk_myid": 1}]
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
    assert len(files) == 2 * 3 * 4 * 3
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
    assert nonempty >= 2 * 3 * 3 * 2


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
    for f in (fleet / "fleet").glob("*/*-kafka-*/jmx/jolokia.jsonl.*"):
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
            assert dead == ("/healthy/" in str(f))  # 2.8.2 has it, 1.1.0 has not
        assert errors == 1
        assert len(utc_hours) == 1
        # the samples' UTC hour is the file's local hour in the cluster's zone
        tz = "Europe/Berlin" if "/healthy/" in str(f) else "America/New_York"
        from zoneinfo import ZoneInfo
        utc = datetime.fromtimestamp(utc_hours.pop() * 3600, UTC)
        assert utc.astimezone(ZoneInfo(tz)).replace(tzinfo=None) == local_hour


def _jmx_sizes(fleet, broker: int, partition: int) -> list[tuple[int, int]]:
    out = []
    for f in sorted((host_dir(fleet, PM3, f"{PM3}-kafka-{broker}") / "jmx").iterdir()):
        for line in f.read_text().splitlines():
            for r in json.loads(line):
                if r["request"]["mbean"].startswith("kafka.log:type=Log,name=Size"):
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
    assert all(t["cluster"] == PM3 for t in truth)  # healthy expects nothing
    by_kind = {t["kind"]: t for t in truth}
    assert set(by_kind) == {"log_cleaner_dead", "offsets_partition_bloat", "slow_group_load"}
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
    simulate(tmp_path / "a", "all", START, end, seed=11)
    simulate(tmp_path / "b", "all", START, end, seed=11)
    simulate(tmp_path / "c", "all", START, end, seed=12)
    assert digest(tmp_path / "a") == digest(tmp_path / "b")
    assert digest(tmp_path / "a") != digest(tmp_path / "c")
    # re-simulating into the same folder replaces the files (no appended duplicates)
    simulate(tmp_path / "a", "all", START, end, seed=11)
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
