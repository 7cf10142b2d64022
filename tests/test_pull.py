"""Tests of fleethealth.pull.hour with the `local` transport (landing: files exactly as pulled, per
cluster/host/source, with a manifest of size + sha256; re-pulling is harmless)."""
from __future__ import annotations

import hashlib
import os
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from fleethealth.lake.catalog import Lakehouse
from fleethealth.fleet import sources
from fleethealth.fleet.inventory import load_inventory
from fleethealth.lake import hours
from fleethealth.pull import hour as pull
from fleethealth.pull import landing
from fleethealth.pull.hour import pull_host, pull_hour
from fleethealth.pull.landing import MANIFEST, PullError, read_manifests

UTC = timezone.utc
HOUR = datetime(2026, 11, 20, 10, tzinfo=UTC)          # 11:00-12:00 in Europe/Berlin (CET, +01:00)
INSIDE = datetime(2026, 11, 20, 10, 20, tzinfo=UTC).timestamp()
OUTSIDE = datetime(2026, 11, 20, 8, 5, tzinfo=UTC).timestamp()

INVENTORY = """\
clusters:
  - name: berlin
    timezone: Europe/Berlin
    root: fleet
    hosts:
      - {host: b-kafka-1, role: kafka, broker_id: 1, kafka_version: 3.6.1}
      - {host: b-zk-1, role: zookeeper, zk_myid: 1}
      - {host: b-kafka-2, role: kafka, broker_id: 2, kafka_version: 3.6.1,
         transport: sftp, ssh_conn_id: fleet_ssh}
"""

# what must land for HOUR: (host, source, file name)
EXPECTED = [
    ("b-kafka-1", "jmx", "jolokia.jsonl.2026-11-20-11"),
    ("b-kafka-1", "kafka", "server.log.2026-11-20-11"),
    ("b-zk-1", "zookeeper", "zookeeper.log.1"),
]


def put(path: Path, content: bytes, mtime: float = INSIDE) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    os.utime(path, (mtime, mtime))
    return path


@pytest.fixture
def fleet(tmp_path) -> Path:
    """A tiny Europe/Berlin fleet under tmp_path/fleet with its inventory at tmp_path/inventory.yaml."""
    root = tmp_path / "fleet" / "berlin"
    k1, zk = root / "b-kafka-1", root / "b-zk-1"
    put(k1 / "kafka" / "server.log.2026-11-20-11", b"[2026-11-20 11:00:01,000] INFO hello (kafka.Kafka)\n")
    put(k1 / "kafka" / "server.log.2026-11-20-12", b"[2026-11-20 12:00:01,000] INFO next hour (kafka.Kafka)\n",
        mtime=INSIDE + 3600)                                                        # rolled files: written in their hour
    put(k1 / "kafka" / "server.log.2026-11-20-10", b"[2026-11-20 10:00:01,000] INFO hour before (kafka.Kafka)\n",
        mtime=INSIDE - 3600)
    put(k1 / "kafka" / ".server.log.2026-11-20-11", b"editor swap file\n")               # dotfile
    put(k1 / "kafka" / "archive" / "server.log.2026-11-20-11", b"in a sub-folder\n")    # not followed
    put(k1 / "jmx" / "jolokia.jsonl.2026-11-20-11", b'{"timestamp": 1795168800, "value": {}}\n')
    outside = put(tmp_path / "secrets" / "server.log.2026-11-20-11", b"must never be pulled\n")
    (k1 / "kafka" / "linked.log.2026-11-20-11").symlink_to(outside)
    put(zk / "zookeeper" / "zookeeper.log.1", b"2026-11-20 11:20:00,000 [myid:1] - INFO  [main:Q@1] - in\r\n")
    put(zk / "zookeeper" / "zookeeper.log.2", b"2026-11-20 09:05:00,000 [myid:1] - INFO  [main:Q@1] - out\r\n",
        mtime=OUTSIDE)
    (tmp_path / "inventory.yaml").write_text(INVENTORY)
    return tmp_path


def local_hosts(fleet: Path):
    inv = load_inventory(fleet / "inventory.yaml")
    return inv, [h for h in inv.hosts if h.transport == "local"]


def pull_locals(fleet: Path, lake: Path) -> list[landing.Landed]:
    inv, hosts = local_hosts(fleet)
    out = []
    for host in hosts:
        out.extend(pull_host(host, inv.cluster(host.cluster).timezone, HOUR, Lakehouse.at(lake)))
    return out


