"""Deployment forms of a Kafka pod's container log files (forms.py registers them): a Kafka host's four
logs (server, controller, state-change, log-cleaner) merged in time order into the one stdout stream a
container prints, each physical line wrapped as the runtime writes it, with its UTC time.

- `cri`: kubelet's CRI files (containerd, CRI-O): `<RFC3339Nano> stdout F <line>` in
  `<root>/<cluster>/pods/<ns>_<pod>_<uid>/kafka/0.log`, rotated by size into `0.log.<YYYYMMDD-HHMMSS>`
  (the rotation's UTC time), all but the newest rotated one gzip'd; the longest line split into `P`
  pieces ended by an `F` one. The host's `paths:` gets a glob over the pod's uid.
- `docker-json`: Docker's json-file driver, `{"log":"<line>\\n","stream":"stdout","time":"..."}` in
  `<root>/<cluster>/docker/<host>/<id>/<id>-json.log`, rotated into `<id>-json.log.1`, `.2` (.1 newest);
  the longest line split into pieces without the trailing newline.
- `kubectl`: `kubectl logs --timestamps` saved to `<root>/<cluster>/kubectl/<host>/kafka.log`.

ZooKeeper hosts, JMX, thread dumps and log-dir snapshots stay where they are.
"""
from __future__ import annotations

import gzip
import hashlib
import heapq
import json
import os
import re
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

from .fleet import Cluster

NAMESPACE = "kafka"
FILES_PER_HOST = 4          # the live file and three rotated ones (of them, two gzip'd)
PIECES = 3                  # the longest line of a host is split into this many pieces
_START = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})\] ")


def _records(path: Path):
    """(local time text, ms, lines) of each record of a Kafka-layout log file, in file order."""
    current = None
    for line in path.read_text().splitlines():
        m = _START.match(line)
        if m:
            if current:
                yield current
            current = (m.group(1), int(m.group(2)), [line])
        elif current:
            current[2].append(line)
    if current:
        yield current


def _files_in_order(folder: Path) -> list[list[Path]]:
    """The files of each log, oldest first (hourly-rolled names sort by hour; the live file last)."""
    logs: dict[str, list[Path]] = {}
    for p in folder.iterdir():
        stem = p.name.split(".log", 1)[0]
        logs.setdefault(stem, []).append(p)
    return [sorted(ps, key=lambda p: (p.name.endswith(".log"), p.name)) for _, ps in sorted(logs.items())]


def stream(folder: Path, tz: str) -> list[tuple[datetime, str]]:
    """Every physical line of the host's logs in `folder`, merged in time order: (UTC time, line). A
    record's lines get its time, each line at least a microsecond after the one before (a runtime stamps
    each line as it is written)."""
    zone = ZoneInfo(tz)
    per_log = [[rec for p in paths for rec in _records(p)] for paths in _files_in_order(folder)]
    out, tick = [], timedelta(microseconds=1)
    for local, ms, lines in heapq.merge(*per_log, key=lambda r: (r[0], r[1])):
        at = (datetime.strptime(local, "%Y-%m-%d %H:%M:%S").replace(tzinfo=zone).astimezone(timezone.utc)
              + timedelta(milliseconds=ms))
        for line in lines:
            at = max(at, out[-1][0] + tick) if out else at
            out.append((at, line))
    return out


def rfc3339nano(at: datetime, extra_ns: int = 0) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond:06d}{extra_ns:03d}Z"


def _longest(lines: list[tuple[datetime, str]]) -> datetime | None:
    """The time of the longest line (times are unique: `stream`)."""
    return max(lines, key=lambda e: len(e[1]))[0] if lines else None


