"""Pull from real servers on loopback (issue 6): OpenSSH sshd for `sftp` (Airflow SSH connection, key
auth, host key verified) and a real ZooKeeper JVM with the Jolokia agent for live JMX reads.
Servers: tests/realservers.py (started here, stopped at the end of the module)."""
from __future__ import annotations

import os
import re
import shutil
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml
from realservers import SlowProxy, Sshd, ZooKeeper, free_port

from fleethealth.lake.catalog import Lakehouse
from fleethealth.bronze import tables as bronze
from fleethealth.fleet.inventory import load_inventory
from fleethealth.lake.hours import floor_hour
from fleethealth.pull import host as host_pull
from fleethealth.pull import hour as pull
from fleethealth.pull.hour import pull_host
from fleethealth.pull.landing import PullError, read_manifests
from fleethealth.silver import tables as silver

UTC = timezone.utc
PAST = datetime(2026, 11, 20, 10, tzinfo=UTC)        # a fixed past hour for the byte-range tests


def at(hour: datetime, minute: int) -> float:
    return (hour + timedelta(minutes=minute)).timestamp()


def put(path: Path, content: bytes, mtime: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    os.utime(path, (mtime, mtime))
    return path


def kafka_lines(hour: datetime, n: int, start: int = 0) -> bytes:
    return b"".join(f"[{hour:%Y-%m-%d %H}:{(start + i) % 60:02d}:01,000] INFO [KafkaServer id=1] line {start + i} "
                    f"(kafka.server.KafkaServer)\n".encode() for i in range(n))


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    root = tmp_path_factory.mktemp("real")
    sshd = Sshd(root / "sshd")
    zk = None
    try:
        zk = ZooKeeper(root / "zk", root / "remote" / "zk-1" / "zookeeper")
        yield {"root": root, "sshd": sshd, "zk": zk}
    finally:
        if zk:
            zk.stop()
        sshd.stop()


@pytest.fixture
def fleet(servers, tmp_path, monkeypatch):
    """An inventory of sftp hosts on the test sshd (zk-1 also with live Jolokia) and one dead host."""
    sshd, zk, remote = servers["sshd"], servers["zk"], servers["root"] / "remote"
    monkeypatch.setenv("AIRFLOW_CONN_FLEET_SSH", sshd.connection())
    monkeypatch.setenv("AIRFLOW_CONN_FLEET_DEAD", sshd.connection(port=free_port()))
    k1 = tmp_path / "remote" / "kafka-1"
    doc = {"clusters": [{"name": "loop", "timezone": "UTC", "transport": "sftp", "ssh_conn_id": "fleet_ssh",
                         "hosts": [
        {"host": "zk-1", "role": "zookeeper", "zk_myid": 1, "jolokia_url": zk.jolokia_url,
         "paths": {"zookeeper": str(remote / "zk-1" / "zookeeper")}},
        {"host": "kafka-1", "role": "kafka", "broker_id": 1, "kafka_version": "3.9.1",
         "paths": {"kafka": str(k1 / "kafka"), "jmx": str(k1 / "jmx")}},
        {"host": "kafka-9", "role": "kafka", "broker_id": 9, "kafka_version": "3.9.1", "ssh_conn_id": "fleet_dead",
         "paths": {"kafka": str(k1 / "kafka")}},
    ]}]}
    (tmp_path / "inventory.yaml").write_text(yaml.safe_dump(doc))
    inv = load_inventory(tmp_path / "inventory.yaml")
    return {"inv": inv, "kafka": k1 / "kafka", "lake": tmp_path / "lake", "zk": zk, "sshd": sshd}


def landed_names(lake: Path, hour: datetime, host: str) -> list[str]:
    folder = Lakehouse.at(lake).landing(hour) / "loop" / host
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() or p.is_symlink())


def test_sftp_lands_exactly_the_hours_files_byte_for_byte(fleet, tmp_path):
    kafka = fleet["kafka"]
    put(kafka / "server.log.2026-11-20-10", kafka_lines(PAST, 3), at(PAST, 61))
    put(kafka / "server.log.2026-11-20-09", kafka_lines(PAST - timedelta(hours=1), 2), at(PAST, 1))
    put(kafka / ".server.log.2026-11-20-10.swp", b"editor\n", at(PAST, 5))
    secret = put(tmp_path / "secret" / "server.log.2026-11-20-10", b"must never be pulled\n", at(PAST, 5))
    (kafka / "linked.log.2026-11-20-10").symlink_to(secret)
    (kafka / "sub.log.2026-11-20-10").mkdir()

    landed = pull_host(fleet["inv"].host("kafka-1"), "UTC", PAST, Lakehouse.at(fleet["lake"]))

    assert landed_names(fleet["lake"], PAST, "kafka-1") == ["_manifest.json", "kafka/server.log.2026-11-20-10"]
    [row] = landed
    dst = Lakehouse.at(fleet["lake"]).landing(PAST) / row.file
    assert dst.read_bytes() == (kafka / "server.log.2026-11-20-10").read_bytes()
    assert (row.remote, row.offset, row.size) == (str(kafka / "server.log.2026-11-20-10"), 0, dst.stat().st_size)
    assert row.mtime == int(at(PAST, 61))
    assert read_manifests(PAST, Lakehouse.at(fleet["lake"])) == landed


