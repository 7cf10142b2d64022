"""KRaft scenarios: the post-mortems' KRaft forms (issue 46) as scripts, clusters and ground truth.

Every cluster: 3 dedicated controllers (node ids 3000 - 3002, the active one 3000) and brokers 1.. on
3.9.1 and 4.1.0, no ZooKeeper. Each episode is anchored to the window start like the ZooKeeper-mode
scenarios, so `simulate(shifts=...)` moves it across an hour end.

- kraft-healthy: a steady quorum, snapshots, cleaner passes; no incident (known bugs only).
- kraft-broker-fenced: broker 2 (3.9.1) misses its heartbeats three times in 25 minutes; the active
  controller fences it each time (session timeout) and unfences it on its next heartbeat; its leaders
  move to their second replica and back at the next balance check, when it is back in the ISRs. Until
  then the partitions of `audit-events` (replication factor 2) it holds are under min.insync.replicas
  on their leaders.
- kraft-quorum-unstable: a controller network that keeps dropping: five Raft leader elections in nineteen
  minutes (check-quorum resignations, fetch timeouts, Pre-Vote on 4.x / candidacy on 3.x, epoch +1
  each), voter 3002 unable to reach the others; before the last one, a quorum loss: no voter gathers a
  majority for 11 minutes (failed Pre-Votes), no controller is active.
- kraft-metadata-lag: broker 3 (4.1.0) hits a metadata publishing fault and a loading fault; from then on
  it applies no metadata: its last applied offset stays while the quorum's committed offset grows.
- kraft-dead-cleaner: broker 3 (4.1.0, log-cleaner.log, storage logger) and broker 1 (3.9.1, server.log)
  lose their cleaner thread; broker 3's __consumer_offsets-38 grows 3 GiB/h.

Incident entities of the KRaft kinds: `broker-<id>` (broker_fenced, metadata_lag) and `quorum`
(controller_quorum_unstable: the cluster's quorum as a whole).
"""
from __future__ import annotations

from dataclasses import dataclass

from . import kraft_model as km
from .fleet import OFFSETS_TOPIC, Cluster, Topic, version_tuple
from .jolokia import sample_times
from .model import GIB, ClusterState, Events
from .truth import BLOAT_THRESHOLD_BYTES, NO_CONTROLLER_MIN_MS, incident

MINUTE = 60_000
CONTROLLER_VERSION = "4.1.0"
BROKER_VERSIONS = ("3.9.1", "3.9.1", "4.1.0")   # a fleet half-way through its upgrade to 4.1
QUORUM_ENTITY = "quorum"
LOADING_FAULT_TRACE = ("org.apache.kafka.common.errors.CorruptRecordException: Record is corrupt (stored crc = "
                       "{stored}, computed crc = {computed})")
PUBLISHING_FAULT_TRACE = "\n".join([
    "java.lang.IllegalStateException: Unable to find topic id for partition {tp}",
    "\tat kafka.server.metadata.BrokerMetadataPublisher.onMetadataUpdate(BrokerMetadataPublisher.scala:151)",
    "\tat org.apache.kafka.image.loader.MetadataLoader.maybePublishMetadata(MetadataLoader.java:342)",
    "\tat org.apache.kafka.image.loader.MetadataBatchLoader.applyDeltaAndUpdate(MetadataBatchLoader.java:286)",
    "\tat org.apache.kafka.image.loader.MetadataBatchLoader.maybeFlushBatches(MetadataBatchLoader.java:214)",
    "\tat org.apache.kafka.image.loader.MetadataLoader.lambda$handleCommit$1(MetadataLoader.java:366)",
    "\tat org.apache.kafka.queue.KafkaEventQueue$EventHandler.run(KafkaEventQueue.java:191)",
    "\tat java.base/java.lang.Thread.run(Thread.java:1583)",
])
FAULTS = "org.apache.kafka.server.fault.LoggingFaultHandler"


