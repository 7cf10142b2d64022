"""The fleet's behaviour over time: one place for every quantity that several files report.

JMX, log-dir snapshots, log-cleaner logs, server logs and thread dumps all ask a `ClusterState` for
the same facts (is broker b up, is its cleaner alive, how big is __consumer_offsets-p on broker b at
time t, when did the cleaner last compact it) so they never disagree. All times are UTC epoch ms.
Schedules are anchored to the epoch, not to the window, so overlapping windows tell the same story.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import lru_cache

from .fleet import OFFSETS_TOPIC, Cluster

MB = 1024 * 1024
GIB = 1024 * MB
CLEANER_BACKOFF_MS = 15_000
OFFSETS_SEGMENT_BYTES = 100 * MB
OFFSETS_ORIGIN_MS = 1_767_225_600_000   # 2026-01-01T00:00Z: the simulated clusters' creation
OFFSET_COMMIT_BYTES = 150               # bytes of one offset-commit record on disk


@dataclass(frozen=True)
class Restart:
    """A broker restart: clean shutdown at `shutdown_ms`, JVM start (KafkaConfig block) at `start_ms`."""
    broker: int
    shutdown_ms: int
    start_ms: int
    slow_loads: dict[int, int] = field(default_factory=dict)   # offsets partition -> load time ms
    cleaner_redeath_ms: int | None = None                      # restarted cleaner dies again

    @property
    def up_ms(self) -> int:
        """When the broker answers (JMX agent and registration) after the JVM start."""
        return self.start_ms + 6_000


@dataclass(frozen=True)
class Events:
    """What goes wrong in a cluster during a window (empty for a healthy cluster)."""
    cleaner_death_ms: dict[int, int] = field(default_factory=dict)          # broker -> first death
    bloat_bytes_per_s: dict[tuple[int, int], float] = field(default_factory=dict)  # (broker, p) -> rate
    restarts: tuple[Restart, ...] = ()
    tombstone_failures_from_ms: dict[int, tuple[int, str, int]] = field(default_factory=dict)
    # broker -> (from ms, group, tombstones) : GroupMetadataManager cleanup fails from then on
    script: "Script | None" = None   # post-mortem scripts: extra log records, JMX values, deadlocks


class Script:
    """What a post-mortem adds to a cluster's files (postmortems.py); the default adds nothing."""

    def kafka_records(self, logs, t0: int, t1: int) -> dict[str, list[tuple[int, str]]]:
        """Extra (ms, text) records per Kafka log file name of broker `logs.b` in [t0, t1)."""
        return {}

    def zk_records(self, zk, h0: int, h1: int) -> list[tuple[int, str]]:
        """Extra (ms, text) records of ZooKeeper server `zk.myid` in [h0, h1)."""
        return []

    def jmx(self, state: "ClusterState", broker: int, ms: int) -> dict:
        """MBean values that differ from the healthy model at `ms` (keys: see jolokia.bulk_response)."""
        return {}

    def deadlock(self, state: "ClusterState", broker: int, ms: int):
        """A `threaddumps.Deadlock` a jstack of `broker` at `ms` shows, or None."""
        return None

    def drops(self, broker: int, ms: int, text: str) -> bool:
        """True for a record of the healthy model that `broker` does not write at `ms` (e.g. a stuck thread's)."""
        return False

    def away_from_preferred(self, state: "ClusterState", ms: int) -> list[tuple[str, list[int]]]:
        """(partition, replicas) the controller's preferred-replica check at `ms` moves back to their leader."""
        return []


@dataclass(frozen=True)
class Cleaning:
    """One successful log-cleaner pass over an offsets partition."""
    end_ms: int
    partition: int
    start_bytes: int
    end_bytes: int
    first_offset: int
    end_offset: int
    seconds: float


