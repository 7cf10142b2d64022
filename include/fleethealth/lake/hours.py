"""The processed hour: parsing, iteration, and which hour a file or an Airflow run stands for."""
from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from fleethealth.runtime import config

HOUR = timedelta(hours=1)
UTC = timezone.utc
# live Jolokia reads are taken for an hour until this after its end (the pull)
LIVE_WINDOW = timedelta(hours=1)
# the times a JMX sample of an hour may carry: from a little before it (a clock a few minutes ahead;
# the silver gate's hour_tolerance_minutes) to the end of its live window. Silver sets aside a sample
# outside it, and stamps one taken after the hour's end at the hour's end (the hour it serves): an
# honest late read never fails the hour
READ_EARLY = timedelta(minutes=10)


# the hour of a file parsed outside any hour (`fleethealth parse`): no read window applies to it
NO_HOUR = datetime(1970, 1, 1, tzinfo=UTC)


def read_window(hour: datetime) -> tuple[datetime, datetime]:
    """(first, last) time a JMX sample of `hour` may carry."""
    return hour - READ_EARLY, hour + HOUR + LIVE_WINDOW


def parse_instant(text: str) -> datetime:
    """An ISO-8601 instant; naive values are UTC. Raises ValueError with the offending text."""
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"not an ISO-8601 time: {text!r} (e.g. 2026-11-20T10:00Z)") from None
    try:
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except OverflowError:       # beyond 9999 in UTC
        value = None
    # every path names an hour by its four-digit year (catalog.Lakehouse.stamp)
    if value is None or value.year < 1970:
        raise ValueError(f"not a time of the years 1970 to 9999: {text!r} (e.g. 2026-11-20T10:00Z)")
    return value


def parse_hour(text: str) -> datetime:
    """An ISO-8601 hour in UTC; minutes, seconds must be zero."""
    value = parse_instant(text)
    if value != floor_hour(value):
        raise ValueError(f"not a whole hour: {text!r}")
    return value


def parse_window(start: str, end: str, names: tuple[str, str] = ("--from", "--to"),
                 until_now: bool = False) -> list[datetime]:
    """The whole UTC hours of [start, end): the one rule of every command that takes a window. Both
    ends are hours (HH:00, naive means UTC) from 1970 on, start is before end and at most
    FLEETHEALTH_WINDOW_MAX_HOURS before it, and, `until_now` (a window that is pulled or processed),
    the window ends by the end of the current hour (not_after_now); else one ValueError line."""
    bounds = []
    for name, text in zip(names, (start, end)):
        value = parse_instant(text)
        if value != floor_hour(value):
            raise ValueError(f"{name} {text}: not on the hour (a window runs from one HH:00 to another, "
                             "e.g. --from 2026-11-20T10:00Z --to 2026-11-20T13:00Z)")
        bounds.append(value)
    if bounds[0] >= bounds[1]:
        raise ValueError(f"{names[0]} {start} is not before {names[1]} {end}: a window [{names[0]}, {names[1]}) "
                         "holds at least one hour")
    count, most = (bounds[1] - bounds[0]) // HOUR, config.window_max_hours()
    if count > most:
        raise ValueError(f"{names[0]} {start} {names[1]} {end}: {count:,} hours; a window holds at most "
                         f"{most:,} (FLEETHEALTH_WINDOW_MAX_HOURS)")
    if until_now:
        not_after_now(bounds[1] - HOUR, f"{names[0]} {start} {names[1]} {end}", names[1])
    return hours_between(*bounds)


def current_hour() -> datetime:
    """The UTC hour that holds now."""
    return floor_hour(datetime.now(UTC))


def not_after_now(last: datetime, what: str, end_name: str | None = None) -> datetime:
    """`last`, the last hour of a window (`end_name`: the option naming its end) or the one hour to
    pull or process, unless it is after the current hour: then one ValueError line naming `what` and
    the current hour. The current hour itself is allowed: the hourly DAG's runs and a live pull
    (pull.host.LIVE_WINDOW) read it while it is still being written; a later hour has no data yet, and
    would open `host_silent` for every host and become gold's last processed hour."""
    now = current_hour()
    if last > now:
        if end_name:
            raise ValueError(f"{what}: the window ends after the current hour {now:%Y-%m-%dT%H:%MZ}; "
                             f"{end_name} is at most {now + HOUR:%Y-%m-%dT%H:%MZ}")
        raise ValueError(f"{what}: after the current hour {now:%Y-%m-%dT%H:%MZ}")
    return last


