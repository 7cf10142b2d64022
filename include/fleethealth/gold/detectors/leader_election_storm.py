"""leader_election_storm: many partitions change leader within minutes after a broker is lost.

Triggers (silver.kafka_events of the controller):
- `broker_failure_callback` "Broker failure callback for N" — the storm's broker is N;
- KRaft: `broker_fenced`, the active controller's "Fencing broker N because its session has timed out"
  (ReplicationControlManager.java's `handleBrokerFenced: changing N partition(s)`) — the storm's
  broker is N (broker_fenced is its own incident);
- KRaft without the controllers' logs (a cluster listed with its brokers only): new leaders taking over
  partitions from broker N with N out of their ISR ("Leader t-p ... ISR [3,1] ... Previous leader Some(N)",
  gold.facts.leader_elections.moved_off) — the storm's broker is N; not after N's controlled shutdown;
- without one in the preceding window, a partition going OnlinePartition -> OfflinePartition
  (`partition_state_change`) — the storm's broker is then the controller that logged it.
Leader changes counted in [trigger, trigger + `leader_election_storm.window_ms`), distinct partitions,
only those whose new leader is not the lost broker (a preferred-replica election giving leadership
back to it is recovery, not the storm; pm5's periodic ones move a partition or two):
- `partition_state_change` Online -> Offline, Offline -> Online (state-change.log; from 2.6 these are
  TRACE-only and usually absent, so the next signals matter),
- `leader_epoch_start` role leader ("t-p starts at Leader Epoch N", on the new leader),
- `leader_elected` (0.10 leader selectors) and `leader_and_isr_sent` become-leader (controller);
- KRaft: the new leaders' "Leader t-p with topic id X starts at leader epoch N" (state-change.log) and the
  controller's `unclean_partition_change` (clean elections are DEBUG on a KRaft controller).
A storm when the distinct partitions reach `leader_election_storm.min_partitions`; evidence counts the
`__consumer_offsets` partitions among them (coordinator moves: their consumer groups rebalance).
One finding per (cluster, broker, hour); first_seen is the first trigger of a storm window. Without a lost
broker the entity is the controller that logged the trigger (a KRaft controller named as its process). A window
crossing the hour end counts the changes on both sides (the hour reads the end of the one before). The windows, storms or not, are the
fact table gold.leader_elections (fleethealth.gold.facts.leader_elections); `detect` keeps its storm rows.
"""
from __future__ import annotations

from pyspark.sql import functions as F

from fleethealth.gold.detectors.base import finding

KIND = "leader_election_storm"
LOOKBACK = True   # episodes straddling an hour end: see fleethealth.gold.detectors
REPORT = {"chart": "chart-leaders", "table": "leader_elections",
          "columns": ["hour", "trigger_ts", "trigger", "controller", "lost_broker", "partitions",
                      "offsets_partitions", "storm"]}
HMS = "HH:mm:ss.SSS'Z'"
ONLINE, OFFLINE = "OnlinePartition", "OfflinePartition"


def detect(facts, thresholds):
    window_ms = thresholds[f"{KIND}.window_ms"]
    min_partitions = thresholds[f"{KIND}.min_partitions"]
    windows = (facts.table("gold.leader_elections", thresholds).where(F.col("storm"))
               .withColumn("storm_broker", F.coalesce("lost_broker", "controller")))
    per_broker = windows.groupBy("cluster", "hour", "storm_broker").agg(
        F.min("trigger_ts").alias("first_seen"), F.max("last_change_ts").alias("last_seen"),
        F.max_by(F.struct("trigger_ts", "trigger", "controller", "lost_broker", "partitions",
                          "offsets_partitions", "signals", "offline", "epochs"),
                 # the biggest window; of equal ones the first
                 F.struct("partitions", (-F.unix_micros("trigger_ts")).alias("earlier"))).alias("w"),
        F.count(F.lit(1)).alias("windows"))
    w = F.col("w")
    evidence = F.concat_ws("; ",
        F.when(w["controller"].isNull(), F.format_string(
            "broker %d: %s at %s (its fence is logged by the active controller only)", w["lost_broker"], w["trigger"],
            F.date_format(w["trigger_ts"], HMS)))
        .otherwise(F.format_string("controller %d: %s%s at %s", w["controller"], w["trigger"],
                                   F.when(w["lost_broker"].isNotNull(), F.format_string(" for %d", w["lost_broker"]))
                                   .otherwise(F.lit("")), F.date_format(w["trigger_ts"], HMS))),
        F.format_string("%d partitions changed leader within %d ms (>= min_partitions %d)%s, %d of them "
                        "__consumer_offsets (coordinator moves: their groups rebalance)",
                        w["partitions"], F.lit(window_ms), F.lit(min_partitions),
                        F.when(w["lost_broker"].isNotNull(), F.format_string(" away from broker %d", w["lost_broker"]))
                        .otherwise(F.lit("")), w["offsets_partitions"]),
        F.format_string("signals: %s (%d Online->Offline, %d 'starts at Leader Epoch')",
                        F.array_join(w["signals"], ", "), w["offline"], w["epochs"]))
    return finding(per_broker, KIND, thresholds[f"{KIND}.severity"], entity=None, node=F.col("storm_broker"),
                   first_seen=F.col("first_seen"), last_seen=F.col("last_seen"),
                   evidence=evidence, hour=F.col("hour"))
