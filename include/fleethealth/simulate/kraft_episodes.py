"""What a KRaft node logs of the cluster's episodes: a Raft leader election and a broker fencing.

Each function returns {file name: [(ms, text)]} for the node `w.node` (a kraft_logs.KraftLogs), every
line in the form the Kafka source gives for the node's version: the fencing in
metadata/src/main/java/org/apache/kafka/controller/ (ReplicationControlManager.java, BrokerHeartbeatManager.java)
and core/src/main/scala/kafka/server/BrokerLifecycleManager.scala, the election in
raft/src/main/java/org/apache/kafka/raft/ (KafkaRaftClient.java, QuorumState.java, LeaderState.java) and
QuorumController.java.
"""
from __future__ import annotations

from . import kraft_model as km
from .fleet import OFFSETS_TOPIC

QC = "org.apache.kafka.controller.QuorumController"
RCM = "org.apache.kafka.controller.ReplicationControlManager"
BHM = "org.apache.kafka.controller.BrokerHeartbeatManager"
CCM = "org.apache.kafka.controller.ClusterControlManager"
QS = "org.apache.kafka.raft.QuorumState"
KRC = "org.apache.kafka.raft.KafkaRaftClient"
LS = "org.apache.kafka.raft.LeaderState"
NC = "org.apache.kafka.clients.NetworkClient"
BLM = "kafka.server.BrokerLifecycleManager"
NTC = "kafka.server.NodeToControllerRequestThread"
SC = "state.change.logger"


def _rows() -> dict[str, list]:
    return {"server.log": [], "controller.log": [], "state-change.log": []}


def election(w, ms: int, old: int, new: int, epoch: int) -> dict[str, list]:
    """The quorum's leader `old` (epoch - 1) loses the voters; `new` wins epoch `epoch` at `ms`."""
    st, rt, node = w.s, w.raft, w.node
    out = _rows()
    srv, ctl = out["server.log"], out["controller.log"]
    rm, qc = f"[RaftManager id={node}]", f"[QuorumController id={node}]"
    glitch = km.lost_at(st, ms)
    hw = km.high_watermark(st, glitch)
    old_follower = rt.follower(epoch - 1, old, hw)
    new_follower = rt.follower(epoch, new, hw)
    if node == old:
        leader = rt.leader(old, epoch - 1, hw - 120, {n: (-1 if n == old else glitch - 400) for n in w.c.controller_ids})
        resigned = rt.resigned(old, epoch - 1)
        fetched = f"[{old}]"
        srv.append(w.rec(glitch + 3_000, "INFO", f"{rm} Did not receive fetch request from the majority of the voters "
                                                 f"within {km.CHECK_QUORUM_MS}ms. Current fetched voters are {fetched}, and "
                                                 f"voters are java.util.stream.ReferencePipeline$3@{w.hex(epoch)}", LS))
        srv.append(w.rec(glitch + 3_004, "INFO", f"{rm} Attempting durable transition to {resigned} from {leader}", QS))
        srv.append(w.rec(glitch + 3_006, "INFO", f"{rm} Completed transition to {resigned} from {leader}", QS))
        srv.append(w.rec(ms + 12, "INFO", f"{rm} Completed transition to {new_follower} from {resigned}", QS))
        ctl.append(w.rec(ms + 14, "WARN", f"{qc} Renouncing the leadership due to a metadata log event. We were the leader "
                                          f"at epoch {epoch - 1}, but in the new epoch {epoch}, the leader is {new}. "
                                          f"Reverting to last stable offset {hw}.", QC))
    elif node == new:
        t = glitch + km.FETCH_TIMEOUT_MS
        candidate = rt.candidate(new, epoch, hw)
        if rt.v4:
            prospective = rt.prospective(new, epoch - 1, old, hw)
            srv.append(w.rec(t, "INFO", f"{rm} Transitioning to Prospective state due to fetch timeout", KRC))
            srv.append(w.rec(t + 2, "INFO", f"{rm} Completed transition to {prospective} from {old_follower}", QS))
            before = prospective
        else:
            srv.append(w.rec(t, "INFO", f"{rm} Become candidate due to fetch timeout", KRC))
            before = old_follower
        if ms - glitch > km.GLITCH_BEFORE_MS:      # a quorum loss: no majority until now
            srv.extend(_no_majority(w, t, ms - 40, epoch))
        srv.append(w.rec(ms - 40, "INFO", f"{rm} Attempting durable transition to {candidate} from {before}", QS))
        srv.append(w.rec(ms - 35, "INFO", f"{rm} Completed transition to {candidate} from {before}", QS))
        leader = rt.leader(new, epoch, hw + 1, {n: (-1 if n == new else ms - 3) for n in w.c.controller_ids})
        srv.append(w.rec(ms, "INFO", f"{rm} Completed transition to {leader} from {candidate}", QS))
        ctl.append(w.rec(ms + 9, "INFO", f"{qc} Becoming the active controller at epoch {epoch}, next write offset "
                                         f"{hw + 2}.", QC))
    elif w.is_controller:
        srv.append(w.rec(ms + 11, "INFO", f"{rm} Completed transition to {new_follower} from {old_follower}", QS))
        ctl.append(w.rec(ms + 13, "INFO", f"{qc} In the new epoch {epoch}, the leader is {new}.", QC))
    else:   # a broker: an observer of the quorum; its heartbeat channel follows the new controller at its next send
        srv.append(w.rec(ms + 20 + node, "INFO", f"{rm} Completed transition to {new_follower} from {old_follower}", QS))
        srv.append(w.rec(ms + 1_200 + 97 * node % 800, "INFO", recorded_controller(w, new), NTC))
    return out


