"""Jolokia exports of a KRaft node: the MBeans mbeans.yaml lists for its process kind, every 5 minutes.

A dedicated controller is the `controller` process (kafka.controller beans, Raft metrics, the JVM), a
broker the `kraft_broker` one (a ZooKeeper-mode broker's beans but the ZooKeeper ones, Raft metrics as
an observer, broker-metadata-metrics); a bean is exported from its `since` version on. Reads follow
how Jolokia answers: beans sharing an ObjectName in one read of their attributes, the offsets sizes as a
pattern read, meters and histograms whole. Values come from the cluster model (kraft_model) and the
scenario's script (`jmx`: bean id -> value). Only the beans fleethealth reads: the JMX volume option
(jmx_volume.py) fills ZooKeeper-mode brokers only.
"""
from __future__ import annotations

from fleethealth.fleet import mbeans

from . import kraft_model as km
from .fleet import version_tuple
from .jmx_volume import _histogram, _meter
from .jolokia import OFFSETS_SIZE_PATTERN, _canonical, _read
from .model import ClusterState

WHOLE = {"OneMinuteRate": "meter", "99thPercentile": "histogram"}   # a read of the whole Yammer metric


def process(state: ClusterState, node: int) -> str:
    return "controller" if node in state.c.controller_ids else "kraft_broker"


def node_version(state: ClusterState, node: int) -> str:
    c = state.c
    return (c.controller_version or c.kafka_version) if node in c.controller_ids else c.broker_version(node)


def beans(state: ClusterState, node: int) -> list[mbeans.MBean]:
    v = version_tuple(node_version(state, node))
    return [m for m in mbeans.for_processes((process(state, node),)) if v >= version_tuple(m.since)]


def values(state: ClusterState, node: int, ms: int) -> dict[str, object]:
    """Bean id -> value of every bean the node exports at `ms`."""
    c, r = state.c, state.rng("kraft-jmx", node, ms)
    leader, epoch = km.leader_at(state, ms)
    none = km.leaderless(state, ms)
    hw = km.high_watermark(state, ms)
    fenced = len(km.fenced_brokers(state, ms))
    out: dict[str, object] = {
        "open_fds": 700 + r.randint(0, 60), "max_fds": 1_048_576,
        "raft_current_leader": -1 if none else leader, "raft_current_epoch": epoch, "raft_high_watermark": hw,
        "raft_election_latency_avg": round(r.uniform(20, 60), 3), "raft_election_latency_max": round(r.uniform(60, 140), 3),
        "active_controller_count": int(node == leader and not none), "new_active_controllers": km.new_active_count(state, node, ms),
        "fenced_broker_count": fenced, "active_broker_count": c.brokers - fenced, "timed_out_heartbeats": 0,
        "controller_event_queue_time": _histogram(ms // 500, r.uniform(0.05, 0.4), r),
        "controller_last_applied_offset": hw - r.randint(0, 1), "controller_last_committed_offset": hw,
        "controller_last_applied_lag": r.randint(0, 450), "controller_metadata_errors": 0,
        "offline_partitions": 0,
    }
    if node in c.controller_ids:
        out["raft_current_state"] = ("resigned" if node == leader else "prospective") if none else (
            "leader" if node == leader else "follower")
        return out
    applied = km.applied_offset(state, node, ms)
    under, below = km.isr_shortfall(state, node, ms)
    out.update({
        "under_replicated": under, "under_min_isr": below,
        "raft_current_state": "observer", "open_fds": state.open_fds(node, ms), "max_fds": 100_000,
        "offsets_log_size": {_canonical(mbeans.OFFSETS_LOG_SIZE, partition=str(p)): {"Value": state.offsets_size(node, p, ms)}
                             for p in c.offsets_partitions(node)},
        "cleaner_dead_threads": 0 if state.cleaner_thread_exists(node, ms) else 1,
        "cleaner_time_since_last_run": state.time_since_last_run_ms(node, ms),
        "request_queue_size": r.randint(0, 3),
        "request_handler_idle": _meter(int((ms - km.OFFSETS_ORIGIN_MS) / 1000 * 7.1e8), r.uniform(0.86, 0.97), "percent", r),
        "network_processor_idle": round(r.uniform(0.85, 0.98), 4),
        "broker_metadata_applied_offset": applied,
        "broker_metadata_applied_lag": max(0, ms - km.offset_time(state, applied)) if applied < hw - 1 else r.randint(0, 450),
        "broker_metadata_load_errors": 0, "broker_metadata_apply_errors": 0,
    })
    return out


def bulk_response(state: ClusterState, node: int, ms: int, with_error: bool = False, extra=None) -> list[dict]:
    """One scrape of `node`: every read answers (`with_error`, the ZooKeeper-mode brokers' hourly failed read
    that silver quarantines, and `extra`, their JMX volume, are not used: a KRaft node's files parse whole)."""
    vals = values(state, node, ms)
    vals.update(km.script(state).jmx(state, node, ms))
    by_name: dict[str, list[mbeans.MBean]] = {}
    for m in beans(state, node):
        by_name.setdefault(m.object_name, []).append(m)
    out = []
    for name, group in by_name.items():
        if group == [mbeans.OFFSETS_LOG_SIZE]:
            out.append(_read(OFFSETS_SIZE_PATTERN, vals[group[0].id], ms))
        elif len(group) == 1 and group[0].attribute in WHOLE:
            out.append(_read(name, vals[group[0].id], ms))
        elif len(group) == 1:
            out.append(_read(name, vals[group[0].id], ms, group[0].attribute))
        else:
            out.append(_read(name, {m.attribute: vals[m.id] for m in group}, ms, [m.attribute for m in group]))
    return out