def landed_files(lake: Path) -> list[str]:
    base = lake / "landing" / "2026-11-20T10"
    return sorted(str(p.relative_to(base)) for p in base.rglob("*") if p.is_file() or p.is_symlink())


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_exactly_the_hours_files_land(fleet):
    lake = fleet / "lake"
    pull_locals(fleet, lake)
    assert landed_files(lake) == sorted(
        [f"berlin/{h}/{s}/{n}" for h, s, n in EXPECTED]
        + ["berlin/b-kafka-1/_manifest.json", "berlin/b-zk-1/_manifest.json"])


def test_landed_bytes_are_identical(fleet):
    lake = fleet / "lake"
    pull_locals(fleet, lake)
    base = lake / "landing" / "2026-11-20T10" / "berlin"
    for host, source, name in EXPECTED:
        src = fleet / "fleet" / "berlin" / host / source / name
        dst = base / host / source / name
        assert dst.read_bytes() == src.read_bytes()
        assert not dst.is_symlink()


def test_manifest_has_size_and_real_sha256(fleet):
    lake = fleet / "lake"
    landed = pull_locals(fleet, lake)
    rows = {(r.host, r.source, Path(r.file).name): r for r in landed}
    assert sorted(rows) == EXPECTED
    for (host, source, name), row in rows.items():
        src = fleet / "fleet" / "berlin" / host / source / name
        assert row.cluster == "berlin"
        assert row.file == f"berlin/{host}/{source}/{name}"
        assert row.size == src.stat().st_size
        assert row.sha256 == sha256(src)
        assert row.mtime == pytest.approx(src.stat().st_mtime)
        assert row.pulled_at > 0
    key = lambda r: (r.host, r.source, r.file)  # noqa: E731
    assert sorted(read_manifests(HOUR, Lakehouse.at(lake)), key=key) == sorted(landed, key=key)


def test_pull_same_hour_twice_is_harmless(fleet):
    lake = fleet / "lake"
    first = pull_locals(fleet, lake)
    files_first = landed_files(lake)
    second = pull_locals(fleet, lake)

    assert landed_files(lake) == files_first
    strip = lambda rows: sorted((r.host, r.source, r.file, r.size, r.sha256) for r in rows)  # noqa: E731
    assert strip(second) == strip(first)
    assert strip(read_manifests(HOUR, Lakehouse.at(lake))) == strip(first)          # no duplicate rows
    assert len(read_manifests(HOUR, Lakehouse.at(lake))) == len(EXPECTED)
    assert not list((lake / "landing").rglob("_partial/*/*"))          # no host's temporary folder left


def test_repull_replaces_host_folder(fleet):
    """A file gone from the source since the last pull is gone from landing too (the folder is replaced)."""
    lake = fleet / "lake"
    pull_locals(fleet, lake)
    (fleet / "fleet" / "berlin" / "b-kafka-1" / "jmx" / "jolokia.jsonl.2026-11-20-11").unlink()
    pull_locals(fleet, lake)
    assert "berlin/b-kafka-1/jmx/jolokia.jsonl.2026-11-20-11" not in landed_files(lake)
    assert sorted((r.host, r.source) for r in read_manifests(HOUR, Lakehouse.at(lake))) == [
        ("b-kafka-1", "kafka"), ("b-zk-1", "zookeeper")]


def test_other_hours_land_in_their_own_folder(fleet):
    lake = fleet / "lake"
    inv, hosts = local_hosts(fleet)
    k1 = inv.host("b-kafka-1")
    next_hour = datetime(2026, 11, 20, 11, tzinfo=UTC)
    landed = pull_host(k1, "Europe/Berlin", next_hour, Lakehouse.at(lake))
    assert [r.file for r in landed] == ["berlin/b-kafka-1/kafka/server.log.2026-11-20-12"]
    assert (lake / "landing" / "2026-11-20T11" / "berlin" / "b-kafka-1" / MANIFEST).is_file()
    assert read_manifests(HOUR, Lakehouse.at(lake)) == []


