"""Pull: copy what is new on each host for one hour into landing, with a manifest (docs/architecture.md, pull).

Landing layout: <lakehouse>/landing/<YYYY-MM-DDTHH>/<cluster>/<host>/<source>/<file>, and per host
`_manifest.json` (file, source, size, sha256, mtime, pulled_at, remote path, offset). A host's files
are fetched into `<hour>/_partial/<cluster>/<host>` (no host or cluster name starts with `_`, so no
two hosts share it) and renamed over `<host>` at the end: a host-hour folder is replaced as a whole,
never half-written, and a failed pull leaves the previous one in place.

Which files and bytes (`placed_by_lines`):
  - Every Kafka and ZooKeeper log (hourly-rolled, live, size-rolled, daily-rolled, .gz or not), thread
    dumps whose name carries no time (`jstack >> dumps.txt`) and JSON-lines JMX exports whose name
    carries no time: each file that may hold the hour (`may_hold`: last written at or after the hour's
    start; an hourly-rolled file for its own hour and the one before), and of it only the byte range
    of the hour's records by their own timestamps (`fleethealth.pull.linecut`; a .gz is decompressed
    first). A line lands in the hour it belongs to, whatever the file's name or mtime, and in no
    other: no state is needed for these.
  - Everything else by `hours.file_span`: snapshots and scrapes by the time in their name, other
    files whose mtime falls in the hour -- incrementally, by the state below.
Each file listed for the hour is in the manifest, read or rejected (vanished, swapped for a symlink,
unreadable, over the host's size cap `max_file_bytes`) with the reason, as is a source folder that
is a symlink (never followed) or a live Jolokia read that failed; a damaged .gz lands with the complete lines that
decompressed (`gzip_damage`): one file never fails a host. Landed names are plain (`landed_name`);
the manifest keeps each file's real name. Transports: `local`, `sftp` (`fleethealth.pull.transports`);
hosts with a `jolokia_url` (and `http` hosts) also get a live Jolokia read of their MBeans while the
hour is recent (<= LIVE_WINDOW after its end; a backfill keeps the reads landed before).

Only what is new is pulled: fleethealth.pull.identity.

Why pulling the same lines twice never duplicates rows downstream: (1) a byte of a file is landed
for one hour only (its lines' hour, or the ranges above); (2) re-pulling an hour replaces its host
folders as a whole; (3) bronze/silver/gold rewrite an hour with Delta replaceWhere, so a re-run
replaces, never appends. A live file of the other sources is cut after its last newline, so a line
being written is landed whole the next time.
"""
from __future__ import annotations
import json
import logging
import posixpath
import re
import shutil
import time
from dataclasses import asdict
from datetime import datetime, timedelta, timezone
from pathlib import Path
from fleethealth.pull import linecut
from fleethealth.lake import locks
from fleethealth.lake.hours import HOUR, file_span, hour_label, in_hour, time_in_name
from fleethealth.fleet.inventory import Host, Inventory
from fleethealth.fleet.sources import NAMES as SOURCES
from fleethealth.pull.transports import jolokia, open_transport
from fleethealth.pull.transports.base import FileError, RemoteFile, TransportError
from fleethealth.pull.transports.local import LocalTransport
from fleethealth.pull.landing import Landed, MANIFEST, PARTIAL, PROMETHEUS_FILE, PullError, inside, landed_name, landing_hour_dir, safe_name, sha256_of
from fleethealth.pull.identity import Seen, SeenIndex, load_state, save_state, state_path
from fleethealth.pull.inflate import cut_after_last_newline, ends_with_newline, gunzip, gzip_damage

log = logging.getLogger(__name__)
MAX_FILE_BYTES = 2 * 1024**3          # the default of an inventory's max_file_bytes
LIVE_WINDOW = timedelta(hours=1)      # live Jolokia reads are taken for an hour until this after its end


def placed_by_lines(source: str, name: str) -> str:
    """How a file's records find their hours: "log" (every Kafka and ZooKeeper log, and thread dumps
    without a capture time in their name: by their lines' timestamps), "json" (a JSON-lines JMX export
    without a time in its name: by its lines' Jolokia timestamps, if it has any) or "" (by the time in
    its name, else its mtime: snapshots, scrapes, rolled exports)."""
    if source in ("kafka", "zookeeper") or (source == "threaddumps" and not time_in_name(name)):
        return "log"
    if source == "jmx" and not time_in_name(name) and not name.endswith(".gz") \
            and not re.search(PROMETHEUS_FILE, name):
        return "json"
    return ""


