"""Pull: copy each host's files of one hour into landing, with a manifest (SPEC §4 landing).

Landing layout: <lakehouse>/landing/<YYYY-MM-DDTHH>/<cluster>/<host>/<source>/<file>, and per host
`_manifest.json` (file, source, size, sha256, mtime, pulled_at). Pulling a host-hour again replaces
its folder, so re-pulling is harmless.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import time
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

from fleethealth import config
from fleethealth.hours import file_span, in_hour
from fleethealth.inventory import SOURCES, Host, Inventory
from fleethealth.transports import local

MANIFEST = "_manifest.json"
MAX_FILE_BYTES = 2 * 1024**3


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


def landing_hour_dir(hour: datetime, lakehouse=None) -> Path:
    return config.lakehouse_dir(lakehouse) / "landing" / hour.strftime("%Y-%m-%dT%H")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _safe_name(name: str) -> bool:
    return name not in ("", ".", "..") and "/" not in name and "\\" not in name and "\0" not in name


def pull_host(host: Host, timezone: str, hour: datetime, lakehouse=None) -> list[Landed]:
    """Land the files of `host` that cover `hour`; returns what landed."""
    if host.transport != "local":
        raise PullError(f"{host.host}: transport {host.transport!r} is not available yet")
    base = landing_hour_dir(hour, lakehouse)
    host_dir = base / host.cluster / host.host
    tmp = host_dir.with_name(host_dir.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    landed: list[Landed] = []
    for source in SOURCES:
        folder = host.source_dir(source)
        for rf in local.list_files(folder):
            if not _safe_name(rf.name) or rf.name.startswith("."):
                continue
            if not in_hour(file_span(rf.name, rf.mtime, timezone), hour):
                continue
            if rf.size > MAX_FILE_BYTES:
                raise PullError(f"{host.host}: {folder}/{rf.name} is {rf.size} bytes, over the cap")
            target = tmp / source / rf.name
            target.parent.mkdir(parents=True, exist_ok=True)
            local.fetch(folder, rf.name, target)
            landed.append(Landed(host.cluster, host.host, source,
                                 f"{host.cluster}/{host.host}/{source}/{rf.name}",
                                 target.stat().st_size, _sha256(target), rf.mtime, time.time()))
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / MANIFEST).write_text(json.dumps([asdict(x) for x in landed], indent=1))
    shutil.rmtree(host_dir, ignore_errors=True)
    tmp.rename(host_dir)
    return landed


def pull_hour(inventory: Inventory, hour: datetime, lakehouse=None) -> list[Landed]:
    out: list[Landed] = []
    for cluster in inventory.clusters:
        for host in cluster.hosts:
            out.extend(pull_host(host, cluster.timezone, hour, lakehouse))
    return out


def read_manifests(hour: datetime, lakehouse=None) -> list[Landed]:
    """Everything landed for `hour` (all hosts)."""
    base = landing_hour_dir(hour, lakehouse)
    out: list[Landed] = []
    for manifest in sorted(base.glob(f"*/*/{MANIFEST}")):
        out.extend(Landed(**row) for row in json.loads(manifest.read_text()))
    return out