def test_file_over_cap_is_rejected_and_the_others_land(fleet):
    lake = fleet / "lake"
    # server.log (51 B) over, jolokia (39 B) under the host's cap; the cluster's is overridden
    (fleet / "inventory.yaml").write_text(INVENTORY.replace("    root: fleet\n", "    root: fleet\n    max_file_bytes: 10\n")
                                          .replace("kafka_version: 3.6.1}", "kafka_version: 3.6.1, max_file_bytes: 45}", 1))
    inv = load_inventory(fleet / "inventory.yaml")
    assert [h.max_file_bytes for h in inv.hosts] == [45, 10, 10]
    landed = pull_host(inv.host("b-kafka-1"), "Europe/Berlin", HOUR, Lakehouse.at(lake))
    assert {(x.file.rsplit("/", 1)[1], x.status, x.reason) for x in landed} == {
        ("server.log.2026-11-20-11", "rejected", "51 bytes, over the cap of 45"),
        ("jolokia.jsonl.2026-11-20-11", "read", "")}
    assert read_manifests(HOUR, Lakehouse.at(lake)) == landed
    assert not (lake / "landing" / "2026-11-20T10" / "berlin" / "b-kafka-1" / "kafka").exists()


def test_sftp_host_without_its_connection_fails_naming_host_and_connection(fleet):
    lake = fleet / "lake"
    inv = load_inventory(fleet / "inventory.yaml")
    with pytest.raises(PullError, match=r"^b-kafka-2: Airflow connection 'fleet_ssh' not found"):
        pull_host(inv.host("b-kafka-2"), "Europe/Berlin", HOUR, Lakehouse.at(lake))
    assert not (lake / "landing" / "2026-11-20T10" / "berlin" / "b-kafka-2").exists()
    assert not list((lake / "landing" / "2026-11-20T10").rglob("b-kafka-2"))


def test_pull_hour_pulls_every_host_and_names_the_failed_ones(fleet):
    lake = fleet / "lake"
    inv = load_inventory(fleet / "inventory.yaml")
    with pytest.raises(pull.HostsFailed) as err:
        pull_hour(inv, HOUR, Lakehouse.at(lake))
    assert [e.split(":")[0] for e in err.value.errors] == ["b-kafka-2"]
    assert sorted((r.host, r.source) for r in err.value.landed) == [
        ("b-kafka-1", "jmx"), ("b-kafka-1", "kafka"), ("b-zk-1", "zookeeper")]
    assert sorted((r.host, r.source) for r in read_manifests(HOUR, Lakehouse.at(lake))) == [
        ("b-kafka-1", "jmx"), ("b-kafka-1", "kafka"), ("b-zk-1", "zookeeper")]


def test_pull_hour_all_local_hosts(fleet, lakehouse):
    """pull_hour over an all-local inventory; the lakehouse is $FLEETHEALTH_LAKEHOUSE's."""
    (fleet / "inventory.yaml").write_text(INVENTORY.split("      - {host: b-kafka-2")[0])
    inv = load_inventory(fleet / "inventory.yaml")
    landed = pull_hour(inv, HOUR, Lakehouse.from_settings())
    assert sorted((r.host, r.source, Path(r.file).name) for r in landed) == EXPECTED
    assert len(read_manifests(HOUR, Lakehouse.at(lakehouse))) == 3
    assert (lakehouse / "landing" / "2026-11-20T10" / "berlin" / "b-zk-1" / "zookeeper" / "zookeeper.log.1").is_file()


def test_read_manifests_of_unpulled_hour_is_empty(tmp_path):
    assert read_manifests(HOUR, Lakehouse.at(tmp_path / "lake")) == []


@pytest.mark.parametrize("name", ["", ".", "..", "../etc/passwd", "/etc/passwd", "a/b", "a\\b", "x\0y", ".swp"])
def test_remote_names_that_are_not_plain_file_names_are_never_landed(name):
    assert not landing.safe_name(name)


def test_a_landing_target_outside_the_host_folder_is_refused(tmp_path):
    (tmp_path / "host.partial").mkdir()
    (tmp_path / "host.partial" / "kafka").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(PullError, match="would land outside"):
        landing.inside(tmp_path / "host.partial", tmp_path / "host.partial" / "kafka" / "server.log")
    assert landing.inside(tmp_path / "host.partial", tmp_path / "host.partial" / "zookeeper" / "zookeeper.log")


