"""`simulate(layout="archive")`: the hourly fleet's records, arranged as copied off the hosts after an incident."""
from __future__ import annotations

import gzip
import json
import os
import re
import time
import zlib
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from fleethealth.cli import main as cli
from fleethealth.fleet import sources
from fleethealth.simulate import simulate

UTC = timezone.utc
START = datetime(2026, 11, 20, 10, tzinfo=UTC)
END = START + timedelta(hours=3)
SCENARIOS = "healthy,pm2-zk-follower-reset"   # pm2: 3 ZooKeeper servers, multi-line ZooKeeper records
KAFKA_FILES = ("server.log", "controller.log", "state-change.log", "log-cleaner.log")
ZK_RECORD = re.compile(r"^(\d{4}-\d\d-\d\d \d\d):\d\d:\d\d,\d{3} \[myid:\d+\] - ")
KAFKA_RECORD = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d):\d\d:\d\d,\d{3}\] ")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("layouts")
    simulate(base / "default", SCENARIOS, START, END, jmx_samples_per_broker_hour=0)
    simulate(base / "hourly", SCENARIOS, START, END, layout="hourly", jmx_samples_per_broker_hour=0)
    before = time.time()
    simulate(base / "archive", SCENARIOS, START, END, layout="archive", jmx_samples_per_broker_hour=0)
    after = time.time()
    notes = json.loads((base / "archive" / "archive-notes.json").read_text())
    return {"hourly": base / "hourly", "default": base / "default", "archive": base / "archive",
            "before": before, "after": after, "notes": notes}


def files(out: Path) -> dict[Path, Path]:
    """Every file of the fleet tree by its path relative to <out>/fleet."""
    root = out / "fleet"
    return {p.relative_to(root): p for p in sorted(root.rglob("*")) if p.is_file()}


def read_lines(path: Path) -> list[str]:
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    return data.decode("utf-8").splitlines(keepends=True)


def recover_lines(path: Path) -> list[str]:
    """What a reader gets out of a truncated .gz: its complete lines."""
    data = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(path.read_bytes())
    lines = data.decode("utf-8", errors="replace").splitlines(keepends=True)
    return lines if not lines or lines[-1].endswith("\n") else lines[:-1]


def lines_by_source(out: Path, skip: Path | None = None) -> dict[tuple[str, str, str], Counter]:
    got: dict[tuple[str, str, str], Counter] = {}
    for rel, path in files(out).items():
        if rel != skip:
            cluster, host, source = rel.parts[:3]
            got.setdefault((cluster, host, source), Counter()).update(read_lines(path))
    return got


def truncated(runs) -> tuple[Path, Path]:
    """(relative path of the truncated .gz under fleet/, relative path of its hourly counterpart)."""
    [t] = runs["notes"]["truncated"]
    rel = Path(t["path"]).relative_to("fleet")
    return rel, rel.with_name(t["hourly_name"])


def test_same_lines_per_cluster_host_source(runs):
    gz, hourly_twin = truncated(runs)
    hourly = lines_by_source(runs["hourly"], skip=hourly_twin)
    archive = lines_by_source(runs["archive"], skip=gz)
    assert set(hourly) == set(archive)
    # every source the simulator writes (not `groups`: consumer-groups snapshots have golden files only)
    assert {s for _, _, s in hourly} == set(sources.NAMES) - {"groups"}
    for key in hourly:
        assert hourly[key] == archive[key], key
    # thread dumps and log-dir snapshots keep their names (and bytes)
    h, a = files(runs["hourly"]), files(runs["archive"])
    for rel, path in h.items():
        if rel.parts[2] in ("threaddumps", "logdirs"):
            assert a[rel].read_bytes() == path.read_bytes()
    assert {r for r in a if r.parts[2] in ("threaddumps", "logdirs")} == \
        {r for r in h if r.parts[2] in ("threaddumps", "logdirs")}
    # the JMX exports are one live JSON-lines file per host, its hours in order
    for rel in {r.parent for r in h if r.parts[2] == "jmx"}:
        hourly_files = sorted(p for p in h if p.parent == rel)
        assert sorted(p.name for p in a if p.parent == rel) == ["jolokia.jsonl"]
        assert a[rel / "jolokia.jsonl"].read_bytes() == b"".join(h[p].read_bytes() for p in hourly_files)


def test_truncated_gz_is_noted_and_keeps_a_prefix(runs):
    [t] = runs["notes"]["truncated"]
    assert t["source"] == "kafka" and t["path"].endswith(".gz") and 0 < t["kept_bytes"] < t["bytes"]
    gz, hourly_twin = truncated(runs)
    assert (gz.parts[0], gz.parts[1]) == (t["cluster"], t["host"])
    path = runs["archive"] / "fleet" / gz
    assert path.stat().st_size == t["kept_bytes"]
    with pytest.raises(EOFError):
        gzip.decompress(path.read_bytes())
    recovered = recover_lines(path)
    full = read_lines(runs["hourly"] / "fleet" / hourly_twin)
    assert 0 < len(recovered) < len(full)
    assert recovered == full[:len(recovered)]


