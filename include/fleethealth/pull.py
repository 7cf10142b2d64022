"""Pull: copy what is new on each host for one hour into landing, with a manifest (SPEC §4 landing).

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
    of the hour's records by their own timestamps (`fleethealth.linecut`; a .gz is decompressed
    first). A line lands in the hour it belongs to, whatever the file's name or mtime, and in no
    other: no state is needed for these.
  - Everything else by `hours.file_span`: snapshots and scrapes by the time in their name, other
    files whose mtime falls in the hour -- incrementally, by the state below.
Each file listed for the hour is in the manifest, read or rejected (vanished, swapped for a symlink,
unreadable, over the host's size cap `max_file_bytes`) with the reason, as is a source folder that
is a symlink (never followed) or a live Jolokia read that failed; a damaged .gz lands with the complete lines that
decompressed (`gzip_damage`): one file never fails a host. Landed names are plain (`landed_name`);
the manifest keeps each file's real name. Transports: `local`, `sftp` (`fleethealth.transports`);
hosts with a `jolokia_url` (and `http` hosts) also get a live Jolokia read of their MBeans while the
hour is recent (<= LIVE_WINDOW after its end; a backfill keeps the reads landed before).

Only what is new is pulled. Per host, a state file (<lakehouse>/landing/_state/<cluster>/<host>.json)
records each file it landed (`Seen`): path, name, inode (None over SFTP), size and mtime when last
seen, sha256 of its first IDENTITY_BYTES bytes (its head), and the byte ranges landed, per hour.
A listed file is a known file (`SeenIndex.identify`, O(1) per file) when either
  - it has the known file's name and head (it grew or is unchanged), the same inode when both are
    known, and is no smaller than what was landed of it; or
  - it is a rename (zookeeper.log -> zookeeper.log.1 while a new zookeeper.log starts): same folder,
    same head, same inode when both are known, no smaller, and the known file is not still listed
    under its old name (that name gone, or there now a different inode, a smaller size, or another
    head). Files with a time in their name (hourly-rolled logs, snapshots) are never renamed.
Two files listed together are never the same file, so two snapshots with identical heads are two
files. A file with the same name but another head or inode, or smaller than was landed (truncated
and rewritten), is a new file. A file seen before lands only its bytes after the last landed range
(a live file's new lines); an unchanged file lands nothing. Re-pulling an hour lands again exactly
that hour's ranges, also from a live file that changed (or was renamed by its size roll) since.

Why pulling the same lines twice never duplicates rows downstream: (1) a byte of a file is landed
for one hour only (its lines' hour, or the ranges above); (2) re-pulling an hour replaces its host
folders as a whole; (3) bronze/silver/gold rewrite an hour with Delta replaceWhere, so a re-run
replaces, never appends. A live file of the other sources is cut after its last newline, so a line
being written is landed whole the next time.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import logging
import os
import posixpath
import re
import shutil
import time
import zlib
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from fleethealth import config
from fleethealth import linecut, locks
from fleethealth.hours import HOUR, file_span, hour_label, in_hour, time_in_name
from fleethealth.inventory import SOURCES, Host, Inventory
from fleethealth.transports import FileError, RemoteFile, Transport, TransportError, open_transport
from fleethealth.transports import jolokia
from fleethealth.transports.local import LocalTransport

log = logging.getLogger(__name__)

MANIFEST = "_manifest.json"
STATE = "_state"
PARTIAL = "_partial"
MAX_FILE_BYTES = 2 * 1024**3          # the default of an inventory's max_file_bytes
# a JMX export file holding one Prometheus scrape (optionally rolled: metrics.prom.2026-11-20-05)
PROMETHEUS_FILE = r"\.prom(\.[^/]*)?$"
IDENTITY_BYTES = 1024
LIVE_WINDOW = timedelta(hours=1)      # live Jolokia reads are taken for an hour until this after its end
STATE_KEEP = timedelta(days=14)       # forget files last landed longer ago than this


class PullError(RuntimeError):
    pass


@dataclass(frozen=True)
class Landed:
    cluster: str
    host: str
    source: str
    file: str          # relative to the hour's landing folder
    size: int
    sha256: str
    mtime: float
    pulled_at: float
    remote: str = ""   # path on the host ("" for a live read)
    offset: int = 0    # first byte of the remote file in this landed file (> 0: a live file's new lines)
    path: str = ""     # what bronze reads, relative to the hour's landing folder ("" when rejected)
    status: str = "read"   # read | rejected (nothing of it could be read)
    reason: str = ""   # why it was rejected, or what part of a read file was lost (a truncated .gz)

    @property
    def read_path(self) -> str:
        return self.path or self.file   # manifests written before `path` existed: the name as is


@dataclass
class Seen:
    """A file of a host as the state file knows it: identity and the byte ranges landed per hour.
    name, inode, size, mtime: as last seen (state files of older versions have none: defaults)."""
    head: str                   # sha256 of its first head_len bytes
    head_len: int
    remote: str                 # its path when last seen
    ranges: list[dict] = field(default_factory=list)   # {"hour", "start", "end"}
    last_pulled: float = 0.0
    name: str = ""              # basename of `remote`
    inode: int | None = None    # None: unknown (SFTP, older state)
    size: int | None = None
    mtime: float | None = None

    def __post_init__(self):
        self.name = self.name or posixpath.basename(self.remote)

    @property
    def end(self) -> int:
        return max((r["end"] for r in self.ranges), default=0)


def landing_hour_dir(hour: datetime, lakehouse=None) -> Path:
    return config.lakehouse_dir(lakehouse) / "landing" / hour.strftime("%Y-%m-%dT%H")


def state_path(host: Host, lakehouse=None) -> Path:
    return config.lakehouse_dir(lakehouse) / "landing" / STATE / host.cluster / f"{host.host}.json"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _safe_name(name: str) -> bool:
    return (name not in ("", ".", "..") and not name.startswith(".")
            and "/" not in name and "\\" not in name and "\0" not in name)


_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def landed_name(name: str) -> str:
    """The name a remote file is stored under in landing. Names are data, not patterns: Spark's
    reader would glob `[`, `{`, `*`, fail on `:` and URL-decode `+`, so any other name is replaced by
    a plain one (unique per name, keeping a `.gz` suffix); the manifest keeps the real name."""
    if _PLAIN_NAME.fullmatch(name):
        return name
    suffix = ".gz" if name.endswith(".gz") else ""
    plain = re.sub(r"[^A-Za-z0-9._-]+", "_", name[: len(name) - len(suffix)]).strip("._-")[:100]
    return f"{plain or 'file'}~{hashlib.sha256(name.encode()).hexdigest()[:10]}{suffix}"


def gzip_damage(path: Path) -> tuple[str, Path | None]:
    """('', None) for a sound .gz; else why it is damaged and a plain file holding every complete
    line that decompressed (None when not one did). A .gz copied while being written ends early."""
    problem = _inflate(path, None)
    if not problem:
        return "", None
    recovered = path.with_name(path.name[:-3] + ".recovered")
    with recovered.open("wb") as dst:
        _inflate(path, dst)
    lines = _count_lines(recovered)
    if lines == 0:
        recovered.unlink()
        return f"damaged gzip ({problem}): nothing decompressed", None
    return (f"damaged gzip ({problem}): kept the {lines} complete lines that decompressed "
            f"({recovered.stat().st_size} bytes), lost the rest"), recovered


def _inflate(path: Path, dst) -> str:
    """Decompress every gzip member of `path`, writing complete lines to `dst` (if given); returns
    what is wrong with the file, or ''."""
    inflater, tail = zlib.decompressobj(16 + zlib.MAX_WBITS), b""
    with path.open("rb") as src:
        try:
            while chunk := src.read(1 << 20):
                while chunk:
                    out = inflater.decompress(chunk)
                    if dst is not None:
                        out, cut = tail + out, (tail + out).rfind(b"\n") + 1
                        dst.write(out[:cut])
                        tail = out[cut:]
                    chunk = b""
                    if inflater.eof and inflater.unused_data.strip(b"\0"):   # the next member
                        chunk, inflater = inflater.unused_data, zlib.decompressobj(16 + zlib.MAX_WBITS)
        except zlib.error as exc:
            return f"not readable as gzip: {exc}"
    if not inflater.eof:
        return "truncated: it ends before the gzip end-of-stream marker"
    if dst is not None:
        dst.write(tail)   # a sound file's last line needs no newline
    return ""


def _gunzip(transport, folder: str, name: str, target: Path) -> tuple[str, Path | None]:
    """Fetch the .gz `folder/name` beside `target` and decompress it: (what is damaged or '', the plain
    file with every complete line that decompressed, or None when not one did)."""
    whole = target.with_name(target.name + ".fetched")
    try:
        transport.fetch(folder, name, whole)
        reason, plain = gzip_damage(whole)
        if not reason:
            plain = whole.with_name(whole.name + ".plain")
            with plain.open("wb") as dst:
                _inflate(whole, dst)
        return reason, plain
    finally:
        whole.unlink(missing_ok=True)


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"


def _count_lines(path: Path) -> int:
    with path.open("rb") as fh:
        return sum(block.count(b"\n") for block in iter(lambda: fh.read(1 << 20), b""))


def _inside(folder: Path, path: Path) -> Path:
    """`path`, after checking it resolves inside `folder` (no remote name may escape landing)."""
    if not path.resolve().is_relative_to(folder.resolve()):
        raise PullError(f"{path} would land outside {folder}")
    return path


def _load_state(path: Path) -> list[Seen]:
    if not path.is_file():
        return []
    try:
        return [Seen(**row) for row in json.loads(path.read_text())]
    except (ValueError, TypeError) as exc:
        raise PullError(f"{path}: unreadable pull state ({exc}); delete it to pull everything again") from None


def _save_state(path: Path, seen: list[Seen], now: float) -> None:
    keep = [s for s in seen if s.last_pulled >= now - STATE_KEEP.total_seconds()]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps([asdict(s) for s in keep], indent=1))
    os.replace(tmp, path)


def _hexdigest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _may_be_renamed(name: str) -> bool:
    """Live and size-rolled files are renamed by their logger; a time in the name (hourly-rolled log,
    snapshot) means a file written once under that name."""
    return not time_in_name(name)


def _shorter_names(name: str) -> list[str]:
    """zookeeper.log.1 -> [zookeeper.log, zookeeper]: names a rotated file may have had."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(len(parts) - 1, 0, -1)]