def kraft_cluster(name: str, timezone: str, brokers: int, groups: tuple[str, ...], topics,
                  broker_versions: tuple[str, ...] = BROKER_VERSIONS, controller_version: str = CONTROLLER_VERSION,
                  pinned_group: tuple[str, int] | None = None) -> Cluster:
    """A KRaft cluster of `brokers` brokers (versions cycling through `broker_versions`) and 3 controllers."""
    versions = tuple(broker_versions[i % len(broker_versions)] for i in range(brokers))
    return Cluster(name=name, timezone=timezone, kafka_version=controller_version, java_version="17.0.12",
                   brokers=brokers, topics=topics, groups=groups, controller_id=3000, zk_servers=0, controllers=3,
                   broker_versions=versions, controller_version=controller_version, pinned_group=pinned_group)


# --- a broker fenced after missed heartbeats, three times: the KRaft flapping broker -----------------
FENCED_BROKER = 2
FENCED_AT_MIN = (12, 24, 37)


@dataclass(frozen=True)
class FencingScript(km.KraftScript):
    broker: int
    spans: tuple[tuple[int, int], ...]     # (fenced, unfenced) ms

    def fenced(self, state):
        return {self.broker: list(self.spans)}


def fencing_events(c: Cluster, start: int, end: int) -> Events:
    spans = tuple((start + m * MINUTE + 311, start + m * MINUTE + 311 + 9_000 + 1_733 * i)
                  for i, m in enumerate(FENCED_AT_MIN))
    return Events(script=FencingScript(FENCED_BROKER, spans))


FENCED_TOPICS = (Topic("audit-events", 6, 2, 40.0),)   # replication factor 2: one replica out is under min ISR


def fencing_expected(st: ClusterState, start: int, end: int) -> list[dict]:
    spans = [s for s in st.ev.script.spans if s[0] < end]
    if not spans:
        return []
    moved = st.moved_partitions(FENCED_BROKER)
    fenced = [("broker_fenced", f"broker-{FENCED_BROKER}")]
    under = []
    for b in st.c.broker_ids:
        first = next((ms for ms in sample_times(st, b, start, end) if km.isr_shortfall(st, b, ms)[1]), None)
        if first is not None:
            under.append(incident(st.c.name, "partitions_under_min_isr", f"broker-{b}", first,
                                  f"UnderMinIsrPartitionCount {km.isr_shortfall(st, b, first)[1]}: it leads "
                                  f"audit-events partitions (replication factor 2) whose other replica, broker "
                                  f"{FENCED_BROKER}, is out of the ISR from its fencing to the next balance check",
                                  caused_by=fenced))
    return under + [incident(st.c.name, "broker_fenced", f"broker-{FENCED_BROKER}", spans[0][0],
                     f"controller 3000: 'Fencing broker {FENCED_BROKER} because its session has timed out' "
                     f"{len(spans)} times in {(spans[-1][0] - spans[0][0]) // MINUTE} minutes, each unfenced on its "
                     f"next heartbeat (flapping); {len(moved)} leaders move to their second replica and back"),
            # the KRaft form of post-mortem 4's storm: the fencing moves the broker's leaders away at once
            incident(st.c.name, "leader_election_storm", f"broker-{FENCED_BROKER}", spans[0][0],
                     f"controller 3000: handleBrokerFenced moves the {len(moved)} partitions led by "
                     f"{FENCED_BROKER} to their next replica; entity: the fenced broker", caused_by=fenced)]


# --- controller quorum instability: five leader elections in nineteen minutes, the last after a quorum loss --
# the leadership goes back and forth between 3000 and 3001; 3002, which cannot reach them, never wins; 3000,
# leader from the fourth election, loses the voters 36 s later and no voter gathers a majority for 11 minutes
ELECTIONS = ((20 * MINUTE + 3_411, 3001), (22 * MINUTE + 14_090, 3000), (24 * MINUTE + 41_770, 3001),
             (27 * MINUTE + 5_212, 3000), (38 * MINUTE + 52_305, 3001))
QUORUM_LOST = 27 * MINUTE + 41_017
UNREACHABLE_VOTER = 3002


