"""`local` transport: the fleet's files are in a directory tree (an NFS archive, a shipper's target).

No symlink is followed: not a file (opened with O_NOFOLLOW), not a source folder, and not a folder
between the host's root and its source folders (`<root>/<cluster>/<host>/<source>`). A symlinked
folder is refused with a FileError, which pull records for the host-hour.
"""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from fleethealth.pull.transports.base import FileError, RemoteFile, copy_range, folders_below


class LocalTransport:
    def __init__(self, root: str | None = None):
        self.root = root

    def list_files(self, folder: str) -> list[RemoteFile]:
        for path in folders_below(self.root, folder):
            try:
                if stat.S_ISLNK(os.lstat(path).st_mode):
                    raise FileError(f"{path}: a symlink, not followed")
            except FileNotFoundError:
                return []
        return list_files(folder)

    def is_folder(self, folder: str) -> bool:
        try:
            return stat.S_ISDIR(os.lstat(folder).st_mode)
        except FileNotFoundError:
            return False

    def subfolders(self, folder: str) -> list[str]:
        """Names of the folders directly in `folder` (a symlink to one is not a folder here)."""
        fd = _open_folder(folder)
        if fd is None:
            return []
        try:
            with os.scandir(fd) as entries:
                return sorted(e.name for e in entries if e.is_dir(follow_symlinks=False))
        finally:
            os.close(fd)

    def head(self, folder: str, name: str, n: int) -> bytes:
        return self.read(folder, name, 0, n)

    def read(self, folder: str, name: str, offset: int, n: int) -> bytes:
        with _open(folder, name) as src:
            src.seek(offset)
            return src.read(n)

    def fetch(self, folder: str, name: str, target: Path, start: int = 0, end: int | None = None) -> int:
        return fetch(folder, name, target, start, end)


def _open_folder(folder: str) -> int | None:
    """A descriptor of `folder` itself (never of what a symlink points to); None if it does not exist."""
    try:
        return os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(folder):
            raise FileError(f"{folder}: a symlink, not followed") from None
        if exc.errno == errno.ENOTDIR:
            raise FileError(f"{folder}: not a folder") from None
        raise FileError(f"{folder}: cannot open: {exc.strerror}") from None


def list_files(folder: str) -> list[RemoteFile]:
    """Regular files directly in `folder` (symlinks and sub-folders are not followed)."""
    fd = _open_folder(folder)
    if fd is None:
        return []
    try:
        with os.scandir(fd) as entries:
            out = []
            for entry in entries:
                st = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(st.st_mode):
                    out.append(RemoteFile(entry.name, st.st_size, st.st_mtime, st.st_ino))
    finally:
        os.close(fd)
    return sorted(out, key=lambda f: f.name)


def _open(folder: str, name: str):
    # O_NOFOLLOW on the folder and the file: one swapped for a symlink after listing is refused.
    fd = _open_folder(folder)
    if fd is None:
        raise FileError(f"{Path(folder) / name}: cannot open: its folder is gone")
    # O_NONBLOCK: a FIFO swapped in after listing must not block the open (nor the host) for ever
    try:
        file_fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
    except OSError as exc:
        raise FileError(f"{Path(folder) / name}: cannot open: {exc.strerror}") from None
    finally:
        os.close(fd)
    if not stat.S_ISREG(os.fstat(file_fd).st_mode):
        os.close(file_fd)
        raise FileError(f"{Path(folder) / name}: no longer a regular file (a FIFO, device or folder now)")
    os.set_blocking(file_fd, True)
    return os.fdopen(file_fd, "rb")


def fetch(folder: str, name: str, target: Path, start: int = 0, end: int | None = None) -> int:
    with _open(folder, name) as src, target.open("xb") as dst:
        src.seek(start)
        copied = copy_range(src, dst, start, end)
        st = os.fstat(src.fileno())
    os.utime(target, (st.st_atime, st.st_mtime))
    return copied