class SeenIndex:
    """The state's files indexed once per host pull (by path; by folder, head and inode for renames),
    the folders listed in this pull and the heads read: `identify` is O(1) per listed file, and each
    listed file's head is read at most once (`head`)."""

    def __init__(self, seen: list[Seen], transport: Transport):
        self.seen, self.transport = seen, transport
        self.by_path: dict[str, list[Seen]] = {}
        # (folder, head_len, head, inode) -> {name: [Seen]}: the files that may have been renamed
        self.movable: dict[tuple, dict[str, list[Seen]]] = {}
        self.short: dict[str, set[int]] = {}          # folder -> head lengths < IDENTITY_BYTES in movable
        self.listed: dict[str, dict[str, RemoteFile]] = {}
        self.heads: dict[str, bytes] = {}
        self.taken: dict[int, str] = {}                # id(Seen) -> path of the listed file that is it
        for s in seen:
            self.by_path.setdefault(s.remote, []).append(s)
            if s.head_len and _may_be_renamed(s.name):
                folder = posixpath.dirname(s.remote)
                key = (folder, s.head_len, s.head, s.inode)
                self.movable.setdefault(key, {}).setdefault(s.name, []).append(s)
                if s.head_len < IDENTITY_BYTES:
                    self.short.setdefault(folder, set()).add(s.head_len)

    def list_files(self, folder: str) -> list[RemoteFile]:
        files = self.transport.list_files(folder)
        self.listed[folder] = {f.name: f for f in files}
        return files

    def head(self, folder: str, name: str) -> bytes:
        path = posixpath.join(folder, name)
        if path not in self.heads:
            self.heads[path] = self.transport.head(folder, name, IDENTITY_BYTES)
        return self.heads[path]

    def identify(self, remote: str, rf: RemoteFile, head: bytes) -> Seen | None:
        """The known file that the listed file `rf` at `remote` (first bytes `head`) is, or None: new."""
        for s in reversed(self.by_path.get(remote, ())):
            if id(s) not in self.taken and self._same(s, rf, head):
                return self._take(s, remote, rf)
        if not head:
            return None
        folder = posixpath.dirname(remote)
        lengths = [len(head)] + sorted((n for n in self.short.get(folder, ()) if n < len(head)), reverse=True)
        for n in lengths:
            digest = _hexdigest(head[:n])
            for inode in dict.fromkeys((rf.inode, None)):
                bucket = self.movable.get((folder, n, digest, inode))
                if not bucket:
                    continue
                # the old name is most likely a shorter one (zookeeper.log -> zookeeper.log.1)
                hinted = [name for name in _shorter_names(rf.name) if name in bucket]
                for name in itertools.chain(hinted, bucket):
                    for s in reversed(bucket.get(name, ())):
                        if (id(s) not in self.taken and s.name != rf.name and self._fits(s, rf)
                                and not self._still_listed(s, folder)):
                            return self._take(s, remote, rf)
        return None

    def record(self, known: Seen | None, remote: str, rf: RemoteFile, head: bytes, pulled_at: float) -> Seen:
        """The state's entry for `rf`, landed now: a new one if `known` is None; a longer head kept."""
        if known is None:
            known = Seen(_hexdigest(head), len(head), remote)
            self.seen.append(known)
        elif len(head) > known.head_len:
            known.head, known.head_len = _hexdigest(head), len(head)
        self._take(known, remote, rf).last_pulled = pulled_at
        return known

    def _take(self, s: Seen, remote: str, rf: RemoteFile) -> Seen:
        self.taken[id(s)] = remote
        s.remote, s.name, s.inode, s.size, s.mtime = remote, rf.name, rf.inode, rf.size, rf.mtime
        return s

    @staticmethod
    def _fits(s: Seen, rf: RemoteFile) -> bool:
        return rf.size >= s.end and (s.inode is None or rf.inode is None or s.inode == rf.inode)

    def _same(self, s: Seen, rf: RemoteFile, head: bytes) -> bool:
        return (bool(s.head_len) and len(head) >= s.head_len and self._fits(s, rf)
                and _hexdigest(head[:s.head_len]) == s.head)

    def _still_listed(self, s: Seen, folder: str) -> bool:
        """Whether `s` is still listed under its old name (then a file with its head is another one)."""
        there = self.listed.get(folder, {}).get(s.name)
        if there is None:
            return False
        if s.inode is not None and there.inode is not None:
            return there.inode == s.inode
        if there.size < s.end:
            return False
        if (there.size, there.mtime) == (s.size, s.mtime):
            return True
        return self._same(s, there, self.head(folder, s.name))


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