def test_a_live_file_over_sftp_lands_each_hours_lines_in_that_hour(fleet):
    """A live file pulled in three hours (appended, then renamed by the size roll): each hour lands its
    own lines, found by their timestamps over SFTP; a line still being written is landed as it is,
    said so, and whole by a re-pull of its hour."""
    inv, lake, kafka = fleet["inv"], fleet["lake"], fleet["kafka"]
    host = inv.host("kafka-1")
    h0, h1, h2 = PAST, PAST + timedelta(hours=1), PAST + timedelta(hours=2)
    live = put(kafka / "controller.log", kafka_lines(h0, 4), at(h0, 30))
    first = pull_host(host, "UTC", h0, Lakehouse.at(lake))
    partial = b"[2026-11-20 11:59:59,000] INFO being writ"
    with live.open("ab") as fh:
        fh.write(kafka_lines(h1, 2, 4) + partial)                                       # a line half-written
    os.utime(live, (at(h1, 30), at(h1, 30)))
    second = pull_host(host, "UTC", h1, Lakehouse.at(lake))
    with live.open("ab") as fh:
        fh.write(b"ten (kafka.controller)\n" + kafka_lines(h2, 1, 6))
    live.rename(kafka / "controller.log.1")                                              # size roll
    os.utime(kafka / "controller.log.1", (at(h2, 10), at(h2, 10)))
    third = pull_host(host, "UTC", h2, Lakehouse.at(lake))

    def landed(hour, rows):
        [row] = rows
        return (Lakehouse.at(lake).landing(hour) / row.read_path).read_bytes()

    assert landed(h0, first) == kafka_lines(h0, 4)
    assert landed(h1, second) == kafka_lines(h1, 2, 4) + partial
    assert second[0].reason == "its last line was still being written (no newline at the end)"
    assert landed(h2, third) == kafka_lines(h2, 1, 6) and Path(third[0].file).name == "controller.log.1"

    again = pull_host(host, "UTC", h1, Lakehouse.at(lake))                           # re-pull: the hour's lines, now whole
    assert landed(h1, again) == kafka_lines(h1, 2, 4) + partial + b"ten (kafka.controller)\n"
    assert again[0].reason == ""
    whole = (kafka / "controller.log.1").read_bytes()
    assert landed(h0, first) + landed(h1, again) + landed(h2, third) == whole   # every byte once, in order
    assert [r.offset for r in (*first, *again, *third)] == [0, len(kafka_lines(h0, 4)),
                                                            len(whole) - len(kafka_lines(h2, 1, 6))]
    assert pull_host(host, "UTC", h2, Lakehouse.at(lake))[0].sha256 == third[0].sha256
    os.utime(kafka / "controller.log.1", (at(h2 + timedelta(hours=1), 5),) * 2)        # touched, no new lines
    assert pull_host(host, "UTC", h2 + timedelta(hours=1), Lakehouse.at(lake)) == []


def test_unreachable_host_fails_alone_with_a_clear_message(fleet):
    inv, lake = fleet["inv"], fleet["lake"]
    put(fleet["kafka"] / "server.log.2026-11-20-10", kafka_lines(PAST, 1), at(PAST, 61))
    t0 = time.monotonic()
    with pytest.raises(PullError, match=r"^kafka-9: cannot connect to .*@127\.0\.0\.1:\d+ \(connection fleet_dead\)"):
        pull_host(inv.host("kafka-9"), "UTC", PAST, Lakehouse.at(lake))
    assert time.monotonic() - t0 < 5                                   # one attempt; Airflow retries with back-off
    assert not (Lakehouse.at(lake).landing(PAST) / "loop" / "kafka-9").exists()
    assert [r.host for r in pull_host(inv.host("kafka-1"), "UTC", PAST, Lakehouse.at(lake))] == ["kafka-1"]


