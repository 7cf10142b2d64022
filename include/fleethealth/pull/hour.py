"""Pull: copy what is new on each host for one hour into landing, with a manifest (docs/architecture.md, pull).

Landing layout: <lakehouse>/landing/<YYYY-MM-DDTHH>/<cluster>/<host>/<source>/<file>, and per host
`_manifest.json` (file, source, size, sha256, mtime, pulled_at, remote path, offset). A host's files
are fetched into `<hour>/_partial/<cluster>/<host>` (no host or cluster name starts with `_`, so no
two hosts share it) and renamed over `<host>` at the end: a host-hour folder is replaced as a whole,
never half-written, and a failed pull leaves the previous one in place.

Which files and bytes (`fleethealth.pull.host.placed_by_lines`):
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
decompressed (`gzip_damage`): one file never fails a host, but for its time: a host's pull has
FLEETHEALTH_PULL_TIMEOUT_S in all, a file's read included (a file still being read then is rejected
with that reason, the files read before land, the host fails). Landed names are plain (`landed_name`);
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

import logging
from datetime import datetime

from fleethealth.fleet.inventory import Host, Inventory
from fleethealth.lake import locks
from fleethealth.lake.catalog import Lakehouse
from fleethealth.pull.host import HostPull
from fleethealth.pull.landing import Landed, PullError

log = logging.getLogger(__name__)


def pull_host(host: Host, timezone_name: str, hour: datetime, lakehouse: Lakehouse,
              now: datetime | None = None) -> list[Landed]:
    """Land what is new on `host` for `hour`; returns what landed (also in the host's manifest).
    One pull of a host-hour at a time (its lock): two would share the `_partial` folder."""
    try:
        with locks.hour_lock(hour, lakehouse, f"pull of {host.host}", part=f"{host.cluster}.{host.host}"):
            return HostPull(host, timezone_name, hour, lakehouse, now).run()
    except locks.HourBusy as exc:
        raise PullError(f"{host.host}: {exc}") from None


class HostsFailed(PullError):
    """Some hosts could not be pulled; the others landed (`landed`)."""

    def __init__(self, errors: list[str], landed: list[Landed]):
        self.errors, self.landed = errors, landed
        super().__init__("\n".join(errors))


def pull_hour(inventory: Inventory, hour: datetime, lakehouse: Lakehouse) -> list[Landed]:
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
