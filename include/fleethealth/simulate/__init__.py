"""Simulate: a development tool — fleets with healthy and incident scenarios, as raw files and an inventory.

Realistic raw files, an inventory and the ground truth (expected incidents). No pipeline module imports it:
only the CLI, the demo, set-up and tests do.

    from fleethealth.simulate import simulate, SCENARIOS
    inventory = simulate(Path("out"), "all", start, end)   # start/end: tz-aware, hour-aligned UTC

Writes `<out>/fleet/<cluster>/<host>/{kafka,zookeeper,jmx,threaddumps,logdirs}/`, `<out>/inventory.yaml`
and `<out>/expected_incidents.json`. Deterministic for a given seed. Volume per broker-hour, each ± 5 %:
`bytes_per_broker_hour` bytes of Kafka logs and `jmx_samples_per_broker_hour` JMX samples as silver
counts them (`jmx_volume.py`). Exceptions: a broker's own records above the byte budget are all written;
an hour a broker is partly down has less of both; N below the ~800 samples of the MBeans fleethealth
reads gives those alone (N = 0: the cheap choice for tests that do not need the volume).
`layout="archive"` re-arranges the same records as found on hosts copied right after an incident (live
and gzip'd Kafka logs, size-rolled ZooKeeper logs, one truncated `.gz`, fresh mtimes; see `archive.py`)
and writes `<out>/archive-notes.json`.

`SCENARIOS` (what "all" means) are the ZooKeeper-mode clusters; `KRAFT_SCENARIOS` ("kraft") the KRaft
ones (kraft_scenarios.py: 3 dedicated controllers, brokers on 3.9 and 4.1, no ZooKeeper; their hosts
write Kafka logs and JMX, the first broker the log-dir snapshots, no thread dumps); `AVAILABILITY_SCENARIOS`
("availability") the clusters of the availability kinds that "all" leaves out (a broker lost for good).
"""
from __future__ import annotations

import dataclasses
import json
import shutil
from datetime import datetime
from pathlib import Path

from . import archive, forms, jolokia, kraft_jmx, logdirs, threaddumps
from .clock import LocalClock, check_window, utc_hours
from .fleet import Cluster, Host, coordinator_partition, java_string_hashcode, write_inventory
from .kafka_logs import BrokerLogs
from .kraft_logs import KraftLogs
from .model import ClusterState
from .scenarios import AVAILABILITY_CATALOGUE, CATALOGUE, KRAFT_CATALOGUE
from .zookeeper_logs import ZkLog

SCENARIOS: tuple[str, ...] = tuple(n for n in CATALOGUE if n not in KRAFT_CATALOGUE and n not in AVAILABILITY_CATALOGUE)
KRAFT_SCENARIOS: tuple[str, ...] = tuple(KRAFT_CATALOGUE)
AVAILABILITY_SCENARIOS: tuple[str, ...] = tuple(AVAILABILITY_CATALOGUE)
LAYOUTS: tuple[str, ...] = ("hourly", "archive")
GROUPS = {"all": SCENARIOS, "kraft": KRAFT_SCENARIOS, "availability": AVAILABILITY_SCENARIOS}

__all__ = ["SCENARIOS", "KRAFT_SCENARIOS", "AVAILABILITY_SCENARIOS", "LAYOUTS", "simulate", "coordinator_partition",
           "java_string_hashcode", "Cluster", "Host", "resolve"]


def resolve(scenarios: list[str] | str) -> list[str]:
    """The scenario names of a list or a comma-separated string, `all`, `kraft` and `availability` expanded (ValueError
    naming the unknown ones and every choice)."""
    if isinstance(scenarios, str):
        scenarios = [s.strip() for s in scenarios.split(",") if s.strip()]
    scenarios = [n for s in scenarios for n in GROUPS.get(s, (s,))]
    unknown = [s for s in scenarios if s not in CATALOGUE]
    if unknown or not scenarios:
        raise ValueError(f"unknown scenario(s) {', '.join(unknown) or '(none)'} (choose from {', '.join(CATALOGUE)}, "
                         f"all, kraft or availability)")
    return list(dict.fromkeys(scenarios))


