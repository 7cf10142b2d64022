"""Post-mortems 1, 2, 4 and 5 (docs/postmortems.md) as simulator scripts: what each adds to a cluster's files.

Each script is anchored to the window start (like post-mortem 3 in scenarios.py) and writes the
lines of the Kafka / ZooKeeper version its cluster runs:
- pm1 (Kafka 0.10.1.0): a 3-thread Java-level deadlock on broker 219 (executor-Heartbeat,
  group-metadata-manager-0, kafka-request-handler-3 on GroupMetadata and a purgatory LinkedList);
  peers' ReplicaFetcherThread-N-219 "Connection to 219 was disconnected before the response was
  read" every replica.socket.timeout.ms; 219 shrinks the ISR of the partitions it leads to {219};
  its open file descriptors climb from ~12,800 to 326,639 (CLOSE_WAIT sockets) while peers stay.
- pm2 (ZooKeeper 3.6 texts, 3 servers): the leader closes its follower "due to transaction timeout"
  (tickTime x syncLimit), the follower logs "Exception when following the leader ... Connection
  reset", "Disconnected from leader ... Was connected for 316796607ms", re-elects in 104 ms.
- pm4 (Kafka 2.2.1, brokers 6-8): broker 8's ZooKeeper session expires; the controller runs
  "Broker failure callback for 8" and moves every partition 8 led (incl. __consumer_offsets, whose
  groups then rebalance on their new coordinators); 8 re-registers and gets them back.
- pm5 (Kafka 2.1.1): broker 3 loses its ZooKeeper session 4 times in 34 minutes; the controller
  moves the leadership of payments-N away and back (preferred-replica checks every 5 min) from
  LeaderEpoch 427 to 435 while broker 3 never gets past 426; peers fetching from 3 get
  NotLeaderForPartition; broker 3's RequestQueueSize sits at queued.max.requests=500.

Message texts were checked against the apache/kafka and apache/zookeeper sources where the stored
sources had them (NetworkClientBlockingOps "Connection to N was disconnected before the response was
read", ZooKeeper Follower "Exception when following the leader" / "Disconnected from leader (with
address: {}). Was connected for {}ms. Sync state: {}" / "FOLLOWING - LEADER ELECTION TOOK - {} {}");
the others follow the public logs of those versions.
"""
from __future__ import annotations

from dataclasses import dataclass

from .clock import HOUR_MS
from .fleet import LOG_DIR, OFFSETS_TOPIC
from .jolokia import sample_times
from .model import ClusterState, Script
from .threaddumps import Deadlock, DeadlockedThread, capture_time

CTRL = "kafka.controller.KafkaController"
SC = "state.change.logger"
ZKC = "org.apache.zookeeper.ClientCnxn"
ZKCLIENT = "kafka.zookeeper.ZooKeeperClient"
KZK = "kafka.zk.KafkaZkClient"
PARTITION = "kafka.cluster.Partition"
GMM = "kafka.coordinator.group.GroupMetadataManager"
GC = "kafka.coordinator.group.GroupCoordinator"
CHECK_MS = 300_000   # leader.imbalance.check.interval.seconds=300


def _back_check(state: ClusterState, ms: int) -> int:
    """The controller's first preferred-replica check at or after `ms`."""
    ph = state.controller_check_phase
    return ms + (ph - ms) % CHECK_MS