@pytest.mark.parametrize("linked", ["kafka", "b-kafka-1"])
def test_a_symlinked_folder_is_never_followed_and_is_reported(fleet, linked):
    """…/b-kafka-1/kafka (a source folder) or …/b-kafka-1 (between root and it) pointing at a folder
    holding a key: nothing of it lands, the folder is a rejected row, the host's other sources land."""
    berlin = fleet / "fleet" / "berlin"
    secrets = put(fleet / "keys" / "kafka" / "id_ed25519", b"-----BEGIN OPENSSH PRIVATE KEY-----\n").parent
    if linked == "kafka":
        (berlin / "b-kafka-1" / "kafka").rename(fleet / "old-kafka")
        (berlin / "b-kafka-1" / "kafka").symlink_to(secrets)
    else:
        put(fleet / "keys" / "jmx" / "jolokia.jsonl.2026-11-20-11", b'{"timestamp": 1795168800, "value": {}}\n')
        (berlin / "b-kafka-1").rename(fleet / "old-host")
        (berlin / "b-kafka-1").symlink_to(fleet / "keys")
    lake = fleet / "lake"
    landed = pull_locals(fleet, lake)
    rejected = [(r.host, r.source, r.file, r.status, r.reason) for r in landed if r.status != "read"]
    folder = berlin / "b-kafka-1" if linked != "kafka" else berlin / "b-kafka-1" / "kafka"
    expected = [("b-kafka-1", s, f"berlin/b-kafka-1/{s}", "rejected", f"{folder}: a symlink, not followed")
                for s in (["kafka"] if linked == "kafka" else list(sources.NAMES))]
    assert rejected == expected
    assert sorted((r.host, r.source, Path(r.file).name) for r in landed if r.status == "read") == (
        [("b-kafka-1", "jmx", "jolokia.jsonl.2026-11-20-11")] if linked == "kafka" else []) + [
        ("b-zk-1", "zookeeper", "zookeeper.log.1")]
    assert not [p for p in (lake / "landing").rglob("*") if p.name == "id_ed25519" or b"PRIVATE KEY" in
                (p.read_bytes() if p.is_file() else b"")]


def test_hosts_whose_names_end_like_a_temporary_folder_do_not_collide(fleet):
    """h2 and h2.partial are both valid host names: pulling one never touches the other's landing."""
    text = INVENTORY.split("      - {host: b-kafka-2")[0] + "      - {host: b-kafka-1.partial, role: zookeeper, zk_myid: 2}\n"
    (fleet / "inventory.yaml").write_text(text)
    put(fleet / "fleet" / "berlin" / "b-kafka-1.partial" / "zookeeper" / "zookeeper.log",
        b"2026-11-20 11:30:00,000 [myid:2] - INFO  [main:Q@1] - in\n")
    lake = fleet / "lake"
    inv = load_inventory(fleet / "inventory.yaml")
    for name in ("b-kafka-1.partial", "b-kafka-1", "b-kafka-1.partial"):
        pull_host(inv.host(name), "Europe/Berlin", HOUR, Lakehouse.at(lake))
    assert sorted((r.host, Path(r.file).name) for r in read_manifests(HOUR, Lakehouse.at(lake))) == [
        ("b-kafka-1", "jolokia.jsonl.2026-11-20-11"), ("b-kafka-1", "server.log.2026-11-20-11"),
        ("b-kafka-1.partial", "zookeeper.log")]


def test_one_host_failing_in_an_unexpected_way_does_not_stop_the_next(fleet):
    """A host's pull that raises something no one foresaw (here its state file is a folder) is one
    error line; every host after it in the inventory is still pulled."""
    (fleet / "inventory.yaml").write_text(INVENTORY.split("      - {host: b-kafka-2")[0])
    lake = fleet / "lake"
    (lake / "landing" / "_state" / "berlin" / "b-kafka-1.json").mkdir(parents=True)
    with pytest.raises(pull.HostsFailed) as err:
        pull_hour(load_inventory(fleet / "inventory.yaml"), HOUR, Lakehouse.at(lake))
    assert len(err.value.errors) == 1 and err.value.errors[0].startswith("b-kafka-1: pull failed: IsADirectoryError")
    assert sorted((r.host, r.source) for r in read_manifests(HOUR, Lakehouse.at(lake))) == [("b-zk-1", "zookeeper")]