def simulate(out: Path, scenarios: list[str] | str, start: datetime, end: datetime, *, brokers: int = 3,
             seed: int = 7, bytes_per_broker_hour: int = 200_000, jmx_samples_per_broker_hour: int = 20_000,
             layout: str = "hourly", shifts: dict[str, int] | None = None,
             log_format: str | dict[str, str] | None = None, timezone: str | dict[str, str] | None = None) -> Path:
    """Write a fleet for [start, end) (UTC, hour-aligned, tz-aware) under `out`; return the inventory path.
    `shifts` (scenario name -> ms) moves a scenario's events that much later than their usual anchor
    (the window start), e.g. so that an episode straddles an hour end; its ground truth moves with them.
    `log_format` (one for all, or cluster name -> form; `forms.FORMS`) writes clusters as a deployment
    writes them; `timezone` (an IANA zone for all, or cluster name -> zone) replaces the clusters' own."""
    names = resolve(scenarios)
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}; known: {', '.join(LAYOUTS)}")
    if brokers < 1:
        raise ValueError(f"brokers must be >= 1, got {brokers}")
    if bytes_per_broker_hour < 0 or jmx_samples_per_broker_hour < 0:
        raise ValueError(f"bytes and JMX samples per broker-hour must be >= 0, got {bytes_per_broker_hour} "
                         f"and {jmx_samples_per_broker_hour}")
    start_ms, end_ms = check_window(start, end)
    out = Path(out)
    root = out / "fleet"
    clusters, expected = [], []
    cluster_names = [CATALOGUE[n].cluster(brokers).name for n in names]
    chosen = forms.resolve(log_format, cluster_names)
    zones = timezone if isinstance(timezone, dict) else {n: timezone for n in cluster_names if timezone}
    if set(zones) - set(cluster_names):
        raise ValueError(f"timezone for unknown cluster(s) {', '.join(sorted(set(zones) - set(cluster_names)))} "
                         f"(the clusters: {', '.join(cluster_names)})")
    amended = {}
    for name in names:
        sc = CATALOGUE[name]
        cluster = sc.cluster(brokers)
        if zones.get(cluster.name):
            cluster = dataclasses.replace(cluster, timezone=zones[cluster.name])
        anchor = start_ms + (shifts or {}).get(name, 0)
        state = ClusterState(cluster, sc.events(cluster, anchor, end_ms), seed)
        base = root / cluster.name
        if base.exists():
            shutil.rmtree(base)  # files are appended hour by hour: start from a clean cluster folder
        write_cluster(state, base, start_ms, end_ms, bytes_per_broker_hour, jmx_samples_per_broker_hour)
        amended[cluster.name] = entry = cluster.inventory_entry(root.resolve())
        forms.apply(chosen[cluster.name], base, cluster, entry)
        clusters.append(cluster)
        expected.extend(sc.expected(state, anchor, end_ms))
    out.mkdir(parents=True, exist_ok=True)
    if layout == "archive":
        archive.rearrange(out, root, clusters)
    else:
        (out / archive.NOTES).unlink(missing_ok=True)   # no stale notes from an earlier archive run
    (out / "expected_incidents.json").write_text(json.dumps(expected, indent=2) + "\n")
    return write_inventory(out / "inventory.yaml", clusters, root, entries=amended)


def write_cluster(state: ClusterState, base: Path, start_ms: int, end_ms: int, bytes_per_hour: int,
                   jmx_samples_per_hour: int) -> None:
    c = state.c
    clock = LocalClock(c.tz)
    if c.kraft:
        return _write_kraft_cluster(state, clock, base, start_ms, end_ms, bytes_per_hour)
    for b in c.broker_ids:
        hd = base / c.broker_host(b).name
        logs = BrokerLogs(state, b, clock, hd / "kafka", bytes_per_hour)
        extra = jolokia.broker_jmx(state, b, jmx_samples_per_hour, start_ms)
        for h0 in utc_hours(start_ms, end_ms):
            logs.write_hour(h0)
            jolokia.write_hour(state, b, clock, hd / "jmx", h0, extra)
            threaddumps.write_hour(state, b, clock, hd / "threaddumps", h0)
            if b == c.broker_ids[0]:
                logdirs.write_hour(state, clock, hd / "logdirs", h0)
    for host in c.zk_hosts:
        zk = ZkLog(state, clock, base / host.name / "zookeeper", host.zk_myid)
        for i, h0 in enumerate(utc_hours(start_ms, end_ms), start=1):
            zk.write_hour(h0, i)


def _write_kraft_cluster(state: ClusterState, clock: LocalClock, base: Path, start_ms: int, end_ms: int,
                         bytes_per_hour: int) -> None:
    c = state.c
    for node in (*c.broker_ids, *c.controller_ids):
        host = c.broker_host(node) if node in c.broker_ids else c.controller_host(node)
        logs = KraftLogs(state, node, clock, base / host.name / "kafka", bytes_per_hour)
        for h0 in utc_hours(start_ms, end_ms):
            logs.write_hour(h0)
            jolokia.write_hour(state, node, clock, base / host.name / "jmx", h0, bulk=kraft_jmx.bulk_response)
            if node == c.broker_ids[0]:
                logdirs.write_hour(state, clock, base / host.name / "logdirs", h0)
