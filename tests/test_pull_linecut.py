"""Lines belong to the hour their own timestamp says (issue 12): fleethealth.pull.linecut finds an hour's
byte range in a log file by binary search, and pull lands exactly those bytes from live, size-rolled,
daily-rolled and compressed files whatever their mtime."""
from __future__ import annotations

import gzip
import os
import random
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from fleethealth.lake.catalog import Lakehouse
from fleethealth.fleet.inventory import load_inventory
from fleethealth.pull import hour as pull
from fleethealth.pull import linecut
from fleethealth.simulate import simulate

UTC = timezone.utc
H8 = datetime(2026, 11, 20, 8, tzinfo=UTC)


def _log(rnd: random.Random, zookeeper: bool, n: int) -> bytes:
    out, t = [b"a line before the first record\n"] if rnd.random() < 0.3 else [], H8
    for _ in range(n):
        t += timedelta(seconds=rnd.choice([1, 30, 600, 2000]))
        stamp = t.strftime("%Y-%m-%d %H:%M:%S").encode()
        out.append((stamp if zookeeper else b"[" + stamp) + b",000] INFO x" + b"y" * rnd.randint(0, 300) + b"\n")
        if rnd.random() < 0.3:
            out.append(b"\tat a.continuation(Line.java:1)\n")
    return b"".join(out)


def _expected(data: bytes, hour: datetime) -> tuple[int, int] | None:
    """The hour's range by reading every line (what hour_range must find with a few reads)."""
    records, pos = [], 0
    for line in data.splitlines(keepends=True):
        if line[:1] in (b"[", b"2"):
            records.append((pos, line.lstrip(b"[")[:19]))
        pos += len(line)
    if not records:
        return None
    first = linecut.local_key(hour, "UTC"), linecut.local_key(hour + timedelta(hours=1), "UTC")
    start, end = (next((o for o, s in records if s >= key), len(data)) for key in first)
    return (0 if start < end and start == records[0][0] else start), end


@pytest.mark.parametrize("window", [256, linecut.WINDOW])
def test_hour_range_equals_a_full_read(monkeypatch, window):
    monkeypatch.setattr(linecut, "WINDOW", window)
    rnd = random.Random(7)
    for trial in range(120):
        data = _log(rnd, zookeeper=trial % 2 == 1, n=rnd.choice([0, 1, 5, 50, 2000]))
        reads = []

        def read(offset, n):
            reads.append(n)
            return data[offset:offset + n]

        for h in range(12):
            hour = H8 + timedelta(hours=h - 1)
            reads.clear()
            assert linecut.hour_range(read, len(data), hour, "UTC") == _expected(data, hour), (trial, h)
            if len(data) > 64 * window:   # binary search: far fewer bytes read than the file holds
                assert sum(reads) < len(data) / 4


def _jsonl(rnd: random.Random, n: int) -> tuple[bytes, list[tuple[int, int]]]:
    """A JSON-lines Jolokia export (bulk reads; some lines carry no timestamp) and its records."""
    out, records, pos, t = [], [], 0, H8
    for _ in range(n):
        t += timedelta(seconds=rnd.choice([1, 30, 600, 2000]))
        if rnd.random() < 0.2:
            line = b"garbage, no timestamp\n"
        else:
            stamp = int(t.timestamp()) * (1000 if rnd.random() < 0.1 else 1)    # some exporters: ms
            values = b", ".join(b'{"value": %d, "timestamp": %d, "status": 200}' % (i, stamp)
                                for i in range(rnd.randint(1, 40)))
            line = b"[" + values + b"]\n"
            records.append((pos, int(t.timestamp())))
        out.append(line)
        pos += len(line)
    return b"".join(out), records


@pytest.mark.parametrize("window", [256, linecut.WINDOW])
def test_json_lines_hour_range_equals_a_full_read(monkeypatch, window):
    monkeypatch.setattr(linecut, "WINDOW", window)
    rnd = random.Random(11)
    for trial in range(60):
        data, records = _jsonl(rnd, n=rnd.choice([0, 1, 5, 50, 2000]))
        read = lambda offset, n: data[offset:offset + n]                  # noqa: E731
        for h in range(12):
            hour = H8 + timedelta(hours=h - 1)
            want = None
            if records:
                keys = int(hour.timestamp()), int(hour.timestamp()) + 3600
                start, end = (next((o for o, s in records if s >= k), len(data)) for k in keys)
                want = (0 if start < end and start == records[0][0] else start), end
            assert linecut.hour_range(read, len(data), hour, "UTC", json_lines=True) == want, (trial, h)


