"""The `archive` layout: the hourly fleet re-arranged as copied off real hosts right after an incident.

The hourly layout is written first and re-arranged in place, so both layouts hold the same records:

- Kafka broker logs: `<name>.YYYY-MM-DD-HH` for every local hour but the newest, which is the live
  `<name>` (no suffix); every rolled file but the newest is gzip'd (`.gz`, logrotate's delaycompress).
- ZooKeeper server logs: size-rolled like log4j's RollingFileAppender, `zookeeper.log` (newest),
  `zookeeper.log.1`, `zookeeper.log.2`, ... (older). A file rolls after the record that takes it past
  `total / (0.8 * hours)` bytes, so files cut at record boundaries (never inside a multi-line record),
  not at hours, and each spans about 1.25 hours.
- Jolokia JMX exports: one live JSON-lines `jolokia.jsonl` spanning every hour (an exporter that
  appends to one file), not one file per hour.
- One gzip'd Kafka file (oldest `server.log.*.gz` of the first cluster's first broker) keeps only the
  first 60 % of its bytes, as if copied while being compressed; `<out>/archive-notes.json` names it.
- Every file's mtime is the copy time (now), not the time of its content.
"""
from __future__ import annotations

import gzip
import json
import math
import os
import re
import time
from datetime import datetime, timezone
from pathlib import Path

from .fleet import Cluster

NOTES = "archive-notes.json"
TRUNCATE_FRACTION = 0.6
ZK_RECORD = re.compile(rb"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} ")


def rearrange(out: Path, root: Path, clusters: list[Cluster]) -> dict:
    """Turn the hourly fleet under `root` into the archive layout; write and return the notes."""
    for c in clusters:
        for host in c.hosts:
            hd = root / c.name / host.name
            if (hd / "kafka").is_dir():
                _kafka(hd / "kafka")
            if (hd / "zookeeper").is_dir():
                _zookeeper(hd / "zookeeper")
            if (hd / "jmx").is_dir():
                _jmx(hd / "jmx")
    truncated = _truncate_one(out, root, clusters)
    now = time.time()
    for c in clusters:
        for dirpath, _, files in os.walk(root / c.name):
            for f in files:
                os.utime(os.path.join(dirpath, f), (now, now))
    notes = {"layout": "archive",
             "copied_at": datetime.fromtimestamp(now, timezone.utc).isoformat(),
             "truncated": truncated}
    (out / NOTES).write_text(json.dumps(notes, indent=2) + "\n")
    return notes


def _kafka(folder: Path) -> None:
    by_name: dict[str, list[Path]] = {}
    for p in folder.iterdir():
        name = p.name.rpartition(".")[0]   # server.log.2026-11-20-11 -> server.log
        by_name.setdefault(name, []).append(p)
    for name, files in by_name.items():
        files.sort(key=lambda p: p.name)          # YYYY-MM-DD-HH labels sort by time
        *rolled, newest = files
        newest.rename(folder / name)
        for p in rolled[:-1]:
            p.with_name(p.name + ".gz").write_bytes(gzip.compress(p.read_bytes(), mtime=0))
            p.unlink()


def _jmx(folder: Path) -> None:
    hourly = sorted(folder.glob("jolokia.jsonl.*"), key=lambda p: p.name)   # YYYY-MM-DD-HH labels sort by time
    if hourly:
        data = b"".join(p.read_bytes() for p in hourly)
        for p in hourly:
            p.unlink()
        (folder / "jolokia.jsonl").write_bytes(data)


def _zookeeper(folder: Path) -> None:
    hourly = sorted(folder.glob("zookeeper.log.*"), key=lambda p: int(p.suffix[1:]))  # .1 = first hour
    data = b"".join(p.read_bytes() for p in hourly)
    for p in hourly:
        p.unlink()
    limit = max(1, math.ceil(len(data) / (0.8 * max(1, len(hourly)))))
    chunks, cur, size = [], [], 0
    for line in data.splitlines(keepends=True):
        if size >= limit and ZK_RECORD.match(line):   # roll only before a record's first line
            chunks.append(b"".join(cur))
            cur, size = [], 0
        cur.append(line)
        size += len(line)
    if size >= limit:                                  # log4j rolls right after the write: empty live file
        chunks.append(b"".join(cur))
        cur = []
    chunks.append(b"".join(cur))
    for k, chunk in enumerate(reversed(chunks)):
        (folder / ("zookeeper.log" if k == 0 else f"zookeeper.log.{k}")).write_bytes(chunk)


def _truncate_one(out: Path, root: Path, clusters: list[Cluster]) -> list[dict]:
    for c in clusters:
        for host in c.hosts:
            gz = sorted((root / c.name / host.name / "kafka").glob("server.log.*.gz"))
            if gz:
                path = gz[0]
                full = path.read_bytes()
                kept = int(len(full) * TRUNCATE_FRACTION)
                path.write_bytes(full[:kept])
                return [{"path": str(path.relative_to(out)), "cluster": c.name, "host": host.name,
                         "source": "kafka", "hourly_name": path.name[:-3],
                         "bytes": len(full), "kept_bytes": kept}]
    return []
