"""Landing: where pulled files go and what says so. Layout <lakehouse>/landing/<YYYY-MM-DDTHH>/<cluster>/<host>/<source>/<file>
and per host `_manifest.json` (`Landed` rows); the names files are stored under; what bronze reads back.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from fleethealth.lake.catalog import Lakehouse

MANIFEST = "_manifest.json"
PARTIAL = "_partial"
# a JMX export file holding one Prometheus scrape (optionally rolled: metrics.prom.2026-11-20-05)
PROMETHEUS_FILE = r"\.prom(\.[^/]*)?$"


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


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def safe_name(name: str) -> bool:
    return (name not in ("", ".", "..") and not name.startswith(".")
            and "/" not in name and "\\" not in name and "\0" not in name)


_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
# longer names are shortened: landing adds suffixes (.fetched, .plain, .lines) and a file system
# allows 255 bytes
MAX_NAME = 200


def landed_name(name: str) -> str:
    """The name a remote file is stored under in landing. Names are data, not patterns: Spark's
    reader would glob `[`, `{`, `*`, fail on `:` and URL-decode `+`, so any other name is replaced by
    a plain one (unique per name, keeping a `.gz` suffix); the manifest keeps the real name."""
    if _PLAIN_NAME.fullmatch(name) and len(name) <= MAX_NAME:
        return name
    suffix = ".gz" if name.endswith(".gz") else ""
    plain = re.sub(r"[^A-Za-z0-9._-]+", "_", name[: len(name) - len(suffix)]).strip("._-")[:100]
    return f"{plain or 'file'}~{hashlib.sha256(name.encode()).hexdigest()[:10]}{suffix}"


def inside(folder: Path, path: Path) -> Path:
    """`path`, after checking it resolves inside `folder` (no remote name may escape landing)."""
    if not path.resolve().is_relative_to(folder.resolve()):
        raise PullError(f"{path} would land outside {folder}")
    return path


def read_manifests(hour: datetime, lakehouse: Lakehouse) -> list[Landed]:
    """Everything landed for `hour` (all hosts)."""
    base = lakehouse.landing(hour)
    out: list[Landed] = []
    for manifest in sorted(base.glob(f"*/*/{MANIFEST}")):
        out.extend(Landed(**row) for row in json.loads(manifest.read_text()))
    return out
