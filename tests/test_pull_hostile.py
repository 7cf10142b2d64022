"""A file's problem is the file's, and every file is bounded by design (pull, local transport): a bad
date or an over-long name, a FIFO swapped in after listing, a .gz that inflates past its host's cap,
zero padding after a .gz, a .gz that grows after listing, a host that stalls and JSON lines of `{}`
each cost at most their own file (a rejected row with its reason) or their own host, never the
other files and hosts of the hour."""
from __future__ import annotations

import gzip
import os
import signal
import time
import zlib
from datetime import datetime, timezone
from pathlib import Path

import pytest

from fleethealth.lake.catalog import Lakehouse
from fleethealth.fleet.inventory import load_inventory
from fleethealth.pull import inflate, linecut
from fleethealth.pull.hour import HostsFailed, pull_hour
from fleethealth.pull.landing import read_manifests
from fleethealth.pull.transports import local
from fleethealth.pull.transports.base import RemoteFile

UTC = timezone.utc
HOUR = datetime(2026, 11, 20, 10, tzinfo=UTC)
INSIDE = HOUR.timestamp() + 20 * 60
LINE = b"[2026-11-20 10:05:00,000] INFO a line of the hour (kafka.Kafka)\n"
INVENTORY = """\
clusters:
  - name: c
    timezone: UTC
    root: fleet
    hosts:
      - {host: k1, role: kafka, broker_id: 1, kafka_version: 3.6.1, max_file_bytes: 1000000}
      - {host: k2, role: kafka, broker_id: 2, kafka_version: 3.6.1}
"""


def put(path: Path, content: bytes, mtime: float = INSIDE) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    os.utime(path, (mtime, mtime))
    return path


@pytest.fixture
def fleet(tmp_path) -> Path:
    """Two brokers; k2 is the healthy neighbour whose hour must always land."""
    put(tmp_path / "fleet" / "c" / "k1" / "kafka" / "server.log", LINE)
    put(tmp_path / "fleet" / "c" / "k2" / "kafka" / "server.log", LINE)
    (tmp_path / "inventory.yaml").write_text(INVENTORY)
    return tmp_path


def pull(fleet: Path) -> dict[tuple[str, str], tuple[str, str]]:
    """(host, file name) -> (status, reason) of everything landed or rejected for HOUR."""
    inventory = load_inventory(fleet / "inventory.yaml")
    try:
        pull_hour(inventory, HOUR, Lakehouse.at(fleet / "lake"))
    except HostsFailed:
        pass
    return {(r.host, Path(r.file).name): (r.status, r.reason) for r in read_manifests(HOUR, Lakehouse.at(fleet / "lake"))}


def k1(fleet: Path, source: str, name: str) -> Path:
    return fleet / "fleet" / "c" / "k1" / source / name


def neighbours_landed(rows) -> bool:
    return rows[("k1", "server.log")] == ("read", "") and rows[("k2", "server.log")] == ("read", "")


def test_a_bad_date_in_a_name_rejects_that_file_only(fleet):
    put(k1(fleet, "kafka", "server.log.2026-02-30-10"), LINE)
    put(k1(fleet, "threaddumps", "jstack-2026-13-01T10-30-00.txt"), b"2026-11-20 10:30:00\nFull thread dump\n")
    put(k1(fleet, "logdirs", "logdirs-2026-11-31T10-00-00.txt"), b"{}\n", mtime=HOUR.timestamp() - 7200)
    rows = pull(fleet)
    assert rows[("k1", "server.log.2026-02-30-10")] == (
        "rejected", "the time in its name is not a valid time: day is out of range for month")
    assert rows[("k1", "jstack-2026-13-01T10-30-00.txt")] == (
        "rejected", "the time in its name is not a valid time: month must be in 1..12")
    assert ("k1", "logdirs-2026-11-31T10-00-00.txt") not in rows      # its mtime says another hour
    assert neighbours_landed(rows)


