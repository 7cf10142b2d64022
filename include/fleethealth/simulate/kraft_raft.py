"""The Raft states' toString as KRaft nodes log them in "Completed transition to {} from {}", per version.

Read from the Kafka source (raft/src/main/java/org/apache/kafka/raft/: QuorumState.java logs the line, each
state's toString in its own file, FollowerState.java, LeaderState.java ...): 3.9 has Unattached/Candidate/Follower/
Leader/Resigned; 4.0+ adds ProspectiveState (KIP-996 Pre-Vote), renames Unattached to UnattachedState,
shows `votedKey` on followers and an `epochElection` instead of `retries`/`voteStates`; 4.1's Leader
names its local voter node.
"""
from __future__ import annotations

from . import kraft_model as km
from .model import ClusterState

LISTENER = "CONTROLLER"


class RaftText:
    def __init__(self, state: ClusterState, version: tuple[int, ...]):
        self.s, self.c = state, state.c
        self.v4 = version >= (4, 0)
        self.voters = "[" + ", ".join(map(str, self.c.controller_ids)) + "]"

    def key(self, node: int) -> str:
        return f"ReplicaKey(id={node}, directoryId={km.directory_id(self.s, node)})"

    def endpoints(self, node: int) -> str:
        host = self.c.controller_host(node).name
        return f"Endpoints(endpoints={{ListenerName({LISTENER})={host}/{self.c.controller_ip(node)}:9093}})"

    @staticmethod
    def hw(offset: int | None) -> str:
        return "Optional.empty" if offset is None else f"Optional[LogOffsetMetadata(offset={offset}, metadata=Optional.empty)]"

    def timeout(self, node: int, epoch: int) -> int:
        """electionTimeoutMs: controller.quorum.election.timeout.ms (1000) plus a random share of it."""
        return 1_000 + self.s.rng("election-timeout", node, epoch).randrange(1_000)

    def votes(self, node: int) -> str:
        if self.v4:
            states = ", ".join(f"{n}=VoterState(replicaKey=ReplicaKey(id={n}, directoryId=<undefined>), "
                               f"state={'GRANTED' if n == node else 'UNRECORDED'})" for n in self.c.controller_ids)
            return f"EpochElection(voterStates={{{states}}})"
        return "{" + ", ".join(f"{n}={'GRANTED' if n == node else 'UNRECORDED'}" for n in self.c.controller_ids) + "}"

    def follower(self, epoch: int, leader: int, hw: int | None) -> str:
        voted = "votedKey=Optional.empty, " if self.v4 else ""
        return (f"FollowerState(fetchTimeoutMs={km.FETCH_TIMEOUT_MS}, epoch={epoch}, leader={leader}, "
                f"leaderEndpoints={self.endpoints(leader)}, {voted}voters={self.voters}, highWatermark={self.hw(hw)}, "
                f"fetchingSnapshot=Optional.empty)")

    def prospective(self, node: int, epoch: int, leader: int, hw: int | None) -> str:
        """4.0+: a voter that lost its leader asks the others first (Pre-Vote), keeping the epoch."""
        return (f"ProspectiveState(epoch={epoch}, leaderId=OptionalInt[{leader}], votedKey=Optional.empty, "
                f"epochElection={self.votes(node)}, electionTimeoutMs={self.timeout(node, epoch)}, "
                f"highWatermark={self.hw(hw)})")

    def candidate(self, node: int, epoch: int, hw: int | None) -> str:
        if self.v4:
            return (f"CandidateState(localId={node}, localDirectoryId={km.directory_id(self.s, node)}, epoch={epoch}, "
                    f"epochElection={self.votes(node)}, highWatermark={self.hw(hw)}, "
                    f"electionTimeoutMs={self.timeout(node, epoch)})")
        # 3.8 - 3.9 print no space before epoch=
        return (f"CandidateState(localId={node}, localDirectoryId={km.directory_id(self.s, node)},epoch={epoch}, "
                f"retries=1, voteStates={self.votes(node)}, highWatermark={self.hw(hw)}, "
                f"electionTimeoutMs={self.timeout(node, epoch)})")

    def leader(self, node: int, epoch: int, start: int, fetched: dict[int, int]) -> str:
        """`fetched`: voter -> its last fetch (epoch ms); -1 for the leader itself and a voter never heard of."""
        states = ", ".join(
            f"{n}=ReplicaState(replicaKey={self.key(n)}, endOffset={self.hw(start if fetched.get(n, -1) >= 0 or n == node else None)}, "
            f"lastFetchTimestamp={fetched.get(n, -1)}, lastCaughtUpTimestamp={fetched.get(n, -1)}, "
            f"hasAcknowledgedLeader={'true' if n == node or fetched.get(n, -1) >= 0 else 'false'})"
            for n in self.c.controller_ids)
        if self.v4:
            me = (f"localVoterNode=VoterNode(voterKey={self.key(node)}, listeners={self.endpoints(node)}, "
                  f"supportedKRaftVersion=SupportedVersionRange[min_version:0, max_version:1])")
        else:
            me = f"localReplicaKey={self.key(node)}"
        return f"Leader({me}, epoch={epoch}, epochStartOffset={start}, highWatermark=Optional.empty, voterStates={{{states}}})"

    def resigned(self, node: int, epoch: int) -> str:
        others = "[" + ", ".join(str(n) for n in self.c.controller_ids if n != node) + "]"
        return (f"ResignedState(localId={node}, epoch={epoch}, voters={self.voters}, "
                f"electionTimeoutMs={self.timeout(node, epoch)}, unackedVoters={others}, preferredSuccessors={others})")
