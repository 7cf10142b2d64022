"""Only what is new is pulled. Per host, a state file (<lakehouse>/landing/_state/<cluster>/<host>.json)
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
"""
from __future__ import annotations

import hashlib
import itertools
import json
import os
import posixpath
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from pathlib import Path

from fleethealth.lake.hours import time_in_name
from fleethealth.pull.landing import PullError
from fleethealth.pull.transports.base import RemoteFile, Transport

IDENTITY_BYTES = 1024
STATE_KEEP = timedelta(days=14)       # forget files last landed longer ago than this


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


def load_state(path: Path) -> list[Seen]:
    if not path.is_file():
        return []
    try:
        return [Seen(**row) for row in json.loads(path.read_text())]
    except (ValueError, TypeError) as exc:
        raise PullError(f"{path}: unreadable pull state ({exc}); delete it to pull everything again") from None


def save_state(path: Path, seen: list[Seen], now: float) -> None:
    keep = [s for s in seen if s.last_pulled >= now - STATE_KEEP.total_seconds()]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps([asdict(s) for s in keep], indent=1))
    os.replace(tmp, path)


def hexdigest(data: bytes) -> str:
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
            digest = hexdigest(head[:n])
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
            known = Seen(hexdigest(head), len(head), remote)
            self.seen.append(known)
        elif len(head) > known.head_len:
            known.head, known.head_len = hexdigest(head), len(head)
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
                and hexdigest(head[:s.head_len]) == s.head)

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