def test_kafka_live_files_hold_the_last_hour(runs):
    h, a = runs["hourly"] / "fleet", runs["archive"] / "fleet"
    kdirs = sorted(h.glob("*/*/kafka"))
    assert len(kdirs) == 6
    for kdir in kdirs:
        adir = a / kdir.relative_to(h)
        for name in KAFKA_FILES:
            labels = sorted(p.name[len(name) + 1:] for p in kdir.glob(f"{name}.*"))
            assert len(labels) == 3
            *rolled, last = labels
            live = (adir / name).read_text()
            assert live == (kdir / f"{name}.{last}").read_text()
            stamps = {m.group(1) for line in live.splitlines() if (m := KAFKA_RECORD.match(line))}
            assert stamps <= {last[:10] + " " + last[11:]}
            # older hours: rolled, all but the newest rolled one gzip'd
            want = [f"{name}.{lb}.gz" for lb in rolled[:-1]] + [f"{name}.{rolled[-1]}"]
            assert sorted(p.name for p in adir.glob(f"{name}.*")) == sorted(want)
        server_live = (adir / "server.log").read_text()
        assert server_live and KAFKA_RECORD.match(server_live)


def test_zookeeper_logs_are_size_rolled(runs):
    h, a = runs["hourly"] / "fleet", runs["archive"] / "fleet"
    zdirs = sorted(a.glob("*/*/zookeeper"))
    assert len(zdirs) == 4
    spans_hours = False
    for zdir in zdirs:
        names = sorted((p.name for p in zdir.iterdir()), key=lambda n: (len(n), n))
        assert names == ["zookeeper.log"] + [f"zookeeper.log.{k}" for k in range(1, len(names))]
        assert 2 <= len(names) <= 3
        oldest_first = [zdir / n for n in reversed(names)]
        hourly = [h / zdir.relative_to(a) / f"zookeeper.log.{i}" for i in (1, 2, 3)]
        # same bytes in the same order, cut elsewhere than at the hours
        assert b"".join(p.read_bytes() for p in oldest_first) == b"".join(p.read_bytes() for p in hourly)
        assert [p.read_bytes() for p in oldest_first] != [p.read_bytes() for p in hourly]
        for p in oldest_first:
            lines = p.read_text().splitlines()
            if lines:   # never starts with a continuation line: a record is never split across files
                assert ZK_RECORD.match(lines[0]), p
            hours = {m.group(1) for line in lines if (m := ZK_RECORD.match(line))}
            spans_hours |= len(hours) > 1
    assert spans_hours
    # the multi-line records of pm2 are in there
    assert any(not ZK_RECORD.match(line) for z in zdirs for p in z.iterdir() for line in p.read_text().splitlines())


def test_mtimes_are_the_copy_time(runs):
    now = time.time()
    for rel, path in files(runs["archive"]).items():
        mtime = path.stat().st_mtime
        assert runs["before"] - 1 <= mtime <= runs["after"] + 1, rel
        assert abs(now - mtime) < 30, rel
    copied = datetime.fromisoformat(runs["notes"]["copied_at"]).timestamp()
    assert runs["before"] - 1 <= copied <= runs["after"] + 1


def test_hourly_layout_is_the_default_and_unchanged(runs):
    d, h = files(runs["default"]), files(runs["hourly"])
    assert list(d) == list(h)
    for rel in d:
        assert d[rel].read_bytes() == h[rel].read_bytes(), rel
        if rel.parts[2] == "zookeeper":   # hourly ZooKeeper files carry their last record's time
            assert d[rel].stat().st_mtime == h[rel].stat().st_mtime < START.timestamp() + 3 * 3600
    names = {rel.name for rel in h}
    assert {"zookeeper.log.1", "zookeeper.log.2", "zookeeper.log.3", "server.log.2026-11-20-13"} <= names
    assert not names & {"server.log", "zookeeper.log"} and not any(n.endswith(".gz") for n in names)
    for out in ("default", "hourly"):
        assert not (runs[out] / "archive-notes.json").exists()
        assert (runs[out] / "expected_incidents.json").read_bytes() == \
            (runs["archive"] / "expected_incidents.json").read_bytes()


def test_hourly_run_over_an_archive_removes_its_notes(tmp_path):
    simulate(tmp_path, "healthy", START, START + timedelta(hours=1), layout="archive")
    assert json.loads((tmp_path / "archive-notes.json").read_text())["truncated"] == []   # no .gz in 1 hour
    assert (tmp_path / "fleet/healthy/healthy-kafka-1/kafka/server.log").exists()
    simulate(tmp_path, "healthy", START, START + timedelta(hours=1))
    assert not (tmp_path / "archive-notes.json").exists()
    assert not (tmp_path / "fleet/healthy/healthy-kafka-1/kafka/server.log").exists()
    with pytest.raises(ValueError, match="unknown layout"):
        simulate(tmp_path, "healthy", START, END, layout="daily")


def test_cli_layout_archive(tmp_path, capsys):
    out = tmp_path / "arch"
    args = ["simulate", "--out", str(out), "--scenario", "healthy",
            "--from", "2026-11-20T10:00Z", "--to", "2026-11-20T13:00Z"]
    assert cli.main(args + ["--layout", "archive"]) == 0
    assert "fleet written under" in capsys.readouterr().out
    notes = json.loads((out / "archive-notes.json").read_text())
    assert notes["layout"] == "archive" and len(notes["truncated"]) == 1
    kafka = out / "fleet/healthy/healthy-kafka-1/kafka"
    assert sorted(p.name for p in kafka.glob("server.log*")) == \
        ["server.log", "server.log.2026-11-20-11.gz", "server.log.2026-11-20-12"]
    zk = out / "fleet/healthy/healthy-zk-1/zookeeper"
    assert (zk / "zookeeper.log").exists() and (zk / "zookeeper.log.1").exists()
    assert abs(os.stat(kafka / "server.log").st_mtime - time.time()) < 30
    assert cli.main(args + ["--out", str(tmp_path / "hourly")]) == 0
    assert not (tmp_path / "hourly" / "archive-notes.json").exists()
    with pytest.raises(SystemExit) as exc:
        cli.main(args + ["--layout", "daily"])
    assert exc.value.code == 2
