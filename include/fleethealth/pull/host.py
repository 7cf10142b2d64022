"""One host's pull of one hour: which of its files and bytes land, into
`<hour>/_partial/<cluster>/<host>`, renamed over `<hour>/<cluster>/<host>` at the end (fleethealth.pull.hour
says which files and bytes, and why a line lands in one hour only)."""
from __future__ import annotations

import json
import logging
import posixpath
import re
import shutil
import threading
import time
from dataclasses import asdict
from datetime import datetime, timedelta, timezone
from pathlib import Path

from fleethealth.fleet.inventory import Host
from fleethealth.fleet.sources import SOURCES
from fleethealth.lake.catalog import Lakehouse
from fleethealth.lake.hours import (HOUR, LIVE_WINDOW, file_span, floor_hour, hour_label, in_hour, straddles,
                                    time_in_name)
from fleethealth.pull import containers, linecut, zoneprobe
from fleethealth.pull.identity import Seen, SeenIndex, load_state, save_state
from fleethealth.pull.inflate import cut_after_last_newline, ends_with_newline, gunzip, gzip_damage
from fleethealth.pull.landing import (MANIFEST, PARTIAL, PROMETHEUS_FILE, Landed, PullError, inside, landed_name,
                                      safe_name, sha256_of)
from fleethealth.pull.transports import jolokia, open_transport, prometheus
from fleethealth.pull.transports.base import FileError, RemoteFile, TransportError
from fleethealth.pull.transports.local import LocalTransport
from fleethealth.runtime import config
from fleethealth.runtime.text import printable

log = logging.getLogger(__name__)
MAX_FILE_BYTES = 2 * 1024**3          # the default of an inventory's max_file_bytes
PROBED_FILES = 4                      # a source's latest files whose lines zone_probe compares with their mtime


class PullDeadline(TransportError):
    """The host's FLEETHEALTH_PULL_TIMEOUT_S passed: its pull ends where it is."""


def placed_by_lines(source: str, name: str, tz: str = "UTC") -> str:
    """How a file's records find their hours (its source's `placed_by`, fleethealth.fleet.sources):
    "log" (by its lines' timestamps: every log, and thread dumps without a capture time in their name),
    "json" (a JSON-lines JMX export without a time in its name, or named for a local hour that is not
    one UTC hour in the cluster's zone `tz`: by its lines' Jolokia timestamps, if it has any) or "" (by
    the time in its name, else its mtime: snapshots, scrapes, rolled exports)."""
    placed_by = SOURCES[source].placed_by
    if placed_by == "lines" or (placed_by == "lines_unless_named" and not time_in_name(name)):
        return "log"
    if placed_by == "json_lines" and (not time_in_name(name) or straddles(name, tz)) \
            and not name.endswith(".gz") and not re.search(PROMETHEUS_FILE, name):
        return "json"
    return ""


def may_hold(name: str, mtime: float, hour: datetime, tz: str) -> bool:
    """Whether a file may hold lines of `hour`: not if it was last written before the hour began, nor
    if its name says a later time. An hourly-rolled file holds its hour and, first, any lines of the
    hour before that were written after the roll (in a zone of half hours, the two UTC hours that
    local hour overlaps)."""
    if mtime < hour.timestamp():
        return False
    if not time_in_name(name):
        return True
    start, end = file_span(name, mtime, tz)
    return floor_hour(start - HOUR) <= hour and (start == end or hour < end)


def byte_range(known: Seen | None, size: int, hour: str) -> tuple[int, int | None]:
    """[start, end) of the file to land for `hour`; end None: up to `size`. start == size: nothing new."""
    if known is None or size < known.end:           # new, or truncated and rewritten: all of it
        return 0, None
    own = [r for r in known.ranges if r["hour"] == hour]
    if own:
        start = min(r["start"] for r in own)
        later = [r["start"] for r in known.ranges if r["start"] > start]
        return start, (min(later) if later else None)
    return known.end, None