@pytest.mark.parametrize("url, message", [
    ("http://user:secret@127.0.0.1:8778/jolokia/", "must not carry credentials"),
    ("file:///etc/passwd", "not an http(s) Jolokia URL"),
    ("http://127.0.0.1:9/jolokia/", "cannot reach Jolokia"),
])
def test_jolokia_urls_that_cannot_be_read_give_one_clear_error(url, message):
    from fleethealth.pull.transports import jolokia
    from fleethealth.pull.transports.base import TransportError

    with pytest.raises(TransportError, match=re.escape(message)):
        jolokia.read(url, ("zk_broker",), timeout=2)


def test_the_live_read_asks_for_every_mbean_silver_uses():
    from fleethealth.fleet import mbeans

    reads = mbeans.jolokia_requests(("zk_broker",))
    assert {(r["mbean"], r["attribute"]) for r in reads} == {
        ("kafka.log:type=Log,name=Size,topic=__consumer_offsets,*", "Value"),
        ("kafka.log:type=LogCleaner,name=DeadThreadCount,*", "Value"),
        ("kafka.log:type=LogCleanerManager,name=time-since-last-run-ms,*", "Value"),
        ("java.lang:type=OperatingSystem,*", "OpenFileDescriptorCount"),
        ("java.lang:type=OperatingSystem,*", "MaxFileDescriptorCount"),
        ("kafka.server:type=SessionExpireListener,name=ZooKeeperExpiresPerSec,*", "Count"),
        ("kafka.server:type=ReplicaManager,name=UnderMinIsrPartitionCount,*", "Value"),
        ("kafka.controller:type=KafkaController,name=OfflinePartitionsCount,*", "Value"),
        ("kafka.controller:type=KafkaController,name=ActiveControllerCount,*", "Value"),
        ("kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions,*", "Value"),
        ("kafka.network:type=RequestChannel,name=RequestQueueSize,*", "Value"),
        ("kafka.server:type=KafkaRequestHandlerPool,name=RequestHandlerAvgIdlePercent,*", "OneMinuteRate"),
        ("kafka.network:type=SocketServer,name=NetworkProcessorAvgIdlePercent,*", "Value")}
    assert [r["mbean"] for r in mbeans.jolokia_requests(("zookeeper",))] == ["java.lang:type=OperatingSystem,*"] * 2


def test_a_failed_live_read_still_lands_the_files_and_fails_the_pull(fleet):
    text = INVENTORY.replace("{host: b-kafka-1, role: kafka, broker_id: 1, kafka_version: 3.6.1}",
                             "{host: b-kafka-1, role: kafka, broker_id: 1, kafka_version: 3.6.1, "
                             "jolokia_url: 'http://127.0.0.1:9/jolokia/'}")
    (fleet / "inventory.yaml").write_text(text)
    inv = load_inventory(fleet / "inventory.yaml")
    lake = fleet / "lake"
    with pytest.raises(PullError, match=r"^b-kafka-1: live Jolokia read failed \(127\.0\.0\.1:9: cannot reach"):
        pull_host(inv.host("b-kafka-1"), "Europe/Berlin", HOUR, Lakehouse.at(lake), now=HOUR + hours.HOUR)
    assert sorted((r.source, Path(r.file).name, r.status, r.reason) for r in read_manifests(HOUR, Lakehouse.at(lake))) == [
        ("jmx", "jolokia-live.2026-11-20T11-00-00Z.jsonl", "rejected", "127.0.0.1:9: cannot reach Jolokia: Connection refused"),
        ("jmx", "jolokia.jsonl.2026-11-20-11", "read", ""), ("kafka", "server.log.2026-11-20-11", "read", "")]


def test_an_empty_live_file_lands_nothing_and_hides_nothing(fleet):
    lake = fleet / "lake"
    inv, hosts = local_hosts(fleet)
    put(fleet / "fleet" / "berlin" / "b-kafka-1" / "kafka" / "controller.log", b"", INSIDE)
    first = pull_host(inv.host("b-kafka-1"), "Europe/Berlin", HOUR, Lakehouse.at(lake))
    assert "controller.log" not in [Path(r.file).name for r in first]   # no line: in no hour
    later = datetime(2026, 11, 20, 11, tzinfo=UTC)
    landed = pull_host(inv.host("b-kafka-1"), "Europe/Berlin", later, Lakehouse.at(lake))
    assert [(Path(r.file).name, r.offset) for r in landed] == [("server.log.2026-11-20-12", 0)]


# -- files are read for the hours they may hold; their lines land in the hour their timestamps say ----------