def test_hour_range_uses_the_clusters_timezone():
    data = b"[2026-11-20 11:30:00,000] INFO local time in Berlin (k)\n"   # 10:30 UTC
    read = lambda offset, n: data[offset:offset + n]                      # noqa: E731
    assert linecut.hour_range(read, len(data), datetime(2026, 11, 20, 10, tzinfo=UTC), "Europe/Berlin") == (0, len(data))
    assert linecut.hour_range(read, len(data), datetime(2026, 11, 20, 11, tzinfo=UTC), "Europe/Berlin") == (len(data),) * 2


def _landed_lines(inventory, hours, lakehouse) -> Counter:
    lines: Counter = Counter()
    for hour in hours:
        for x in pull.pull_hour(inventory, hour, Lakehouse.at(lakehouse)):
            if x.source in ("kafka", "zookeeper", "threaddumps", "jmx") and x.status == "read":
                data = (Lakehouse.at(lakehouse).landing(hour) / x.read_path).read_bytes()
                data = gzip.decompress(data) if x.read_path.endswith(".gz") else data
                lines.update((hour, x.cluster, x.host, x.source, line) for line in data.splitlines())
    return lines


def test_an_archive_and_the_hourly_files_land_the_same_lines_in_the_same_hours(tmp_path):
    start = datetime(2026, 11, 20, 10, tzinfo=UTC)
    hours = [start + timedelta(hours=h) for h in range(3)]
    got = {}
    for layout in ("hourly", "archive"):
        inventory = load_inventory(simulate(tmp_path / layout, ["healthy", "pm2-zk-follower-reset"], start,
                                            hours[-1] + timedelta(hours=1), layout=layout, jmx_samples_per_broker_hour=0))
        got[layout] = _landed_lines(inventory, hours, tmp_path / layout / "lake")
    zk = [k for k in got["archive"] if k[3] == "zookeeper"]
    assert zk and {k[0] for k in zk} == set(hours)            # size-rolled logs spread over every hour
    assert got["archive"] - got["hourly"] == Counter()
    lost = got["hourly"] - got["archive"]                       # only the tail of the truncated .gz
    assert {k[:4] for k in lost} == {(hours[0], "healthy", "healthy-kafka-1", "kafka")}


def test_files_without_a_time_in_their_name_are_placed_by_their_lines(tmp_path):
    (tmp_path / "inventory.yaml").write_text(
        "clusters:\n  - name: c\n    timezone: UTC\n    root: fleet\n    hosts:\n"
        "      - {host: z1, role: zookeeper, zk_myid: 1}\n")
    inventory = load_inventory(tmp_path / "inventory.yaml")
    folder = tmp_path / "fleet" / "c" / "z1" / "zookeeper"
    folder.mkdir(parents=True)

    def zk(hour: int, minute: int, text: str) -> bytes:
        return f"2026-11-20 {hour:02d}:{minute:02d}:00,000 [myid:1] - INFO  [main:Q@1] - {text}\n".encode()

    files = {
        "zookeeper.log.2.gz": gzip.compress(zk(8, 10, "a") + zk(9, 50, "b")),          # size-rolled, compressed
        "zookeeper.log.1": zk(9, 59, "c") + b"continuation of c\n" + zk(10, 0, "d"),     # crosses the hour
        "zookeeper.log": zk(10, 30, "e"),                                                 # live
        "zookeeper-daily.log.2026-11-20": zk(9, 5, "f"),                                 # daily-rolled
        "notes.log": b"no timestamp at all\n",
        "old.log": zk(8, 5, "g"),
    }
    now = datetime(2026, 11, 25, tzinfo=UTC).timestamp()   # an archive: every mtime is the copy time
    for name, data in files.items():
        (folder / name).write_bytes(data)
        os.utime(folder / name, (now, now))
    stale = datetime(2026, 11, 20, 8, 30, tzinfo=UTC).timestamp()
    os.utime(folder / "old.log", (stale, stale))          # last written before 09:00: not read for 09, 10

    def hour_lines(hour: int) -> dict[str, bytes]:
        at = datetime(2026, 11, 20, hour, tzinfo=UTC)
        landed = pull.pull_hour(inventory, at, Lakehouse.at(tmp_path / "lake"))
        return {Path(x.file).name: (Lakehouse.at(tmp_path / "lake").landing(at) / x.read_path).read_bytes()
                for x in landed}

    assert hour_lines(8) == {"zookeeper.log.2.gz": zk(8, 10, "a"), "old.log": zk(8, 5, "g")}
    assert hour_lines(9) == {"zookeeper.log.2.gz": zk(9, 50, "b"),
                             "zookeeper.log.1": zk(9, 59, "c") + b"continuation of c\n",
                             "zookeeper-daily.log.2026-11-20": zk(9, 5, "f")}
    assert hour_lines(10) == {"zookeeper.log.1": zk(10, 0, "d"), "zookeeper.log": zk(10, 30, "e")}