def test_a_slow_sftp_server_is_cut_off_mid_file_at_the_deadline_and_the_next_host_lands(fleet, tmp_path,
                                                                                        monkeypatch):
    """Issue 59: FLEETHEALTH_PULL_TIMEOUT_S=20 did not stop a 302 s read of one file (the deadline was
    checked between files). A server passing 50 kB/s and a 5 MB file of random text (over 50 s to read): the host's pull
    ends at its 5 s, the file is rejected with the reason, the next host lands."""
    import airflow.providers.ssh.hooks.ssh  # noqa: F401  (its first import, seconds, is not the host's)

    proxy = SlowProxy(fleet["sshd"].port, bytes_per_s=50_000)
    monkeypatch.setenv("AIRFLOW_CONN_FLEET_SLOW", fleet["sshd"].connection(port=proxy.port))
    monkeypatch.setenv("FLEETHEALTH_PULL_TIMEOUT_S", "5")
    slow = tmp_path / "remote" / "kafka-2" / "kafka"
    noise = b"".join(f"[{PAST:%Y-%m-%d %H}:{i % 60:02d}:01,000] INFO {os.urandom(64).hex()} (kafka.Kafka)\n".encode()
                     for i in range(30_000))           # 5 MB that SSH's compression cannot shrink below 2.5 MB
    put(slow / "server.log.2026-11-20-10", noise, at(PAST, 61))
    put(fleet["kafka"] / "server.log.2026-11-20-10", kafka_lines(PAST, 3), at(PAST, 61))
    doc = {"clusters": [{"name": "loop", "transport": "sftp", "hosts": [
        {"host": "kafka-2", "role": "kafka", "broker_id": 2, "kafka_version": "3.9.1", "ssh_conn_id": "fleet_slow",
         "paths": {"kafka": str(slow)}},
        {"host": "kafka-1", "role": "kafka", "broker_id": 1, "kafka_version": "3.9.1", "ssh_conn_id": "fleet_ssh",
         "paths": {"kafka": str(fleet["kafka"])}}]}]}
    (tmp_path / "slow.yaml").write_text(yaml.safe_dump(doc))
    lake = Lakehouse.at(fleet["lake"])
    try:
        t0 = time.monotonic()
        with pytest.raises(pull.HostsFailed) as failed:
            pull.pull_hour(load_inventory(tmp_path / "slow.yaml"), PAST, lake)
        seconds = time.monotonic() - t0
    finally:
        proxy.stop()
    remote = slow / "server.log.2026-11-20-10"
    assert failed.value.errors == [f"kafka-2: pull stopped after 5 s (FLEETHEALTH_PULL_TIMEOUT_S) while reading "
                                   f"{remote} (rejected); 0 file(s) landed, the later ones not read"]
    assert seconds < 5 + 2, seconds                              # the host's 5 s, then the next host's pull
    rows = {(r.host, r.status, r.reason) for r in read_manifests(PAST, lake)}
    assert rows == {("kafka-2", "rejected", "read stopped after 5 s, the host's deadline (FLEETHEALTH_PULL_TIMEOUT_S)"),
                    ("kafka-1", "read", "")}
    assert landed_names(fleet["lake"], PAST, "kafka-2") == ["_manifest.json"]       # nothing of the cut file


def test_host_key_mismatch_is_refused(fleet, monkeypatch):
    sshd = fleet["sshd"]
    monkeypatch.setenv("AIRFLOW_CONN_FLEET_SSH", sshd.connection(host_key=sshd.other_host_key))
    put(fleet["kafka"] / "server.log.2026-11-20-10", kafka_lines(PAST, 1), at(PAST, 61))
    with pytest.raises(PullError) as err:
        pull_host(fleet["inv"].host("kafka-1"), "UTC", PAST, Lakehouse.at(fleet["lake"]))
    assert str(err.value).startswith("kafka-1: HOST KEY MISMATCH for 127.0.0.1:")
    fingerprint = lambda line: line.split()[1]  # noqa: E731
    assert "connection 'fleet_ssh' expects ssh-ed25519 SHA256:" in str(err.value)
    assert fingerprint(sshd.host_key) != fingerprint(sshd.other_host_key)
    assert read_manifests(PAST, Lakehouse.at(fleet["lake"])) == []


@pytest.mark.parametrize("extra, message", [
    ({"host_key": None}, r"host key of 127\.0\.0\.1:\d+ is unknown: refused"),
    ({"host_key": None, "no_host_key_check": "true"}, r"turns host-key checking off"),
])
def test_unverified_host_keys_are_refused(fleet, monkeypatch, extra, message):
    monkeypatch.setenv("HOME", str(fleet["lake"].parent))              # no ~/.ssh/known_hosts to fall back on
    monkeypatch.setenv("AIRFLOW_CONN_FLEET_SSH", fleet["sshd"].connection(**extra))
    with pytest.raises(PullError, match=r"^kafka-1: .*" + message):
        pull_host(fleet["inv"].host("kafka-1"), "UTC", PAST, Lakehouse.at(fleet["lake"]))


