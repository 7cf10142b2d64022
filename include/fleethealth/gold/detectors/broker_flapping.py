"""broker_flapping: one broker loses its ZooKeeper session (or drops out of /brokers/ids) again and again.

Signals (silver.kafka_events of the hour), each naming the broker that lost its registration:
- the broker's own log: `zk_session_expired` ("session 0x.. has expired", "[ZooKeeperClient] Session
  expired", 0.10 "zookeeper state changed (Expired)") and `zk_reregistering` (0.10);
- the controller's `brokers_changed` with the broker in `deleted_brokers` (any version, and the only
  one left when the broker's own log did not arrive).
Signals of one broker closer than `broker_flapping.episode_gap_s` are one loss (an expiry gives three
client lines and a controller line within ~2 s). A broker with at least `broker_flapping.min_losses`
losses within `broker_flapping.window_minutes` flaps; first_seen is the first loss of the first such
window. Re-registrations (`broker_registered`, controller `added_brokers`) are counted in the
evidence. A single loss (post-mortem 4) is `zk_session_expired`, not flapping.
The window reaches back into the hour before (`incidents.lookback_minutes`): losses on either side of
an hour end are one episode.
"""
from __future__ import annotations

from pyspark.sql import Window
from pyspark.sql import functions as F

from fleethealth.fleet import entities
from fleethealth.gold.detectors.base import finding

KIND = "broker_flapping"
LOOKBACK = True   # episodes straddling an hour end: see fleethealth.gold.detectors
MODES = ("zookeeper",)   # a KRaft cluster has no ZooKeeper sessions or servers
REPORT = {"chart": "chart-zk", "table": "zk_sessions",
          "columns": ["hour", "broker_id", "expiries", "registrations", "log_expired_ts"]}
TS_FMT = "HH:mm:ss'Z'"


def loss_signals(events):
    """(cluster, broker_id, hour, ts, signal) of every sign that a broker lost its ZooKeeper registration."""
    own = (events.where(F.col("event_type").isin("zk_session_expired", "zk_reregistering"))
           .select("cluster", F.coalesce("broker", "broker_id").alias("broker_id"), "hour", "ts",
                   F.col("event_type").alias("signal")))
    seen_by_controller = (events.where((F.col("event_type") == "brokers_changed") & (F.size("deleted_brokers") > 0))
                          .select("cluster", F.explode("deleted_brokers").alias("broker_id"), "hour", "ts",
                                  F.lit("controller: deleted broker").alias("signal")))
    return own.unionByName(seen_by_controller).where(F.col("broker_id").isNotNull())


def registrations(events):
    """(cluster, broker_id, hour, registrations): re-registrations of /brokers/ids/N, as the broker logged
    them or as the controller saw them (whichever log shows more: one of them may be missing)."""
    own = (events.where(F.col("event_type") == "broker_registered")
           .select("cluster", F.coalesce("broker", "broker_id").alias("broker_id"), "hour", F.lit(1).alias("own"),
                   F.lit(0).alias("seen")))
    seen_by_controller = (events.where((F.col("event_type") == "brokers_changed") & (F.size("added_brokers") > 0))
                          .select("cluster", F.explode("added_brokers").alias("broker_id"), "hour",
                                  F.lit(0).alias("own"), F.lit(1).alias("seen")))
    return (own.unionByName(seen_by_controller).groupBy("cluster", "broker_id", "hour")
            .agg(F.greatest(F.sum("own"), F.sum("seen")).alias("registrations")))


def losses(events, gap_s: int):
    """One row per loss episode: (cluster, broker_id, hour, episode, loss_ts, loss_end_ts, signals)."""
    sig = loss_signals(events)
    w = Window.partitionBy("cluster", "broker_id", "hour").orderBy("ts")
    gap = F.unix_millis("ts") - F.unix_millis(F.lag("ts").over(w))
    sig = (sig.withColumn("new", F.when(gap.isNull() | (gap > gap_s * 1000), 1).otherwise(0))
           .withColumn("episode", F.sum("new").over(w.rowsBetween(Window.unboundedPreceding, 0))))
    return (sig.groupBy("cluster", "broker_id", "hour", "episode")
            .agg(F.min("ts").alias("loss_ts"), F.max("ts").alias("loss_end_ts"),
                 F.array_sort(F.collect_set("signal")).alias("signals")))


def detect(facts, thresholds):
    n = thresholds[f"{KIND}.min_losses"]
    window_ms = thresholds[f"{KIND}.window_minutes"] * 60_000
    eps = losses(facts.kafka_events, thresholds[f"{KIND}.episode_gap_s"]).alias("a")
    later = eps.alias("b")
    # every loss that opens a window of >= n losses
    key = ["cluster", "broker_id", "hour"]
    opens = (eps.join(later, [F.col(f"a.{k}") == F.col(f"b.{k}") for k in key]
                      + [F.col("b.loss_ts") >= F.col("a.loss_ts"),
                         F.unix_millis("b.loss_ts") - F.unix_millis("a.loss_ts") <= window_ms])
             .groupBy("a.cluster", "a.broker_id", "a.hour", "a.loss_ts")
             .agg(F.count(F.lit(1)).alias("in_window"))
             .where(F.col("in_window") >= n))
    first = opens.groupBy(*key).agg(F.min("loss_ts").alias("first_seen"))
    per_broker = (eps.join(first, key)
                  .where(F.col("loss_ts") >= F.col("first_seen"))
                  .groupBy(*key, "first_seen")
                  .agg(F.count(F.lit(1)).alias("losses"), F.max("loss_end_ts").alias("last_seen"),
                       F.array_join(F.array_sort(F.collect_list(F.date_format("loss_ts", TS_FMT))), ", ")
                       .alias("loss_times"),
                       F.array_join(F.array_sort(F.array_distinct(F.flatten(F.collect_list("signals")))), ", ")
                       .alias("signals"))
                  .join(registrations(facts.kafka_events), key, "left"))
    span_min = (F.unix_millis("last_seen") - F.unix_millis("first_seen")) / 60_000
    evidence = F.format_string(
        "%d ZooKeeper session losses of broker %d in %.0f minutes (%s; >= %d within %d minutes); "
        "%d re-registrations of /brokers/ids/%d; signals: %s",
        F.col("losses"), F.col("broker_id"), span_min, F.col("loss_times"), F.lit(n),
        F.lit(window_ms // 60_000), F.coalesce("registrations", F.lit(0)), F.col("broker_id"), F.col("signals"))
    return finding(per_broker, KIND, thresholds[f"{KIND}.severity"],
                   entity=entities.broker_col(F.col("broker_id")),
                   first_seen=F.col("first_seen"), last_seen=F.col("last_seen"),
                   evidence=evidence, hour=F.col("hour"))