def test_a_name_too_long_to_store_as_is_lands_under_a_shorter_one(fleet):
    name = "server.log." + "x" * (255 - len("server.log.") - 3) + ".gz"
    assert len(name) == 255
    put(k1(fleet, "kafka", name), gzip.compress(LINE))
    rows = pull(fleet)
    assert rows[("k1", name)] == ("read", "")
    [row] = [r for r in read_manifests(HOUR, Lakehouse.at(fleet / "lake")) if Path(r.file).name == name]
    assert len(Path(row.read_path).name) < 255
    assert (Lakehouse.at(fleet / "lake").landing(HOUR) / row.read_path).read_bytes() == LINE
    assert neighbours_landed(rows)


def test_a_fifo_swapped_in_after_listing_is_rejected_without_blocking(fleet, monkeypatch):
    fifo = k1(fleet, "jmx", "metrics.prom.2026-11-20-10")
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    listed = local.list_files

    def as_listed_before_the_swap(folder):
        found = listed(folder)
        return found + [RemoteFile(fifo.name, 10, INSIDE, 1)] if folder == str(fifo.parent) else found

    monkeypatch.setattr(local, "list_files", as_listed_before_the_swap)
    signal.signal(signal.SIGALRM, lambda *_: pytest.fail("the pull blocked on a FIFO"))
    signal.alarm(60)
    try:
        rows = pull(fleet)
    finally:
        signal.alarm(0)
    status, reason = rows[("k1", fifo.name)]
    assert status == "rejected" and reason.endswith("no longer a regular file (a FIFO, device or folder now)")
    assert neighbours_landed(rows)


def test_a_gz_that_inflates_past_the_cap_is_rejected_by_its_inflated_size(fleet):
    many = LINE * 40_000                                   # 2.6 MB of lines, about 20 kB compressed
    put(k1(fleet, "kafka", "server.log.2026-11-20-10.gz"), gzip.compress(many))       # placed by its lines
    put(k1(fleet, "jmx", "metrics.prom.2026-11-20-10.gz"), gzip.compress(b"x 1\n" * 700_000))   # by its name
    rows = pull(fleet)
    cap = "inflates to more than 1000000 bytes, the cap of its host (max_file_bytes)"
    assert rows[("k1", "server.log.2026-11-20-10.gz")] == ("rejected", cap)
    assert rows[("k1", "metrics.prom.2026-11-20-10.gz")] == ("rejected", cap)
    assert not list((Lakehouse.at(fleet / "lake").landing(HOUR) / "c" / "k1").rglob("*.plain"))
    assert neighbours_landed(rows)


def test_inflating_is_bounded_in_output_and_linear_in_zero_padding(tmp_path):
    padded = put(tmp_path / "padded.gz", gzip.compress(LINE) + b"\0" * (64 << 20))
    t0 = time.perf_counter()
    assert inflate.inflate(padded, None) == ""
    assert time.perf_counter() - t0 < 10                  # quadratic in the padding, this took minutes
    bomb = put(tmp_path / "bomb.gz", gzip.compress(b"\0" * (50 << 20)))    # no newline at all
    with pytest.raises(inflate.TooLarge):
        inflate.inflate(bomb, None, limit=10 << 20)
    two = put(tmp_path / "two.gz", gzip.compress(LINE) + b"\0" * 512 + gzip.compress(LINE))
    with (tmp_path / "two.out").open("wb") as dst:
        assert inflate.inflate(two, dst) == ""
    assert (tmp_path / "two.out").read_bytes() == LINE * 2


def test_a_damaged_gz_keeps_its_complete_lines_only(tmp_path):
    whole = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    data = whole.compress(LINE * 3 + b"[2026-11-20 10:06:00,000] INFO half a li") + whole.flush(zlib.Z_SYNC_FLUSH)
    damaged = put(tmp_path / "cut.log.gz", data)            # no end-of-stream marker: copied while written
    reason, recovered = inflate.gzip_damage(damaged)
    assert reason.startswith("damaged gzip (truncated: it ends before the gzip end-of-stream marker): kept the 3")
    assert recovered.read_bytes() == LINE * 3


