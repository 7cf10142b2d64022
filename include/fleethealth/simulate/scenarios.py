"""Scenario catalogue: each scenario is one cluster, its timeline of events and its ground truth.

A scenario is data (the cluster) plus two functions of the window: `events` (what goes wrong, when)
and `expected` (the incidents the pipeline must report, computed from the same model the writers use).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .clock import HOUR_MS, iso_z
from .fleet import OFFSETS_TOPIC, Cluster, Topic
from .jolokia import sample_times
from .model import GIB, ClusterState, Events, Restart

BLOAT_THRESHOLD_BYTES = GIB          # default offsets_partition_bloat threshold (1 GiB)
SLOW_LOAD_THRESHOLD_MS = 60_000      # default slow_group_load threshold

USER_TOPICS = (
    Topic("orders", 12, 3, 180.0),
    Topic("payments", 6, 3, 60.0),
    Topic("clickstream", 24, 3, 900.0),
    Topic("inventory-updates", 6, 3, 40.0),
)


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    cluster: Callable[[int], Cluster]                         # brokers -> Cluster
    events: Callable[[Cluster, int, int], Events]             # (cluster, start ms, end ms) -> Events
    expected: Callable[[ClusterState, int, int], list[dict]]  # (state, start ms, end ms) -> ground truth


def incident(cluster: str, kind: str, entity: str, first_seen_ms: int, note: str) -> dict:
    return {"cluster": cluster, "kind": kind, "entity": entity, "first_seen": iso_z(first_seen_ms), "note": note}


# --- healthy ---------------------------------------------------------------------------------------
def _healthy_cluster(brokers: int) -> Cluster:
    return Cluster(name="healthy", timezone="Europe/Berlin", kafka_version="2.8.2", java_version="11.0.20",
                   brokers=brokers, topics=USER_TOPICS, zk_session_timeout_ms=18000,
                   groups=("orders-app", "payments-processor", "clickstream-etl", "fraud-detector", "audit-sink"))


# --- pm3: dead log cleaner -> __consumer_offsets bloat -> slow group load after restart ---------
PM3_GROUP = "consumer-group"
PM3_BROKER = 2
PM3_BLOAT_PER_HOUR = 3 * GIB
PM3_SLOW_LOAD_MS = 95_123
PM3_TOMBSTONES = 363


def _pm3_cluster(brokers: int) -> Cluster:
    if brokers < PM3_BROKER:
        raise ValueError(f"scenario pm3-dead-cleaner needs at least {PM3_BROKER} brokers, got {brokers}")
    return Cluster(name="pm3-dead-cleaner", timezone="America/New_York", kafka_version="1.1.0",
                   java_version="1.8.0_382", brokers=brokers, topics=USER_TOPICS, zk_session_timeout_ms=6000,
                   groups=(PM3_GROUP, "billing-service", "search-indexer", "notifications"),
                   pinned_group=(PM3_GROUP, PM3_BROKER))


def _pm3_events(c: Cluster, start: int, end: int) -> Events:
    p = c.group_partition(PM3_GROUP)
    death = start + 20 * 60_000 + 412
    restarts = ()
    if end - start >= 3 * HOUR_MS:
        last = end - HOUR_MS
        rs_start = last + 8 * 60_000 + 30_118
        restarts = (Restart(PM3_BROKER, shutdown_ms=last + 7 * 60_000 + 41_273, start_ms=rs_start,
                            slow_loads={p: PM3_SLOW_LOAD_MS}, cleaner_redeath_ms=rs_start + 6_000 + 21_406),)
    return Events(cleaner_death_ms={PM3_BROKER: death},
                  bloat_bytes_per_s={(PM3_BROKER, p): PM3_BLOAT_PER_HOUR / 3600},
                  restarts=restarts,
                  tombstone_failures_from_ms={PM3_BROKER: (death + 25 * 60_000, PM3_GROUP, PM3_TOMBSTONES)})


def _pm3_expected(st: ClusterState, start: int, end: int) -> list[dict]:
    c = st.c
    p = c.group_partition(PM3_GROUP)
    b = PM3_BROKER
    death = st.ev.cleaner_death_ms[b]
    out = [incident(c.name, "log_cleaner_dead", f"broker-{b}", death,
                    "kafka-log-cleaner-thread-0 died (Error due to: java.io.IOException: Map failed) and stopped; "
                    "no cleaning after that, thread absent from jstack, time-since-last-run-ms grows")]
    for ms in sample_times(st, b, start, end):
        if st.offsets_size(b, p, ms) > BLOAT_THRESHOLD_BYTES:
            out.append(incident(c.name, "offsets_partition_bloat", f"{OFFSETS_TOPIC}-{p}@broker-{b}", ms,
                                f"first JMX sample with kafka.log Size > {BLOAT_THRESHOLD_BYTES} bytes; grows "
                                f"~{PM3_BLOAT_PER_HOUR // GIB} GiB/h without compaction; serves group {PM3_GROUP}"))
            break
    for rs in st.ev.restarts:
        for part, load_ms in rs.slow_loads.items():
            t = st.load_finished_ms(rs, part)
            if load_ms > SLOW_LOAD_THRESHOLD_MS and t < end:
                out.append(incident(c.name, "slow_group_load", f"{OFFSETS_TOPIC}-{part}@broker-{rs.broker}", t,
                                    f"broker {rs.broker} restarted; loading offsets and group metadata took "
                                    f"{load_ms} ms (> {SLOW_LOAD_THRESHOLD_MS} ms); the restarted cleaner died again"))
    return out


CATALOGUE: dict[str, Scenario] = {
    s.name: s for s in (
        Scenario("healthy", "Kafka 2.8.2 healthy cluster: compacting cleaner, quiet ZooKeeper, no errors",
                 _healthy_cluster, lambda c, s, e: Events(), lambda st, s, e: []),
        Scenario("pm3-dead-cleaner", "post-mortem 3: dead log cleaner, __consumer_offsets-38 bloat, slow group load",
                 _pm3_cluster, _pm3_events, _pm3_expected),
    )
}