def may_hold(name: str, mtime: float, hour: datetime, tz: str) -> bool:
    """Whether a file may hold lines of `hour`: not if it was last written before the hour began, nor
    if its name says a later time. An hourly-rolled file holds its hour and, first, any lines of the
    hour before that were written after the roll."""
    if mtime < hour.timestamp():
        return False
    if not time_in_name(name):
        return True
    start, end = file_span(name, mtime, tz)
    return start - HOUR <= hour and (start == end or hour < end)


def _byte_range(known: Seen | None, size: int, hour: str) -> tuple[int, int | None]:
    """[start, end) of the file to land for `hour`; end None: up to `size`. start == size: nothing new."""
    if known is None or size < known.end:           # new, or truncated and rewritten: all of it
        return 0, None
    own = [r for r in known.ranges if r["hour"] == hour]
    if own:
        start = min(r["start"] for r in own)
        later = [r["start"] for r in known.ranges if r["start"] > start]
        return start, (min(later) if later else None)
    return known.end, None


def pull_host(host: Host, timezone_name: str, hour: datetime, lakehouse=None,
              now: datetime | None = None) -> list[Landed]:
    """Land what is new on `host` for `hour`; returns what landed (also in the host's manifest).
    One pull of a host-hour at a time (its lock): two would share the `_partial` folder."""
    try:
        with locks.hour_lock(hour, lakehouse, f"pull of {host.host}", part=f"{host.cluster}.{host.host}"):
            return _pull_host(host, timezone_name, hour, lakehouse, now)
    except locks.HourBusy as exc:
        raise PullError(f"{host.host}: {exc}") from None


