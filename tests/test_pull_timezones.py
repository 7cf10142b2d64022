"""Any time zone (issue 61): an hourly-rolled file is named for a local hour, which in a zone whose offset
is not whole hours (Asia/Kolkata +05:30, Asia/Kathmandu +05:45, Australia/Adelaide +09:30/+10:30,
America/St_Johns -03:30/-02:30) overlaps two UTC hours: each line lands in its own UTC hour, also across
a DST change (the skipped hour of a spring-forward, the repeated hour of a fall-back)."""
from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from fleethealth.lake.hours import HOUR, file_span, floor_hour
from fleethealth.pull import linecut
from fleethealth.pull.host import may_hold, placed_by_lines

UTC = timezone.utc


def _rolled(zone: str, name: str) -> tuple[bytes, list[tuple[datetime, bytes]], datetime, datetime]:
    """A file `server.log.<name>` as log4j writes it: two records of the hour before at its head (written
    just after the roll), then a record every 6 minutes of its own local hour (a stack trace after some);
    each record with its UTC time."""
    named, named_end = file_span(f"server.log.{name}", 0.0, zone)
    times = [named - timedelta(minutes=40), named - timedelta(minutes=5)]
    at = named
    while at < named_end:
        times.append(at)
        at += timedelta(minutes=6)
    records = []
    for i, t in enumerate(times):
        stamp = t.astimezone(ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M:%S")
        text = f"[{stamp},000] INFO record {i} (kafka.server.KafkaServer)\n"
        if i % 3 == 0:
            text += "java.io.IOException: x\n\tat a.b(C.java:1)\n"
        records.append((t, text.encode()))
    return b"".join(r for _, r in records), records, named, named_end


CASES = [
    # zone, the file's local hour, what it is
    ("Asia/Kolkata", "2026-11-20-10", "half-hour zone: 04:30-05:30 UTC"),
    ("Asia/Kathmandu", "2026-11-20-10", "45-minute zone: 04:15-05:15 UTC"),
    ("Australia/Adelaide", "2026-11-20-10", "ACDT +10:30"),
    ("Australia/Adelaide", "2026-10-04-03", "the hour after the spring-forward (02:00 ACST -> 03:00 ACDT)"),
    ("Australia/Adelaide", "2026-04-05-02", "the repeated hour of the fall-back (03:00 ACDT -> 02:00 ACST)"),
    ("America/St_Johns", "2026-11-20-10", "NST -03:30"),
    ("America/St_Johns", "2026-03-08-03", "the hour after the spring-forward (02:00 NST -> 03:00 NDT)"),
    ("America/St_Johns", "2026-11-01-01", "the repeated hour of the fall-back (02:00 NDT -> 01:00 NST)"),
]


@pytest.mark.parametrize("zone,name,what", CASES, ids=[f"{z}-{n}" for z, n, _ in CASES])
def test_an_hourly_rolled_file_gives_each_utc_hour_its_own_lines(zone, name, what):
    data, records, named, named_end = _rolled(zone, name)
    read = lambda offset, n: data[offset:offset + n]                      # noqa: E731
    hours = {floor_hour(t) for t, _ in records}
    assert len(hours) >= 2, what
    for hour in sorted(hours | {min(hours) - HOUR, max(hours) + HOUR}):
        start, end = linecut.rolled_range(read, len(data), hour, named, zone, named_end)
        assert data[start:end] == b"".join(r for t, r in records if floor_hour(t) == hour), (what, hour)
        # pull considers the file in each hour it holds lines of
        assert may_hold(f"server.log.{name}", named_end.timestamp(), hour, zone) or start == end, (what, hour)


def test_the_repeated_hour_of_a_fall_back_is_two_utc_hours():
    assert file_span("server.log.2026-04-05-02", 0.0, "Australia/Adelaide") == (
        datetime(2026, 4, 4, 15, 30, tzinfo=UTC), datetime(2026, 4, 4, 17, 30, tzinfo=UTC))
    assert file_span("server.log.2026-11-01-01", 0.0, "America/St_Johns") == (
        datetime(2026, 11, 1, 3, 30, tzinfo=UTC), datetime(2026, 11, 1, 5, 30, tzinfo=UTC))


def test_whole_hour_zones_keep_a_rolled_file_in_its_named_hour():
    """A stray stamp inside a file of a whole-hour zone still cannot move its lines (as before)."""
    data = b"[2026-11-20 11:00:01,000] INFO a (k)\n[2026-11-20 09:00:00,000] INFO clock jump (k)\n" \
           b"[2026-11-20 12:30:00,000] INFO late (k)\n"
    read = lambda offset, n: data[offset:offset + n]                      # noqa: E731
    named = datetime(2026, 11, 20, 10, tzinfo=UTC)
    assert linecut.rolled_range(read, len(data), named, named, "Europe/Berlin") == (0, len(data))


def test_a_stray_stamp_moves_lines_only_between_the_two_hours_of_its_local_hour():
    # server.log.2026-11-20-10 in Kolkata: 04:30-05:30 UTC; a clock jump to 11:50 local (06:20 UTC)
    data = b"[2026-11-20 10:10:00,000] INFO a (k)\n[2026-11-20 11:50:00,000] INFO jump (k)\n" \
           b"[2026-11-20 10:20:00,000] INFO b (k)\n[2026-11-20 10:45:00,000] INFO c (k)\n"
    read = lambda offset, n: data[offset:offset + n]                      # noqa: E731
    named = datetime(2026, 11, 20, 4, 30, tzinfo=UTC)
    h4, h5, h6 = (datetime(2026, 11, 20, h, tzinfo=UTC) for h in (4, 5, 6))
    got = {h: linecut.rolled_range(read, len(data), h, named, "Asia/Kolkata") for h in (h4, h5, h6)}
    assert got[h4][0] == 0 and got[h4][1] == got[h5][0] and got[h5][1] == len(data)
    assert got[h6][0] == got[h6][1]


def test_a_jmx_export_named_for_a_local_hour_of_two_utc_hours_is_cut_by_its_samples_times():
    assert placed_by_lines("jmx", "jolokia.jsonl.2026-11-20-10", "Asia/Kolkata") == "json"
    assert placed_by_lines("jmx", "jolokia.jsonl.2026-11-20-10", "Europe/Berlin") == ""
    assert placed_by_lines("jmx", "jolokia.jsonl.2026-04-05-02", "Australia/Adelaide") == "json"


def _silent_hour(tmp_path, listed: str, files: dict[str, tuple[datetime, datetime]]) -> list:
    """pay-kafka-1 (its logs written in UTC, the cluster listed with `timezone: listed`) whose kafka
    folder holds `files` (name -> (UTC time of its newest line, mtime)) and no line of 10:00-11:00 UTC:
    what the pull of that hour lists."""
    from fleethealth.fleet.inventory import load_inventory
    from fleethealth.lake.catalog import Lakehouse
    from fleethealth.pull.hour import pull_host

    folder = tmp_path / "fleet" / "pay" / "pay-kafka-1" / "kafka"
    folder.mkdir(parents=True)
    for name, (newest, mtime) in files.items():
        stamp = newest.strftime("%Y-%m-%d %H:%M:%S")
        (folder / name).write_text(f"[{stamp[:14]}00:00,000] INFO older (kafka.server.KafkaServer)\n"
                                   f"[{stamp},000] INFO newest (kafka.server.KafkaServer)\n")
        os.utime(folder / name, (mtime.timestamp(), mtime.timestamp()))
    (tmp_path / "inventory.yaml").write_text(
        f"clusters:\n  - name: pay\n    timezone: {listed}\n    root: {tmp_path / 'fleet'}\n    hosts:\n"
        "      - {host: pay-kafka-1, role: kafka, broker_id: 1, kafka_version: 3.9.1, expect: [kafka]}\n")
    [host] = load_inventory(tmp_path / "inventory.yaml").clusters[0].hosts
    return pull_host(host, listed, datetime(2026, 11, 20, 10, tzinfo=UTC), Lakehouse.at(tmp_path / "lake"))


def test_rolled_files_copied_after_their_hour_are_not_a_zone_but_live_files_behind_are(tmp_path):
    """A broker silent in the hour pulled, whose files of the hour before were written (copied, or
    simulated) 1:45 later, all at once: their newest lines are 1:45 behind their mtimes in the listed
    zone, which says nothing of the zone (test_notify_pipeline failed on it at :45 past an hour).
    Two live files a host writes in UTC, listed as Australia/Adelaide, run 10:30 behind: that is."""
    copied = datetime(2026, 11, 20, 11, 45, 2, tzinfo=UTC)
    files = {f"{log}.2026-11-20-09": (datetime(2026, 11, 20, 9, 59, s, tzinfo=UTC), copied)
             for s, log in enumerate(("server.log", "controller.log", "state-change.log"))}
    assert _silent_hour(tmp_path / "copied", "UTC", files) == []
    written = datetime(2026, 11, 20, 10, 30, 7, tzinfo=UTC)
    live = {name: (written - timedelta(seconds=1), written) for name in ("server.log", "controller.log")}
    rejected = _silent_hour(tmp_path / "live", "Australia/Adelaide", live)
    assert [(Path(r.file).name in live, r.status) for r in rejected] == [(True, "rejected")]   # the source's latest
    assert "is stamped 10:30 behind the file's mtime" in rejected[0].reason
    assert rejected[0].reason.endswith("(timezone: UTC?)")