class HostPull:
    """The pull of `host` for `hour` (`run`): every file of each source folder is placed by its lines
    (`by_content`, `json_lines`) or by its name, mtime and what the state knows of it (`by_identity`);
    what lands or is rejected is a `Landed` row of the host's manifest."""

    def __init__(self, host: Host, timezone_name: str, hour: datetime, lakehouse: Lakehouse, now: datetime | None):
        self.host, self.timezone_name, self.hour = host, timezone_name, hour
        self.now = now or datetime.now(timezone.utc)
        self.label = hour_label(hour)
        base = lakehouse.landing(hour)
        self.host_dir = base / host.cluster / host.host
        self.tmp = base / PARTIAL / host.cluster / host.host
        self.cap = host.max_file_bytes or MAX_FILE_BYTES
        self.state_file = lakehouse.pull_state(host.cluster, host.host)
        self.landed: list[Landed] = []
        self.timeout_s = config.pull_timeout_s()
        self.deadline = time.monotonic() + self.timeout_s
        self.expired = threading.Event()

    def add(self, source: str, target: Path, remote: str, mtime: float, offset: int, name: str | None = None,
            read: Path | None = None, reason: str = "") -> None:
        """A landed file (`read`: the file bronze reads instead, e.g. the lines of a damaged .gz)."""
        host = self.host
        rel = f"{host.cluster}/{host.host}/{source}"
        self.landed.append(Landed(host.cluster, host.host, source, f"{rel}/{name or target.name}",
                                  target.stat().st_size, sha256_of(target), mtime, self.pulled_at, remote, offset,
                                  path=f"{rel}/{(read or target).name}", reason=reason))

    def reject(self, source: str, rf, remote: str, reason: str) -> None:
        host = self.host
        log.warning("%s: %s rejected: %s", host.host, printable(remote), printable(reason))
        self.landed.append(Landed(host.cluster, host.host, source,
                                  f"{host.cluster}/{host.host}/{source}/{rf.name}".rstrip("/"),
                                  rf.size, "", rf.mtime, self.pulled_at, remote, status="rejected", reason=reason))

    def over_cap(self, rf) -> str:
        return f"{rf.size} bytes, over the cap of {self.cap}" if rf.size > self.cap else ""

    def by_content(self, transport, source: str, folder: str, rf) -> None:
        """Land the lines of `hour` of a log file, found by their own timestamps (linecut). A file that
        cannot be read is reported in the hour its name says (else in every hour it may hold)."""
        hour, timezone_name, tmp = self.hour, self.timezone_name, self.tmp
        remote = posixpath.join(folder, rf.name)
        home = in_hour(file_span(rf.name, rf.mtime, timezone_name), hour)
        if self.over_cap(rf):
            if home or not time_in_name(rf.name):
                self.reject(source, rf, remote, self.over_cap(rf))
            return
        target = inside(tmp, tmp / source / landed_name(rf.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        reason, plain = "", None
        try:
            if rf.name.endswith(".gz"):     # no seeking in a compressed file: decompress it here first
                reason, plain = gunzip(transport, folder, rf.name, target, rf.size, self.cap)
                if plain is None:
                    if home or not time_in_name(rf.name):
                        self.reject(source, rf, remote, reason)
                    return
                target = target.with_name(target.name + ".lines")
                transport, folder, name, size = LocalTransport(), str(plain.parent), plain.name, plain.stat().st_size
            else:
                name, size = rf.name, rf.size
            read = lambda offset, n: transport.read(folder, name, offset, n)  # noqa: E731
            named, named_end = file_span(rf.name, rf.mtime, timezone_name)
            if named < named_end:   # hourly-rolled: its hour, but for a head of the hour before's records
                span = linecut.rolled_range(read, size, hour, named, timezone_name, named_end)
            else:
                span = containers.hour_range(read, size, hour, timezone_name)   # wrapped or plain
            if span is None:   # not one timestamped line: the hour its name or mtime says (silver
                # quarantines the lines); an empty file is listed in the hour its name says
                span = (0, size if home and (size or time_in_name(rf.name)) else -1)
            start, end = span
            if start < end or start == end == 0 == size:
                copied = transport.fetch(folder, name, target, start, end)
                if start + copied < end:
                    reason = f"shrank from {size} to {start + copied} bytes while it was read"
                elif start < end == size and not reason and not ends_with_newline(target):
                    reason = "its last line was still being written (no newline at the end)"
        except FileError as exc:
            target.unlink(missing_ok=True)
            if home or not time_in_name(rf.name):
                self.reject(source, rf, remote, str(exc))
            return
        finally:
            if plain is not None:
                plain.unlink(missing_ok=True)
        if start < end or start == end == 0 == size:
            self.add(source, target, remote, rf.mtime, start, rf.name, reason=reason)

    def json_lines(self, transport, source: str, folder: str, rf) -> bool:
        """Land the lines of `hour` of a JSON-lines JMX export by their Jolokia timestamps; False when
        it holds no such line (then it is placed by its name or mtime, as other exports are)."""
        read = lambda offset, n: transport.read(folder, rf.name, offset, n)  # noqa: E731
        remote = posixpath.join(folder, rf.name)
        try:
            span = linecut.hour_range(read, min(rf.size, self.cap), self.hour, self.timezone_name, json_lines=True)
            if span is None:
                return False
            if self.over_cap(rf):
                self.reject(source, rf, remote, self.over_cap(rf))
                return True
            start, end = span
            if start < end:
                target = inside(self.tmp, self.tmp / source / landed_name(rf.name))
                target.parent.mkdir(parents=True, exist_ok=True)
                copied = transport.fetch(folder, rf.name, target, start, end)
                reason = ""
                if start + copied < end:
                    reason = f"shrank from {rf.size} to {start + copied} bytes while it was read"
                elif end == rf.size and not ends_with_newline(target):
                    reason = "its last line was still being written (no newline at the end)"
                self.add(source, target, remote, rf.mtime, start, rf.name, reason=reason)
        except FileError as exc:
            self.reject(source, rf, remote, str(exc))
        return True

    def by_identity(self, transport, seen_index: SeenIndex, source: str, folder: str, rf, repull: bool) -> None:
        """Land a file placed by the time in its name or its mtime: only its bytes not landed before
        (a live file's new lines), as the state knows it (`SeenIndex.identify`)."""
        label = self.label
        span = file_span(rf.name, rf.mtime, self.timezone_name)
        selected = in_hour(span, self.hour)
        # Re-pulling an hour: a file changed since may still hold bytes landed for it.
        if not selected and not (repull and span[0] == span[1] and rf.mtime >= self.hour.timestamp()):
            return
        remote = posixpath.join(folder, rf.name)
        if self.over_cap(rf):
            if selected:
                self.reject(source, rf, remote, self.over_cap(rf))
            return
        target = inside(self.tmp, self.tmp / source / landed_name(rf.name))
        try:
            head = seen_index.head(folder, rf.name)
            known = seen_index.identify(remote, rf, head)
            if not selected and (known is None or not any(r["hour"] == label for r in known.ranges)):
                return
            start, end = byte_range(known, rf.size, label)
            stop = rf.size if end is None else end
            if start >= stop and not (known is None and rf.size == 0):  # an empty file is listed too
                log.info("%s: %s unchanged since it was last pulled", self.host.host, remote)
                return
            target.parent.mkdir(parents=True, exist_ok=True)
            copied = transport.fetch(folder, rf.name, target, start, stop)
        except FileError as exc:
            target.unlink(missing_ok=True)
            if selected:
                self.reject(source, rf, remote, str(exc))
            return
        reason, read = "", None
        if start + copied < stop:
            reason = f"shrank from {rf.size} to {start + copied} bytes while it was read"
            stop = start + copied
        if rf.name.endswith(".gz"):
            damage, read = gzip_damage(target, self.cap)
            if damage:  # landed as found; not recorded in the state, so a re-pull takes it again
                if read is None:
                    self.reject(source, rf, remote, damage)
                else:
                    self.add(source, target, remote, rf.mtime, start, rf.name, read, damage)
                return
        # a live or size-rolled text file may still grow (compressed ones are final)
        elif end is None and span[0] == span[1]:
            stop = start + cut_after_last_newline(target)
        known = seen_index.record(known, remote, rf, head, self.pulled_at)
        known.ranges = [r for r in known.ranges if r["hour"] != label or r["start"] != start]
        known.ranges.append({"hour": label, "start": start, "end": stop})
        self.add(source, target, remote, rf.mtime, start, rf.name, reason=reason)

    def place(self, transport, seen_index: SeenIndex, source: str, folder: str, rf, repull: bool) -> None:
        """Land what `rf` holds of the hour, unless the host's deadline passes while it is read (the
        watchdog of `run` cut the connection): then the file is rejected with that reason, what of it
        was written is removed, and the host's pull ends (PullDeadline)."""
        rows = len(self.landed)
        try:
            self._place(transport, seen_index, source, folder, rf, repull)
        except Exception:
            if not self.expired.is_set():
                raise
        if self.expired.is_set():
            del self.landed[rows:]
            self.discard(source, rf)
            remote = posixpath.join(folder, rf.name)
            self.reject(source, rf, remote, f"read stopped after {self.timeout_s:.0f} s, the host's deadline "
                                            "(FLEETHEALTH_PULL_TIMEOUT_S)")
            raise PullDeadline(remote)

    def _place(self, transport, seen_index: SeenIndex, source: str, folder: str, rf, repull: bool) -> None:
        """Whatever goes wrong with this one file (a name that holds no valid time, one too long to
        store, a read that fails) rejects this file only: the host's other files still land. A lost
        connection (TransportError) is the host's."""
        try:
            placed = placed_by_lines(source, rf.name, self.timezone_name)
            if placed:
                # its lines of the hour, by their own timestamps; its name and mtime only say
                # which hours it may hold (a file last written before the hour began cannot)
                if not may_hold(rf.name, rf.mtime, self.hour, self.timezone_name):
                    return
                if placed == "log":
                    self.by_content(transport, source, folder, rf)
                    return
                if self.json_lines(transport, source, folder, rf):
                    return
            self.by_identity(transport, seen_index, source, folder, rf, repull)
        except FileError as exc:
            self.reject(source, rf, posixpath.join(folder, rf.name), str(exc))
        except (OSError, ValueError) as exc:
            self.unplaceable(source, folder, rf, exc)

    def discard(self, source: str, rf) -> None:
        """Remove whatever of `rf` was written into the host's folder."""
        for partial in (self.tmp / source).glob(f"{landed_name(rf.name)}*") if (self.tmp / source).is_dir() else ():
            partial.unlink(missing_ok=True)

    def unplaceable(self, source: str, folder: str, rf, exc: Exception) -> None:
        """A file that cannot be placed is reported in the hour its mtime says (each hour would be
        too many), and whatever of it was written into the host's folder is removed."""
        self.discard(source, rf)
        if self.hour <= datetime.fromtimestamp(rf.mtime, timezone.utc) < self.hour + HOUR:
            what = "the time in its name is not a valid time" if isinstance(exc, ValueError) else "cannot be pulled"
            self.reject(source, rf, posixpath.join(folder, rf.name), f"{what}: {exc}")

    def check_deadline(self) -> None:
        """A host gets FLEETHEALTH_PULL_TIMEOUT_S in all (the DAG's pull task stops at the same time),
        checked between files here and during a file's read by the watchdog of `run`."""
        if self.expired.is_set() or time.monotonic() > self.deadline:
            raise PullDeadline("")

    def expire(self, transport) -> None:
        """The watchdog: the deadline passed while a request was under way; a transport that can
        (sftp) drops its connection, so a read that trickles in stops now, not when the file ends."""
        self.expired.set()
        abort = getattr(transport, "abort", None)
        if abort is not None:
            abort()

    def live_jmx(self) -> None:
        """Keep the live reads landed before for this host-hour; add one now if the hour is recent."""
        host, host_dir, now = self.host, self.host_dir, self.now
        jmx = self.tmp / "jmx"
        before = host_dir / MANIFEST
        if before.is_file():
            for row in json.loads(before.read_text()):
                old = Landed(**row)
                if old.source == "jmx" and not old.remote and (host_dir / "jmx" / Path(old.file).name).is_file():
                    jmx.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(host_dir / "jmx" / Path(old.file).name, jmx / Path(old.file).name)
                    self.add("jmx", jmx / Path(old.file).name, "", old.mtime, 0)
        if self.hour <= now < self.hour + HOUR + LIVE_WINDOW:
            left = self.deadline - time.monotonic()       # the read gets what is left of the host's time
            if left <= 0:
                raise TransportError(f"not read: the host's {self.timeout_s:.0f} s (FLEETHEALTH_PULL_TIMEOUT_S) "
                                     "were spent on its files")
            target = jolokia.land(host.jolokia_url, host.processes, jmx, now, deadline=min(jolokia.DEADLINE_S, left))
            self.add("jmx", target, "", now.timestamp(), 0)

    def prometheus_jmx(self) -> None:
        """The hour's JMX of this host from its cluster's Prometheus (any hour: a backfill reads it too), when
        the host is expected to send JMX (a ZooKeeper server is not, unless its `expect:` says so)."""
        host = self.host
        if "jmx" not in host.expect or not prometheus.selectors(host.processes, host.host, naming=host.prometheus.naming):
            return                                    # not expected, or no bean of its processes has a series
        left = self.deadline - time.monotonic()       # the read gets what is left of the host's time
        if left <= 0:
            raise TransportError(f"not read: the host's {self.timeout_s:.0f} s (FLEETHEALTH_PULL_TIMEOUT_S) "
                                 "were spent on its files")
        target, empty = prometheus.land(host.prometheus, host.host, host.processes, self.hour, self.tmp / "jmx",
                                        deadline=min(prometheus.DEADLINE_S, left), now=self.now)
        self.add("jmx", target, "", self.now.timestamp(), 0, reason=empty)

    def run(self) -> list[Landed]:
        host, tmp, host_dir, now = self.host, self.tmp, self.host_dir, self.now
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        seen = load_state(self.state_file)
        self.pulled_at = time.time()
        stopped = None
        try:
            with open_transport(host) as transport:
                watchdog = threading.Timer(max(0.0, self.deadline - time.monotonic()), self.expire, (transport,))
                watchdog.daemon = True
                watchdog.start()
                try:
                    self.files(transport, seen)
                    self.zone_probe(transport)
                except PullDeadline as exc:     # what landed before stays, the task fails and retries
                    stopped = exc
                finally:
                    watchdog.cancel()
            live_error = None
            if host.jolokia_url and stopped is None:
                try:
                    self.live_jmx()
                except TransportError as exc:       # land the files anyway; the task fails and retries
                    live_error = exc
                    self.reject("jmx", RemoteFile(jolokia.file_name(now), 0, now.timestamp()), host.jolokia_url,
                                str(exc))
            elif host.prometheus and stopped is None:
                try:
                    self.prometheus_jmx()
                except TransportError as exc:       # as a live Jolokia read's
                    live_error = exc
                    self.reject("jmx", RemoteFile(prometheus.file_name(self.hour), 0, now.timestamp()),
                                host.prometheus.url, f"not read from {prometheus.MARK}: {exc}")
        except TransportError as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            message = str(exc)
            raise PullError(message if message.startswith(f"{host.host}:") else f"{host.host}: {message}") from None
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        (tmp / MANIFEST).write_text(json.dumps([asdict(x) for x in self.landed], indent=1))
        # State first: a crash before the rename loses nothing (a re-run lands this hour's ranges again).
        save_state(self.state_file, seen, self.pulled_at)
        shutil.rmtree(host_dir, ignore_errors=True)
        host_dir.parent.mkdir(parents=True, exist_ok=True)
        tmp.rename(host_dir)
        if stopped is not None:
            read = sum(x.status == "read" for x in self.landed)
            where = f" while reading {printable(str(stopped))} (rejected)" if str(stopped) else ""
            raise PullError(f"{host.host}: pull stopped after {self.timeout_s:.0f} s (FLEETHEALTH_PULL_TIMEOUT_S)"
                            f"{where}; {read} file(s) landed, the later ones not read")
        if live_error is not None:
            what = "live Jolokia" if host.jolokia_url else "Prometheus"
            raise PullError(f"{host.host}: {what} read failed ({live_error}); "
                            f"its {len(self.landed)} files landed")
        return self.landed

    def zone_probe(self, transport) -> None:
        """The log sources of which no line landed though their files were written in the hour (or its
        live window): when the newest line of each such file, read in the cluster's zone, runs the same
        whole or half hours away from the file's mtime (fleethealth.pull.zoneprobe), their lines fall
        in other hours because the cluster's `timezone:` is wrong. The latest file of each source is
        then listed as rejected with the offset and the zones that fit (gold's timezone_mismatch), not
        left a silent hour (`zoneprobe.agreed`: lines behind their mtime take two files). A rolled file
        behind its mtime says nothing: one copied or touched after its hour (a later sync, a simulated
        fleet) is; only a live file's mtime is its newest line's write."""
        hour = self.hour
        fresh = (hour.timestamp(), (hour + HOUR + LIVE_WINDOW).timestamp())
        latest, offsets = {}, []
        for source in self.host.expect:
            if SOURCES[source].placed_by != "lines" or any(x.source == source for x in self.landed):
                continue
            folder = self.host.source_dir(source)
            try:
                written = sorted((rf for rf in transport.list_files(folder) if safe_name(rf.name)
                                  and not rf.name.endswith(".gz") and fresh[0] <= rf.mtime < fresh[1]),
                                 key=lambda f: -f.mtime)[:PROBED_FILES]
                for rf in written:
                    got = zoneprobe.of_file(lambda offset, n: transport.read(folder, rf.name, offset, n),
                                            rf.size, rf.mtime, self.timezone_name)
                    if got and not (got[0] and got[0] < timedelta(0) and not got[1] and time_in_name(rf.name)):
                        offsets.append(got[0])
                        latest.setdefault(source, (folder, rf))
            except FileError:
                continue
        ahead = zoneprobe.agreed(offsets)
        if ahead:
            for source, (folder, rf) in latest.items():
                self.reject(source, rf, posixpath.join(folder, rf.name),
                            zoneprobe.reason(ahead, self.timezone_name, rf.mtime))

    def files(self, transport, seen) -> None:
        """Every source folder's files, until the deadline (but the JMX files of a host whose JMX is read
        from its cluster's Prometheus: one source of it)."""
        host = self.host
        repull = any(r["hour"] == self.label for s in seen for r in s.ranges)
        transport = containers.GlobFolders(transport)   # `paths:` may be globs (a pod's folders)
        seen_index = SeenIndex(seen, transport)
        for source in SOURCES:
            if source == "jmx" and host.prometheus:
                continue
            self.check_deadline()
            folder = host.source_dir(source)
            try:
                listed = seen_index.list_files(folder)
            except FileError as exc:        # a symlinked source folder: reported, never followed
                self.reject(source, RemoteFile("", 0, 0.0), folder, str(exc))
                continue
            except TransportError:
                if self.expired.is_set():
                    raise PullDeadline("") from None
                raise
            for rf in listed:
                self.check_deadline()
                if safe_name(rf.name):
                    self.place(transport, seen_index, source, folder, rf, repull)