def _pull_host(host: Host, timezone_name: str, hour: datetime, lakehouse, now: datetime | None) -> list[Landed]:
    now = now or datetime.now(timezone.utc)
    label = hour_label(hour)
    base = landing_hour_dir(hour, lakehouse)
    host_dir = base / host.cluster / host.host
    tmp = base / PARTIAL / host.cluster / host.host
    shutil.rmtree(tmp, ignore_errors=True)
    cap = host.max_file_bytes or MAX_FILE_BYTES
    tmp.mkdir(parents=True)
    spath = state_path(host, lakehouse)
    seen = load_state(spath)
    repull = any(r["hour"] == label for s in seen for r in s.ranges)
    landed: list[Landed] = []
    pulled_at = time.time()

    def add(source: str, target: Path, remote: str, mtime: float, offset: int, name: str | None = None,
            read: Path | None = None, reason: str = "") -> None:
        """A landed file (`read`: the file bronze reads instead, e.g. the lines of a damaged .gz)."""
        rel = f"{host.cluster}/{host.host}/{source}"
        landed.append(Landed(host.cluster, host.host, source, f"{rel}/{name or target.name}",
                             target.stat().st_size, sha256_of(target), mtime, pulled_at, remote, offset,
                             path=f"{rel}/{(read or target).name}", reason=reason))

    def reject(source: str, rf, remote: str, reason: str) -> None:
        log.warning("%s: %s rejected: %s", host.host, remote, reason)
        landed.append(Landed(host.cluster, host.host, source,
                             f"{host.cluster}/{host.host}/{source}/{rf.name}".rstrip("/"),
                             rf.size, "", rf.mtime, pulled_at, remote, status="rejected", reason=reason))

    def over_cap(rf) -> str:
        return f"{rf.size} bytes, over the cap of {cap}" if rf.size > cap else ""

    def by_content(transport, source: str, folder: str, rf) -> None:
        """Land the lines of `hour` of a log file, found by their own timestamps (linecut). A file that
        cannot be read is reported in the hour its name says (else in every hour it may hold)."""
        remote = posixpath.join(folder, rf.name)
        home = in_hour(file_span(rf.name, rf.mtime, timezone_name), hour)
        if over_cap(rf):
            if home or not time_in_name(rf.name):
                reject(source, rf, remote, over_cap(rf))
            return
        target = inside(tmp, tmp / source / landed_name(rf.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        reason, plain = "", None
        try:
            if rf.name.endswith(".gz"):     # no seeking in a compressed file: decompress it here first
                reason, plain = gunzip(transport, folder, rf.name, target)
                if plain is None:
                    if home or not time_in_name(rf.name):
                        reject(source, rf, remote, reason)
                    return
                target = target.with_name(target.name + ".lines")
                transport, folder, name, size = LocalTransport(), str(plain.parent), plain.name, plain.stat().st_size
            else:
                name, size = rf.name, rf.size
            read = lambda offset, n: transport.read(folder, name, offset, n)  # noqa: E731
            named, named_end = file_span(rf.name, rf.mtime, timezone_name)
            if named < named_end:   # hourly-rolled: its hour, but for a head of the hour before's records
                span = linecut.rolled_range(read, size, hour, named, timezone_name)
            else:
                span = linecut.hour_range(read, size, hour, timezone_name)
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
                reject(source, rf, remote, str(exc))
            return
        finally:
            if plain is not None:
                plain.unlink(missing_ok=True)
        if start < end or start == end == 0 == size:
            add(source, target, remote, rf.mtime, start, rf.name, reason=reason)

    def json_lines(transport, source: str, folder: str, rf) -> bool:
        """Land the lines of `hour` of a JSON-lines JMX export by their Jolokia timestamps; False when
        it holds no such line (then it is placed by its name or mtime, as other exports are)."""
        read = lambda offset, n: transport.read(folder, rf.name, offset, n)  # noqa: E731
        remote = posixpath.join(folder, rf.name)
        try:
            span = linecut.hour_range(read, min(rf.size, cap), hour, timezone_name, json_lines=True)
            if span is None:
                return False
            if over_cap(rf):
                reject(source, rf, remote, over_cap(rf))
                return True
            start, end = span
            if start < end:
                target = inside(tmp, tmp / source / landed_name(rf.name))
                target.parent.mkdir(parents=True, exist_ok=True)
                copied = transport.fetch(folder, rf.name, target, start, end)
                reason = ""
                if start + copied < end:
                    reason = f"shrank from {rf.size} to {start + copied} bytes while it was read"
                elif end == rf.size and not ends_with_newline(target):
                    reason = "its last line was still being written (no newline at the end)"
                add(source, target, remote, rf.mtime, start, rf.name, reason=reason)
        except FileError as exc:
            reject(source, rf, remote, str(exc))
        return True

    try:
        with open_transport(host) as transport:
            seen_index = SeenIndex(seen, transport)
            for source in SOURCES:
                folder = host.source_dir(source)
                try:
                    listed = seen_index.list_files(folder)
                except FileError as exc:        # a symlinked source folder: reported, never followed
                    reject(source, RemoteFile("", 0, 0.0), folder, str(exc))
                    continue
                for rf in listed:
                    if not safe_name(rf.name):
                        continue
                    placed = placed_by_lines(source, rf.name)
                    if placed:
                        # its lines of the hour, by their own timestamps; its name and mtime only say
                        # which hours it may hold (a file last written before the hour began cannot)
                        if not may_hold(rf.name, rf.mtime, hour, timezone_name):
                            continue
                        if placed == "log":
                            by_content(transport, source, folder, rf)
                            continue
                        if json_lines(transport, source, folder, rf):
                            continue
                    span = file_span(rf.name, rf.mtime, timezone_name)
                    selected = in_hour(span, hour)
                    # Re-pulling an hour: a file changed since may still hold bytes landed for it.
                    if not selected and not (repull and span[0] == span[1] and rf.mtime >= hour.timestamp()):
                        continue
                    remote = posixpath.join(folder, rf.name)
                    if over_cap(rf):
                        if selected:
                            reject(source, rf, remote, over_cap(rf))
                        continue
                    target = inside(tmp, tmp / source / landed_name(rf.name))
                    try:
                        head = seen_index.head(folder, rf.name)
                        known = seen_index.identify(remote, rf, head)
                        if not selected and (known is None or not any(r["hour"] == label for r in known.ranges)):
                            continue
                        start, end = _byte_range(known, rf.size, label)
                        stop = rf.size if end is None else end
                        if start >= stop and not (known is None and rf.size == 0):  # an empty file is listed too
                            log.info("%s: %s unchanged since it was last pulled", host.host, remote)
                            continue
                        target.parent.mkdir(parents=True, exist_ok=True)
                        copied = transport.fetch(folder, rf.name, target, start, stop)
                    except FileError as exc:
                        target.unlink(missing_ok=True)
                        if selected:
                            reject(source, rf, remote, str(exc))
                        continue
                    reason, read = "", None
                    if start + copied < stop:
                        reason = f"shrank from {rf.size} to {start + copied} bytes while it was read"
                        stop = start + copied
                    if rf.name.endswith(".gz"):
                        damage, read = gzip_damage(target)
                        if damage:  # landed as found; not recorded in the state, so a re-pull takes it again
                            if read is None:
                                reject(source, rf, remote, damage)
                            else:
                                add(source, target, remote, rf.mtime, start, rf.name, read, damage)
                            continue
                    # a live or size-rolled text file may still grow (compressed ones are final)
                    elif end is None and span[0] == span[1]:
                        stop = start + cut_after_last_newline(target)
                    known = seen_index.record(known, remote, rf, head, pulled_at)
                    known.ranges = [r for r in known.ranges if r["hour"] != label or r["start"] != start]
                    known.ranges.append({"hour": label, "start": start, "end": stop})
                    add(source, target, remote, rf.mtime, start, rf.name, reason=reason)
        live_error = None
        if host.jolokia_url:
            try:
                _live_jmx(host, hour, now, host_dir, tmp, add)
            except TransportError as exc:       # land the files anyway; the task fails and retries
                live_error = exc
                reject("jmx", RemoteFile(jolokia.file_name(now), 0, now.timestamp()), host.jolokia_url, str(exc))
    except TransportError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        message = str(exc)
        raise PullError(message if message.startswith(f"{host.host}:") else f"{host.host}: {message}") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    (tmp / MANIFEST).write_text(json.dumps([asdict(x) for x in landed], indent=1))
    # State first: a crash before the rename loses nothing (a re-run lands this hour's ranges again).
    save_state(spath, seen, pulled_at)
    shutil.rmtree(host_dir, ignore_errors=True)
    host_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp.rename(host_dir)
    if live_error is not None:
        raise PullError(f"{host.host}: live Jolokia read failed ({live_error}); "
                        f"its {len(landed)} files landed")
    return landed


def _live_jmx(host: Host, hour: datetime, now: datetime, host_dir: Path, tmp: Path, add) -> None:
    """Keep the live reads landed before for this host-hour; add one now if the hour is recent."""
    jmx = tmp / "jmx"
    before = host_dir / MANIFEST
    if before.is_file():
        for row in json.loads(before.read_text()):
            old = Landed(**row)
            if old.source == "jmx" and not old.remote and (host_dir / "jmx" / Path(old.file).name).is_file():
                jmx.mkdir(parents=True, exist_ok=True)
                shutil.copy2(host_dir / "jmx" / Path(old.file).name, jmx / Path(old.file).name)
                add("jmx", jmx / Path(old.file).name, "", old.mtime, 0)
    if hour <= now < hour + HOUR + LIVE_WINDOW:
        target = jolokia.land(host.jolokia_url, host.role, jmx, now)
        add("jmx", target, "", now.timestamp(), 0)


class HostsFailed(PullError):
    """Some hosts could not be pulled; the others landed (`landed`)."""

    def __init__(self, errors: list[str], landed: list[Landed]):
        self.errors, self.landed = errors, landed
        super().__init__("\n".join(errors))


def pull_hour(inventory: Inventory, hour: datetime, lakehouse=None) -> list[Landed]:
    """Pull every host (a host failing in any way does not stop the others); raises HostsFailed at
    the end."""
    out: list[Landed] = []
    errors: list[str] = []
    for cluster in inventory.clusters:
        for host in cluster.hosts:
            try:
                out.extend(pull_host(host, cluster.timezone, hour, lakehouse))
            except PullError as exc:
                errors.append(str(exc))
            except Exception as exc:  # noqa: BLE001 - one host's surprise must not cost the others their hour
                log.exception("%s: pull failed", host.host)
                errors.append(f"{host.host}: pull failed: {type(exc).__name__}: {exc}")
    if errors:
        raise HostsFailed(errors, out)
    return out
