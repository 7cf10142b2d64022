"""What every transport is: the Transport protocol, its errors, a listed file, and shared helpers."""
from __future__ import annotations

import posixpath
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


class TransportError(RuntimeError):
    """A host could not be read: unreachable, refused, timed out..."""


class FileError(TransportError):
    """One file could not be read (vanished, unreadable, no longer a regular file): the host's other
    files still land, and this one is recorded as rejected with the message as its reason."""


@dataclass(frozen=True)
class RemoteFile:
    name: str
    size: int
    mtime: float
    inode: int | None = None   # None where the transport cannot tell (SFTP)


class Transport(Protocol):
    def list_files(self, folder: str) -> list[RemoteFile]:
        """Regular files directly in `folder`, sorted by name; no symlinks, no sub-folders; [] if absent."""

    def is_folder(self, folder: str) -> bool:
        """Whether `folder` is a folder (not a symlink to one): what tells an absent folder from an
        empty one (`fleethealth check`)."""

    def head(self, folder: str, name: str, n: int) -> bytes:
        """The first `n` bytes of `folder/name` (its identity, see fleethealth.pull.hour)."""

    def read(self, folder: str, name: str, offset: int, n: int) -> bytes:
        """Up to `n` bytes of `folder/name` from `offset` (where an hour's lines start, see
        fleethealth.pull.linecut)."""

    def fetch(self, folder: str, name: str, target: Path, start: int = 0, end: int | None = None) -> int:
        """Copy bytes [start, end) of `folder/name` into the new file `target`; returns the bytes
        copied. Raises FileError when this file cannot be read, TransportError when the host fails."""


class NoFiles:
    """The transport of an `http` host: it has no files to list."""

    def list_files(self, folder: str) -> list[RemoteFile]:
        return []

    def is_folder(self, folder: str) -> bool:
        return False

    def subfolders(self, folder: str) -> list[str]:
        return []

    def head(self, folder, name, n) -> bytes:
        raise TransportError(f"{folder}/{name}: an http host has no files")

    def read(self, folder, name, offset, n) -> bytes:
        raise TransportError(f"{folder}/{name}: an http host has no files")

    def fetch(self, folder, name, target, start=0, end=None) -> None:
        raise TransportError(f"{folder}/{name}: an http host has no files")


def folders_below(root: str | None, folder: str) -> list[str]:
    """The folders from just below `root` down to `folder` (only `folder` when it is not under `root`):
    the ones a transport checks are not symlinks. The root itself is the operator's choice."""
    root_n, folder_n = posixpath.normpath(root or "/"), posixpath.normpath(folder)
    if root is None or posixpath.commonpath([root_n, folder_n]) != root_n or root_n == folder_n:
        return [folder_n]
    out, path = [], folder_n
    while path != root_n:
        out.append(path)
        path = posixpath.dirname(path)
    return out[::-1]


def copy_range(src, dst, start: int, end: int | None) -> int:
    """Copy [start, end) from the open binary stream `src` (already at `start`) to `dst`; returns the
    bytes copied (fewer than asked when the file shrank while being read: the caller says so)."""
    copied = 0
    left = None if end is None else end - start
    while left is None or left > 0:
        block = src.read(1 << 20 if left is None else min(1 << 20, left))
        if not block:
            break
        dst.write(block)
        copied += len(block)
        if left is not None:
            left -= len(block)
    return copied