def test_thread_dumps_without_a_time_in_their_name_go_by_their_capture_line(tmp_path):
    (tmp_path / "inventory.yaml").write_text(
        "clusters:\n  - name: c\n    timezone: Europe/Berlin\n    root: fleet\n    hosts:\n"
        "      - {host: k1, role: kafka, broker_id: 1, kafka_version: 3.6.1}\n")
    inventory = load_inventory(tmp_path / "inventory.yaml")
    folder = tmp_path / "fleet" / "c" / "k1" / "threaddumps"
    folder.mkdir(parents=True)
    dump = ("{at}\nFull thread dump OpenJDK 64-Bit Server VM (17.0.9+9 mixed mode):\n\n"
            '"main" #1 prio=5 os_prio=0 tid=0x1 nid=0x2 runnable\n   java.lang.Thread.State: RUNNABLE\n\n')
    first, second = dump.format(at="2026-11-20 11:30:00"), dump.format(at="2026-11-20 12:10:00")  # local: +01:00
    (folder / "dumps.txt").write_text(first + second)                  # appended by `jstack >> dumps.txt`
    now = datetime(2026, 11, 25, tzinfo=UTC).timestamp()
    os.utime(folder / "dumps.txt", (now, now))
    for hour, expected in ((10, first), (11, second), (12, None)):
        at = datetime(2026, 11, 20, hour, tzinfo=UTC)
        landed = [x for x in pull.pull_hour(inventory, at, Lakehouse.at(tmp_path / "lake")) if x.source == "threaddumps"]
        got = [(Lakehouse.at(tmp_path / "lake").landing(at) / x.read_path).read_text() for x in landed]
        assert got == ([expected] if expected else []), hour


@pytest.mark.parametrize("json_lines", [False, True])
def test_a_file_that_shrank_since_it_was_listed_is_cut_by_what_is_left(json_lines):
    if json_lines:
        data = b'{"value": 1, "timestamp": %d}\n' % int(H8.timestamp())
    else:
        data = b"[2026-11-20 08:10:00,000] INFO kept (k)\n"
    read = lambda offset, n: data[offset:offset + n]                      # noqa: E731
    listed = len(data) + 10 * linecut.WINDOW                              # the size when it was listed
    assert linecut.hour_range(read, listed, H8, "UTC", json_lines=json_lines) == (0, listed)


def test_an_hourly_rolled_file_keeps_its_lines_but_gives_its_head_of_the_hour_before_back():
    named = datetime(2026, 11, 20, 10, tzinfo=UTC)                     # server.log.2026-11-20-11 in Berlin

    def rec(stamp: str, text: str = "x") -> bytes:
        return f"[2026-11-{stamp},000] INFO {text} (k)\n".encode()

    head = b"orphan line\n" + rec("20 10:59:59", "after the roll") + b"\tat continuation\n"
    body = rec("20 11:00:01") + rec("31 11:10:00", "impossible date") + rec("20 09:00:00", "clock jump") \
        + rec("20 12:30:00", "late") + rec("20 11:59:59")
    data = head + body
    read = lambda offset, n: data[offset:offset + n]                      # noqa: E731
    rolled = lambda hour: linecut.rolled_range(read, len(data), hour, named, "Europe/Berlin")  # noqa: E731
    assert rolled(named - timedelta(hours=1)) == (0, len(head))
    assert rolled(named) == (len(head), len(data))
    assert rolled(named + timedelta(hours=1)) == (len(data), len(data))
    no_head = body[len(rec("20 11:00:01")):]                             # starts with the impossible date
    read = lambda offset, n: no_head[offset:offset + n]                   # noqa: E731
    assert linecut.rolled_range(read, len(no_head), named, named, "Europe/Berlin") == (0, len(no_head))
    assert linecut.rolled_range(read, len(no_head), named - timedelta(hours=1), named, "Europe/Berlin") == (0, 0)
    assert linecut.rolled_range(lambda offset, n: b"", 0, named, named, "Europe/Berlin") is None
