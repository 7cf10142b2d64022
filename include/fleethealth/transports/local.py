"""`local` transport: the fleet's files are in a directory tree (an NFS archive, a shipper's target)."""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RemoteFile:
    name: str
    size: int
    mtime: float


def list_files(folder: str) -> list[RemoteFile]:
    """Regular files directly in `folder` (symlinks and sub-folders are not followed)."""
    root = Path(folder)
    if not root.is_dir():
        return []
    out = []
    for entry in sorted(root.iterdir()):
        if entry.is_symlink() or not entry.is_file():
            continue
        st = entry.stat()
        out.append(RemoteFile(entry.name, st.st_size, st.st_mtime))
    return out


def fetch(folder: str, name: str, target: Path) -> None:
    shutil.copy2(Path(folder) / name, target)