# --- post-mortem 1: 0.10.1.0 deadlock ----------------------------------------------------------------
FETCH_DISCONNECT_TRACE = "\n".join([
    "java.io.IOException: Connection to {peer} was disconnected before the response was read",
    "\tat kafka.utils.NetworkClientBlockingOps$$anonfun$blockingSendAndReceive$extension$1$$anonfun$apply$1.apply(NetworkClientBlockingOps.scala:115)",
    "\tat kafka.utils.NetworkClientBlockingOps$$anonfun$blockingSendAndReceive$extension$1$$anonfun$apply$1.apply(NetworkClientBlockingOps.scala:112)",
    "\tat scala.Option.foreach(Option.scala:257)",
    "\tat kafka.utils.NetworkClientBlockingOps$$anonfun$blockingSendAndReceive$extension$1.apply(NetworkClientBlockingOps.scala:112)",
    "\tat kafka.utils.NetworkClientBlockingOps$$anonfun$blockingSendAndReceive$extension$1.apply(NetworkClientBlockingOps.scala:108)",
    "\tat kafka.utils.NetworkClientBlockingOps$.recursivePoll$1(NetworkClientBlockingOps.scala:137)",
    "\tat kafka.utils.NetworkClientBlockingOps$.kafka$utils$NetworkClientBlockingOps$$pollContinuously$extension(NetworkClientBlockingOps.scala:143)",
    "\tat kafka.utils.NetworkClientBlockingOps$.blockingSendAndReceive$extension(NetworkClientBlockingOps.scala:108)",
    "\tat kafka.server.ReplicaFetcherThread.sendRequest(ReplicaFetcherThread.scala:253)",
    "\tat kafka.server.ReplicaFetcherThread.fetch(ReplicaFetcherThread.scala:238)",
    "\tat kafka.server.ReplicaFetcherThread.fetch(ReplicaFetcherThread.scala:42)",
    "\tat kafka.server.AbstractFetcherThread.processFetchRequest(AbstractFetcherThread.scala:118)",
    "\tat kafka.server.AbstractFetcherThread.doWork(AbstractFetcherThread.scala:103)",
    "\tat kafka.utils.ShutdownableThread.run(ShutdownableThread.scala:63)",
])

PM1_DEADLOCK = Deadlock(
    threads=(
        DeadlockedThread("executor-Heartbeat", (
            "kafka.coordinator.GroupCoordinator.onExpireHeartbeat(GroupCoordinator.scala:739)",
            "- waiting to lock <{La}> (a kafka.coordinator.GroupMetadata)",
            "kafka.coordinator.DelayedHeartbeat.onExpiration(DelayedHeartbeat.scala:33)",
            "kafka.server.DelayedOperation.run(DelayedOperation.scala:107)",
            "kafka.coordinator.GroupCoordinator.onCompleteJoin(GroupCoordinator.scala:695)",
            "- locked <{Lb}> (a kafka.coordinator.GroupMetadata)",
            "kafka.coordinator.DelayedJoin.onComplete(DelayedJoin.scala:38)",
            "java.util.concurrent.ThreadPoolExecutor.runWorker(ThreadPoolExecutor.java:1142)",
            "java.util.concurrent.ThreadPoolExecutor$Worker.run(ThreadPoolExecutor.java:617)",
            "java.lang.Thread.run(Thread.java:745)"), "a", "group-metadata-manager-0"),
        DeadlockedThread("group-metadata-manager-0", (
            "kafka.server.DelayedOperationPurgatory$Watchers.tryCompleteWatched(DelayedOperation.scala:308)",
            "- waiting to lock <{Lc}> (a java.util.LinkedList)",
            "kafka.server.DelayedOperationPurgatory.checkAndComplete(DelayedOperation.scala:234)",
            "kafka.server.ReplicaManager.tryCompleteDelayedFetch(ReplicaManager.scala:199)",
            "kafka.server.ReplicaManager.appendMessages(ReplicaManager.scala:360)",
            "kafka.coordinator.GroupMetadataManager$$anonfun$cleanupGroupMetadata$1$$anonfun$apply$10.apply(GroupMetadataManager.scala:600)",
            "- locked <{La}> (a kafka.coordinator.GroupMetadata)",
            "kafka.utils.KafkaScheduler$$anonfun$1.apply$mcV$sp(KafkaScheduler.scala:110)",
            "java.util.concurrent.ScheduledThreadPoolExecutor$ScheduledFutureTask.run(ScheduledThreadPoolExecutor.java:293)",
            "java.lang.Thread.run(Thread.java:745)"), "c", "kafka-request-handler-3"),
        DeadlockedThread("kafka-request-handler-3", (
            "kafka.coordinator.GroupCoordinator.tryCompleteHeartbeat(GroupCoordinator.scala:720)",
            "- waiting to lock <{Lb}> (a kafka.coordinator.GroupMetadata)",
            "kafka.coordinator.DelayedHeartbeat.tryComplete(DelayedHeartbeat.scala:34)",
            "kafka.server.DelayedOperation.maybeTryComplete(DelayedOperation.scala:121)",
            "kafka.server.DelayedOperationPurgatory$Watchers.tryCompleteWatched(DelayedOperation.scala:311)",
            "- locked <{Lc}> (a java.util.LinkedList)",
            "kafka.server.DelayedOperationPurgatory.checkAndComplete(DelayedOperation.scala:234)",
            "kafka.coordinator.GroupCoordinator.completeAndScheduleNextHeartbeatExpiration(GroupCoordinator.scala:551)",
            "kafka.server.KafkaApis.handleHeartbeatRequest(KafkaApis.scala:1097)",
            "kafka.server.KafkaApis.handle(KafkaApis.scala:89)",
            "kafka.server.KafkaRequestHandler.run(KafkaRequestHandler.scala:60)",
            "java.lang.Thread.run(Thread.java:745)"), "b", "executor-Heartbeat"),
    ),
    lock_classes={"a": "kafka.coordinator.GroupMetadata", "b": "kafka.coordinator.GroupMetadata",
                  "c": "java.util.LinkedList"},
)
PM1_FDS_PEERS = 12_800
PM1_FDS_PEAK = 326_639
PM1_MAX_FDS = 1_000_000
PM1_FD_RAMP_MS = 100 * 60_000        # CLOSE_WAIT sockets pile up over ~1.5 h
REPLICA_SOCKET_TIMEOUT_MS = 30_000
REPLICA_LAG_TIME_MAX_MS = 10_000     # 0.10 default


