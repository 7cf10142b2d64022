"""metadata_divergence: a broker stays behind the leader epoch the controller gave it for a partition.

Signals (silver.kafka_events of the hour):
- what the controller decided, per partition (its epoch timeline): `leader_and_isr_sent` (state-change
  log, TRACE before 2.6: the epoch and the broker it was sent to), `partition_state_change` with a new
  leader and epoch, 0.10 `leader_elected`. Each names a broker that must take that epoch: the target
  of the request, or the new leader. A become-follower request only counts for a broker whose own
  `leader_and_isr_received` lines are in the logs (followers log nothing else about an epoch).
- what each broker took: `leader_epoch_start` ("starts at Leader Epoch N") and
  `leader_and_isr_received`, by that broker.
A broker diverges when it has not taken an epoch the controller gave it (nor a later one) for longer
than `metadata_divergence.min_lag_ms`, while its log of the hour shows it alive. first_seen is when
the controller's epoch of the partition first passed the broker's last epoch (the start of the lag),
last_seen when it caught up or its last line of the hour. Peers' NotLeaderForPartition errors for the
partition from that broker are counted in the evidence.
A lag that began in the last `incidents.lookback_minutes` of the hour before is measured whole.
The lag windows are the fact table gold.metadata_divergence (fleethealth.gold.facts.metadata_divergence);
`detect` formats them.
"""
from __future__ import annotations

from pyspark.sql import functions as F

from fleethealth.fleet import entities
from fleethealth.gold.detectors.base import finding

KIND = "metadata_divergence"
LOOKBACK = True   # episodes straddling an hour end: see fleethealth.gold.detectors
REPORT = {"chart": "chart-isr", "table": "metadata_divergence",
          "columns": ["hour", "topic", "partition", "broker", "stuck_epoch", "epochs_not_taken", "lag_ms"]}
TS_FMT = "HH:mm:ss'Z'"
PART = ["cluster", "hour", "topic", "partition"]
KEY = PART + ["broker"]


def detect(facts, thresholds):
    min_lag_ms = thresholds[f"{KIND}.min_lag_ms"]
    df = facts.table("gold.metadata_divergence", thresholds)
    tp = F.concat_ws("-", "topic", "partition")
    lag_min = F.col("lag_ms") / 60_000
    evidence = F.concat_ws(
        "; ",
        F.format_string("broker %d stayed at LeaderEpoch %s of %s while the controller moved it to LeaderEpoch %d..%d",
                        F.col("broker"), F.coalesce(F.col("stuck_epoch").cast("string"), F.lit("(none in the hour)")),
                        tp, F.col("controller_min_epoch"), F.col("controller_max_epoch")),
        F.format_string("epochs given to broker %d and not taken within %d ms: %s", F.col("broker"), F.lit(min_lag_ms),
                        F.array_join(F.col("epochs_not_taken"), ", ")),
        F.format_string("behind for %.1f minutes (%s - %s%s)", lag_min, F.date_format("lag_start", TS_FMT),
                        F.date_format("lag_end", TS_FMT),
                        F.when(F.col("caught_up_ts").isNull(), F.lit(", not caught up in the hour"))
                        .otherwise(F.lit(", caught up"))),
        F.when(F.col("not_leader_errors") > 0,
               F.format_string("%d NotLeaderForPartition errors from peers fetching %s from broker %d",
                               F.col("not_leader_errors"), tp, F.col("broker"))))
    return finding(df, KIND, thresholds[f"{KIND}.severity"],
                   entity=entities.replica_col(F.col("topic"), F.col("partition"), F.col("broker")),
                   first_seen=F.col("lag_start"), last_seen=F.col("lag_end"),
                   evidence=evidence, hour=F.col("hour"))
