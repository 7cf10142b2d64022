"""`fleethealth check` on time zones (issue 61 item 4), with real files whose mtimes are set as a host's
filesystem keeps them: a cluster without `timezone:` is read as UTC and check says so; a host whose live
log lines run whole or half hours away from their files' mtimes is a problem naming the offset and the
zone that fits."""
from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from fleethealth.cli import main as cli

WRITTEN = datetime(2026, 11, 20, 10, 0, 7, tzinfo=timezone.utc)     # the files' last write
SUMMARY = "check: 1 cluster(s), 1 host(s), 0 channel(s) not tested (--notify sends each a test message): "


def _host(tmp_path, monkeypatch, written_in: str, listed: str | None, files=("server.log", "controller.log"),
          mtime: datetime = WRITTEN) -> str:
    """pay-kafka-1 whose live logs were last written at WRITTEN, stamped in `written_in`; the cluster
    listed with `timezone: listed` (None: without one). Returns the inventory's path."""
    monkeypatch.setenv("FLEETHEALTH_LAKEHOUSE", str(tmp_path / "lake"))
    host = tmp_path / "fleet" / "pay" / "pay-kafka-1"
    (host / "kafka").mkdir(parents=True)
    (host / "jmx").mkdir()
    (host / "jmx" / "jolokia.jsonl").write_text("{}\n")
    for i, name in enumerate(files):
        stamp = (WRITTEN - timedelta(seconds=i)).astimezone(ZoneInfo(written_in)).strftime("%Y-%m-%d %H:%M:%S")
        path = host / "kafka" / name
        path.write_text(f"[{stamp[:11]}00:00:00,000] INFO an older line (kafka.server.KafkaServer)\n"
                        f"[{stamp},123] INFO [KafkaServer id=1] started (kafka.server.KafkaServer)\n")
        os.utime(path, (mtime.timestamp(), mtime.timestamp()))
    zone = f"    timezone: {listed}\n" if listed else ""
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(f"clusters:\n  - name: pay\n{zone}    root: {tmp_path / 'fleet'}\n"
                         "    hosts:\n      - {host: pay-kafka-1, role: kafka, broker_id: 1, kafka_version: 3.9.1}\n")
    return str(inventory)


def check(capsys, inventory: str) -> tuple[int, list[str]]:
    rc = cli.main(["check", "--inventory", inventory])
    out, err = capsys.readouterr()
    assert err == "", err
    return rc, out.splitlines()


def test_a_cluster_without_timezone_is_read_as_utc_and_logs_ahead_of_their_files_name_the_zone(tmp_path, capsys,
                                                                                              monkeypatch):
    assert check(capsys, _host(tmp_path, monkeypatch, "Asia/Kolkata", None)) == (2, [
        "clusters[pay]: timezone: not set, logs read as UTC (set it to the zone its logs are written in, e.g. "
        "timezone: Europe/Berlin)",
        "logs of pay-kafka-1 run 5:30 ahead of their files (read as UTC): timezone: Asia/Kolkata?",
        SUMMARY + "1 problem(s): an hour would not run as set up"])


def test_a_45_minute_zone_and_one_behind(tmp_path, capsys, monkeypatch):
    rc, lines = check(capsys, _host(tmp_path / "a", monkeypatch, "Asia/Kathmandu", "UTC"))
    assert lines[0] == "logs of pay-kafka-1 run 5:45 ahead of their files (read as UTC): timezone: Asia/Kathmandu?"
    rc, lines = check(capsys, _host(tmp_path / "b", monkeypatch, "UTC", "Australia/Adelaide"))
    assert (rc, lines[0]) == (2, "logs of pay-kafka-1 run 10:30 behind their files (read as Australia/Adelaide): "
                                 "timezone: UTC?")


def test_logs_in_their_zone_or_one_file_touched_later_pass(tmp_path, capsys, monkeypatch):
    assert check(capsys, _host(tmp_path / "a", monkeypatch, "America/St_Johns", "America/St_Johns")) == (
        0, [SUMMARY + "an hour would run"])
    # one file last touched an hour after its newest line: no zone says that
    touched = _host(tmp_path / "b", monkeypatch, "UTC", "UTC", files=("server.log",),
                    mtime=WRITTEN + timedelta(hours=1))
    assert check(capsys, touched) == (0, [SUMMARY + "an hour would run"])


def test_a_pods_log_file_is_read_against_its_wrappers_utc_time_not_its_mtime(tmp_path, capsys, monkeypatch):
    """kubelet's `0.log` (CRI lines, as test_pull_containers writes them): each line carries the runtime's
    UTC time, so the check needs no mtime (here 3 hours off: copied later). A cluster in St. John's
    (-03:30) listed so is fine (read as local text, the wrapper's UTC stamp looked 3:30 ahead); the same
    lines written in Kolkata and listed without a zone are 5:30 ahead."""
    def pod(root, written_in: str, listed: str | None) -> str:
        inventory = _host(root, monkeypatch, written_in, listed, files=())
        log = root / "fleet" / "pay" / "pay-kafka-1" / "kafka" / "0.log"
        lines = []
        for i, at in enumerate((WRITTEN - timedelta(minutes=2), WRITTEN)):
            local = at.astimezone(ZoneInfo(written_in)).strftime("%Y-%m-%d %H:%M:%S")
            lines.append(f"{at:%Y-%m-%dT%H:%M:%S}.{i:09d}Z stdout F [{local},000] INFO record {i} "
                         "(kafka.server.KafkaServer)\n")
        log.write_text("".join(lines))
        copied = (WRITTEN + timedelta(hours=3)).timestamp()
        os.utime(log, (copied, copied))
        return inventory

    assert check(capsys, pod(tmp_path / "a", "America/St_Johns", "America/St_Johns")) == (
        0, [SUMMARY + "an hour would run"])
    rc, lines = check(capsys, pod(tmp_path / "b", "Asia/Kolkata", None))
    assert (rc, lines[1]) == (2, "logs of pay-kafka-1 run 5:30 ahead of their files (read as UTC): "
                                 "timezone: Asia/Kolkata?")
