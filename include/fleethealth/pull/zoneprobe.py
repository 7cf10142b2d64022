"""Whether a cluster's logs are written in another zone than its inventory's `timezone:` says (issue 61).

A file being written has its newest line stamped within minutes of its mtime (the time of the last
write, which the host's filesystem keeps in UTC); a container runtime's file carries that time on each
line (its wrapper's UTC time). Read in the inventory's zone, lines stamped whole or half hours away from
it say the zone is wrong: `offset` is how far, `likely_zones` the zones that fit.
`check` asks it of each host's live log files; pull of an hour that found no lines of a log although
its files were written in the hour asks it to say why (fleethealth.pull.host, the run's
`timezone_mismatch` finding instead of host_silent for every host).
"""
from __future__ import annotations

from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path
from zoneinfo import ZoneInfo, available_timezones

from fleethealth.lake.hours import UTC

QUARTER = timedelta(minutes=15)   # every zone's offset is a multiple of a quarter hour
SLACK = timedelta(minutes=5)      # newest line vs mtime: buffered writes, a clock a little off
MOST = timedelta(hours=26)        # no two zones are further apart (UTC-12 .. UTC+14)
# the zone named first for an offset, where several fit (the others follow alphabetically)
_PREFERRED = ("UTC", "Asia/Kolkata", "Asia/Kathmandu", "Australia/Adelaide", "America/St_Johns",
              "Europe/London", "Europe/Berlin", "America/New_York", "America/Chicago", "America/Denver",
              "America/Los_Angeles", "Asia/Tokyo", "Asia/Shanghai", "Asia/Singapore", "Australia/Sydney",
              "Asia/Tehran", "Asia/Kabul", "Asia/Yangon", "Australia/Darwin", "Australia/Eucla",
              "Pacific/Chatham", "Pacific/Marquesas", "Asia/Dubai", "Europe/Moscow", "America/Sao_Paulo")


def offset(stamp: bytes | str, mtime: float, timezone: str) -> timedelta | None:
    """How far a file's newest line (`stamp`, local text 'YYYY-MM-DD HH:MM:SS') read in `timezone`
    runs ahead of its `mtime` (negative: behind), in quarter hours; None when it is within SLACK of
    it, not near a quarter hour, further than any zone, or not a time."""
    try:
        text = stamp.decode() if isinstance(stamp, bytes) else stamp
        local = datetime.strptime(text[:19], "%Y-%m-%d %H:%M:%S")
    except (ValueError, UnicodeDecodeError):
        return None
    ahead = local.replace(tzinfo=ZoneInfo(timezone)).astimezone(UTC) - datetime.fromtimestamp(mtime, UTC)
    quarters = round(ahead / QUARTER)
    if quarters == 0 or abs(ahead - quarters * QUARTER) > SLACK or abs(ahead) > MOST:
        return None
    return quarters * QUARTER


def of_file(read, size: int, mtime: float, timezone: str) -> tuple[timedelta | None, bool] | None:
    """`offset` of a log file's newest line, and whether it is exact: a container file's line is
    compared with its wrapper's UTC time (the runtime's clock when the line was written, whatever
    touched the file since), another file's with its mtime. None when no line starts a record."""
    from fleethealth.pull import containers, linecut

    if containers.is_wrapped(read):
        got = containers.newest_wrapped(read, size)
        return (offset(got[0], got[1], timezone), True) if got else None
    stamp = linecut.newest_stamp(read, size)
    return (offset(stamp, mtime, timezone), False) if stamp else None


def agreed(offsets: list[timedelta | None]) -> timedelta | None:
    """The offset several files of a host show, if they all show the same one: lines ahead of their
    file's mtime from one file (no touch writes a line of the future), behind it from two (a file
    touched without a new line looks behind)."""
    if not offsets or len(set(offsets)) != 1 or not offsets[0]:
        return None
    return offsets[0] if offsets[0] > timedelta(0) or len(offsets) > 1 else None


def text(ahead: timedelta) -> str:
    """'5:30 ahead of' / '1:00 behind'."""
    minutes = abs(ahead) // timedelta(minutes=1)
    return f"{minutes // 60}:{minutes % 60:02d} {'ahead of' if ahead > timedelta(0) else 'behind'}"


@lru_cache(maxsize=1)
def _zones() -> tuple[str, ...]:
    table = Path("/usr/share/zoneinfo/zone1970.tab")     # canonical zones only, no aliases
    if table.is_file():
        names = {line.split("\t")[2] for line in table.read_text().splitlines()
                 if line and not line.startswith("#") and len(line.split("\t")) > 2}
    else:
        names = {z for z in available_timezones() if "/" in z and not z.startswith(("Etc/", "SystemV/"))}
    return tuple(z for z in _PREFERRED if z in names or z == "UTC") + tuple(sorted(names - set(_PREFERRED)))


def likely_zones(ahead: timedelta, timezone: str, at: float, most: int = 3) -> list[str]:
    """The zones whose lines would be stamped `ahead` of those of `timezone` at the time `at`: the
    best-known one alone (_PREFERRED), else up to `most`."""
    when = datetime.fromtimestamp(at, UTC)
    want = when.astimezone(ZoneInfo(timezone)).utcoffset() + ahead
    fits = [z for z in _zones() if when.astimezone(ZoneInfo(z)).utcoffset() == want]
    return fits[:1] if fits and fits[0] in _PREFERRED else fits[:most]


def hint(ahead: timedelta, timezone: str, at: float) -> str:
    """'timezone: Asia/Kolkata?' (or the UTC offset when no zone fits)."""
    zones = likely_zones(ahead, timezone, at)
    if zones:
        return f"timezone: {' or '.join(zones)}?"
    offset = datetime.fromtimestamp(at, UTC).astimezone(ZoneInfo(timezone)).utcoffset() + ahead
    return f"a timezone: of UTC{'+' if offset >= timedelta(0) else '-'}{text(abs(offset)).split()[0]}?"


# the words a pull's rejection of such a file carries (`reason`): gold's timezone_mismatch finds it by them
MARK = "read in the cluster's timezone"


def reason(ahead: timedelta, timezone: str, at: float) -> str:
    """Why none of a fresh log file's lines fell in the hour pulled."""
    return (f"its newest line, {MARK} {timezone}, is stamped {text(ahead)} the file's mtime, so none of "
            f"its lines fell in this hour: the cluster's timezone: is likely wrong ({hint(ahead, timezone, at)})")