def _no_majority(w, since: int, until: int, epoch: int) -> list:
    """A voter that cannot gather a majority from `since` (its fetch timeout) to `until` (a quorum loss):
    each election timeout ends in a failed Pre-Vote (4.x) or a backed-off candidacy (3.x), then it retries."""
    rt, node, out = w.raft, w.node, []
    t = since + rt.timeout(node, epoch)
    while t < until:
        text = (f"Election timed out before receiving sufficient vote responses to become candidate. Current epoch "
                f"election state: {rt.votes(node)}" if rt.v4 else
                f"Election has timed out, backing off for {rt.timeout(node, t) - 1_000}ms before becoming a candidate again")
        out.append(w.rec(t, "INFO", f"[RaftManager id={node}] {text}", KRC))
        t += rt.timeout(node, t)
    return out


def recorded_controller(w, controller: int) -> str:
    """NodeToControllerRequestThread's line (server/NodeToControllerChannelManager.scala) as the broker's version
    words it: "KRaft controller ... node" 3.8+ (4.0+: the node's isFenced too), "controller ... broker" before."""
    host = f"{w.c.controller_host(controller).name}:9093 (id: {controller} rack: null{' isFenced: false' if w.v4 else ''})"
    kind, noun = ("KRaft controller", "node") if w.v >= (3, 8) else ("controller", "broker")
    return (f"[broker-{w.node}-to-controller-heartbeat-channel-manager]: Recorded new {kind}, from now on will use "
            f"{noun} {host}")


