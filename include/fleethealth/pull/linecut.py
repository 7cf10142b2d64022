"""Where an hour's lines are in a log file (live, size-rolled, daily- or hourly-rolled) or a JSON-lines
JMX export.

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

An hourly-rolled file (`server.log.2026-11-20-10`) is not searched: its name says its local hour, except
for the records at its head stamped in the hour before (written just after the roll), which go to that
hour (`rolled_range`); in a zone whose offset is not whole hours (UTC+05:30, +05:45, -03:30) a local
hour overlaps two UTC hours, and is cut between them by its records' stamps. A stray stamp inside it
(a clock jump, an impossible date) cannot move lines out of the file's local hours. In a live or size-rolled file such a stamp can misplace the lines around it: there only the stamps
tell the hours.

JSON-lines JMX exports (one Jolokia response, or bulk-read array, per line) are cut the same way by
each line's Jolokia `timestamp` (epoch seconds; the last one in the line); lines without one go with
the line before them.
"""
from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Callable
from zoneinfo import ZoneInfo

from fleethealth.lake.hours import HOUR, UTC, floor_hour

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
    got = read(start, WINDOW)
    # the first line starts a record as if after a newline
    buf, shift = (b"\n" + got, -1) if start == 0 else (got, 0)
    while buf:
        for m in _RECORD.finditer(buf):
            offset = start + shift + m.start() + 1
            if offset >= p:
                yield offset, m.group(1) + b" " + m.group(2)
                p = offset + 1
        end = start + len(got)
        if end >= size or len(got) < WINDOW:   # a short read: the file ends here (it may have shrunk)
            return
        start, shift = end - _LONGEST, 0
        got = buf = read(start, WINDOW)


_JSON_STAMP = re.compile(rb'"timestamp"\s*:\s*(\d{9,13})\b')


def _newline_at_or_after(read: Reader, size: int, p: int) -> int | None:
    while p < size:
        chunk = read(p, WINDOW)
        if not chunk:
            return None
        i = chunk.find(b"\n")
        if i >= 0:
            return p + i
        p += len(chunk)
    return None


def _json_record(line: bytes, offset: int):
    """(offset, epoch seconds) of a JSON-lines record (a line opening with `[` or `{` that holds a
    Jolokia timestamp), or nothing."""
    stamps = _JSON_STAMP.findall(line) if line[:1] in (b"[", b"{") else []
    if stamps:
        value = int(stamps[-1])
        yield offset, value // 1000 if value >= 10**11 else value   # milliseconds, from some exporters


def _json_records_from(read: Reader, size: int, p: int):
    """(offset, epoch seconds) of each JSON-lines record at or after offset `p`, in file order. A
    window is read once and only its lines holding a timestamp are looked at (lines of `{}` cost
    nothing); a line longer than a window is read whole."""
    if p > 0:
        newline = _newline_at_or_after(read, size, p - 1)
        if newline is None:
            return
        p = newline + 1
    while p < size:
        buf = read(p, WINDOW)
        if not buf:
            return
        last = p + len(buf) >= size or len(buf) < WINDOW     # the file ends in this window
        cut_at = len(buf) if last else buf.rfind(b"\n") + 1
        if cut_at == 0:                                       # a line longer than the window
            end = _newline_at_or_after(read, size, p)
            end = size if end is None else end
            yield from _json_record(read(p, end - p), p)
            p = end + 1
            continue
        lines, done = buf[:cut_at], 0
        for m in _JSON_STAMP.finditer(lines):
            if m.start() < done:
                continue                                      # its line was taken already
            start = lines.rfind(b"\n", 0, m.start()) + 1
            end = lines.find(b"\n", m.end())
            done = len(lines) if end < 0 else end + 1
            yield from _json_record(lines[start:done].rstrip(b"\n"), p + start)
        if last:
            return
        p += cut_at


def _first_at_or_after(read: Reader, size: int, p: int, records=_records_from):
    return next(records(read, size, p), None)


def cut(read: Reader, size: int, key, records=_records_from) -> int:
    """Offset of the first record stamped at or after `key` (`size` if none)."""
    best, lo, hi = size, 0, size   # the answer is a record start in [lo, hi), else `best`
    while hi - lo > WINDOW:
        mid = (lo + hi) // 2
        found = _first_at_or_after(read, size, mid, records)
        if found is None or found[0] >= hi:          # no record start in [mid, hi)
            hi = mid
        elif found[1] >= key:
            best, hi = found[0], mid
        else:
            lo = found[0] + 1
    for offset, stamp in records(read, size, lo):
        if offset >= hi:
            break
        if stamp >= key:
            return offset
    return best


