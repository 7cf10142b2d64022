"""A KRaft cluster's behaviour over time: the quantities its controllers' and brokers' logs and JMX share.

The Raft quorum (which controller leads, at which epoch), the metadata log's high watermark (a
NoOpRecord every `metadata.max.idle.interval.ms` = 500 ms), the brokers' epochs, which broker is fenced
and what each broker has applied of the metadata log. A healthy cluster has one leader for the whole
window; a `KraftScript` (kraft_scenarios.py) adds elections, fencings and stalls. All times UTC epoch ms.
"""
from __future__ import annotations

from .fleet import MIN_INSYNC_REPLICAS
from .model import OFFSETS_ORIGIN_MS, ClusterState, Script

NOOP_EVERY_MS = 500            # metadata.max.idle.interval.ms
HEARTBEAT_MS = 2_000           # broker.heartbeat.interval.ms
SESSION_TIMEOUT_MS = 9_000     # broker.session.timeout.ms
FETCH_TIMEOUT_MS = 2_000       # controller.quorum.fetch.timeout.ms
CHECK_QUORUM_MS = 3_000        # the leader's check-quorum timeout: fetch timeout x 1.5
SNAPSHOT_EVERY_MS = 3_600_000  # metadata.log.max.snapshot.interval.ms
BALANCE_EVERY_MS = 300_000     # leader.imbalance.check.interval.seconds=300: preferred leaders move back
GLITCH_BEFORE_MS = 3_300       # an election's new leader wins this long after its old leader lost the voters
BALANCE_PHASE_MS = 17_312      # the active controller's balance checks, anchored to the epoch


class KraftScript(Script):
    """What goes wrong in a KRaft cluster; this base is the healthy cluster."""

    def elections(self, state: ClusterState) -> list[tuple[int, int]]:
        """(ms, new leader) of the quorum's leader elections in time order; each one bumps the epoch."""
        return []

    def lost(self, state: ClusterState) -> dict[int, int]:
        """election ms -> when its old leader lost the voters, for an election won later than GLITCH_BEFORE_MS
        after that (a quorum loss: no active controller from the old leader's resignation to the new one's win)."""
        return {}

    def fenced(self, state: ClusterState) -> dict[int, list[tuple[int, int]]]:
        """broker -> [(fenced ms, unfenced ms)] of the active controller's fencings."""
        return {}

    def stalled(self, state: ClusterState) -> dict[int, int]:
        """broker -> ms from which it applies no more metadata (its last applied offset stays there)."""
        return {}

    def kraft_records(self, w, t0: int, t1: int) -> dict[str, list[tuple[int, str]]]:
        """Extra (ms, text) records per log file of KRaft node `w.node` (a kraft_logs.KraftLogs) in [t0, t1)."""
        return {}


HEALTHY = KraftScript()


def script(state: ClusterState) -> KraftScript:
    sc = state.ev.script
    return sc if isinstance(sc, KraftScript) else HEALTHY


def base_epoch(state: ClusterState) -> int:
    return 20 + state.rng("raft-epoch").randint(0, 60)


def leader_at(state: ClusterState, ms: int) -> tuple[int, int]:
    """(leader node id, epoch) of the quorum at `ms`."""
    leader, epoch = state.c.controller_id, base_epoch(state)
    for t, new in script(state).elections(state):
        if t > ms:
            break
        leader, epoch = new, epoch + 1
    return leader, epoch


def lost_at(state: ClusterState, election_ms: int) -> int:
    """When the old leader of the election won at `election_ms` lost the voters."""
    return script(state).lost(state).get(election_ms, election_ms - GLITCH_BEFORE_MS)


def leaderless(state: ClusterState, ms: int) -> bool:
    """No active controller at `ms`: the old leader resigned (check-quorum) and no voter has won yet."""
    return any(lost_at(state, t) + CHECK_QUORUM_MS <= ms < t for t, _ in script(state).elections(state))


def new_active_count(state: ClusterState, node: int, ms: int) -> int:
    """NewActiveControllersCount of `node` (3.6+): times it became the active controller since its start."""
    n = 1 if node == state.c.controller_id else 0
    return n + sum(1 for t, new in script(state).elections(state) if t <= ms and new == node)


def high_watermark(state: ClusterState, ms: int) -> int:
    """The metadata log's committed offset: a NoOpRecord every 500 ms since the cluster was created."""
    base = 1_000 + state.rng("md-base").randint(0, 50_000)
    return base + (ms - OFFSETS_ORIGIN_MS) // NOOP_EVERY_MS


def offset_time(state: ClusterState, offset: int) -> int:
    """When the metadata record at `offset` was appended (inverse of high_watermark)."""
    return OFFSETS_ORIGIN_MS + (offset - high_watermark(state, OFFSETS_ORIGIN_MS)) * NOOP_EVERY_MS


def applied_offset(state: ClusterState, broker: int, ms: int) -> int:
    """The broker's last applied metadata offset: the high watermark, or where it stalled."""
    stall = script(state).stalled(state).get(broker)
    if stall is not None and ms >= stall:
        return high_watermark(state, stall)
    return high_watermark(state, ms) - state.rng("md-applied", broker, ms).randint(0, 1)


def broker_epoch(state: ClusterState, broker: int) -> int:
    """The broker's epoch: the offset of its registration record (when it last started)."""
    return high_watermark(state, OFFSETS_ORIGIN_MS) + 40 * broker + state.rng("broker-epoch", broker).randint(0, 9)


def fenced_brokers(state: ClusterState, ms: int) -> list[int]:
    return sorted(b for b, spans in script(state).fenced(state).items() if any(f <= ms < u for f, u in spans))


def balance_back_ms(unfenced: int) -> int:
    """The first preferred-leader balance check after an unfencing: its leaders move back then."""
    return unfenced + (BALANCE_PHASE_MS - unfenced) % BALANCE_EVERY_MS


def out_of_isr(state: ClusterState, ms: int) -> set[int]:
    """Brokers out of the ISR of their partitions at `ms`: from a fencing until the balance check that gives
    their leaders back (they have caught up by then: the leader lines of the move back list them in the ISR)."""
    return {b for b, spans in script(state).fenced(state).items()
            if any(f <= ms < balance_back_ms(u) for f, u in spans)}


def isr_shortfall(state: ClusterState, node: int, ms: int) -> tuple[int, int]:
    """(UnderReplicatedPartitions, UnderMinIsrPartitionCount) of broker `node` at `ms`: the partitions it
    leads (a fenced preferred leader's went to their next replica) with a replica out of the ISR, and those
    of them whose ISR is below min.insync.replicas (a replication factor of 2 with one replica out)."""
    gone = out_of_isr(state, ms)
    if not gone:
        return 0, 0
    under = below = 0
    for t in state.c.all_topics:
        for p in range(t.partitions):
            reps = state.c.replicas(t.name, p)
            out = gone.intersection(reps)
            if out and next((b for b in reps if b not in gone), None) == node:
                under += 1
                below += int(len(reps) - len(out) < MIN_INSYNC_REPLICAS)
    return under, below


def directory_id(state: ClusterState, node: int) -> str:
    """A node's metadata log directory id (22 characters of URL-safe base64)."""
    import base64

    raw = state.rng("dir-id", node).getrandbits(128).to_bytes(16, "big")
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def topic_id(state: ClusterState, topic: str) -> str:
    import base64

    raw = state.rng("topic-id", topic).getrandbits(128).to_bytes(16, "big")
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")