def _hour_bytes(fleet: Path, hour: datetime) -> dict[str, bytes]:
    inv, _ = local_hosts(fleet)
    landed = pull_host(inv.host("b-kafka-1"), "Europe/Berlin", hour, Lakehouse.at(fleet / "lake"))
    return {Path(r.file).name: (Lakehouse.at(fleet / "lake").landing(hour) / r.read_path).read_bytes()
            for r in landed if r.status == "read"}


def test_a_line_written_just_after_the_hourly_roll_lands_in_its_own_hour(fleet):
    k = fleet / "fleet" / "berlin" / "b-kafka-1" / "kafka"
    straggler = b"[2026-11-20 11:59:59,990] INFO stamped before the roll (kafka.Kafka)\n"
    put(k / "server.log.2026-11-20-12", straggler + b"[2026-11-20 12:00:01,000] INFO next hour (kafka.Kafka)\n",
        mtime=INSIDE + 3600)
    this_hour = _hour_bytes(fleet, HOUR)
    assert this_hour["server.log.2026-11-20-12"] == straggler          # local 11:00-12:00 is HOUR
    assert this_hour["server.log.2026-11-20-11"] == b"[2026-11-20 11:00:01,000] INFO hello (kafka.Kafka)\n"
    next_hour = _hour_bytes(fleet, HOUR + hours.HOUR)
    assert next_hour == {"server.log.2026-11-20-12": b"[2026-11-20 12:00:01,000] INFO next hour (kafka.Kafka)\n"}


def test_an_unreadable_rolled_file_is_reported_in_its_own_hour_only(fleet):
    k = fleet / "fleet" / "berlin" / "b-kafka-1" / "kafka"
    put(k / "server.log.2026-11-20-12.gz", b"not gzip at all\n", mtime=INSIDE + 3600)   # local 12 = 11 UTC
    inv, _ = local_hosts(fleet)
    rejected = {h: [(Path(r.file).name, r.reason) for r in pull_host(inv.host("b-kafka-1"), "Europe/Berlin", h,
                                                                       Lakehouse.at(fleet / "lake")) if r.status == "rejected"]
                for h in (HOUR, HOUR + hours.HOUR)}
    assert rejected[HOUR] == []
    [(name, reason)] = rejected[HOUR + hours.HOUR]
    assert name == "server.log.2026-11-20-12.gz" and reason.startswith("damaged gzip (not readable as gzip")


def _jolokia(at: datetime, value: int) -> bytes:
    return (b'[{"request": {"mbean": "java.lang:type=Threading", "attribute": "ThreadCount", "type": "read"}, '
            b'"value": %d, "timestamp": %d, "status": 200}]\n' % (value, int(at.timestamp())))


def test_a_json_lines_export_without_a_time_in_its_name_lands_by_its_jolokia_timestamps(fleet):
    jmx = fleet / "fleet" / "berlin" / "b-kafka-1" / "jmx"
    before, inside, after = (_jolokia(HOUR + hours.HOUR * h + timedelta(minutes=59), h) for h in (-1, 0, 1))
    copied_at = datetime(2026, 11, 25, tzinfo=UTC).timestamp()     # an archive: the mtime is the copy time
    put(jmx / "jolokia.jsonl", before + inside + b"not json: stays with the line before\n" + after, copied_at)
    pretty = b'{\n  "timestamp": %d,\n  "status": 200\n}\n' % int(HOUR.timestamp())
    put(jmx / "jolokia-dump.json", pretty, INSIDE)                 # one document, no JSON lines: by its mtime
    got = _hour_bytes(fleet, HOUR)
    assert got["jolokia.jsonl"] == inside + b"not json: stays with the line before\n"
    assert got["jolokia-dump.json"] == pretty
    assert _hour_bytes(fleet, HOUR + hours.HOUR)["jolokia.jsonl"] == after