def hour_range(read: Reader, size: int, hour: datetime, timezone: str,
               json_lines: bool = False) -> tuple[int, int] | None:
    """[start, end) bytes of the records of `hour` (UTC) in a file of `size` bytes (a log, or with
    `json_lines` a JSON-lines JMX export), or None when the file has no record start at all
    (nothing tells its lines' hour)."""
    if json_lines:
        records, keys = _json_records_from, (int(hour.timestamp()), int((hour + HOUR).timestamp()))
    else:
        records, keys = _records_from, (local_key(hour, timezone), local_key(hour + HOUR, timezone))
    first = _first_at_or_after(read, size, 0, records)
    if first is None:
        return None
    start = cut(read, size, keys[0], records)
    end = cut(read, size, keys[1], records)
    if start < end and start == first[0]:
        start = 0                      # lines before the first record go with it
    return start, end


def rolled_range(read: Reader, size: int, hour: datetime, named: datetime, timezone: str,
                 named_end: datetime | None = None) -> tuple[int, int] | None:
    """[start, end) bytes of the lines of `hour` (UTC) in an hourly-rolled log file named for the local
    hour that runs from `named` to `named_end` (UTC; two hours for the repeated hour of a fall-back):
    the records at its head stamped in the hour before `named` are that hour's, all the rest the named
    hour's. Where the zone's offset is not whole hours (Asia/Kolkata, Asia/Kathmandu) each of these
    local hours overlaps two UTC hours and is cut between them by its records' stamps, never moving
    lines out of it; None when the file has no record start at all."""
    named_end = named_end or named + HOUR
    before, key = local_key(named - HOUR, timezone), local_key(named, timezone)
    first, head_end = None, None
    for offset, stamp in _records_from(read, size, 0):
        if first is None:
            first = offset
        if not before <= stamp < key:
            head_end = offset
            break
    if first is None:
        return None
    if head_end is None:
        head_end = size
    if head_end == first:
        head_end = 0                   # no record of the hour before: lines before the first record go with it
    pieces = _by_utc_hour(read, size, 0, head_end, named - HOUR, named, timezone) \
        + _by_utc_hour(read, size, head_end, size, named, named_end, timezone)
    own = [(lo, hi) for at, lo, hi in pieces if at == hour]
    if not own:
        return size, size
    return own[0][0], own[-1][1]


def _by_utc_hour(read: Reader, size: int, lo: int, hi: int, start: datetime, end: datetime,
                 timezone: str) -> list[tuple[datetime, int, int]]:
    """(UTC hour, lo, hi): the bytes [lo, hi) of records stamped from `start` to `end` (UTC), one piece
    per UTC hour they overlap, cut where the first record of each later hour starts (clamped to
    [lo, hi): a stray stamp moves lines between these hours only)."""
    hours, at = [], floor_hour(start)
    while at < end:
        hours.append(at)
        at += HOUR
    if end - start > HOUR:             # the repeated local hour of a fall-back: its stamps go back once
        cuts = _cuts_across_fold(read, size, lo, hi, hours[1:], timezone)
    else:
        cuts = [cut(read, size, local_key(h, timezone)) for h in hours[1:]]
    bounds = [lo]
    for c in cuts:
        bounds.append(min(max(c, bounds[-1]), hi))
    bounds.append(hi)
    return [(h, bounds[i], bounds[i + 1]) for i, h in enumerate(hours)]


FOLD_DROP = timedelta(minutes=1)   # a record stamped this much before an earlier one: the clock fell back


def _cuts_across_fold(read: Reader, size: int, lo: int, hi: int, starts: list[datetime],
                      timezone: str) -> list[int]:
    """Offsets of the first record in [lo, hi) at or after each of `starts` (UTC), in a stretch whose
    local stamps run through a repeated hour twice: read in file order, a record stamped well before
    one already seen is of the second pass (fold=1)."""
    zone, fold, top, cuts = ZoneInfo(timezone), 0, None, []
    for offset, stamp in _records_from(read, size, lo):
        if offset >= hi or len(cuts) == len(starts):
            break
        try:
            local = datetime.strptime(stamp.decode(), "%Y-%m-%d %H:%M:%S")
        except ValueError:             # an impossible date: no time of its own
            continue
        if top is not None and top - local >= FOLD_DROP:
            fold = 1
        top = local if top is None else max(top, local)
        at = local.replace(tzinfo=zone, fold=fold).astimezone(UTC)
        while len(cuts) < len(starts) and at >= starts[len(cuts)]:
            cuts.append(offset)
    return cuts + [hi] * (len(starts) - len(cuts))


def newest_stamp(read: Reader, size: int) -> bytes | None:
    """The local timestamp (`local_key` form) of the last record start of a log file, from its last
    window: None when none is there."""
    last = None
    for _, stamp in _records_from(read, size, max(0, size - WINDOW)):
        last = stamp
    return last
