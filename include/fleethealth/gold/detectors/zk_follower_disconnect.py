"""zk_follower_disconnect: a ZooKeeper follower lost the leader and re-joined the quorum.

Signals (silver.zk_events):
- on the follower: "Exception when following the leader" (`follower_exception`, with the cause, e.g.
  java.net.SocketException: Connection reset) and "Disconnected from leader (with address: ..). Was
  connected for Nms" (`follower_disconnected`, duration_ms = how long it had been connected) — these
  anchor the incident: entity zk-<myid> of the follower;
- on the leader, within `zk_follower_disconnect.link_window_ms` before the follower's first line: "Closing
  connection to peer due to transaction timeout" (`follower_transaction_timeout`: the follower did not
  ack within tickTime x syncLimit) — first_seen is then that leader time, the start of the disconnect;
- on the follower, within link_window_ms after: "FOLLOWING|OBSERVING - LEADER ELECTION TOOK - N [MS]"
  (`election_time`; 3.4 logs the bare number) — how long the follower stayed out of the quorum.
A leader's transaction timeout alone names the follower only by address (not in the inventory): no
finding without a follower line. One finding per follower-hour.
"""
from __future__ import annotations

from pyspark.sql import functions as F

from fleethealth.fleet import entities
from fleethealth.gold.detectors.base import finding

KIND = "zk_follower_disconnect"
LOOKBACK = True   # episodes straddling an hour end: see fleethealth.gold.detectors
MODES = ("zookeeper",)   # a KRaft cluster has no ZooKeeper sessions or servers
REPORT = {"chart": "chart-zk", "table": "zk_quorum",
          "columns": ["hour", "host", "zk_myid", "state", "elections", "follower_disconnects",
                      "transaction_timeouts"]}
HMS = "HH:mm:ss.SSS'Z'"


def detect(facts, thresholds):
    link_ms = thresholds[f"{KIND}.link_window_ms"]
    link = F.make_dt_interval(secs=F.lit(link_ms / 1000.0))
    ev = facts.zk_events.withColumn(
        "myid", F.coalesce(F.col("zk_myid"), F.regexp_extract("thread", r"myid=(\d+)", 1).try_cast("int")))
    # the cause: the record's second line (e.g. java.net.SocketException: Connection reset), whether the
    # parser kept the stack trace in the message or in detail
    cause = F.regexp_extract(F.concat_ws("\n", "message", "detail"), r"^[^\n]*\n\s*([^\n]+)", 1)
    follower = (ev.where(F.col("event_type").isin("follower_exception", "follower_disconnected"))
                .groupBy("cluster", "host", "myid", "hour")
                .agg(F.min("ts").alias("follower_ts"), F.max("ts").alias("follower_last_ts"),
                     F.min(F.when(F.col("event_type") == "follower_exception", F.col("ts"))).alias("exception_ts"),
                     F.first(F.when(F.col("event_type") == "follower_exception", F.nullif(cause, F.lit(""))),
                             ignorenulls=True).alias("cause"),
                     F.max(F.when(F.col("event_type") == "follower_disconnected", F.col("duration_ms")))
                     .alias("connected_ms")))
    leader = (ev.where(F.col("event_type") == "follower_transaction_timeout")
              .select("cluster", "hour", F.col("host").alias("leader_host"), F.col("myid").alias("leader_myid"),
                      F.col("ts").alias("leader_ts")))
    f = follower.alias("f")
    near_leader = ((F.col("f.cluster") == F.col("leader.cluster")) & (F.col("f.hour") == F.col("leader.hour"))
                   & (F.col("leader.leader_host") != F.col("f.host"))
                   & (F.col("leader.leader_ts") <= F.col("f.follower_ts"))
                   & (F.col("leader.leader_ts") >= F.col("f.follower_ts") - link))
    with_leader = (f.join(leader.alias("leader"), near_leader, "left")
                   .groupBy("f.cluster", "f.host", "f.myid", "f.hour", "f.follower_ts", "f.follower_last_ts",
                            "f.exception_ts", "f.cause", "f.connected_ms")
                   .agg(F.min("leader.leader_ts").alias("leader_ts"),
                        F.min_by("leader.leader_myid", "leader.leader_ts").alias("leader_myid")))
    elections = (ev.where((F.col("event_type") == "election_time") & F.col("state").isin("FOLLOWING", "OBSERVING"))
                 .select("cluster", "hour", F.col("host").alias("e_host"), F.col("ts").alias("election_ts"),
                         F.col("duration_ms").alias("election_ms"), F.col("state").alias("election_state")))
    w = with_leader.alias("w")
    after = ((F.col("w.cluster") == F.col("e.cluster")) & (F.col("w.hour") == F.col("e.hour"))
             & (F.col("e.e_host") == F.col("w.host"))
             & (F.col("e.election_ts") >= F.col("w.follower_ts"))
             & (F.col("e.election_ts") <= F.col("w.follower_ts") + link))
    df = (w.join(elections.alias("e"), after, "left")
          .groupBy("w.cluster", "w.host", "w.myid", "w.hour", "w.follower_ts", "w.follower_last_ts",
                   "w.exception_ts", "w.cause", "w.connected_ms", "w.leader_ts", "w.leader_myid")
          .agg(F.min_by(F.struct("election_ts", "election_ms", "election_state"), "e.election_ts").alias("el")))
    el = F.col("el")
    evidence = F.concat_ws("; ",
        F.when(F.col("leader_ts").isNotNull(), F.format_string(
            "leader %s at %s: 'Closing connection to peer due to transaction timeout' (no ack within tickTime x "
            "syncLimit; linked within link_window_ms %d)", entities.zookeeper_col(F.col("leader_myid")),
            F.date_format("leader_ts", HMS),
            F.lit(link_ms))),
        F.when(F.col("exception_ts").isNotNull(), F.format_string(
            "follower %s at %s: 'Exception when following the leader'%s", entities.zookeeper_col(F.col("myid")),
            F.date_format("exception_ts", HMS),
            F.when(F.col("cause").isNotNull(), F.concat(F.lit(" "), F.col("cause"))).otherwise(F.lit("")))),
        F.when(F.col("connected_ms").isNotNull(), F.format_string(
            "'Disconnected from leader', was connected for %dms", F.col("connected_ms"))),
        F.when(el["election_ms"].isNotNull(), F.format_string(
            "re-joined at %s: '%s - LEADER ELECTION TOOK - %d MS'", F.date_format(el["election_ts"], HMS),
            el["election_state"], el["election_ms"]))
        .otherwise(F.format_string("no re-election logged within link_window_ms %d", F.lit(link_ms))))
    first_seen = F.least("leader_ts", "follower_ts")
    last_seen = F.greatest("follower_last_ts", el["election_ts"])
    return finding(df, KIND, thresholds[f"{KIND}.severity"],
                   entity=entities.zookeeper_col(F.col("myid")),
                   first_seen=first_seen, last_seen=last_seen, evidence=evidence, hour=F.col("hour"))