def test_a_live_json_lines_export_lands_the_same_lines_hour_by_hour_as_copied_later(fleet):
    """The live DAG (each hour read while the export grows) and a later backfill of the whole file."""
    jmx = fleet / "fleet" / "berlin" / "b-kafka-1" / "jmx"
    path, live = put(jmx / "jolokia.jsonl", b"", INSIDE), {}
    for h in range(3):
        hour = HOUR + hours.HOUR * h
        with path.open("ab") as fh:
            fh.write(b"".join(_jolokia(hour + timedelta(minutes=m), m) for m in (0, 30, 59)))
        os.utime(path, (hour.timestamp() + 3599,) * 2)
        live[hour] = _hour_bytes(fleet, hour)["jolokia.jsonl"]       # pulled right after the hour
    os.utime(path, (datetime(2026, 11, 25, tzinfo=UTC).timestamp(),) * 2)
    for hour, data in live.items():
        assert _hour_bytes(fleet, hour)["jolokia.jsonl"] == data and data.count(b"\n") == 3


# -- a Jolokia agent that is not to be trusted --------------------------------------------------------------

class _Hostile:
    """A real HTTP server on loopback answering every POST with one of the `kinds` below."""

    def __init__(self, kind: str):
        import http.server
        import threading

        kind_ = kind

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if kind_ == "redirect":
                    self.send_response(302)
                    self.send_header("Location", "/secret/")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = {"trickle": b"[" + b" " * 100 + b"]", "slow": b"[" + b" " * 100 + b"]",
                        "nested": b"[" * 200_000 + b"]" * 200_000,
                        "metadata": b'{"AccessKeyId": "AKIASECRET", "SecretAccessKey": "hunter2"}',
                        "html": b"<html>token=hunter2</html>"}[kind_]
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if kind_ in ("trickle", "slow"):   # a byte every 0.2 s (2 s): each read is quick, the whole is not
                    try:
                        for i in range(len(body)):
                            self.wfile.write(body[i:i + 1])
                            self.wfile.flush()
                            if closed.wait(0.2 if kind_ == "trickle" else 2):
                                return
                    except (BrokenPipeError, ConnectionResetError):
                        return   # the client gave up, as it should: not an error printed into a later test
                else:
                    self.wfile.write(body)

        closed = self.closed = threading.Event()
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = False   # server_close joins the handlers: none writes after its test
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/jolokia/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.closed.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hostile(request):
    server = _Hostile(request.param)
    yield server
    server.close()


@pytest.mark.parametrize("hostile, message", [
    ("trickle", "no complete answer from Jolokia within 1.5 s"),
    ("redirect", "Jolokia answered HTTP 302 (a redirect: not followed)"),
    ("nested", "Jolokia's answer is nested too deeply to be a bulk read"),
    ("metadata", "Jolokia answered a JSON dict to a bulk read (expected a list of responses)"),
    ("html", "Jolokia answered with something that is not JSON"),
], indirect=["hostile"])
def test_a_hostile_jolokia_agent_gives_one_clear_error_without_its_body(hostile, message):
    import time

    from fleethealth.pull.transports import jolokia
    from fleethealth.pull.transports.base import TransportError

    t0 = time.monotonic()
    with pytest.raises(TransportError) as err:
        jolokia.read(hostile.url, ("zk_broker",), timeout=1, deadline=1.5)
    assert time.monotonic() - t0 < 5
    assert str(err.value) == f"{hostile.url.split('/')[2]}: {message}"
    assert "hunter2" not in str(err.value) and "AKIA" not in str(err.value)


@pytest.mark.parametrize("hostile, reason", [
    ("slow", "no complete answer from Jolokia within 3 s"),
    ("nested", "Jolokia's answer is nested too deeply to be a bulk read"),
    ("redirect", "Jolokia answered HTTP 302 (a redirect: not followed)"),
], indirect=["hostile"])
def test_a_bad_live_read_is_a_rejected_row_and_the_next_host_is_pulled(fleet, hostile, reason, monkeypatch):
    """A byte every 2 s is cut at the deadline; a deeply nested body and a 302 are refused; each is
    one rejected row of the host, and the host after it in the inventory is still pulled."""
    from fleethealth.pull.transports import jolokia

    monkeypatch.setattr(jolokia, "DEADLINE_S", 3)
    text = INVENTORY.split("      - {host: b-kafka-2")[0].replace(
        "kafka_version: 3.6.1}", f"kafka_version: 3.6.1, jolokia_url: '{hostile.url}'}}")
    (fleet / "inventory.yaml").write_text(text)
    lake = fleet / "lake"
    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)   # live reads: the current hour only
    with pytest.raises(pull.HostsFailed) as err:
        pull_hour(load_inventory(fleet / "inventory.yaml"), now, Lakehouse.at(lake))
    assert [e.split(": ")[0] for e in err.value.errors] == ["b-kafka-1"]
    assert reason in err.value.errors[0]
    assert [(r.host, r.source, r.status, r.reason) for r in read_manifests(now, Lakehouse.at(lake))] == [
        ("b-kafka-1", "jmx", "rejected", f"{hostile.url.split('/')[2]}: {reason}")]
    assert (Lakehouse.at(lake).landing(now) / "berlin" / "b-zk-1" / MANIFEST).is_file()   # the next host: pulled


