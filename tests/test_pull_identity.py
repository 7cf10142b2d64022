"""File identity in pull (fleethealth.pull.identity.SeenIndex) with the `local` transport, no Spark: a file is
known by its name, inode, size and mtime history and its head, not by its head alone; listing and
identifying N files costs O(N). "no-inode" runs the same pulls with the inodes hidden, as over SFTP;
"no-inode-reversed" also lists each folder in reverse order (identity must not depend on it)."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import types
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from fleethealth.lake.catalog import Lakehouse
from fleethealth.fleet.inventory import load_inventory
from fleethealth.pull import hour as pull
from fleethealth.pull import identity, landing
from fleethealth.pull.hour import pull_host
from fleethealth.pull.transports import local

UTC = timezone.utc
H10 = datetime(2026, 11, 20, 10, tzinfo=UTC)
H11, H12 = H10 + timedelta(hours=1), H10 + timedelta(hours=2)

INVENTORY = """\
clusters:
  - name: c
    timezone: UTC
    root: {root}
    hosts:
      - {{host: k1, role: kafka, broker_id: 1, kafka_version: 3.6.1}}
      - {{host: zk1, role: zookeeper, zk_myid: 1}}
"""


def at(hour: datetime, minute: int) -> float:
    return (hour + timedelta(minutes=minute)).timestamp()


def put(path: Path, content: bytes, mtime: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    os.utime(path, (mtime, mtime))
    return path


def append(path: Path, content: bytes, mtime: float) -> None:
    with path.open("ab") as fh:
        fh.write(content)
    os.utime(path, (mtime, mtime))


def lines(tag: str, n: int, start: int = 0) -> bytes:
    return b"".join(f"2026-11-20 10:{(start + i) % 60:02d}:00,000 [myid:1] - INFO  [{tag}] - line {start + i}\n"
                    .encode() for i in range(start, start + n))


@pytest.fixture(params=["inode", "no-inode", "no-inode-reversed"])
def mode(request, monkeypatch):
    listing = local.LocalTransport.list_files
    if request.param != "inode":
        def without_inodes(self, folder):
            files = [dataclasses.replace(f, inode=None) for f in listing(self, folder)]
            return files[::-1] if request.param.endswith("reversed") else files

        monkeypatch.setattr(local.LocalTransport, "list_files", without_inodes)
    return request.param


@pytest.fixture
def heads(monkeypatch) -> list[str]:
    """Every head() read through the local transport, as folder/name."""
    calls: list[str] = []
    read = local.LocalTransport.head

    def counted(self, folder, name, n):
        calls.append(f"{folder}/{name}")
        return read(self, folder, name, n)

    monkeypatch.setattr(local.LocalTransport, "head", counted)
    return calls


@pytest.fixture
def fleet(tmp_path, monkeypatch):
    (tmp_path / "inventory.yaml").write_text(INVENTORY.format(root=tmp_path / "fleet"))
    inv = load_inventory(tmp_path / "inventory.yaml")
    root = tmp_path / "fleet" / "c"
    return types.SimpleNamespace(inv=inv, lake=tmp_path / "lake", k1=root / "k1", zk1=root / "zk1")


def run(fleet, host: str, hour: datetime) -> dict[str, landing.Landed]:
    return {Path(r.file).name: r for r in pull_host(fleet.inv.host(host), "UTC", hour, Lakehouse.at(fleet.lake))}


def landed_bytes(fleet, hour: datetime, row: landing.Landed) -> bytes:
    return (Lakehouse.at(fleet.lake).landing(hour) / row.file).read_bytes()


def state(fleet, host: str) -> list[dict]:
    return json.loads(Lakehouse.at(fleet.lake).pull_state(fleet.inv.host(host).cluster, host).read_text())


# -- two snapshots whose first KiB is equal are two files ---------------------------------------------

SNAPSHOT_HEAD = (b'{"brokers": [{"broker": 1, "logDirs": [{"logDir": "/var/lib/kafka/data", "error": null, '
                 b'"partitions": [' + b", ".join(b'{"partition": "idle-%d", "size": 0, "offsetLag": 0}' % i
                                                   for i in range(40)))


@pytest.mark.parametrize("old_one", ["kept", "deleted"])
def test_snapshots_with_identical_heads_each_land_whole_in_their_hour(fleet, mode, heads, old_one):
    """The issue: an idle cluster's hour-11 log-dir snapshot has the hour-10 one's first KiB (and 8 bytes
    more); it was landed as those 8 bytes. Also when the host deleted the hour-10 one meanwhile (its
    inode may then be reused): a snapshot is never a rename of another."""
    assert len(SNAPSHOT_HEAD) > 2 * identity.IDENTITY_BYTES
    ten = put(fleet.k1 / "logdirs" / "logdirs-2026-11-20T10-30-00Z.json", SNAPSHOT_HEAD + b"]}]}]}\n",
              at(H10, 30))
    first = run(fleet, "k1", H10)
    assert list(first) == [ten.name]
    assert landed_bytes(fleet, H10, first[ten.name]) == ten.read_bytes()

    if old_one == "deleted":
        ten.unlink()
    eleven = put(fleet.k1 / "logdirs" / "logdirs-2026-11-20T11-30-00Z.json",
                 SNAPSHOT_HEAD + b', {"x": 1}]}]}]}\n', at(H11, 30))
    assert eleven.read_bytes()[:identity.IDENTITY_BYTES] == SNAPSHOT_HEAD[:identity.IDENTITY_BYTES]
    heads.clear()
    second = run(fleet, "k1", H11)
    assert list(second) == [eleven.name]
    assert (second[eleven.name].offset, second[eleven.name].size) == (0, eleven.stat().st_size)
    assert landed_bytes(fleet, H11, second[eleven.name]) == eleven.read_bytes()
    assert len(heads) == 1                                          # only the selected file's head
    assert sorted(s["name"] for s in state(fleet, "k1")) == sorted(
        [ten.name, eleven.name])                                    # two files in the state

    if old_one == "kept":                                           # re-pulls: each the same, whole
        assert run(fleet, "k1", H10)[ten.name].sha256 == first[ten.name].sha256
    again = run(fleet, "k1", H11)
    assert again[eleven.name].sha256 == second[eleven.name].sha256


# -- rotation: jolokia.jsonl -> jolokia.jsonl.1 while a new jolokia.jsonl starts ---------------------------
# (a JSON-lines JMX export rolled by size; live and size-rolled logs are placed by their lines' own
# timestamps instead, fleethealth.pull.linecut)

@pytest.mark.parametrize("new_file", ["other-head-bigger", "same-head-smaller"])
def test_rotation_lands_the_rotated_files_new_bytes_and_the_new_file_whole(fleet, mode, heads, new_file):
    folder = fleet.zk1 / "jmx"
    old = lines("old", 30)                                          # > IDENTITY_BYTES
    live = put(folder / "jolokia.jsonl", old, at(H10, 30))
    first = run(fleet, "zk1", H10)
    assert first["jolokia.jsonl"].size == len(old)

    tail = lines("old", 5, 30)
    append(live, tail, at(H11, 10))
    live.rename(folder / "jolokia.jsonl.1")                         # the size roll
    if new_file == "other-head-bigger":     # bigger than what was landed of the old one: only its head tells
        fresh = lines("new", 60)
    else:                                   # the same first KiB (say a banner), but smaller than the old one
        fresh = old[:identity.IDENTITY_BYTES + 10] + b"\n"
    put(folder / "jolokia.jsonl", fresh, at(H11, 20))
    heads.clear()
    second = run(fleet, "zk1", H11)

    assert sorted(second) == ["jolokia.jsonl", "jolokia.jsonl.1"]
    rotated, new = second["jolokia.jsonl.1"], second["jolokia.jsonl"]
    assert (rotated.offset, landed_bytes(fleet, H11, rotated)) == (len(old), tail)
    assert (new.offset, landed_bytes(fleet, H11, new)) == (0, fresh)
    assert len(heads) == 2                                          # one per selected file
    assert sorted(s["name"] for s in state(fleet, "zk1")) == ["jolokia.jsonl", "jolokia.jsonl.1"]

    more = lines("new", 3, 60)
    append(folder / "jolokia.jsonl", more, at(H12, 5))
    third = run(fleet, "zk1", H12)
    assert [(n, r.offset) for n, r in third.items()] == [("jolokia.jsonl", len(fresh))]
    assert landed_bytes(fleet, H12, third["jolokia.jsonl"]) == more
    again = run(fleet, "zk1", H11)                                  # re-pull: the same ranges again
    assert {n: (r.offset, r.sha256) for n, r in again.items()} == {
        n: (r.offset, r.sha256) for n, r in second.items()}


# -- state files written before name/inode/size/mtime were recorded ---------------------------------------

@pytest.mark.parametrize("renamed", [False, True])
def test_a_state_file_of_the_old_format_loads_and_keeps_identities(fleet, mode, renamed):
    folder = fleet.k1 / "jmx"
    first_bytes = lines("ctl", 20)
    live = put(folder / "jolokia.jsonl", first_bytes, at(H10, 30))
    run(fleet, "k1", H10)
    path = Lakehouse.at(fleet.lake).pull_state("c", "k1")
    old_rows = [{k: row[k] for k in ("head", "head_len", "remote", "ranges", "last_pulled")}
                for row in json.loads(path.read_text())]
    path.write_text(json.dumps(old_rows, indent=1))
    assert identity.load_state(path)[0].name == "jolokia.jsonl"

    more = lines("ctl", 4, 20)
    append(live, more, at(H11, 30))
    if renamed:
        live.rename(folder / "jolokia.jsonl.1")
    second = run(fleet, "k1", H11)
    name = "jolokia.jsonl.1" if renamed else "jolokia.jsonl"
    assert [(n, r.offset) for n, r in second.items()] == [(name, len(first_bytes))]
    assert landed_bytes(fleet, H11, second[name]) == more
    [row] = state(fleet, "k1")
    assert (row["name"], row["size"]) == (name, len(first_bytes + more))
    assert row["inode"] == (None if mode != "inode" else (folder / name).stat().st_ino)


# -- truncated and rewritten -----------------------------------------------------------------------------

def test_a_file_truncated_and_rewritten_with_the_same_head_but_smaller_lands_whole(fleet, mode):
    folder = fleet.k1 / "jmx"
    before = lines("ctl", 40)
    live = put(folder / "jolokia.jsonl", before, at(H10, 30))
    run(fleet, "k1", H10)

    rewritten = before[:2000] + b"\n"                               # same head, smaller than landed
    assert len(rewritten) < len(before) and rewritten[:1024] == before[:1024]
    with live.open("r+b") as fh:                                    # in place: the inode stays
        fh.truncate(0)
        fh.write(rewritten)
    os.utime(live, (at(H11, 30),) * 2)
    second = run(fleet, "k1", H11)
    assert (second["jolokia.jsonl"].offset, landed_bytes(fleet, H11, second["jolokia.jsonl"])) == (0, rewritten)

    more = lines("ctl", 30, 40)                                     # now longer than the first version
    append(live, more, at(H12, 30))
    assert live.stat().st_size > len(before)
    third = run(fleet, "k1", H12)
    assert third["jolokia.jsonl"].offset == len(rewritten)         # continues from the new file
    assert landed_bytes(fleet, H12, third["jolokia.jsonl"]) == more


# -- cost: linear in the number of files -----------------------------------------------------------------

def _pull_n_files(tmp_path: Path, monkeypatch, n: int) -> dict[str, int]:
    """N live files, half with distinct heads, half with the same first KiB: pulled new (hour 10),
    appended (hour 11), all renamed by a size roll (hour 12). Counts head reads, sha256 computations
    (the code before SeenIndex hashed a prefix per known file: 8.9x for 3x files) and known files
    compared (SeenIndex._fits)."""
    tmp_path.mkdir()
    (tmp_path / "inventory.yaml").write_text(INVENTORY.format(root=tmp_path / "fleet"))
    inv = load_inventory(tmp_path / "inventory.yaml")
    folder = tmp_path / "fleet" / "c" / "k1" / "jmx"
    folder.mkdir(parents=True)
    banner = b"#" * 1100 + b"\n"
    for i in range(n):
        put(folder / f"app-{i:05d}.log", (banner if i % 2 else b"file %d " % i * 200) + b"file %d\n" % i,
            at(H10, 30))

    counts = {"head": 0, "sha256": 0, "fits": 0}
    read, fits = local.LocalTransport.head, identity.SeenIndex._fits

    def head(self, folder, name, size):
        counts["head"] += 1
        return read(self, folder, name, size)

    def sha256(*args):
        counts["sha256"] += 1
        return hashlib.sha256(*args)

    def counted_fits(s, rf):
        counts["fits"] += 1
        return fits(s, rf)

    with monkeypatch.context() as m:
        m.setattr(local.LocalTransport, "head", head)
        m.setattr(identity, "hashlib", types.SimpleNamespace(sha256=sha256))
        m.setattr(identity.SeenIndex, "_fits", staticmethod(counted_fits))
        host = inv.host("k1")
        assert len(pull_host(host, "UTC", H10, Lakehouse.at(tmp_path / "lake"))) == n
        for i in range(n):
            append(folder / f"app-{i:05d}.log", b"more\n", at(H11, 30))
        appended = pull_host(host, "UTC", H11, Lakehouse.at(tmp_path / "lake"))
        assert len(appended) == n and all(r.offset > len(banner) and r.size == len(b"more\n") for r in appended)
        for i in range(n):
            append(folder / f"app-{i:05d}.log", b"rolled\n", at(H12, 30))
            os.rename(folder / f"app-{i:05d}.log", folder / f"app-{i:05d}.log.1")
        landed = pull_host(host, "UTC", H12, Lakehouse.at(tmp_path / "lake"))
    assert len(landed) == n and all(r.size == len(b"rolled\n") for r in landed)
    return counts


@pytest.mark.parametrize("mode", ["inode", "no-inode"], indirect=True)
def test_listing_and_identifying_cost_is_linear_in_the_number_of_files(tmp_path, monkeypatch, mode):
    small = _pull_n_files(tmp_path / "small", monkeypatch, 1000)
    large = _pull_n_files(tmp_path / "large", monkeypatch, 3000)
    assert small["head"] == 3 * 1000 and large["head"] == 3 * 3000     # one head read per file and pull
    for what in ("sha256", "fits"):
        assert large[what] <= 3.3 * small[what], (what, small, large)
