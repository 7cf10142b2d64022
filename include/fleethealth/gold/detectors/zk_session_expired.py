"""zk_session_expired: a broker's ZooKeeper session expired (its /brokers/ids/N went away).

Signals, per broker-hour:
- broker log (silver.kafka_events): `zk_session_expired` — the ZooKeeper client's "Unable to reconnect
  to ZooKeeper service, session 0x.. has expired" (with the session id), Kafka's "[ZooKeeperClient]
  Session expired." (1.1+) or ZkClient's "zookeeper state changed (Expired)" (0.10); corroborated by
  `zk_session_timeout` ("Client session timed out, have not heard from server in Nms") and the
  re-registration (`zk_reregistering` 0.10, `broker_registered`).
- the ZooKeeper server (silver.zk_events): "Expiring session 0x.., timeout of Nms exceeded" for a session
  id the broker named — when it arrived, first_seen is that server time (the expiry itself; the broker
  only notices when it reconnects).
- JMX `kafka.server:type=SessionExpireListener,name=ZooKeeperExpiresPerSec` Count increasing between
  two samples of the hour (a restart resets it: decreases are ignored). Alone it dates the expiry to the
  sample before the increase.

Expiries = distinct expired session ids in the broker log (expiry lines without a session id count one
each when no line names a session), or the JMX Count increase if larger; an incident when they reach
`zk_session_expired.min_expiries`. One finding per broker-hour however many sessions it lost
(repeated loss is broker_flapping's business). The per broker-hour signals are the fact table
gold.zk_sessions (fleethealth.gold.facts.zk_sessions); detect() filters and formats it.
"""
from __future__ import annotations

from pyspark.sql import functions as F

from fleethealth.fleet import entities
from fleethealth.gold.detectors.base import finding

KIND = "zk_session_expired"
LOOKBACK = True   # episodes straddling an hour end: see fleethealth.gold.detectors
MODES = ("zookeeper",)   # a KRaft cluster has no ZooKeeper sessions or servers
REPORT = {"chart": "chart-zk", "table": "zk_sessions",
          "columns": ["hour", "broker_id", "expiries", "sessions", "log_expired_ts", "server_expired_ts",
                      "jmx_expiries"]}
HMS = "HH:mm:ss.SSS'Z'"


def detect(facts, thresholds):
    min_expiries = thresholds[f"{KIND}.min_expiries"]
    df = facts.table("gold.zk_sessions", thresholds).where(F.col("expiries") >= min_expiries)
    log_first = F.least("server_expired_ts", "log_expired_ts")
    first_seen = F.coalesce(log_first, F.col("jmx_after_ts"), F.col("jmx_seen_ts"))
    last_seen = F.greatest("log_expired_last_ts", "jmx_last_ts")
    # the client timeouts and re-registrations corroborate the broker log's expiry lines only
    logged = F.col("expiry_lines") > 0
    evidence = F.concat_ws("; ",
        F.format_string("broker %d: %d ZooKeeper session expiry(ies) in the hour >= min_expiries %d",
                        F.col("broker_id"), F.col("expiries"), F.lit(min_expiries)),
        F.when(F.col("server_expired_ts").isNotNull(), F.format_string(
            "ZooKeeper 'Expiring session ..., timeout of %dms exceeded' at %s",
            F.col("server_timeout_ms"), F.date_format("server_expired_ts", HMS))),
        F.when(logged, F.format_string(
            "broker log: %d session-expired line(s) from %s, session(s) %s", F.col("expiry_lines"),
            F.date_format("log_expired_ts", HMS), F.array_join("sessions", ","))),
        F.when(logged & (F.col("client_timeouts") > 0), F.format_string(
            "client timed out %d time(s) (not heard from server in up to %dms)", F.col("client_timeouts"),
            F.col("not_heard_ms"))),
        F.when(logged & (F.col("registrations") > 0), F.format_string(
            "re-registered /brokers/ids/%d %d time(s)", F.col("broker_id"), F.col("registrations"))),
        F.when(F.col("jmx_expiries") > 0, F.format_string(
            "JMX SessionExpireListener ZooKeeperExpiresPerSec Count +%d (first seen at %s)",
            F.col("jmx_expiries"), F.date_format("jmx_seen_ts", HMS))))
    return finding(df, KIND, thresholds[f"{KIND}.severity"],
                   entity=entities.broker_col(F.col("broker_id")),
                   first_seen=first_seen, last_seen=F.coalesce(last_seen, first_seen),
                   evidence=evidence, hour=F.col("hour"))