def _cut_after_last_newline(path: Path) -> int:
    """Truncate `path` after its last newline (a line being written lands whole next time); new size."""
    size = path.stat().st_size
    with path.open("rb+") as fh:
        back = min(size, 1 << 20)
        fh.seek(size - back)
        tail = fh.read(back)
        cut = tail.rfind(b"\n")
        if cut == -1 or cut == len(tail) - 1:
            return size
        new = size - back + cut + 1
        fh.truncate(new)
        return new


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
    seen = _load_state(spath)
    repull = any(r["hour"] == label for s in seen for r in s.ranges)
    landed: list[Landed] = []
    pulled_at = time.time()

    def add(source: str, target: Path, remote: str, mtime: float, offset: int, name: str | None = None,
            read: Path | None = None, reason: str = "") -> None:
        """A landed file (`read`: the file bronze reads instead, e.g. the lines of a damaged .gz)."""
        rel = f"{host.cluster}/{host.host}/{source}"
        landed.append(Landed(host.cluster, host.host, source, f"{rel}/{name or target.name}",
                             target.stat().st_size, _sha256(target), mtime, pulled_at, remote, offset,
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
        target = _inside(tmp, tmp / source / landed_name(rf.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        reason, plain = "", None
        try:
            if rf.name.endswith(".gz"):     # no seeking in a compressed file: decompress it here first
                reason, plain = _gunzip(transport, folder, rf.name, target)
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
                elif start < end == size and not reason and not _ends_with_newline(target):
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
                target = _inside(tmp, tmp / source / landed_name(rf.name))
                target.parent.mkdir(parents=True, exist_ok=True)
                copied = transport.fetch(folder, rf.name, target, start, end)
                reason = ""
                if start + copied < end:
                    reason = f"shrank from {rf.size} to {start + copied} bytes while it was read"
                elif end == rf.size and not _ends_with_newline(target):
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
                    if not _safe_name(rf.name):
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
                    target = _inside(tmp, tmp / source / landed_name(rf.name))
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
                        stop = start + _cut_after_last_newline(target)
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
    _save_state(spath, seen, pulled_at)
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


def read_manifests(hour: datetime, lakehouse=None) -> list[Landed]:
    """Everything landed for `hour` (all hosts)."""
    base = landing_hour_dir(hour, lakehouse)
    out: list[Landed] = []
    for manifest in sorted(base.glob(f"*/*/{MANIFEST}")):
        out.extend(Landed(**row) for row in json.loads(manifest.read_text()))
    return out
