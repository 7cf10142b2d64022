"""Time helpers: UTC windows, local-hour file labels and fast local log timestamps.

Everything inside the simulator runs on UTC epoch milliseconds; only file names and log timestamps
are rendered in a cluster's local time (log timestamps carry no zone).
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

HOUR_MS = 3_600_000
UTC = timezone.utc


def check_window(start: datetime, end: datetime) -> tuple[int, int]:
    """Validate a tz-aware, hour-aligned [start, end) window; return it as epoch ms."""
    for name, t in (("start", start), ("end", end)):
        if t.tzinfo is None or t.utcoffset() is None:
            raise ValueError(f"{name} must be timezone-aware (UTC), got {t.isoformat()}")
        if t.minute or t.second or t.microsecond:
            raise ValueError(f"{name} must be hour-aligned, got {t.isoformat()}")
    s, e = to_ms(start), to_ms(end)
    if e <= s:
        raise ValueError(f"empty window: {start.isoformat()} .. {end.isoformat()}")
    return s, e


def to_ms(t: datetime) -> int:
    return int(round(t.timestamp() * 1000))


def utc_hours(start_ms: int, end_ms: int) -> range:
    """Epoch ms of each UTC hour start in [start, end)."""
    return range(start_ms, end_ms, HOUR_MS)


def iso_z(ms: int) -> str:
    """ISO-8601 UTC with milliseconds and a trailing Z, e.g. 2026-11-20T10:20:03.412Z."""
    dt = datetime.fromtimestamp(ms / 1000, UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


class LocalClock:
    """Renders epoch ms in one zone: log4j stamps, hour labels for file names, ISO-like names."""

    def __init__(self, tz: ZoneInfo):
        self.tz = tz
        self._hour_cache: dict[int, tuple[str, int]] = {}

    def _hour(self, ms: int) -> tuple[str, int]:
        """(local 'YYYY-MM-DD HH' of ms, epoch ms of that local hour's start) — cached per UTC hour."""
        key = ms // 60_000 // 15  # quarter-hour buckets: also right for zones with :30 and :45 offsets
        hit = self._hour_cache.get(key)
        if hit is None:
            base = key * 15 * 60_000
            local = datetime.fromtimestamp(base / 1000, UTC).astimezone(self.tz)
            label = local.strftime("%Y-%m-%d %H")
            hour_start = base - (local.minute * 60_000)
            hit = self._hour_cache[key] = (label, hour_start)
        return hit

    def stamp(self, ms: int) -> str:
        """log4j %d: '2026-11-20 05:00:01,234' in local time."""
        label, hour_start = self._hour(ms)
        r = ms - hour_start
        m, r = divmod(r, 60_000)
        s, milli = divmod(r, 1000)
        return f"{label}:{m:02d}:{s:02d},{milli:03d}"

    def hour_label(self, ms: int) -> str:
        """File suffix of the local hour holding ms: 'YYYY-MM-DD-HH'."""
        return self._hour(ms)[0].replace(" ", "-")

    def hour_start(self, ms: int) -> int:
        return self._hour(ms)[1]

    def name_stamp(self, ms: int) -> str:
        """Local time for file names: 'YYYY-MM-DDTHH-MM-SS'."""
        return self.stamp(ms)[:19].replace(" ", "T").replace(":", "-")

    def plain(self, ms: int) -> str:
        """Local 'YYYY-MM-DD HH:MM:SS' (jstack's first line)."""
        return self.stamp(ms)[:19]

    def java_date(self, ms: int) -> str:
        """java.util.Date#toString in local time, e.g. 'Fri Nov 20 05:00:01 EST 2026'."""
        local = datetime.fromtimestamp(ms / 1000, UTC).astimezone(self.tz)
        return local.strftime("%a %b %d %H:%M:%S ") + (local.tzname() or "UTC") + local.strftime(" %Y")