def test_a_symlinked_folder_is_not_followed_over_sftp(fleet, tmp_path):
    """The server would follow a symlinked source folder: it is checked first and refused."""
    keys = put(tmp_path / "keys" / "id_ed25519", b"-----BEGIN OPENSSH PRIVATE KEY-----\n", at(PAST, 5)).parent
    put(keys / "server.log.2026-11-20-10", kafka_lines(PAST, 1), at(PAST, 61))
    put(fleet["kafka"].parent / "jmx" / "metrics.prom.2026-11-20-10", b"up 1\n", at(PAST, 30))
    shutil.rmtree(fleet["kafka"], ignore_errors=True)
    fleet["kafka"].parent.mkdir(parents=True, exist_ok=True)
    fleet["kafka"].symlink_to(keys)
    landed = pull_host(fleet["inv"].host("kafka-1"), "UTC", PAST, Lakehouse.at(fleet["lake"]))
    assert sorted((r.source, r.status, r.reason) for r in landed) == [
        ("jmx", "read", ""),
        ("kafka", "rejected", f"{fleet['sshd'].user}@127.0.0.1:{fleet['sshd'].port} (connection fleet_ssh): "
                              f"{fleet['kafka']} is a symlink, not followed")]
    assert landed_names(fleet["lake"], PAST, "kafka-1") == ["_manifest.json", "jmx/metrics.prom.2026-11-20-10"]


def test_file_over_the_size_cap_is_rejected_and_the_others_land(fleet, monkeypatch):
    monkeypatch.setattr(host_pull, "MAX_FILE_BYTES", 100)
    put(fleet["kafka"] / "server.log.2026-11-20-10", kafka_lines(PAST, 3), at(PAST, 61))
    put(fleet["kafka"] / "controller.log.2026-11-20-10", kafka_lines(PAST, 1)[:90], at(PAST, 61))
    landed = pull_host(fleet["inv"].host("kafka-1"), "UTC", PAST, Lakehouse.at(fleet["lake"]))
    got = {Path(r.file).name: (r.status, r.reason) for r in landed}
    assert got["controller.log.2026-11-20-10"] == ("read", "")
    status, reason = got["server.log.2026-11-20-10"]
    assert status == "rejected" and re.fullmatch(r"2\d\d bytes, over the cap of 100", reason)


def test_live_jolokia_and_real_zookeeper_log_reach_silver(fleet, spark):
    """zk-1: its real ZooKeeper log over SFTP and a live Jolokia read of its JVM, parsed by silver."""
    inv, lake, zk = fleet["inv"], fleet["lake"], fleet["zk"]
    hour = floor_hour(datetime.fromtimestamp(zk.log_file.stat().st_mtime, UTC))
    landed = pull_host(inv.host("zk-1"), "UTC", hour, Lakehouse.at(lake), now=hour + timedelta(minutes=70))
    assert sorted((r.source, Path(r.file).name) for r in landed) == [
        ("jmx", f"jolokia-live.{hour + timedelta(minutes=70):%Y-%m-%dT%H-%M-%S}Z.jsonl"),
        ("zookeeper", "zookeeper.log")]

    records = bronze.records(spark, landed, Lakehouse.at(lake).landing(hour), hour)
    tables = silver.build(spark, records, inv)
    samples = {r.attribute: r.value for r in tables["silver.jmx_samples"].where("host = 'zk-1'").collect()
               if r.domain == "java.lang"}
    assert set(samples) == {"OpenFileDescriptorCount", "MaxFileDescriptorCount"}
    assert 20 < samples["OpenFileDescriptorCount"] < samples["MaxFileDescriptorCount"]
    events = tables["silver.zk_events"].where("host = 'zk-1'")
    assert events.where(F_contains("message", "binding to port /127.0.0.1:")).count() == 1
    zk_lines = records.where("source = 'zookeeper'").count()
    quarantined = tables["silver.quarantine"].where("source = 'zookeeper'").count()
    assert zk_lines > 20 and events.count() + quarantined == zk_lines


def F_contains(column: str, text: str):
    from pyspark.sql import functions as F

    return F.col(column).contains(text)


def test_live_reads_are_kept_on_repull_and_not_taken_for_old_hours(fleet):
    inv, lake = fleet["inv"], fleet["lake"]
    host = inv.host("zk-1")
    hour = PAST
    for minutes in (61, 62):                                           # two runs of the recent hour
        pull_host(host, "UTC", hour, Lakehouse.at(lake), now=hour + timedelta(minutes=minutes))
    backfill = pull_host(host, "UTC", hour, Lakehouse.at(lake), now=hour + timedelta(days=2))
    assert sorted(Path(r.file).name for r in backfill if r.source == "jmx") == [
        "jolokia-live.2026-11-20T11-01-00Z.jsonl", "jolokia-live.2026-11-20T11-02-00Z.jsonl"]
    assert not [r for r in pull_host(host, "UTC", hour + timedelta(hours=5), Lakehouse.at(lake),
                                     now=hour + timedelta(days=2)) if r.source == "jmx"]
