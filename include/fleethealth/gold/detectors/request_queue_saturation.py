"""request_queue_saturation: a broker's request queue is full or its request threads have no idle time.

Signals (silver.jmx_samples of the hour; MBeans in fleethealth.fleet.mbeans):
- kafka.network:type=RequestChannel,name=RequestQueueSize at or above
  `request_queue_saturation.queue_full_ratio` x queued.max.requests: the broker's own value from its
  `KafkaConfig values:` block when that is in the hour's logs (it is logged at start-up), else
  `request_queue_saturation.queued_max_requests` (Kafka's default, 500);
- kafka.server:type=KafkaRequestHandlerPool,name=RequestHandlerAvgIdlePercent (one-minute rate, 0..1)
  below `request_queue_saturation.min_handler_idle`;
- kafka.network:type=SocketServer,name=NetworkProcessorAvgIdlePercent below
  `request_queue_saturation.min_network_idle`.
Any of them makes a sample saturated; first_seen is the first saturated sample, last_seen the last.
The per broker-hour samples are the fact table gold.request_saturation (fleethealth.gold.facts.request_saturation); detect()
keeps its brokers with a saturated sample and formats them.
"""
from __future__ import annotations

from pyspark.sql import functions as F

from fleethealth.gold.detectors.base import finding

KIND = "request_queue_saturation"
REPORT = {"chart": "chart-requests", "table": "request_saturation",
          "columns": ["hour", "broker_id", "saturated_samples", "samples", "max_queue", "queue_limit",
                      "min_handler_idle", "min_network_idle"]}
TS_FMT = "HH:mm:ss'Z'"
KEY = ["cluster", "broker_id", "hour"]


def detect(facts, thresholds):
    ratio = thresholds[f"{KIND}.queue_full_ratio"]
    min_handler = thresholds[f"{KIND}.min_handler_idle"]
    min_network = thresholds[f"{KIND}.min_network_idle"]
    per = facts.table("gold.request_saturation", thresholds).where(F.col("saturated_samples") > 0)
    # the extreme of an MBean over all samples is saturated exactly when one of its samples is, and is
    # then the extreme over the saturated samples
    src = F.when(F.col("limit_from_config"), F.lit("KafkaConfig")).otherwise(F.lit("default"))
    evidence = F.concat_ws(
        "; ",
        F.when(F.col("max_queue") >= F.lit(ratio) * F.col("queue_limit"),
               F.format_string("RequestQueueSize up to %.0f >= %.2f x queued.max.requests=%d (%s)", F.col("max_queue"),
                               F.lit(ratio), F.col("queue_limit"), src)),
        F.when(F.col("min_handler_idle") < min_handler,
               F.format_string("RequestHandlerAvgIdlePercent down to %.3f < %.3f", F.col("min_handler_idle"),
                               F.lit(min_handler))),
        F.when(F.col("min_network_idle") < min_network,
               F.format_string("NetworkProcessorAvgIdlePercent down to %.3f < %.3f", F.col("min_network_idle"),
                               F.lit(min_network))),
        F.format_string("%d of %d samples saturated, %s - %s", F.col("saturated_samples"), F.col("samples"),
                        F.date_format("first_saturated_ts", TS_FMT), F.date_format("last_saturated_ts", TS_FMT)))
    return finding(per, KIND, thresholds[f"{KIND}.severity"], entity=None, node=F.col("broker_id"),
                   first_seen=F.col("first_saturated_ts"), last_seen=F.col("last_saturated_ts"),
                   evidence=evidence, hour=F.col("hour"))