def _pieces(text: str) -> list[str]:
    step = -(-len(text) // PIECES)
    return [text[i:i + step] for i in range(0, len(text), step)] or [""]


def _chunks(lines: list[tuple[datetime, str]], n: int) -> list[list[tuple[datetime, str]]]:
    """`lines` cut by size into `n` files, oldest first, each cut before a record's first line (kubelet
    cuts anywhere: here a record stays in one file, so the simulated fleet has nothing to quarantine)."""
    total = sum(len(t) + 1 for _, t in lines)
    out, size, cur = [], 0, []
    for e in lines:
        if cur and len(out) < n - 1 and size >= total / n * (len(out) + 1) and _START.match(e[1]):
            out.append(cur)
            cur = []
        cur.append(e)
        size += len(e[1]) + 1
    return out + [cur]


def _write(path: Path, entries: list[tuple[datetime, str]], compress: bool = False) -> None:
    data = "".join(t + "\n" for _, t in entries).encode()
    path.write_bytes(gzip.compress(data, mtime=0) if compress else data)
    if entries:
        stamp = entries[-1][0].timestamp() + 1
        os.utime(path, (stamp, stamp))


def _pod_uid(cluster: str, host: str) -> str:
    h = hashlib.sha256(f"{cluster}/{host}".encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def _cri(lines: list[tuple[datetime, str]], long: datetime | None) -> list[tuple[datetime, str]]:
    out = []
    for at, line in lines:
        if at == long:
            parts = _pieces(line)
            out.extend((at, f"{rfc3339nano(at, k)} stdout {'F' if k == len(parts) - 1 else 'P'} {p}")
                       for k, p in enumerate(parts))
        else:
            out.append((at, f"{rfc3339nano(at)} stdout F {line}"))
    return out


def _docker(lines: list[tuple[datetime, str]], long: datetime | None) -> list[tuple[datetime, str]]:
    out = []
    for at, line in lines:
        parts = _pieces(line) if at == long else [line]
        for k, p in enumerate(parts):
            text = p + ("\n" if k == len(parts) - 1 else "")
            out.append((at, json.dumps({"log": text, "stream": "stdout", "time": rfc3339nano(at, k)},
                                       separators=(",", ":"))))
    return out


def _kafka_hosts(base: Path, cluster: Cluster, entry: dict):
    for h in entry["hosts"]:
        folder = base / h["host"] / "kafka"
        if h["role"] != "zookeeper" and folder.is_dir():
            yield h, folder


def cri(base: Path, cluster: Cluster, entry: dict) -> None:
    for h, folder in _kafka_hosts(base, cluster, entry):
        pod = f"{NAMESPACE}_{h['host']}"
        target = base / "pods" / f"{pod}_{_pod_uid(cluster.name, h['host'])}" / "kafka"
        target.mkdir(parents=True)
        lines = stream(folder, cluster.timezone)
        files = [_cri(chunk, _longest(lines)) for chunk in _chunks(lines, FILES_PER_HOST)]
        for k, chunk in enumerate(files[:-1]):
            rotated = chunk[-1][0].strftime("%Y%m%d-%H%M%S") if chunk else f"00000000-00000{k}"
            gz = k < len(files) - 2
            _write(target / (f"0.log.{rotated}" + (".gz" if gz else "")), chunk, compress=gz)
        _write(target / "0.log", files[-1])
        shutil.rmtree(folder)
        h["paths"] = {"kafka": str(base.resolve() / "pods" / f"{pod}_*" / "kafka")}


def docker_json(base: Path, cluster: Cluster, entry: dict) -> None:
    for h, folder in _kafka_hosts(base, cluster, entry):
        cid = hashlib.sha256(f"{cluster.name}/{h['host']}".encode()).hexdigest()
        target = base / "docker" / h["host"] / cid
        target.mkdir(parents=True)
        lines = stream(folder, cluster.timezone)
        files = [_docker(chunk, _longest(lines)) for chunk in _chunks(lines, FILES_PER_HOST)]
        for k, chunk in enumerate(files):
            n = len(files) - 1 - k
            _write(target / (f"{cid}-json.log" + (f".{n}" if n else "")), chunk)
        shutil.rmtree(folder)
        h["paths"] = {"kafka": str(base.resolve() / "docker" / h["host"] / "*")}


def kubectl(base: Path, cluster: Cluster, entry: dict) -> None:
    for h, folder in _kafka_hosts(base, cluster, entry):
        target = base / "kubectl" / h["host"]
        target.mkdir(parents=True)
        _write(target / "kafka.log", [(at, f"{rfc3339nano(at)} {line}") for at, line in
                                      stream(folder, cluster.timezone)])
        shutil.rmtree(folder)
        h["paths"] = {"kafka": str(base.resolve() / "kubectl" / h["host"])}
