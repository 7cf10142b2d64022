"""broker_isolated: a broker that is up but that its peers cannot fetch from (post-mortem 1).

Required signal: peers' replica fetchers log "Connection to N was disconnected before the response
was read" (event_type fetch_disconnected, peer_broker N; one every replica.socket.timeout.ms per
fetcher) at least `broker_isolated.min_peer_disconnects` times in the hour.
Corroborated by at least one signal of broker N itself in the hour:
- N shrinks the ISR of partitions it leads to itself (isr_shrink with isr_after == [N]);
- N's JMX UnderReplicatedPartitions > 0 (the state those shrinks leave, while it lasts);
- N's OpenFileDescriptorCount grew by `broker_isolated.fd_growth_factor` or more within the hour
  (CLOSE_WAIT sockets of clients it no longer answers).
A broker that is down also gets peer disconnects, but it neither logs shrinks nor reports JMX, so it
is not called isolated. first_seen: the first peer disconnect of the hour; last_seen: the last.
"""
from __future__ import annotations

from pyspark.sql import functions as F

from fleethealth.fleet import mbeans
from fleethealth.gold.detectors.base import finding

KIND = "broker_isolated"
LOOKBACK = True   # episodes straddling an hour end: see fleethealth.gold.detectors
REPORT = {"chart": "chart-isr", "table": "isr_churn",
          "columns": ["hour", "topic", "partition", "broker", "shrinks", "isr_first", "isr_last",
                      "dropped_brokers"]}
TIME = "HH:mm:ss'Z'"


def detect(facts, thresholds):
    min_disc = thresholds[f"{KIND}.min_peer_disconnects"]
    growth = thresholds[f"{KIND}.fd_growth_factor"]
    ev = facts.kafka_events
    key = ["cluster", "broker_id", "hour"]
    disconnects = (ev.where((F.col("event_type") == "fetch_disconnected") & F.col("peer_broker").isNotNull()
                            & (F.col("peer_broker") != F.col("broker_id")))
                   .groupBy("cluster", F.col("peer_broker").alias("broker_id"), "hour")
                   .agg(F.count(F.lit(1)).alias("disconnects"),
                        F.array_sort(F.collect_set(F.col("broker_id"))).alias("peers"),
                        F.min("ts").alias("first_ts"), F.max("ts").alias("last_ts"))
                   .where(F.col("disconnects") >= min_disc))
    shrinks = (ev.where((F.col("event_type") == "isr_shrink")
                        & (F.col("isr_after") == F.array(F.col("broker_id").cast("int"))))
               .groupBy(*key).agg(F.count(F.lit(1)).alias("shrinks"), F.min("ts").alias("first_shrink_ts")))
    jmx = facts.jmx.where(F.col("broker_id").isNotNull())
    urp = (jmx.where(mbeans.UNDER_REPLICATED.matches()).groupBy(*key)
           .agg(F.max("value").try_cast("long").alias("urp")))
    fds = (jmx.where(mbeans.OPEN_FDS.matches()).groupBy(*key)
           .agg(F.min("value").try_cast("long").alias("fds_min"), F.max("value").try_cast("long").alias("fds_max")))
    df = disconnects.join(shrinks, key, "left").join(urp, key, "left").join(fds, key, "left")
    shrunk = F.coalesce(F.col("shrinks"), F.lit(0)) > 0
    under = F.coalesce(F.col("urp"), F.lit(0)) > 0
    grew = F.coalesce(F.col("fds_max") >= F.lit(growth) * F.col("fds_min"), F.lit(False))
    hits = df.where(shrunk | under | grew)
    evidence = F.concat_ws("; ",
        F.format_string("%d fetches of peer broker(s) %s failed with 'Connection to %d was disconnected before "
                        "the response was read' (>= %d in the hour)", F.col("disconnects"),
                        F.array_join("peers", ","), F.col("broker_id"), F.lit(min_disc)),
        F.when(shrunk, F.format_string("it shrank the ISR of %d partition(s) to {%d} from %s", F.col("shrinks"),
                                       F.col("broker_id"), F.date_format("first_shrink_ts", TIME))),
        F.when(under, F.format_string("JMX UnderReplicatedPartitions up to %d > 0", F.col("urp"))),
        F.when(grew, F.format_string("OpenFileDescriptorCount grew %d -> %d this hour (>= %.1fx)",
                                     F.col("fds_min"), F.col("fds_max"), F.lit(float(growth)))))
    return finding(hits, KIND, thresholds[f"{KIND}.severity"], entity=None, node=F.col("broker_id"),
                   first_seen=F.col("first_ts"), last_seen=F.col("last_ts"), evidence=evidence,
                   hour=F.col("hour"))