@dataclass(frozen=True)
class QuorumScript(km.KraftScript):
    at: tuple[tuple[int, int], ...]   # (ms, new leader)
    quorum_lost: int                  # when the last election's old leader lost the voters

    def elections(self, state):
        return list(self.at)

    def lost(self, state):
        return {self.at[-1][0]: self.quorum_lost}

    def kraft_records(self, w, t0, t1):
        """Voter 3002 cannot reach the other controllers during the episode (every 5 s, one peer at a time)."""
        if w.node != UNREACHABLE_VOTER:
            return {}
        out = []
        first, last = self.at[0][0] - 1_300, self.at[-1][0] + 30_000
        t = max(first, first + -(-(t0 - first) // 5_000) * 5_000)
        while t < min(t1, last):
            peer = w.c.controller_ids[(t // 5_000) % 2]
            host, ip = w.c.controller_host(peer).name, w.c.controller_ip(peer)
            out.append(w.rec(t, "WARN", f"[RaftManager id={w.node}] Connection to node {peer} ({host}/{ip}:9093) could "
                                        f"not be established. Node may not be available.",
                             "org.apache.kafka.clients.NetworkClient"))
            t += 5_000
        return {"server.log": out}


def quorum_events(c: Cluster, start: int, end: int) -> Events:
    return Events(script=QuorumScript(tuple((start + dt, new) for dt, new in ELECTIONS), start + QUORUM_LOST))


def quorum_expected(st: ClusterState, start: int, end: int) -> list[dict]:
    at = [(ms, new) for ms, new in st.ev.script.at if ms < end]
    if not at:
        return []
    first = km.lost_at(st, at[0][0]) + km.FETCH_TIMEOUT_MS
    epoch = km.base_epoch(st)
    out = []
    none = sorted(ms for n in st.c.controller_ids for ms in sample_times(st, n, start, end) if km.leaderless(st, ms))
    if none and none[-1] - none[0] >= NO_CONTROLLER_MIN_MS:
        out.append(incident(st.c.name, "no_active_controller", "controller", none[0],
                            f"ActiveControllerCount 0 on every controller from {km.leader_at(st, none[0])[0]}'s "
                            f"check-quorum resignation to the next election won ({len(none)} samples)",
                            caused_by=[("controller_quorum_unstable", QUORUM_ENTITY)]))
    return out + [incident(st.c.name, "controller_quorum_unstable", QUORUM_ENTITY, first,
                     f"{len(at)} Raft leader elections in {(at[-1][0] - at[0][0]) // MINUTE + 1} minutes (epoch "
                     f"{epoch} -> {epoch + len(at)}; leaders {', '.join(str(n) for _, n in at)}): check-quorum "
                     f"resignations and fetch timeouts; voter {UNREACHABLE_VOTER} cannot reach its peers")]


# --- a broker's metadata stops applying ----------------------------------------------------------------
LAGGING_BROKER = 3


@dataclass(frozen=True)
class MetadataLagScript(km.KraftScript):
    broker: int
    fault_ms: int

    def stalled(self, state):
        return {self.broker: self.fault_ms}

    def kraft_records(self, w, t0, t1):
        if w.node != self.broker:
            return {}
        st, t = w.s, self.fault_ms
        offset = km.high_watermark(st, t)
        r = st.rng("crc", t)
        tp = f"{w.c.topics[0].name}-{w.c.hosted(self.broker, w.c.topics[0].name)[0]}"
        return {"server.log": [
            w.rec(t, "ERROR", f"Encountered metadata publishing fault: Unhandled error publishing the new metadata image "
                              f"ending at {offset} with publisher BrokerMetadataPublisher", FAULTS,
                  PUBLISHING_FAULT_TRACE.format(tp=tp)),
            w.rec(t + 391, "ERROR", f"Encountered metadata loading fault: Error loading metadata log record from offset "
                                    f"{offset + 1}", FAULTS,
                  LOADING_FAULT_TRACE.format(stored=r.getrandbits(31), computed=r.getrandbits(31))),
        ]}

    def jmx(self, state, node, ms):
        if node != self.broker or ms < self.fault_ms:
            return {}
        return {"broker_metadata_apply_errors": 1, "broker_metadata_load_errors": int(ms >= self.fault_ms + 391)}


def lag_events(c: Cluster, start: int, end: int) -> Events:
    return Events(script=MetadataLagScript(LAGGING_BROKER, start + 18 * MINUTE + 40_517))


def lag_expected(st: ClusterState, start: int, end: int) -> list[dict]:
    sc = st.ev.script
    if sc.fault_ms >= end:
        return []
    return [incident(st.c.name, "metadata_lag", f"broker-{sc.broker}", sc.fault_ms,
                     f"broker {sc.broker}: 'Encountered metadata publishing fault' then 'metadata loading fault'; its "
                     f"last-applied-record-offset stays at {km.high_watermark(st, sc.fault_ms)} while the controllers' "
                     f"committed offset grows 2 per second")]


# --- dead log cleaners on 4.1 and 3.9 ------------------------------------------------------------------
CLEANER_GROUP = "consumer-group"
BLOAT_BROKER = 3            # 4.1.0: "Error due to" in log-cleaner.log, storage module's logger
OLD_CLEANER_BROKER = 1      # 3.9.1: in server.log, kafka.log.LogCleaner$CleanerThread
BLOAT_PER_HOUR = 3 * GIB


def cleaner_events(c: Cluster, start: int, end: int) -> Events:
    p = c.group_partition(CLEANER_GROUP)
    return Events(cleaner_death_ms={BLOAT_BROKER: start + 20 * MINUTE + 412, OLD_CLEANER_BROKER: start + 19 * MINUTE + 58_907},
                  bloat_bytes_per_s={(BLOAT_BROKER, p): BLOAT_PER_HOUR / 3600},
                  script=km.KraftScript())


def cleaner_expected(st: ClusterState, start: int, end: int) -> list[dict]:
    c, out = st.c, []
    for b, death in sorted(st.ev.cleaner_death_ms.items()):
        if death < end:
            where = "log-cleaner.log" if version_tuple(c.broker_version(b)) >= (4, 1) else "server.log"
            out.append(incident(c.name, "log_cleaner_dead", f"broker-{b}", death,
                                f"Kafka {c.broker_version(b)}: kafka-log-cleaner-thread-0 'Error due to' (Map failed) and "
                                f"'Stopped' in {where}; DeadThreadCount 1, time-since-last-run-ms grows"))
    p = c.group_partition(CLEANER_GROUP)
    for ms in sample_times(st, BLOAT_BROKER, start, end):
        if st.offsets_size(BLOAT_BROKER, p, ms) > BLOAT_THRESHOLD_BYTES:
            out.append(incident(c.name, "offsets_partition_bloat", f"{OFFSETS_TOPIC}-{p}@broker-{BLOAT_BROKER}", ms,
                                f"first JMX sample with kafka.log Size > {BLOAT_THRESHOLD_BYTES} bytes; grows "
                                f"~{BLOAT_PER_HOUR // GIB} GiB/h without compaction; serves group {CLEANER_GROUP}",
                                caused_by=[("log_cleaner_dead", f"broker-{BLOAT_BROKER}")]))
            break
    return out



# how much later than usual (ms) each scenario's episode starts so that it straddles the end of the
# window's first hour (its first line just before the hour end, the rest after)
STRADDLING_SHIFTS = {
    "kraft-broker-fenced": 47 * MINUTE + 59_000,     # first fencing at 59:59.311, the next two in hour 2
    "kraft-quorum-unstable": 39 * MINUTE + 57_000,   # first fetch timeout at 59:59.111, elections until 78:49
    "kraft-metadata-lag": 41 * MINUTE + 19_000,      # publishing fault at 59:59.517, loading fault at 60:00
    "kraft-dead-cleaner": 39 * MINUTE + 59_000,      # cleaners die at 59:57.907 and 59:59.412, stale after 60:00
}
