"""Container log files in pull: pod folders found by a glob in `paths:`, and the hour of a wrapped line.

A pod's folder changes name with each restart (`/var/log/pods/<ns>_<pod>_<uid>/<container>/`), so an
inventory gives it as a glob (`paths: {kafka: /var/log/pods/kafka_my-cluster-kafka-0_*/kafka}`).
`GlobFolders` lists every matching folder's files as one folder's: each file named
`<matched parts>.<name>` (`kafka_my-cluster-kafka-0_<uid>.0.log`), so the `0.log` of two restarts do
not collide in landing. No symlink is followed while matching.

Kubelet rotates `0.log` into `0.log.<YYYYMMDD-HHMMSS>` (older ones gzip'd) and Docker `<id>-json.log`
into `<id>-json.log.<N>`: neither name says an hour (`lake.hours.time_in_name` is false), so both are
placed by their lines like a size-rolled log.

A wrapped line's hour (`hour_range`) is that of the record it wraps: its own log timestamp (local to
the cluster, as linecut compares them); a wrapped line without one (a stack trace line, a piece of a
split line) stays with the record before it. Only a file in which no wrapped line holds a log timestamp
is cut by the wrappers' UTC times.
"""
from __future__ import annotations

import fnmatch
import json
import posixpath
import re
from datetime import datetime
from functools import partial

from fleethealth.lake.hours import HOUR
from fleethealth.pull import linecut
from fleethealth.pull.transports.base import RemoteFile

MAGIC = re.compile(r"[*?\[]")
_WINDOW = linecut.WINDOW
MAX_LINE = 1 << 20      # a longer "line" is read in pieces of this size (no line of a log is that long)
_STAMP = rb"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d))"
_CRI = re.compile(_STAMP + rb" (?:stdout|stderr) [FP] ?(.*)$", re.S)
_KUBECTL = re.compile(_STAMP + rb" (.*)$", re.S)
_INNER = re.compile(rb"\[?(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)")


def unwrapped(line: bytes) -> tuple[bytes, bytes] | None:
    """(inner line, wrapper's RFC3339 time) of a CRI, Docker json-file or kubectl line; None if plain."""
    if line.startswith(b'{"log":'):
        try:
            doc = json.loads(line)
        except ValueError:
            return None
        if not isinstance(doc, dict) or not isinstance(doc.get("log"), str):
            return None
        return doc["log"].encode(), str(doc.get("time", "")).encode()
    m = _CRI.match(line) or _KUBECTL.match(line)
    return (m.group(2), m.group(1)) if m else None


def _utc(stamp: bytes) -> datetime | None:
    """A wrapper's RFC3339 time (nanoseconds cut to micro)."""
    s = re.sub(r"(\.\d{6})\d+", r"\1", stamp.decode("ascii", "replace")).replace("Z", "+00:00")
    try:
        at = datetime.fromisoformat(s)
    except ValueError:
        return None
    return at if at.tzinfo is not None else None


def _utc_key(stamp: bytes, timezone: str) -> bytes | None:
    at = _utc(stamp)
    return linecut.local_key(at, timezone) if at is not None else None


def newest_wrapped(read, size: int) -> tuple[bytes, float] | None:
    """The two clocks of a container file's newest line that wraps a log record: the record's own
    timestamp (local text, linecut's form) and the wrapper's UTC time (epoch seconds), from the
    file's last window; None without such a line."""
    start = max(0, size - _WINDOW)
    lines = read(start, _WINDOW).split(b"\n")
    for line in reversed(lines[1:] if start else lines):     # a window's first line may be a piece
        got = unwrapped(line)
        m = _INNER.match(got[0]) if got else None
        at = _utc(got[1]) if m else None
        if at is not None:
            return m.group(1) + b" " + m.group(2), at.timestamp()
    return None