@dataclass(frozen=True)
class DeadlockScript(Script):
    broker: int
    deadlock_ms: int

    def deadlock(self, state, broker, ms):
        return PM1_DEADLOCK if broker == self.broker and ms >= self.deadlock_ms else None

    def drops(self, broker, ms, text):
        # the stuck coordinator threads log nothing after the deadlock
        return broker == self.broker and ms >= self.deadlock_ms and "(kafka.coordinator." in text

    def fetch_errors(self, state: ClusterState, peer: int, t0: int, t1: int) -> list[tuple[int, int]]:
        """(ms, fetcher id) of `peer`'s failed fetches from the stuck broker in [t0, t1)."""
        out = []
        for fid in (0, 1):   # num.replica.fetchers=2
            t = self.deadlock_ms + REPLICA_SOCKET_TIMEOUT_MS + 1_500 * fid + 211 * (peer % 3)
            step = REPLICA_SOCKET_TIMEOUT_MS + 500
            if t < t0:
                t += -(-(t0 - t) // step) * step
            while t < t1:
                out.append((t, fid))
                t += step
        return out

    def led(self, state: ClusterState) -> list[tuple[str, int]]:
        c = state.c
        return [(t.name, p) for t in c.all_topics for p in range(t.partitions)
                if c.leader(t.name, p) == self.broker and len(c.replicas(t.name, p)) > 1]

    def kafka_records(self, logs, t0, t1):
        st, b = logs.s, logs.b
        out: dict[str, list] = {"server.log": []}
        if b != self.broker:
            for t, fid in self.fetch_errors(st, b, t0, t1):
                req = f"kafka.server.ReplicaFetcherThread$FetchRequest@{st.rng('fetchreq', b, t).getrandbits(31):x}"
                out["server.log"].append(logs.rec(t, "WARN", f"[ReplicaFetcherThread-{fid}-{self.broker}], Error in fetch "
                                                             f"{req}", "kafka.server.ReplicaFetcherThread",
                                                  FETCH_DISCONNECT_TRACE.format(peer=self.broker)))
            return out
        t = self.deadlock_ms + REPLICA_LAG_TIME_MAX_MS + 2_113
        for i, (tn, p) in enumerate(self.led(st)):
            reps = st.c.replicas(tn, p)
            ms = t + 3 * i
            if t0 <= ms < t1:
                out["server.log"].append(logs.rec(ms, "INFO", f"Partition [{tn},{p}] on broker {b}: Shrinking ISR for partition "
                                                              f"[{tn},{p}] from {','.join(map(str, reps))} to {b}", PARTITION))
        return out

    def open_fds(self, state: ClusterState, broker: int, ms: int) -> int:
        jitter = state.rng("pm1-fds", broker, ms // 300_000).randint(-40, 40)
        if broker != self.broker or ms < self.deadlock_ms:
            return PM1_FDS_PEERS + 97 * (broker % 3) + jitter
        grown = min(1.0, (ms - self.deadlock_ms) / PM1_FD_RAMP_MS)
        return int(PM1_FDS_PEERS + (PM1_FDS_PEAK - PM1_FDS_PEERS) * grown) if grown < 1.0 else PM1_FDS_PEAK

    def jmx(self, state, broker, ms):
        ov = {"OpenFileDescriptorCount": self.open_fds(state, broker, ms), "MaxFileDescriptorCount": PM1_MAX_FDS}
        if broker == self.broker and ms >= self.deadlock_ms + REPLICA_LAG_TIME_MAX_MS + 2_113:
            ov["UnderReplicatedPartitions"] = len(self.led(state))
        return ov


# --- post-mortem 2: ZooKeeper follower reset ---------------------------------------------------------
ZK_RESET_TRACE = "\n".join([
    "java.net.SocketException: Connection reset",
    "\tat java.net.SocketInputStream.read(SocketInputStream.java:210)",
    "\tat java.net.SocketInputStream.read(SocketInputStream.java:141)",
    "\tat java.io.BufferedInputStream.fill(BufferedInputStream.java:246)",
    "\tat java.io.BufferedInputStream.read(BufferedInputStream.java:265)",
    "\tat java.io.DataInputStream.readInt(DataInputStream.java:387)",
    "\tat org.apache.jute.BinaryInputArchive.readInt(BinaryInputArchive.java:96)",
    "\tat org.apache.zookeeper.server.quorum.QuorumPacket.deserialize(QuorumPacket.java:86)",
    "\tat org.apache.jute.BinaryInputArchive.readRecord(BinaryInputArchive.java:134)",
    "\tat org.apache.zookeeper.server.quorum.Learner.readPacket(Learner.java:228)",
    "\tat org.apache.zookeeper.server.quorum.Follower.followLeader(Follower.java:124)",
    "\tat org.apache.zookeeper.server.quorum.QuorumPeer.run(QuorumPeer.java:1478)",
])
SHUTDOWN_FOLLOWER_TRACE = "\n".join([
    "java.lang.Exception: shutdown Follower",
    "\tat org.apache.zookeeper.server.quorum.Follower.shutdown(Follower.java:220)",
    "\tat org.apache.zookeeper.server.quorum.QuorumPeer.run(QuorumPeer.java:1482)",
])
PM2_CONNECTED_MS = 316_796_607
PM2_ELECTION_MS = 104


@dataclass(frozen=True)
class FollowerResetScript(Script):
    leader: int
    follower: int
    reset_ms: int

    def zk_records(self, zk, h0, h1):
        # each line in the hour it is written in: an episode at an hour end is in both hours' files
        return [rec for rec in self._records(zk) if h0 <= rec[0] < h1]

    def _records(self, zk):
        c, t = zk.s.c, self.reset_ms
        if zk.myid not in (self.leader, self.follower):
            return []
        r = zk.s.rng("pm2", zk.myid)
        port = r.randint(32768, 60999)
        fip, lip = c.zk_server_ip(self.follower), c.zk_server_ip(self.leader)
        if zk.myid == self.leader:
            lh = f"LearnerHandler-/{fip}:{port}"
            return [zk.rec(t, "WARN", f"{lh}:LearnerHandler@737", "Closing connection to peer due to transaction timeout."),
                    zk.rec(t + 1, "WARN", f"{lh}:LearnerHandler@737", f"******* GOODBYE /{fip}:{port} ********")]
        qp = f"QuorumPeer[myid={zk.myid}](plain=[0:0:0:0:0:0:0:0]:2181)(secure=disabled)"
        zxid = f"0x{(t // 1000) & 0xFFFFFFF:x}"
        return [
            zk.rec(t + 3, "WARN", f"{qp}:Follower@129", "Exception when following the leader\n" + ZK_RESET_TRACE),
            zk.rec(t + 5, "INFO", f"{qp}:Follower@145", f"Disconnected from leader (with address: /{lip}:2888). "
                                                        f"Was connected for {PM2_CONNECTED_MS}ms. Sync state: true"),
            zk.rec(t + 6, "INFO", f"{qp}:QuorumPeer@1467", "shutdown called\n" + SHUTDOWN_FOLLOWER_TRACE),
            zk.rec(t + 9, "INFO", f"{qp}:QuorumPeer@863", "Peer state changed: looking"),
            zk.rec(t + 9, "WARN", f"{qp}:QuorumPeer@1449", "PeerState set to LOOKING"),
            zk.rec(t + 10, "INFO", f"{qp}:QuorumPeer@1319", "LOOKING"),
            zk.rec(t + 11, "INFO", f"{qp}:FastLeaderElection@903",
                   f"New election. My id = {zk.myid}, proposed zxid={zxid}"),
            zk.rec(t + 10 + PM2_ELECTION_MS - 1, "INFO", f"{qp}:QuorumPeer@857", "Peer state changed: following"),
            zk.rec(t + 10 + PM2_ELECTION_MS - 1, "INFO", f"{qp}:QuorumPeer@1401", "FOLLOWING"),
            zk.rec(t + 10 + PM2_ELECTION_MS, "INFO", f"{qp}:Follower@75",
                   f"FOLLOWING - LEADER ELECTION TOOK - {PM2_ELECTION_MS} MS"),
        ]


# --- ZooKeeper session loss of a broker (Kafka 2.x with the 3.4 client) --------------------------------
@dataclass(frozen=True)
class SessionLoss:
    broker: int
    expired_ms: int          # the ZooKeeper server expires the session
    generation: int          # which of the broker's sessions is lost (0: the first)

    @property
    def reconnect_ms(self) -> int:
        return self.expired_ms + 1_214

    @property
    def registered_ms(self) -> int:
        return self.reconnect_ms + 311


def session_loss_broker_records(logs, loss: SessionLoss) -> list:
    """The broker's server.log: its ZooKeeper client times out, finds the session expired, starts a new
    session and re-registers /brokers/ids/N."""
    st, c, b = logs.s, logs.s.c, logs.b
    old, new = st.zk_session_id(b, 10 + loss.generation), st.zk_session_id(b, 11 + loss.generation)
    zk = f"{c.zk_host.name}:2181"
    host = c.zk_host.name
    timeout = c.zk_session_timeout_ms
    t = loss.expired_ms
    rc = loss.reconnect_ms
    rows = [
        (t - timeout // 3, "INFO", f"Client session timed out, have not heard from server in {timeout * 2 // 3 + 2}ms for "
                                   f"sessionid {old}, closing socket connection and attempting reconnect", ZKC),
        (rc - 60, "INFO", f"Opening socket connection to server {host}/{c.zk_ip}:2181. Will not attempt to authenticate "
                          f"using SASL (unknown error)", ZKC),
        (rc - 58, "INFO", f"Socket connection established to {host}/{c.zk_ip}:2181, initiating session", ZKC),
        (rc - 2, "WARN", f"Unable to reconnect to ZooKeeper service, session {old} has expired", ZKC),
        (rc - 1, "INFO", f"Unable to reconnect to ZooKeeper service, session {old} has expired, closing socket connection",
         ZKC),
        (rc, "INFO", f"EventThread shut down for session: {old}", ZKC),
        (rc + 1, "INFO", "[ZooKeeperClient] Session expired.", ZKCLIENT),
        (rc + 3, "INFO", f"[ZooKeeperClient] Initializing a new session to {zk}.", ZKCLIENT),
        (rc + 4, "INFO", f"Initiating client connection, connectString={zk} sessionTimeout={timeout} "
                         f"watcher=kafka.zookeeper.ZooKeeperClient$ZooKeeperClientWatcher$@5a4041cc",
         "org.apache.zookeeper.ZooKeeper"),
        (rc + 9, "INFO", f"Opening socket connection to server {host}/{c.zk_ip}:2181. Will not attempt to authenticate "
                         f"using SASL (unknown error)", ZKC),
        (rc + 11, "INFO", f"Socket connection established to {host}/{c.zk_ip}:2181, initiating session", ZKC),
        (rc + 37, "INFO", f"Session establishment complete on server {host}/{c.zk_ip}:2181, sessionid = {new}, "
                          f"negotiated timeout = {timeout}", ZKC),
        (loss.registered_ms - 16, "INFO", f"Creating /brokers/ids/{b} (is it secure? false)", KZK),
        (loss.registered_ms - 1, "INFO", f"Result of znode creation at /brokers/ids/{b} is: OK", KZK),
        (loss.registered_ms, "INFO", f"Registered broker {b} at path /brokers/ids/{b} with addresses: ArrayBuffer(EndPoint("
                                     f"{c.broker_host(b).name},9092,ListenerName(PLAINTEXT),PLAINTEXT))", KZK),
    ]
    return [logs.rec(ms, level, msg, lg) for ms, level, msg, lg in rows]


def session_loss_zk_records(zk, loss: SessionLoss) -> list:
    """The ZooKeeper server (the brokers' one): expiry, the stale reconnect refused, a new session."""
    st, c = zk.s, zk.s.c
    old, new = st.zk_session_id(loss.broker, 10 + loss.generation), st.zk_session_id(loss.broker, 11 + loss.generation)
    ip = c.broker_ip(loss.broker)
    r = st.rng("zk-loss", loss.broker, loss.generation)
    port = r.randint(32768, 60999)
    t, rc = loss.expired_ms, loss.reconnect_ms
    out = [
        zk.rec(t, "INFO", "SessionTracker:ZooKeeperServer@398",
               f"Expiring session {old}, timeout of {c.zk_session_timeout_ms}ms exceeded"),
        zk.rec(t + 2, "INFO", f"ProcessThread(sid:{zk.myid} cport:2181)::PrepRequestProcessor@487",
               f"Processed session termination for sessionid: {old}"),
        zk.rec(rc - 59, "INFO", "NIOServerCxnFactory.AcceptThread:0.0.0.0/0.0.0.0:2181:NIOServerCnxnFactory$AcceptThread@296",
               f"Accepted socket connection from /{ip}:{port}"),
        zk.rec(rc - 57, "INFO", "NIOWorkerThread-2:ZooKeeperServer@1032",
               f"Client attempting to renew session {old} at /{ip}:{port}"),
        zk.rec(rc - 56, "INFO", "NIOWorkerThread-2:ZooKeeperServer@708",
               f"Invalid session {old} for client /{ip}:{port}, probably expired"),
        zk.rec(rc - 55, "INFO", "NIOWorkerThread-2:NIOServerCnxn@627",
               f"Closed socket connection for client /{ip}:{port} which had sessionid {old}"),
    ]
    zk._session(r, rc + 8, ip, c.zk_session_timeout_ms, new, out)
    return out


def controller_broker_loss(logs, loss: SessionLoss, moved: list[tuple[str, int]], epochs: dict) -> dict[str, list]:
    """The controller sees the broker's znode go and come back, and moves the partitions it led."""
    st, c, b = logs.s, logs.s.c, logs.b
    cid = f"[Controller id={b}]"
    ce = st.controller_epoch
    live = list(c.broker_ids)
    gone = loss.broker
    t = loss.expired_ms + 15
    ctl = [logs.rec(t, "INFO", f"{cid} Newly added brokers: , deleted brokers: {gone}, all live brokers: "
                               f"{','.join(str(x) for x in live if x != gone)}", CTRL),
           logs.rec(t + 2, "INFO", f"{cid} Broker failure callback for {gone}", CTRL)]
    sc = []
    for i, (tn, p) in enumerate(moved):
        reps = c.replicas(tn, p)
        nl = reps[1]
        le = epochs[(tn, p)]
        ms = t + 4 + i // 20
        sc.append(logs.rec(ms, "TRACE", f"[Controller id={b} epoch={ce}] Changed partition {tn}-{p} state from "
                                        f"OnlinePartition to OfflinePartition", SC))
        isr = ", ".join(str(x) for x in reps if x != gone)
        sc.append(logs.rec(ms + 1, "TRACE", f"[Controller id={b} epoch={ce}] Changed partition {tn}-{p} from "
                                            f"OfflinePartition to OnlinePartition with state LeaderAndIsr(leader={nl}, "
                                            f"leaderEpoch={le}, isr=List({isr}), zkVersion={le + 3})", SC))
    t = loss.registered_ms + 40
    ctl += [logs.rec(t, "INFO", f"{cid} Newly added brokers: {gone}, deleted brokers: , all live brokers: "
                                f"{','.join(map(str, live))}", CTRL),
            logs.rec(t + 1, "INFO", f"{cid} New broker startup callback for {gone}", CTRL)]
    return {"controller.log": ctl, "state-change.log": sc}


def new_leader_records(logs, tn: str, p: int, le: int, ms: int) -> list:
    """A broker becoming leader: 'starts at Leader Epoch', and for an offsets partition the group load
    and the rebalance of its groups on their new coordinator."""
    st, c, b = logs.s, logs.s.c, logs.b
    off = st.offsets_end_offset(b, p, ms) if tn == OFFSETS_TOPIC else st.topic_offset(tn, ms)
    out = [logs.rec(ms, "INFO", f"[Partition {tn}-{p} broker={b}] {tn}-{p} starts at Leader Epoch {le} from offset "
                                f"{off}. Previous Leader Epoch was: {le - 1}", PARTITION)]
    if tn == OFFSETS_TOPIC:
        tp = f"{tn}-{p}"
        out.append(logs.rec(ms + 20, "INFO", f"{logs.gmm} Scheduling loading of offsets and group metadata from {tp}", GMM))
        out.append(logs.rec(ms + 41 + p % 13, "INFO", f"{logs.gmm} Finished loading offsets and group metadata from {tp} "
                                                      f"in {21 + p % 13} milliseconds.", GMM))
        for g in c.groups:
            if c.group_partition(g) == p:
                gen = st.rng("pm-gen", g).randint(20, 400)
                out.append(logs.rec(ms + 3_000 + p, "INFO", f"[GroupCoordinator {b}]: Preparing to rebalance group {g} in "
                                                            f"state PreparingRebalance with old generation {gen} ({tp})", GC))
                out.append(logs.rec(ms + 9_000 + p, "INFO", f"[GroupCoordinator {b}]: Stabilized group {g} generation "
                                                            f"{gen + 1} ({tp})", GC))
    return out


# --- post-mortem 4: ZooKeeper session expiry -> election storm -----------------------------------------
@dataclass(frozen=True)
class ExpiryStormScript(Script):
    loss: SessionLoss

    def moved(self, state: ClusterState) -> list[tuple[str, int]]:
        return state.moved_partitions(self.loss.broker)

    def back_ms(self, state: ClusterState) -> int:
        return _back_check(state, self.loss.registered_ms + 1)

    def kafka_records(self, logs, t0, t1):
        st, b, gone = logs.s, logs.b, self.loss.broker
        out: dict[str, list] = {"server.log": [], "controller.log": [], "state-change.log": []}
        moved = self.moved(st)
        if b == gone:
            out["server.log"] += session_loss_broker_records(logs, self.loss)
            back = self.back_ms(st)
            for i, (tn, p) in enumerate(moved):
                out["server.log"] += new_leader_records(logs, tn, p, st.leader_epoch(tn, p) + 2, back + 40 + i)
        if b == st.c.controller_id:
            epochs = {(tn, p): st.leader_epoch(tn, p) + 1 for tn, p in moved}
            for name, lst in controller_broker_loss(logs, self.loss, moved, epochs).items():
                out[name] += lst
        for i, (tn, p) in enumerate(moved):
            if st.c.replicas(tn, p)[1] == b:
                out["server.log"] += new_leader_records(logs, tn, p, st.leader_epoch(tn, p) + 1,
                                                        self.loss.expired_ms + 60 + i)
        return out

    def zk_records(self, zk, h0, h1):
        if zk.myid != 1:
            return []
        return [x for x in session_loss_zk_records(zk, self.loss) if h0 <= x[0] < h1]

    def away_from_preferred(self, state, ms):
        if ms != self.back_ms(state):
            return []
        return [(f"{tn}-{p}", state.c.replicas(tn, p)) for tn, p in self.moved(state)]

    def jmx(self, state, broker, ms):
        return {"ZooKeeperExpiresCount": 1} if broker == self.loss.broker and ms >= self.loss.reconnect_ms else {}


# --- post-mortem 5: metadata divergence after repeated session loss ----------------------------------
PM5_STUCK_EPOCH = 426
PM5_QUEUED_MAX_REQUESTS = 500
PM5_SATURATED_MS = 50 * 60_000


@dataclass(frozen=True)
class DivergenceScript(Script):
    losses: tuple[SessionLoss, ...]
    topic: str
    partition: int

    @property
    def broker(self) -> int:
        return self.losses[0].broker

    def epoch_changes(self, state: ClusterState) -> list[tuple[int, int, int]]:
        """(ms, new leader, leader epoch) of the controller's moves of the partition: away at each loss,
        back at the next preferred-replica check, and away once more when broker 3 drops out of the ISR."""
        reps = state.c.replicas(self.topic, self.partition)
        out, epoch = [], PM5_STUCK_EPOCH
        for loss in self.losses:
            epoch += 1
            out.append((loss.expired_ms + 19, reps[1], epoch))
            epoch += 1
            out.append((_back_check(state, loss.registered_ms + 1), reps[0], epoch))
        epoch += 1
        out.append((out[-1][0] + CHECK_MS + 11_000, reps[1], epoch))
        return out

    def diverged_ms(self) -> int:
        return self.losses[0].expired_ms + 19

    def kafka_records(self, logs, t0, t1):
        st, c, b = logs.s, logs.s.c, logs.b
        tn, p = self.topic, self.partition
        reps = c.replicas(tn, p)
        out: dict[str, list] = {"server.log": [], "controller.log": [], "state-change.log": []}
        changes = self.epoch_changes(st)
        if b == self.broker:
            first = self.losses[0].expired_ms - 5 * 60_000
            out["server.log"] += new_leader_records(logs, tn, p, PM5_STUCK_EPOCH, first)   # and never again
            for loss in self.losses:
                out["server.log"] += session_loss_broker_records(logs, loss)
        if b == c.controller_id:
            cid = f"[Controller id={b}]"
            ce = st.controller_epoch
            for loss in self.losses:
                for name, lst in controller_broker_loss(logs, loss, [], {}).items():
                    out[name] += lst
            for ms, leader, le in changes:
                isr = ",".join(map(str, reps if leader == reps[0] else [x for x in reps if x != self.broker]))
                out["state-change.log"].append(logs.rec(
                    ms + 2, "TRACE", f"[Controller id={b} epoch={ce}] Sending become-leader LeaderAndIsr request "
                                     f"PartitionState(controllerEpoch={ce}, leader={leader}, leaderEpoch={le}, isr={isr}, "
                                     f"zkVersion={le + 7}, replicas={','.join(map(str, reps))}, isNew=false) to broker "
                                     f"{leader} for partition {tn}-{p}", SC))
        for ms, leader, le in changes:
            if leader == b and b != self.broker:
                out["server.log"] += new_leader_records(logs, tn, p, le, ms + 31)
        if b != self.broker and b in reps:
            # followers keep fetching from broker 3, which still answers as if it were at epoch 426
            t = self.diverged_ms() + 5_000 + 317 * (b % 3)
            end = self.diverged_ms() + PM5_SATURATED_MS
            step = 15_000
            if t < t0:
                t += -(-(t0 - t) // step) * step
            while t < min(t1, end):
                out["server.log"].append(logs.rec(
                    t, "ERROR", f"[ReplicaFetcher replicaId={b}, leaderId={self.broker}, fetcherId=0] Error for partition "
                                f"{tn}-{p} at offset {st.topic_offset(tn, t)}", "kafka.server.ReplicaFetcherThread",
                    "org.apache.kafka.common.errors.NotLeaderForPartitionException: This server is not the leader for "
                    "that topic-partition."))
                t += step
        return out

    def zk_records(self, zk, h0, h1):
        if zk.myid != 1:
            return []
        return [x for loss in self.losses for x in session_loss_zk_records(zk, loss) if h0 <= x[0] < h1]

    def away_from_preferred(self, state, ms):
        reps = state.c.replicas(self.topic, self.partition)
        return [(f"{self.topic}-{self.partition}", reps) for t, leader, _ in self.epoch_changes(state)
                if t == ms and leader == reps[0]]

    def saturated(self, ms: int) -> bool:
        start = self.diverged_ms() + 3 * 60_000
        return start <= ms < start + PM5_SATURATED_MS

    def jmx(self, state, broker, ms):
        if broker != self.broker:
            return {}
        ov = {"ZooKeeperExpiresCount": sum(1 for loss in self.losses if loss.reconnect_ms <= ms)}
        if self.saturated(ms):
            ov["RequestQueueSize"] = PM5_QUEUED_MAX_REQUESTS
            ov["RequestHandlerAvgIdlePercent"] = 0.01 + state.rng("pm5-idle", ms).uniform(0, 0.02)
        return ov


def first_sample(state: ClusterState, broker: int, start: int, end: int, pred) -> int | None:
    for ms in sample_times(state, broker, start, end):
        if pred(ms):
            return ms
    return None


def first_dump_after(state: ClusterState, broker: int, after: int, end: int) -> int | None:
    h = after - after % HOUR_MS
    while h < end:
        ms = capture_time(state, broker, h)
        ms -= ms % 1000
        if after <= ms < end:
            return ms
        h += HOUR_MS
    return None


__all__ = ["DeadlockScript", "FollowerResetScript", "ExpiryStormScript", "DivergenceScript", "SessionLoss",
           "first_sample", "first_dump_after", "LOG_DIR"]
