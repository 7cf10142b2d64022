"""Where an hour's lines are in a log file whose name does not say (live, size-rolled, daily-rolled).

A line belongs to the hour its own timestamp says. Log4j and ZooKeeper write records in time order,
so the lines of one hour are one byte range: from the first record stamped at or after the hour's
start to the first record stamped at or after its end. `hour_range` finds both ends by binary
search over record starts (a few small reads, also over SFTP), so a size-rolled `zookeeper.log`
spanning many hours, or a live `server.log` copied into an archive, gives each hour exactly its
lines whatever the file's name or mtime. Continuation lines (stack traces, cleaner stats) have no
timestamp and stay with the record before them; lines before a file's first record go with it.

Timestamps are compared as the text the log writes (`2026-11-20 10:00:00`, local to the cluster;
`[...]`-wrapped for log4j, bare for ZooKeeper): an hour's ends are given in the same form. Where a
cluster's clock falls back (the repeated local hour of a DST change) local text is not in time order;
the lines of both repeated hours then land in the later one.
"""
from __future__ import annotations

import re
from datetime import datetime
from typing import Callable
from zoneinfo import ZoneInfo

from fleethealth.hours import HOUR

Reader = Callable[[int, int], bytes]   # (offset, n) -> up to n bytes of the file from offset

WINDOW = 64 * 1024
# a record start: a line beginning with a log4j ("[2026-11-20 10:00:01,000]") or ZooKeeper
# ("2026-11-20 10:00:01,000 [myid:1]") timestamp, right after a newline
_RECORD = re.compile(rb"\n\[?(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)")
_LONGEST = 32   # a record start is shorter than this: windows overlap by it


def local_key(at: datetime, timezone: str) -> bytes:
    """`at` as a log timestamp of the cluster (the form record starts are compared in)."""
    return at.astimezone(ZoneInfo(timezone)).strftime("%Y-%m-%d %H:%M:%S").encode()


def _records_from(read: Reader, size: int, p: int):
    """(offset, key) of each record start at or after offset `p`, in file order."""
    start = max(p - 1, 0)
    if start == 0:
        buf = b"\n" + read(0, WINDOW)   # the first line starts a record as if after a newline
        shift = -1
    else:
        buf, shift = read(start, WINDOW), 0
    while buf:
        for m in _RECORD.finditer(buf):
            offset = start + shift + m.start() + 1
            if offset >= p:
                yield offset, m.group(1) + b" " + m.group(2)
                p = offset + 1
        if start + shift + len(buf) >= size:
            return
        start = start + shift + len(buf) - _LONGEST
        shift = 0
        buf = read(start, WINDOW)


def _first_at_or_after(read: Reader, size: int, p: int):
    return next(_records_from(read, size, p), None)


def cut(read: Reader, size: int, key: bytes) -> int:
    """Offset of the first record stamped at or after `key` (`size` if none)."""
    best, lo, hi = size, 0, size   # the answer is a record start in [lo, hi), else `best`
    while hi - lo > WINDOW:
        mid = (lo + hi) // 2
        found = _first_at_or_after(read, size, mid)
        if found is None or found[0] >= hi:          # no record start in [mid, hi)
            hi = mid
        elif found[1] >= key:
            best, hi = found[0], mid
        else:
            lo = found[0] + 1
    for offset, stamp in _records_from(read, size, lo):
        if offset >= hi:
            break
        if stamp >= key:
            return offset
    return best


def hour_range(read: Reader, size: int, hour: datetime, timezone: str) -> tuple[int, int] | None:
    """[start, end) bytes of the records of `hour` (UTC) in a file of `size` bytes, or None when the
    file has no record start at all (nothing tells its lines' hour)."""
    first = _first_at_or_after(read, size, 0)
    if first is None:
        return None
    start = cut(read, size, local_key(hour, timezone))
    end = cut(read, size, local_key(hour + HOUR, timezone))
    if start < end and start == first[0]:
        start = 0                      # lines before the first record go with it
    return start, end