def test_a_malformed_connection_says_so_without_repeating_it(fleet, monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_FLEET_SSH", '{"conn_type": "ssh", "host": "k2", "password": "pw1234",')
    inv = load_inventory(fleet / "inventory.yaml")
    with pytest.raises(PullError) as err:
        pull_host(inv.host("b-kafka-2"), "Europe/Berlin", HOUR, Lakehouse.at(fleet / "lake"))
    assert str(err.value).startswith("b-kafka-2: connection 'fleet_ssh' (AIRFLOW_CONN_FLEET_SSH) is neither a URI "
                                     "nor valid JSON: Expecting property name enclosed in double quotes at character")
    assert "pw1234" not in str(err.value)


class _Agent:
    """A real HTTP server on loopback answering a Jolokia bulk read with no responses, keeping what was asked."""

    def __init__(self):
        import http.server
        import json
        import threading

        asked = self.asked = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                asked.append(json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0)))))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"[]")

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/jolokia/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def test_the_live_read_of_a_kraft_controller_asks_for_its_beans_only(tmp_path):
    """A dedicated controller: its JVM, the controller's and the Raft client's beans; no broker bean."""
    agent = _Agent()
    try:
        (tmp_path / "inventory.yaml").write_text(
            "clusters:\n  - name: kr\n    transport: http\n    hosts:\n      - {host: kr-ctl-1, role: controller, "
            f"node_id: 3000, kafka_version: 3.9.0, jolokia_url: '{agent.url}'}}\n")
        host = load_inventory(tmp_path / "inventory.yaml").host("kr-ctl-1")
        landed = pull_host(host, "UTC", HOUR, Lakehouse.at(tmp_path / "lake"), now=HOUR + timedelta(minutes=70))
    finally:
        agent.close()
    assert [(r.source, Path(r.file).name, r.status) for r in landed] == [
        ("jmx", "jolokia-live.2026-11-20T11-10-00Z.jsonl", "read")]
    [asked] = agent.asked
    assert {r["type"] for r in asked} == {"read"}
    assert [(r["mbean"], r["attribute"]) for r in asked] == [
        ("java.lang:type=OperatingSystem,*", "OpenFileDescriptorCount"),
        ("java.lang:type=OperatingSystem,*", "MaxFileDescriptorCount"),
        ("kafka.controller:type=KafkaController,name=OfflinePartitionsCount,*", "Value"),
        ("kafka.controller:type=KafkaController,name=ActiveControllerCount,*", "Value"),
        ("kafka.controller:type=KafkaController,name=NewActiveControllersCount,*", "Value"),
        ("kafka.controller:type=KafkaController,name=FencedBrokerCount,*", "Value"),
        ("kafka.controller:type=KafkaController,name=ActiveBrokerCount,*", "Value"),
        ("kafka.controller:type=KafkaController,name=TimedOutBrokerHeartbeatCount,*", "Value"),
        ("kafka.controller:type=ControllerEventManager,name=EventQueueTimeMs,*", "99thPercentile"),
        ("kafka.controller:type=KafkaController,name=LastAppliedRecordOffset,*", "Value"),
        ("kafka.controller:type=KafkaController,name=LastCommittedRecordOffset,*", "Value"),
        ("kafka.controller:type=KafkaController,name=LastAppliedRecordLagMs,*", "Value"),
        ("kafka.controller:type=KafkaController,name=MetadataErrorCount,*", "Value"),
        ("kafka.server:type=raft-metrics,*", "current-leader"),
        ("kafka.server:type=raft-metrics,*", "current-epoch"),
        ("kafka.server:type=raft-metrics,*", "current-state"),
        ("kafka.server:type=raft-metrics,*", "high-watermark"),
        ("kafka.server:type=raft-metrics,*", "election-latency-avg"),
        ("kafka.server:type=raft-metrics,*", "election-latency-max")]