def test_a_gz_that_grows_after_listing_is_fetched_up_to_its_listed_size(fleet, monkeypatch):
    gz = put(k1(fleet, "kafka", "server.log.2026-11-20-10.gz"), gzip.compress(LINE * 10))
    listed_size = gz.stat().st_size
    with gz.open("ab") as fh:
        fh.write(os.urandom(3 << 20))                      # grows between listing and fetching
    os.utime(gz, (INSIDE, INSIDE))
    listed = local.list_files

    def at_listing(folder):
        return [RemoteFile(f.name, listed_size, f.mtime, f.inode) if f.name == gz.name else f
                for f in listed(folder)]

    fetched = []
    real_fetch = local.fetch

    def counting_fetch(folder, name, target, start=0, end=None):
        copied = real_fetch(folder, name, target, start, end)
        fetched.append((name, copied))
        return copied

    monkeypatch.setattr(local, "list_files", at_listing)
    monkeypatch.setattr(local, "fetch", counting_fetch)
    rows = pull(fleet)
    assert (gz.name, listed_size) in fetched
    assert rows[("k1", gz.name)] == ("read", "")
    assert neighbours_landed(rows)


def test_a_host_that_stalls_is_cut_off_at_its_deadline_and_the_next_host_lands(fleet, monkeypatch):
    for i in range(6):
        put(k1(fleet, "kafka", f"server.log.{i}"), LINE)
    monkeypatch.setenv("FLEETHEALTH_PULL_TIMEOUT_S", "1")
    real_read = local.LocalTransport.read

    def stalling(self, folder, name, offset, n):
        if "/k1/" in folder:
            time.sleep(0.4)
        return real_read(self, folder, name, offset, n)

    monkeypatch.setattr(local.LocalTransport, "read", stalling)
    inventory = load_inventory(fleet / "inventory.yaml")
    with pytest.raises(HostsFailed, match=r"^k1: pull stopped after 1 s \(FLEETHEALTH_PULL_TIMEOUT_S\)") as failed:
        pull_hour(inventory, HOUR, Lakehouse.at(fleet / "lake"))
    assert [(r.host, r.file) for r in failed.value.landed] == [("k2", "c/k2/kafka/server.log")]


def test_json_lines_of_empty_objects_are_read_a_window_at_a_time(tmp_path):
    data = b"{}\n" * 700_000 + b'{"timestamp": 1795168800, "value": {}}\n'     # 2.1 MB
    reads = []

    def read(offset, n):
        reads.append(n)
        return data[offset:offset + n]

    start = datetime(2026, 11, 20, 10, tzinfo=UTC)
    assert linecut.hour_range(read, len(data), start, "UTC", json_lines=True) == (0, len(data))
    assert len(reads) < 5_000                               # a read per line: 1.4 million


def test_a_name_with_control_characters_is_printed_escaped(fleet, capsys, monkeypatch):
    from fleethealth.cli import main as cli

    put(k1(fleet, "kafka", "bad\n2026-11-20T10:00:00+00:00: 0 files landed\x1b[31m.log"), LINE * 20_000)   # over k1's cap
    monkeypatch.chdir(fleet)
    assert cli.main(["pull", "--inventory", "inventory.yaml", "--from", "2026-11-20T10:00", "--to",
                     "2026-11-20T11:00", "--lakehouse", "lake"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out
    assert ("  c/k1/kafka/bad\\n2026-11-20T10:00:00+00:00: 0 files landed\\x1b[31m.log: 1280000 bytes, over the cap "
            "of 1000000") in out
    assert len(out.splitlines()) == 2
