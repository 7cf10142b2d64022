"""gold.zk_quorum: the ZooKeeper quorum as each server's log shows it, per server-hour."""
from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

PEER_STATES = ("LOOKING", "FOLLOWING", "LEADING", "OBSERVING")
STATE_EVENTS = ("peer_state", "zab_state", "election_time")


def zk_quorum(facts, thresholds) -> DataFrame:
    """gold.zk_quorum: one row per (cluster, host, hour) of each ZooKeeper server of the inventory
    (facts.hosts with role 'zookeeper'), from its log lines of the hour (silver.zk_events).

    Columns: cluster, host, zk_myid (inventory), hour,
    - log_lines: lines of the server's log in the hour (any event type); 0 = no log arrived, and then
      every count is 0 and every timestamp/state NULL: absence, never 'healthy';
    - state / state_ts: the last peer state logged (LOOKING, FOLLOWING, LEADING, OBSERVING) and when:
      the bare peer state, 3.6+ "Peer state changed: following - broadcast" (its first word) or
      "<STATE> - LEADER ELECTION TOOK" (NULL when none in the hour: the state is then unknown);
    - elections, max_election_ms, last_election_ms: "LEADER ELECTION TOOK - N" lines (elections the
      server finished), the longest N and the last one's;
    - follower_disconnects: as follower (or observer), the larger of its "Exception when following the
      leader" and "Disconnected from leader" counts (one disconnect usually logs both; 3.4 only the first);
    - transaction_timeouts: as leader, "Closing connection to peer due to transaction timeout" (a
      follower it dropped for not acking within tickTime x syncLimit);
    - learner_handler_errors: as leader, a learner handler shut down ("Unexpected exception causing
      shutdown while sock still open", "GOODBYE <follower>");
    - peer_connection_errors: election channel failures ("Connection broken for id N",
      "Cannot open channel to N");
    - session_expiries: client sessions this server expired ("Expiring session 0x.."; all clients, not
      only brokers);
    - slow_fsyncs, max_fsync_ms: "fsync-ing the write ahead log in .. took Nms" (ZooKeeper logs it above
      its fsync.warningthresholdms, 1 s by default);
    - first_event_ts / last_event_ts: first/last line of the server's log in the hour.

    Limits: only what the server logged at its log level (peer state and elections at INFO; a server
    that logged nothing in the hour has no known state); lines of hosts missing from the inventory are
    not counted; the role (leader/follower) of the counts is the one those messages imply, not checked
    against `state`.
    """
    servers = facts.hosts.where(F.col("role") == "zookeeper").select("cluster", "host", "zk_myid", "hour")
    ev = facts.zk_events
    et = F.col("event_type")

    def count(*types):
        return F.count(F.when(et.isin(*types), 1))

    peer_state = F.upper(F.regexp_extract(F.col("state"), r"^(\w+)", 1))
    known = et.isin(*STATE_EVENTS) & peer_state.isin(*PEER_STATES)
    election = et == "election_time"
    agg = ev.groupBy("cluster", "host", "hour").agg(
        F.count(F.lit(1)).alias("log_lines"),
        # ties at one millisecond: the struct orders by state name, so the result does not depend on partitions
        F.max(F.when(known, F.struct(F.col("ts"), peer_state.alias("state")))).alias("last_state"),
        count("election_time").alias("elections"),
        F.max(F.when(election, F.col("duration_ms"))).alias("max_election_ms"),
        F.max(F.when(election, F.struct(F.col("ts"), F.col("duration_ms")))).alias("last_election"),
        F.greatest(count("follower_exception"), count("follower_disconnected")).alias("follower_disconnects"),
        count("follower_transaction_timeout").alias("transaction_timeouts"),
        count("learner_handler_error").alias("learner_handler_errors"),
        count("peer_connection_broken", "peer_connect_failed").alias("peer_connection_errors"),
        count("session_expired").alias("session_expiries"),
        count("slow_fsync").alias("slow_fsyncs"),
        F.max(F.when(et == "slow_fsync", F.col("duration_ms"))).alias("max_fsync_ms"),
        F.min("ts").alias("first_event_ts"), F.max("ts").alias("last_event_ts"))
    df = servers.join(agg, ["cluster", "host", "hour"], "left")

    def n(c, t="int"):
        return F.coalesce(F.col(c), F.lit(0)).cast(t).alias(c)

    return df.select(
        F.col("cluster").cast("string"), F.col("host").cast("string"), F.col("zk_myid").cast("int"),
        "hour", n("log_lines", "long"),
        F.col("last_state.state").cast("string").alias("state"),
        F.col("last_state.ts").cast("timestamp").alias("state_ts"),
        n("elections"), F.col("max_election_ms").cast("long"),
        F.col("last_election.duration_ms").cast("long").alias("last_election_ms"),
        n("follower_disconnects"), n("transaction_timeouts"), n("learner_handler_errors"),
        n("peer_connection_errors"), n("session_expiries"), n("slow_fsyncs"), F.col("max_fsync_ms").cast("long"),
        F.col("first_event_ts").cast("timestamp"), F.col("last_event_ts").cast("timestamp"))