def floor_hour(value: datetime) -> datetime:
    value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return value.replace(minute=0, second=0, microsecond=0)


def hours_between(start: datetime, end: datetime) -> list[datetime]:
    """Whole UTC hours h with start <= h < end."""
    hour, out = floor_hour(start), []
    if hour < start:
        hour += HOUR
    while hour < end:
        out.append(hour)
        hour += HOUR
    return out


def hour_label(hour: datetime) -> str:
    """The canonical text of an hour: 2026-11-20T10:00:00+00:00."""
    return floor_hour(hour).isoformat()


def processed_hour(explicit: str | None, interval_start: datetime | None,
                   interval_end: datetime | None, logical_date: datetime | None) -> datetime:
    """The hour an Airflow run processes.

    An explicit `hour` param wins. A real data interval (CronDataIntervalTimetable) gives its start.
    Airflow 3 cron schedules and manual runs have zero-width intervals: then the hour before the
    logical date (the last complete hour). An hour after the current one is refused (not_after_now).
    """
    if explicit:
        hour = parse_hour(explicit)
    elif interval_start is not None and interval_end is not None and interval_end > interval_start:
        hour = floor_hour(interval_start)
    else:
        if logical_date is None and interval_end is not None:
            logical_date = interval_end
        if logical_date is None:
            raise ValueError("no hour: give the `hour` param or a data interval")
        hour = floor_hour(logical_date - HOUR)
    return not_after_now(hour, f"hour {hour:%Y-%m-%dT%H:%MZ}")


_ROLLED = re.compile(r"\.(\d{4})-(\d{2})-(\d{2})-(\d{2})(?:\.gz)?$")
_STAMP = re.compile(r"(\d{4})-?(\d{2})-?(\d{2})T(\d{2})[-:]?(\d{2})(?:[-:]?(\d{2}))?(Z)?")
# the same stamp for Spark (a Java regex): groups year, month, day, hour, minute, second?, Z?
NAME_STAMP = _STAMP.pattern


def time_in_name(name: str) -> bool:
    """Whether a file's name says its time (hourly-rolled log, snapshot): else it is live,
    size-rolled or daily-rolled, and only its lines' own timestamps tell their hours."""
    return bool(_ROLLED.search(name) or _STAMP.search(name))


def file_span(name: str, mtime: float, tz: str) -> tuple[datetime, datetime]:
    """The UTC time span a fleet file covers, from its name or else its mtime.

    Hourly-rolled log4j files (`server.log.2026-11-20-10[.gz]`) cover that local hour (in a zone whose
    offset is not whole hours, parts of two UTC hours: `straddles`); snapshots
    with a timestamp in the name (`jstack-2026-11-20T10-30-00.txt`, local unless it ends in Z) and
    anything else (size-rolled, live files: by mtime) cover one instant.
    """
    zone = ZoneInfo(tz)
    m = _ROLLED.search(name)
    if m:
        y, mo, d, h = map(int, m.groups())
        local = datetime(y, mo, d, h)
        # to the next local hour's start: two UTC hours for the repeated hour of a fall-back
        return local.replace(tzinfo=zone).astimezone(UTC), (local + HOUR).replace(tzinfo=zone).astimezone(UTC)
    m = _STAMP.search(name)
    if m:
        y, mo, d, h, mi = map(int, m.groups()[:5])
        s = int(m.group(6) or 0)
        at = datetime(y, mo, d, h, mi, s, tzinfo=UTC if m.group(7) else zone).astimezone(UTC)
        return at, at
    at = datetime.fromtimestamp(mtime, UTC)
    return at, at


def straddles(name: str, tz: str) -> bool:
    """Whether a file named for a local hour covers other than exactly one UTC hour (UTC+05:30, or
    the repeated hour of a fall-back): its lines then find their UTC hours by their own times."""
    if not _ROLLED.search(name):
        return False
    start, end = file_span(name, 0.0, tz)
    return start != floor_hour(start) or end - start != HOUR


def in_hour(span: tuple[datetime, datetime], hour: datetime) -> bool:
    start, end = span
    if start == end:
        return hour <= start < hour + HOUR
    return start < hour + HOUR and end > hour
