"""`local` transport: the fleet's files are in a directory tree (an NFS archive, a shipper's target)."""
from __future__ import annotations

import os
import stat
from pathlib import Path

from fleethealth.transports import FileError, RemoteFile, copy_range


class LocalTransport:
    def list_files(self, folder: str) -> list[RemoteFile]:
        return list_files(folder)

    def head(self, folder: str, name: str, n: int) -> bytes:
        return self.read(folder, name, 0, n)

    def read(self, folder: str, name: str, offset: int, n: int) -> bytes:
        with _open(Path(folder) / name) as src:
            src.seek(offset)
            return src.read(n)

    def fetch(self, folder: str, name: str, target: Path, start: int = 0, end: int | None = None) -> int:
        return fetch(folder, name, target, start, end)


def list_files(folder: str) -> list[RemoteFile]:
    """Regular files directly in `folder` (symlinks and sub-folders are not followed)."""
    root = Path(folder)
    if not root.is_dir():
        return []
    out = []
    for entry in sorted(root.iterdir()):
        st = entry.lstat()
        if not stat.S_ISREG(st.st_mode):
            continue
        out.append(RemoteFile(entry.name, st.st_size, st.st_mtime, st.st_ino))
    return out


def _open(source: Path):
    # O_NOFOLLOW: a file swapped for a symlink after listing is refused, not followed.
    try:
        return os.fdopen(os.open(source, os.O_RDONLY | os.O_NOFOLLOW), "rb")
    except OSError as exc:
        raise FileError(f"{source}: cannot open: {exc.strerror}") from None


def fetch(folder: str, name: str, target: Path, start: int = 0, end: int | None = None) -> int:
    source = Path(folder) / name
    with _open(source) as src, target.open("xb") as dst:
        src.seek(start)
        copied = copy_range(src, dst, start, end)
        st = os.fstat(src.fileno())
    os.utime(target, (st.st_atime, st.st_mtime))
    return copied