class ClusterState:
    def __init__(self, cluster: Cluster, events: Events, seed: int):
        self.c = cluster
        self.ev = events
        self.seed = seed

    # --- deterministic per-entity parameters ----------------------------------------------------
    def rng(self, *key) -> random.Random:
        return random.Random("/".join(map(str, (self.seed, self.c.name) + key)))

    @lru_cache(maxsize=None)
    def _offsets_params(self, broker: int, p: int) -> tuple[int, int, int, int, float]:
        """(base bytes, growth bytes per period, period ms, phase ms, commits/s) of a replica."""
        r = self.rng("offsets", p)
        if p in self.c.active_offsets_partitions:
            base = r.randint(25 * MB, 45 * MB)
            growth = r.randint(10 * MB, 24 * MB)
            period = r.randint(20, 50) * 60_000 + r.randint(0, 59_999)
            rate = r.uniform(40, 120)
        else:
            base = r.randint(0, 2 * MB)
            growth = r.randint(64 * 1024, 1 * MB)
            period = r.randint(6, 12) * 3_600_000 + r.randint(0, 3_599_999)
            rate = r.uniform(0.01, 0.2)
        phase = self.rng("phase", broker, p).randrange(period)
        return base, growth, period, phase, rate

    # --- liveness ---------------------------------------------------------------------------------
    def restart_of(self, broker: int) -> Restart | None:
        for r in self.ev.restarts:
            if r.broker == broker:
                return r
        return None

    def is_up(self, broker: int, ms: int) -> bool:
        r = self.restart_of(broker)
        return r is None or not (r.shutdown_ms <= ms < r.up_ms)

    def offline_partitions(self, ms: int) -> int:
        """Partitions none of whose replicas is up at `ms` (the active controller's OfflinePartitionsCount): in
        these clusters, a partition of replication factor 1 whose broker is down."""
        if not self.ev.restarts:
            return 0
        return sum(1 for t in self.c.all_topics for p in range(t.partitions)
                   if not any(self.is_up(b, ms) for b in self.c.replicas(t.name, p)))

    def cleaner_alive(self, broker: int, ms: int) -> bool:
        death = self.ev.cleaner_death_ms.get(broker)
        if death is None or ms < death:
            return True
        r = self.restart_of(broker)
        if r and r.cleaner_redeath_ms is not None and r.start_ms <= ms < r.cleaner_redeath_ms:
            return True
        return False

    def cleaner_thread_exists(self, broker: int, ms: int) -> bool:
        return self.cleaner_alive(broker, ms)

    # --- offsets partitions -----------------------------------------------------------------------
    def last_clean_ms(self, broker: int, p: int, ms: int) -> int:
        """End of the last successful cleaning of partition p on broker at or before ms."""
        _, _, period, phase, _ = self._offsets_params(broker, p)
        death = self.ev.cleaner_death_ms.get(broker)
        t = ms if death is None else min(ms, death - 1)
        return t - ((t - phase) % period)

    def offsets_size(self, broker: int, p: int, ms: int) -> int:
        base, growth, period, _, _ = self._offsets_params(broker, p)
        last = self.last_clean_ms(broker, p, ms)
        rate = self.ev.bloat_bytes_per_s.get((broker, p))
        death = self.ev.cleaner_death_ms.get(broker)
        if rate is not None and death is not None and ms > death:
            return int(base + growth * (death - last) / period + rate * (ms - death) / 1000)
        return int(base + growth * (ms - last) / period)

    def offsets_end_offset(self, broker: int, p: int, ms: int) -> int:
        """Log end offset: commits since the cluster was created (OFFSETS_ORIGIN_MS)."""
        rate = self._offsets_params(broker, p)[4]
        bloat = self.ev.bloat_bytes_per_s.get((broker, p))
        if bloat:
            rate = bloat / OFFSET_COMMIT_BYTES  # a heavy committer: every commit is a new record
        return int(rate * (ms - OFFSETS_ORIGIN_MS) / 1000)

    def cleanings(self, broker: int, t0: int, t1: int) -> list[Cleaning]:
        """Successful cleaner passes on broker with end time in [t0, t1), sorted by time."""
        out = []
        for p in self.c.offsets_partitions(broker):
            base, growth, period, phase, _ = self._offsets_params(broker, p)
            k = -(-(t0 - phase) // period)
            t = phase + k * period
            while t < t1:
                if self.cleaner_alive(broker, t) and self.is_up(broker, t):
                    r = self.rng("clean", broker, p, t)
                    out.append(Cleaning(t, p, base + growth, base,
                                        self.offsets_end_offset(broker, p, t - period),
                                        self.offsets_end_offset(broker, p, t),
                                        round(r.uniform(0.3, 3.0), 1)))
                t += period
        out.sort(key=lambda c: c.end_ms)
        return out

    def time_since_last_run_ms(self, broker: int, ms: int) -> int:
        """LogCleanerManager time-since-last-run-ms: the cleaner checks every backoff while alive."""
        r = self.restart_of(broker)
        if self.cleaner_alive(broker, ms):
            return (ms - 3_217) % CLEANER_BACKOFF_MS
        if r and ms >= r.start_ms:
            return ms - (r.cleaner_redeath_ms or r.start_ms)
        return ms - self.ev.cleaner_death_ms[broker]

    def max_clean_time_secs(self, broker: int, ms: int) -> float:
        r = self.restart_of(broker)
        if r and ms >= r.start_ms:
            return 0.0  # new JVM, no successful run since
        done = self.cleanings(broker, ms - 3 * 3_600_000, ms)
        return max((c.seconds for c in done), default=0.0)

    def offsets_segments(self, broker: int, ms: int) -> int:
        return sum(1 + self.offsets_size(broker, p, ms) // OFFSETS_SEGMENT_BYTES
                   for p in self.c.offsets_partitions(broker))

    def open_fds(self, broker: int, ms: int) -> int:
        base = 1_150 + self.rng("fds", broker).randint(0, 300)
        jitter = self.rng("fdj", broker, ms // 300_000).randint(-25, 25)
        return base + jitter + 3 * self.offsets_segments(broker, ms)

    # --- user topics ------------------------------------------------------------------------------
    def topic_offset(self, topic: str, ms: int) -> int:
        """Log end offset of a user-topic partition (same rate on every partition of the topic)."""
        return int(self.c.topic(topic).msgs_per_sec * (ms - OFFSETS_ORIGIN_MS) / 1000)

    @lru_cache(maxsize=None)
    def _topic_retained(self, topic: str, p: int) -> int:
        """Bytes of ~7 days of messages a user-topic partition keeps."""
        return int(self.c.topic(topic).msgs_per_sec * 7 * 86_400 * self.rng("tsize", topic, p).uniform(300, 700))

    def topic_size(self, broker: int, topic: str, p: int, ms: int) -> int:
        t = self.c.topic(topic)
        retained = self._topic_retained(topic, p)
        seg = t.segment_bytes
        rolling = int(t.msgs_per_sec * ms / 1000 * 500) % seg
        return retained - retained % seg + rolling

    # --- leadership, epochs, controller -----------------------------------------------------------
    @property
    def controller_check_phase(self) -> int:
        """leader.imbalance.check.interval.seconds=300: the controller's checks, anchored to the epoch."""
        return 17_312

    @property
    def controller_epoch(self) -> int:
        return 7 + self.rng("ctl-epoch").randint(0, 30)

    @property
    def cluster_id(self) -> str:
        import base64
        raw = self.rng("cluster-id").getrandbits(128).to_bytes(16, "big")
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    def zk_session_id(self, broker: int, generation: int) -> str:
        """ZooKeeper session id of a broker's n-th session (server id 1 in the high byte)."""
        return f"0x1{self.rng('zksid', broker, generation).getrandbits(56):014x}"

    def leader_epoch(self, topic: str, p: int) -> int:
        return 3 + self.rng("le", topic, p).randint(0, 40)

    def leadership_back_ms(self, rs: Restart) -> int:
        """First preferred-replica check after the restarted broker is up: leaders move back then."""
        ph = self.controller_check_phase
        return rs.up_ms + (ph - rs.up_ms) % 300_000

    def load_finished_ms(self, rs: Restart, p: int) -> int:
        """When '... Finished loading offsets and group metadata from __consumer_offsets-p' is logged."""
        return self.leadership_back_ms(rs) + 200 + rs.slow_loads[p]

    def moved_partitions(self, broker: int) -> list[tuple[str, int]]:
        return [(t.name, p) for t in self.c.all_topics for p in range(t.partitions)
                if self.c.leader(t.name, p) == broker and len(self.c.replicas(t.name, p)) > 1]

    def temp_leader(self, topic: str, p: int, gone: int) -> int:
        return self.c.replicas(topic, p)[1]

    def offsets_leader(self, p: int, ms: int) -> int:
        pref = self.c.leader(OFFSETS_TOPIC, p)
        rs = self.restart_of(pref)
        if rs and rs.shutdown_ms <= ms < self.leadership_back_ms(rs) and len(self.c.replicas(OFFSETS_TOPIC, p)) > 1:
            return self.temp_leader(OFFSETS_TOPIC, p, pref)
        return pref

    def partitions_away_from_preferred(self, ms: int) -> list[tuple[str, list[int]]]:
        out = self.ev.script.away_from_preferred(self, ms) if self.ev.script is not None else []
        for rs in self.ev.restarts:
            if ms == self.leadership_back_ms(rs):
                out += [(f"{t}-{p}", self.c.replicas(t, p)) for t, p in self.moved_partitions(rs.broker)]
        return out