def _lines_from(read, size: int, p: int):
    """(offset, line without its newline) of each line starting at or after `p`."""
    if p > 0:
        p -= 1                                  # a line starts at p if the byte before is a newline
        while p < size:
            chunk = read(p, _WINDOW)
            if not chunk:
                return
            i = chunk.find(b"\n")
            if i >= 0:
                p += i + 1
                break
            p += len(chunk)
    while p < size:
        buf = read(p, _WINDOW)
        if not buf:
            return
        last = p + len(buf) >= size or len(buf) < _WINDOW
        while not last and b"\n" not in buf and len(buf) < MAX_LINE:   # a long line: read on to its end
            got = read(p + len(buf), _WINDOW)
            buf += got
            last = not got or p + len(buf) >= size or len(got) < _WINDOW
        body = buf if last or b"\n" not in buf else buf[:buf.rfind(b"\n") + 1]   # (over MAX_LINE: cut)
        at = 0
        for line in body.split(b"\n"):
            if at < len(body):
                yield p + at, line
            at += len(line) + 1
        if last:
            return
        p += len(body)


def _records_from(read, size: int, p: int, timezone: str, by_wrapper: bool):
    for offset, line in _lines_from(read, size, p):
        got = unwrapped(line)
        if got is None:
            continue
        inner, stamp = got
        if by_wrapper:
            key = _utc_key(stamp, timezone)
            if key is not None:
                yield offset, key
            continue
        m = _INNER.match(inner)
        if m:
            yield offset, m.group(1) + b" " + m.group(2)


def is_wrapped(read) -> bool:
    head = read(0, 4096)
    return unwrapped(head.split(b"\n", 1)[0]) is not None


def hour_range(read, size: int, hour: datetime, timezone: str) -> tuple[int, int] | None:
    """linecut.hour_range for a file whose first line is wrapped (else linecut's own)."""
    if not is_wrapped(read):
        return linecut.hour_range(read, size, hour, timezone)
    keys = (linecut.local_key(hour, timezone), linecut.local_key(hour + HOUR, timezone))
    for by_wrapper in (False, True):
        records = partial(_records_from, timezone=timezone, by_wrapper=by_wrapper)
        first = next(records(read, size, 0), None)
        if first is not None:
            break
    else:
        return None
    start = linecut.cut(read, size, keys[0], records)
    end = linecut.cut(read, size, keys[1], records)
    if start < end and start == first[0]:
        start = 0
    return start, end


class GlobFolders:
    """A transport whose folders may be globs: the files of every matching folder, listed as one's."""

    def __init__(self, transport):
        self.transport = transport
        self._where: dict[tuple[str, str], tuple[str, str]] = {}   # (pattern, listed name) -> (folder, name)

    def __getattr__(self, name):
        return getattr(self.transport, name)

    def matches(self, pattern: str) -> list[tuple[str, str]]:
        """(folder, tag) of each folder matching `pattern`; tag: its parts that matched a wildcard."""
        parts = pattern.rstrip("/").split("/")
        found = [("/" if pattern.startswith("/") else "", [])]
        for part in parts[1:] if pattern.startswith("/") else parts:
            if not part:
                continue
            step = []
            for folder, tag in found:
                if MAGIC.search(part):
                    for name in sorted(self.transport.subfolders(folder or ".")):
                        if not name.startswith(".") and fnmatch.fnmatchcase(name, part):
                            step.append((posixpath.join(folder, name), tag + [name]))
                else:
                    step.append((posixpath.join(folder, part), tag))
            found = step
        return [(f, "_".join(t)) for f, t in found]

    def list_files(self, folder: str) -> list[RemoteFile]:
        if not MAGIC.search(folder):
            return self.transport.list_files(folder)
        out = []
        for real, tag in self.matches(folder):
            for rf in self.transport.list_files(real):
                name = f"{tag}.{rf.name}"
                self._where[(folder, name)] = (real, rf.name)
                out.append(RemoteFile(name, rf.size, rf.mtime, rf.inode))
        return sorted(out, key=lambda f: f.name)

    def real(self, folder: str, name: str) -> tuple[str, str]:
        return self._where.get((folder, name), (folder, name))

    def is_folder(self, folder: str) -> bool:
        return bool(self.matches(folder)) if MAGIC.search(folder) else self.transport.is_folder(folder)

    def head(self, folder: str, name: str, n: int) -> bytes:
        return self.transport.head(*self.real(folder, name), n)

    def read(self, folder: str, name: str, offset: int, n: int) -> bytes:
        return self.transport.read(*self.real(folder, name), offset, n)

    def fetch(self, folder: str, name: str, target, start: int = 0, end: int | None = None) -> int:
        return self.transport.fetch(*self.real(folder, name), target, start, end)
