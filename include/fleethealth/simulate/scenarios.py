"""Scenario catalogue: each scenario is one cluster, its timeline of events and its ground truth.

A scenario is data (the cluster) plus two functions of the window: `events` (what goes wrong, when)
and `expected` (the incidents the pipeline must report, computed from the same model the writers use).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from . import kraft_model as km
from . import kraft_scenarios as kr
from . import postmortems as pm
from .clock import HOUR_MS
from .fleet import OFFSETS_TOPIC, Cluster, Topic
from .jolokia import sample_times
from .model import GIB, ClusterState, Events, Restart
from .truth import BLOAT_THRESHOLD_BYTES, SLOW_LOAD_THRESHOLD_MS, incident

USER_TOPICS = (
    Topic("orders", 12, 3, 180.0),
    Topic("payments", 6, 3, 60.0),
    Topic("clickstream", 24, 3, 900.0),
    Topic("inventory-updates", 6, 3, 40.0),
)


def user_topics(brokers: int) -> tuple[Topic, ...]:
    """USER_TOPICS (sized for 3 brokers) with ceil(brokers / 3) times their partitions: every broker of a
    larger cluster hosts about as many replicas (~48) as in the 3-broker one, so each has partitions to
    log about (the log volume asked per broker-hour is reached) and to report in JMX."""
    k = -(-brokers // 3)
    return USER_TOPICS if k <= 1 else tuple(replace(t, partitions=t.partitions * k) for t in USER_TOPICS)


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    cluster: Callable[[int], Cluster]                         # brokers -> Cluster
    events: Callable[[Cluster, int, int], Events]             # (cluster, start ms, end ms) -> Events
    expected: Callable[[ClusterState, int, int], list[dict]]  # (state, start ms, end ms) -> ground truth


# --- healthy ---------------------------------------------------------------------------------------
def _healthy_cluster(brokers: int) -> Cluster:
    return Cluster(name="healthy", timezone="Europe/Berlin", kafka_version="2.8.2", java_version="11.0.20",
                   brokers=brokers, topics=user_topics(brokers), zk_session_timeout_ms=18000,
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
                   java_version="1.8.0_382", brokers=brokers, topics=user_topics(brokers), zk_session_timeout_ms=6000,
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
                    "no cleaning after that, thread absent from jstack, time-since-last-run-ms grows",
                    known_bug="KAFKA-7215")]   # its "Error due to" on 1.1.0 (KIP-346 came in 2.1.0)
    for ms in sample_times(st, b, start, end):
        if st.offsets_size(b, p, ms) > BLOAT_THRESHOLD_BYTES:
            out.append(incident(c.name, "offsets_partition_bloat", f"{OFFSETS_TOPIC}-{p}@broker-{b}", ms,
                                f"first JMX sample with kafka.log Size > {BLOAT_THRESHOLD_BYTES} bytes; grows "
                                f"~{PM3_BLOAT_PER_HOUR // GIB} GiB/h without compaction; serves group {PM3_GROUP}",
                                caused_by=[("log_cleaner_dead", f"broker-{b}")]))
            break
    for rs in st.ev.restarts:
        for part, load_ms in rs.slow_loads.items():
            t = st.load_finished_ms(rs, part)
            if load_ms > SLOW_LOAD_THRESHOLD_MS and t < end:
                out.append(incident(c.name, "slow_group_load", f"{OFFSETS_TOPIC}-{part}@broker-{rs.broker}", t,
                                    f"broker {rs.broker} restarted; loading offsets and group metadata took "
                                    f"{load_ms} ms (> {SLOW_LOAD_THRESHOLD_MS} ms); the restarted cleaner died again",
                                    caused_by=[("offsets_partition_bloat", f"{OFFSETS_TOPIC}-{part}@broker-{b}")]))
    return out


# --- pm1: Kafka 0.10.1.0 deadlock on broker 219 ---------------------------------------------------
PM1_BROKER = 219
FD_MEDIAN_FACTOR = 5   # "far above the cluster median" (fd_exhaustion); the peers sit at ~12,800


def _pm1_cluster(brokers: int) -> Cluster:
    if brokers < 3:
        raise ValueError(f"scenario pm1-deadlock needs at least 3 brokers (217, 218, 219), got {brokers}")
    return Cluster(name="pm1-deadlock", timezone="Asia/Singapore", kafka_version="0.10.1.0", java_version="1.8.0_101",
                   brokers=brokers, first_broker_id=217, controller_id=217, topics=user_topics(brokers), zk_session_timeout_ms=6000,
                   groups=("orders-app", "payments-processor", "clickstream-etl"))


def _pm1_events(c: Cluster, start: int, end: int) -> Events:
    return Events(script=pm.DeadlockScript(PM1_BROKER, start + 15 * 60_000 + 231))


def _pm1_expected(st: ClusterState, start: int, end: int) -> list[dict]:
    sc, c, b = st.ev.script, st.c, PM1_BROKER
    out = []
    dump = pm.first_dump_after(st, b, sc.deadlock_ms, end)
    if dump is not None:
        out.append(incident(c.name, "broker_deadlock", f"broker-{b}", dump,
                            "jstack: Found one Java-level deadlock: executor-Heartbeat, group-metadata-manager-0, "
                            "kafka-request-handler-3 on kafka.coordinator.GroupMetadata and java.util.LinkedList "
                            "(KAFKA-3994/4399/4478/4562); first dump after the deadlock",
                            known_bug="KAFKA-3994,KAFKA-4399,KAFKA-4478,KAFKA-4562"))
    fetch = min((t for peer in c.broker_ids if peer != b for t, _ in sc.fetch_errors(st, peer, start, end)), default=None)
    if fetch is not None:
        out.append(incident(c.name, "broker_isolated", f"broker-{b}", fetch,
                            f"peers: ReplicaFetcherThread-N-{b} 'Connection to {b} was disconnected before the response "
                            f"was read'; {b} shrinks the ISR of its partitions to {{{b}}}; open files climb"))
    median = pm.PM1_FDS_PEERS
    fds = pm.first_sample(st, b, start, end, lambda ms: sc.open_fds(st, b, ms) > FD_MEDIAN_FACTOR * median)
    if fds is not None:
        out.append(incident(c.name, "fd_exhaustion", f"broker-{b}", fds,
                            f"first JMX sample with OpenFileDescriptorCount > {FD_MEDIAN_FACTOR}x the cluster median "
                            f"(~{median}); reaches {pm.PM1_FDS_PEAK}"))
    return out


# --- pm2: ZooKeeper follower reset -----------------------------------------------------------------
def _pm2_cluster(brokers: int) -> Cluster:
    return Cluster(name="pm2-zk-follower-reset", timezone="Europe/Madrid", kafka_version="2.4.1",
                   java_version="11.0.20", brokers=brokers, topics=user_topics(brokers), zk_session_timeout_ms=18000,
                   zk_servers=3, groups=("orders-app", "search-indexer"))


def _pm2_events(c: Cluster, start: int, end: int) -> Events:
    return Events(script=pm.FollowerResetScript(leader=2, follower=3, reset_ms=start + 25 * 60_000 + 377))


def _pm2_expected(st: ClusterState, start: int, end: int) -> list[dict]:
    sc = st.ev.script
    if sc.reset_ms >= end:
        return []
    return [incident(st.c.name, "zk_follower_disconnect", f"zk-{sc.follower}", sc.reset_ms,
                     f"leader zk-{sc.leader}: 'Closing connection to peer due to transaction timeout' (tickTime 2000 x "
                     f"syncLimit 5); follower: 'Exception when following the leader' Connection reset, 'Was connected "
                     f"for {pm.PM2_CONNECTED_MS}ms', 'FOLLOWING - LEADER ELECTION TOOK - {pm.PM2_ELECTION_MS} MS'")]


# --- pm4: ZooKeeper session expiry of broker 8 -> leader election storm ----------------------------
PM4_BROKER = 8


def _pm4_cluster(brokers: int) -> Cluster:
    if brokers < 3:
        raise ValueError(f"scenario pm4-zk-expiry-storm needs at least 3 brokers (6, 7, 8), got {brokers}")
    return Cluster(name="pm4-zk-expiry-storm", timezone="Asia/Tokyo", kafka_version="2.2.1", java_version="1.8.0_382",
                   brokers=brokers, first_broker_id=6, controller_id=6, topics=user_topics(brokers), zk_session_timeout_ms=6000,
                   groups=("orders-app", "payments-processor", "clickstream-etl", "fraud-detector", "audit-sink"))


def _pm4_events(c: Cluster, start: int, end: int) -> Events:
    return Events(script=pm.ExpiryStormScript(pm.SessionLoss(PM4_BROKER, start + 35 * 60_000 + 512, 0)))


def _pm4_expected(st: ClusterState, start: int, end: int) -> list[dict]:
    loss, c = st.ev.script.loss, st.c
    if loss.expired_ms >= end:
        return []
    moved = st.ev.script.moved(st)
    offsets = sum(1 for tn, _ in moved if tn == OFFSETS_TOPIC)
    return [incident(c.name, "zk_session_expired", f"broker-{PM4_BROKER}", loss.expired_ms,
                     f"ZooKeeper: 'Expiring session ... timeout of {c.zk_session_timeout_ms}ms exceeded'; broker "
                     f"{PM4_BROKER}: 'Unable to reconnect to ZooKeeper service, session ... has expired'"),
            incident(c.name, "leader_election_storm", f"broker-{PM4_BROKER}", loss.expired_ms + 17,
                     f"controller {c.controller_id}: 'Broker failure callback for {PM4_BROKER}'; {len(moved)} partitions "
                     f"led by {PM4_BROKER} move Online -> Offline -> new leader, {offsets} of them __consumer_offsets "
                     f"(their groups rebalance); entity: the broker whose loss started it",
                     caused_by=[("zk_session_expired", f"broker-{PM4_BROKER}")])]


# --- pm5: broker 3 flaps; its leader epoch stays at 426 while the controller goes to 435 -------------
PM5_BROKER = 3


def _pm5_cluster(brokers: int) -> Cluster:
    if brokers < PM5_BROKER:
        raise ValueError(f"scenario pm5-metadata-divergence needs at least {PM5_BROKER} brokers, got {brokers}")
    return Cluster(name="pm5-metadata-divergence", timezone="America/Chicago", kafka_version="2.1.1",
                   java_version="1.8.0_382", brokers=brokers, topics=user_topics(brokers), zk_session_timeout_ms=6000,
                   groups=("orders-app", "payments-processor"))


def _pm5_events(c: Cluster, start: int, end: int) -> Events:
    p = next(p for p in range(c.topic("payments").partitions) if c.replicas("payments", p)[0] == PM5_BROKER)
    losses = tuple(pm.SessionLoss(PM5_BROKER, start + m * 60_000 + 417, i) for i, m in enumerate((10, 20, 31, 44)))
    return Events(script=pm.DivergenceScript(losses, "payments", p))


def _pm5_expected(st: ClusterState, start: int, end: int) -> list[dict]:
    sc, c, b = st.ev.script, st.c, PM5_BROKER
    losses = [loss for loss in sc.losses if loss.expired_ms < end]
    if not losses:
        return []
    out = [incident(c.name, "zk_session_expired", f"broker-{b}", losses[0].expired_ms,
                    f"broker {b} loses its ZooKeeper session {len(sc.losses)} times in "
                    f"{(sc.losses[-1].expired_ms - sc.losses[0].expired_ms) // 60_000} minutes")]
    if len(losses) >= 2:
        out.append(incident(c.name, "broker_flapping", f"broker-{b}", losses[0].expired_ms,
                            "repeated session loss and re-registration of /brokers/ids/3 within 40 minutes"))
    out.append(incident(c.name, "metadata_divergence", f"{sc.topic}-{sc.partition}@broker-{b}", sc.diverged_ms(),
                        f"controller moves {sc.topic}-{sc.partition} to LeaderEpoch {pm.PM5_STUCK_EPOCH + 1}.."
                        f"{pm.PM5_STUCK_EPOCH + len(sc.epoch_changes(st))}; broker {b} stays at {pm.PM5_STUCK_EPOCH}; "
                        f"followers get NotLeaderForPartition"))
    sat = pm.first_sample(st, b, start, end, sc.saturated)
    if sat is not None:
        out.append(incident(c.name, "request_queue_saturation", f"broker-{b}", sat,
                            f"RequestQueueSize at queued.max.requests={pm.PM5_QUEUED_MAX_REQUESTS}, "
                            f"RequestHandlerAvgIdlePercent ~0.02"))
    return out


# --- KRaft (issue 46): kraft_scenarios.py ---------------------------------------------------------------
KRAFT_GROUPS = ("orders-app", "payments-processor", "clickstream-etl", "fraud-detector")


# --- availability: a broker shut down for good, its partitions of replication factor 1 offline ----------
LOST_BROKER = 3
LOST_TOPIC = Topic("events-raw", 6, 1, 120.0)     # RF 1: no other replica to lead it
NEVER_MS = 221_845_392_000_000                      # not started again (9000-01-01: still a date to render)


def _lost_cluster(brokers: int) -> Cluster:
    if brokers < LOST_BROKER:
        raise ValueError(f"scenario broker-lost needs at least {LOST_BROKER} brokers, got {brokers}")
    return Cluster(name="broker-lost", timezone="Asia/Kolkata", kafka_version="2.8.2", java_version="11.0.20",
                   brokers=brokers, topics=user_topics(brokers) + (LOST_TOPIC,), zk_session_timeout_ms=18000,
                   groups=("orders-app", "events-loader"))


def _lost_events(c: Cluster, start: int, end: int) -> Events:
    return Events(restarts=(Restart(LOST_BROKER, shutdown_ms=start + 41 * 60_000 + 17_305, start_ms=NEVER_MS),))


def _lost_expected(st: ClusterState, start: int, end: int) -> list[dict]:
    c, rs = st.c, st.ev.restarts[0]
    b = rs.broker
    silent = rs.shutdown_ms - rs.shutdown_ms % HOUR_MS + HOUR_MS     # the first hour it sends nothing
    out, causes = [], []
    if silent < end:
        out.append(incident(c.name, "host_silent", f"broker-{b}", silent,
                            f"broker {b} shut down and not started again: no file of its host from this hour on"))
        causes = [("host_silent", f"broker-{b}")]
    counted = [ms for ms in sample_times(st, c.controller_id, rs.shutdown_ms, end) if st.offline_partitions(ms)]
    if counted:
        out.append(incident(c.name, "partitions_offline", "partitions", counted[0],
                            f"{st.offline_partitions(counted[0])} partition(s) of {LOST_TOPIC.name} (replication "
                            f"factor 1) led by broker {b}: OfflinePartitionsCount on controller {c.controller_id}",
                            caused_by=causes))
    return out


def _kraft(name: str, timezone: str, least: int = 3, **kw):
    def cluster(brokers: int) -> Cluster:
        if brokers < least:
            raise ValueError(f"scenario {name} needs at least {least} brokers, got {brokers}")
        return kr.kraft_cluster(name, timezone, brokers, kw.get("groups", KRAFT_GROUPS),
                                user_topics(brokers) + kw.get("topics", ()), pinned_group=kw.get("pinned_group"))
    return cluster


KRAFT_CATALOGUE: dict[str, Scenario] = {
    s.name: s for s in (
        Scenario("kraft-healthy", "KRaft healthy cluster: 3 controllers (4.1.0), brokers on 3.9.1 and 4.1.0, a "
                                  "steady quorum, snapshots, compacting cleaners",
                 _kraft("kraft-healthy", "Europe/London", least=1), lambda c, s, e: Events(script=km.KraftScript()),
                 lambda st, s, e: []),
        Scenario("kraft-broker-fenced", "KRaft: broker 2 fenced by the active controller after missed heartbeats, "
                                        "three times in 25 minutes; its leaders move away and back, its RF-2 "
                                        "partitions under min ISR until then",
                 _kraft("kraft-broker-fenced", "Australia/Sydney", topics=kr.FENCED_TOPICS), kr.fencing_events,
                 kr.fencing_expected),
        Scenario("kraft-quorum-unstable", "KRaft: five Raft leader elections among the controllers in nineteen "
                                          "minutes, voter 3002 cannot reach its peers, 11 minutes without an "
                                          "active controller before the last",
                 _kraft("kraft-quorum-unstable", "Asia/Dubai", least=1), kr.quorum_events,
                 kr.quorum_expected),
        Scenario("kraft-metadata-lag", "KRaft: broker 3's metadata stops applying (loading and publishing faults), "
                                       "its applied offset falls behind the committed one",
                 _kraft("kraft-metadata-lag", "America/Sao_Paulo"), kr.lag_events,
                 kr.lag_expected),
        Scenario("kraft-dead-cleaner", "KRaft: dead log cleaners on 4.1.0 (log-cleaner.log) and 3.9.1 (server.log), "
                                       "__consumer_offsets-38 bloat on broker 2",
                 _kraft("kraft-dead-cleaner", "America/Los_Angeles", groups=(kr.CLEANER_GROUP, "billing-service"),
                        pinned_group=(kr.CLEANER_GROUP, kr.BLOAT_BROKER)), kr.cleaner_events,
                 kr.cleaner_expected),
    )
}

CATALOGUE: dict[str, Scenario] = {
    s.name: s for s in (
        Scenario("healthy", "Kafka 2.8.2 healthy cluster: compacting cleaner, quiet ZooKeeper, no errors",
                 _healthy_cluster, lambda c, s, e: Events(), lambda st, s, e: []),
        Scenario("pm1-deadlock", "post-mortem 1: Kafka 0.10.1.0 Java-level deadlock on broker 219, ISR {219}, FD growth",
                 _pm1_cluster, _pm1_events, _pm1_expected),
        Scenario("pm2-zk-follower-reset", "post-mortem 2: ZooKeeper follower reset by the leader's transaction timeout",
                 _pm2_cluster, _pm2_events, _pm2_expected),
        Scenario("pm3-dead-cleaner", "post-mortem 3: dead log cleaner, __consumer_offsets-38 bloat, slow group load",
                 _pm3_cluster, _pm3_events, _pm3_expected),
        Scenario("pm4-zk-expiry-storm", "post-mortem 4: broker 8's ZooKeeper session expires, leader election storm",
                 _pm4_cluster, _pm4_events, _pm4_expected),
        Scenario("pm5-metadata-divergence", "post-mortem 5: broker 3 flaps, stuck at LeaderEpoch 426, queue saturated",
                 _pm5_cluster, _pm5_events, _pm5_expected),
    )
}

# availability scenarios: out of "all" (the demo and the acceptance of every detector run those), run where
# the availability kinds are tested
AVAILABILITY_CATALOGUE: dict[str, Scenario] = {
    s.name: s for s in (
        Scenario("broker-lost", "Kafka 2.8.2: broker 3 shut down at :41 and not started again; the partitions of "
                                "events-raw (replication factor 1) it led offline, its host silent from the next hour",
                 _lost_cluster, _lost_events, _lost_expected),
    )
}

CATALOGUE.update(KRAFT_CATALOGUE)
CATALOGUE.update(AVAILABILITY_CATALOGUE)