def fencing(w, broker: int, index: int, fenced: int, unfenced: int) -> dict[str, list]:
    """The `index`-th fencing of `broker` (by the active controller, session timeout) and its unfencing."""
    st, c, node = w.s, w.c, w.node
    out = _rows()
    srv, ctl, sc = out["server.log"], out["controller.log"], out["state-change.log"]
    active = km.leader_at(st, fenced)[0]
    hosted = sum(len(c.hosted(broker, t.name)) for t in c.all_topics)
    epoch = km.broker_epoch(st, broker)
    qc = f"[QuorumController id={node}]"
    if node == broker:
        blm = f"[BrokerLifecycleManager id={broker}]"
        start = fenced - km.SESSION_TIMEOUT_MS
        srv.append(w.rec(start + 2_104, "INFO", f"{blm} Unable to send a heartbeat because the RPC got timed out before "
                                                f"it could be sent.", BLM))
        for dt in (4_311, 6_517):
            srv.append(w.rec(start + dt, "WARN", f"{blm} Unable to send broker heartbeat for {broker}. Retrying.", BLM))
    if w.is_controller:
        if node == active:
            ctl.append(w.rec(fenced, "INFO", f"{qc} Fencing broker {broker} because its session has timed out.", RCM))
            ctl.append(w.rec(fenced + 1, "INFO", f"{qc} handleBrokerFenced: changing {hosted} partition(s)", RCM))
            ctl.append(w.rec(unfenced, "INFO", f"{qc} The request from broker {broker} to unfence has been granted "
                                               f"because it has caught up with the offset of its register broker record "
                                               f"{epoch}.", BHM))
            ctl.append(w.rec(unfenced + 1, "INFO", f"{qc} handleBrokerUnfenced: changing {hosted} partition(s)", RCM))
        lag = 2 if node == active else 4 + node % 7
        for t, change in ((fenced, 1), (unfenced, -1)):
            ctl.append(w.rec(t + lag, "INFO", f"{qc} Replayed BrokerRegistrationChangeRecord modifying the registration "
                                              f"for broker {broker}: BrokerRegistrationChangeRecord(brokerId={broker}, "
                                              f"brokerEpoch={epoch}, fenced={change}, inControlledShutdown=0, logDirs=[])",
                             CCM))
        return out
    moved = st.moved_partitions(broker)
    back = km.balance_back_ms(unfenced)
    le0 = {(tn, p): st.leader_epoch(tn, p) + 2 * index for tn, p in moved}
    for t, le_step, leader_of in ((fenced + 40, 1, lambda tn, p: c.replicas(tn, p)[1]),
                                  (back + 40, 2, lambda tn, p: broker)):
        mine = [(tn, p) for tn, p in moved if leader_of(tn, p) == node]
        theirs = [(tn, p) for tn, p in moved if leader_of(tn, p) != node and node in c.replicas(tn, p)]
        if mine:
            sc.append(w.rec(t, "INFO", f"[Broker id={node}] Transitioning {len(mine)} partition(s) to local leaders.", SC))
            for i, (tn, p) in enumerate(mine):
                reps = c.replicas(tn, p)
                prev, isr = (reps[1], reps) if le_step == 2 else (broker, [b for b in reps if b != broker])
                sc.append(w.rec(t + 2 + i, "INFO", _leader_line(w, tn, p, le0[(tn, p)] + le_step, t, prev, isr), SC))
        if theirs:
            t2 = t + 3 + len(mine)
            sc.append(w.rec(t2, "INFO", f"[Broker id={node}] Transitioning {len(theirs)} partition(s) to local followers.", SC))
            for i, (tn, p) in enumerate(theirs):
                leader = leader_of(tn, p)
                prev = broker if le_step == 1 else c.replicas(tn, p)[1]
                sc.append(w.rec(t2 + 1 + i, "INFO", _follower_line(w, tn, p, le0[(tn, p)] + le_step, t, leader, prev), SC))
            t3 = t2 + 2 + len(theirs)
            sc.append(w.rec(t3, "INFO", f"[Broker id={node}] Stopped fetchers as part of become-follower for "
                                        f"{len(theirs)} partitions", SC))
            sc.append(w.rec(t3 + 9, "INFO", f"[Broker id={node}] Started fetchers as part of become-follower for "
                                            f"{len(theirs)} partitions", SC))
    return out


def _offset(w, tn: str, p: int, ms: int) -> int:
    return w.s.offsets_end_offset(w.node, p, ms) if tn == OFFSETS_TOPIC else w.s.topic_offset(tn, ms)


def _leader_line(w, tn: str, p: int, le: int, ms: int, prev: int, isr: list[int]) -> str:
    off = _offset(w, tn, p, ms)
    return (f"[Broker id={w.node}] Leader {tn}-{p} with topic id Some({km.topic_id(w.s, tn)}) starts at leader epoch "
            f"{le} from offset {off} with partition epoch {le + 7}, high watermark {off - 3}, ISR [{','.join(map(str, isr))}], adding "
            f"replicas [] and removing replicas [] . Previous leader Some({prev}) and previous leader epoch was {le - 1}.")


def _follower_line(w, tn: str, p: int, le: int, ms: int, leader: int, prev: int) -> str:
    off = _offset(w, tn, p, ms)
    return (f"[Broker id={w.node}] Follower {tn}-{p} starts at leader epoch {le} from offset {off} with partition epoch "
            f"{le + 7} and high watermark {off - 3}. Current leader is {leader}. Previous leader Some({prev}) and "
            f"previous leader epoch was {le - 1}.")
