"""request_queue_saturation: a broker's request queue is full or its request threads have no idle time.

Signals (silver.jmx_samples of the hour; MBeans in fleethealth.mbeans):
- kafka.network:type=RequestChannel,name=RequestQueueSize at or above
  `request_queue_saturation.queue_full_ratio` x queued.max.requests: the broker's own value from its
  `KafkaConfig values:` block when that is in the hour's logs (it is logged at start-up), else
  `request_queue_saturation.queued_max_requests` (Kafka's default, 500);
- kafka.server:type=KafkaRequestHandlerPool,name=RequestHandlerAvgIdlePercent (one-minute rate, 0..1)
  below `request_queue_saturation.min_handler_idle`;
- kafka.network:type=SocketServer,name=NetworkProcessorAvgIdlePercent below
  `request_queue_saturation.min_network_idle`.
Any of them makes a sample saturated; first_seen is the first saturated sample, last_seen the last.
"""
from __future__ import annotations

from pyspark.sql import functions as F

from fleethealth import mbeans

KIND = "request_queue_saturation"
TS_FMT = "HH:mm:ss'Z'"
KEY = ["cluster", "broker_id"]


def queued_max_requests(events):
    """(cluster, broker_id, queued_max_requests) from the brokers' last KafkaConfig block of the hour."""
    value = F.regexp_extract(F.concat_ws("\n", "message", "detail"), r"\bqueued\.max\.requests = (\d+)", 1)
    return (events.where(F.col("event_type") == "kafka_config")
            .select(*KEY, "ts", F.when(value != "", value.cast("int")).alias("qmr"))
            .where(F.col("qmr").isNotNull())
            .groupBy(*KEY).agg(F.max_by("qmr", "ts").alias("queued_max_requests")))


def detect(facts, thresholds):
    from fleethealth.gold.detectors import finding

    ratio = thresholds[f"{KIND}.queue_full_ratio"]
    min_handler = thresholds[f"{KIND}.min_handler_idle"]
    min_network = thresholds[f"{KIND}.min_network_idle"]
    jmx = facts.jmx
    qmr = queued_max_requests(facts.kafka_events)
    limit = F.coalesce(F.col("queued_max_requests"), F.lit(thresholds[f"{KIND}.queued_max_requests"]))
    queue = (jmx.where(mbeans.REQUEST_QUEUE_SIZE.matches()).join(qmr, KEY, "left")
             .select(*KEY, "ts", F.col("value").alias("queue"), limit.alias("limit"),
                     F.col("queued_max_requests").isNotNull().alias("limit_from_config"),
                     (F.col("value") >= F.lit(ratio) * limit).alias("sat")))
    handler = (jmx.where(mbeans.REQUEST_HANDLER_IDLE.matches())
               .select(*KEY, "ts", F.col("value").alias("handler_idle"), (F.col("value") < min_handler).alias("sat")))
    network = (jmx.where(mbeans.NETWORK_PROCESSOR_IDLE.matches())
               .select(*KEY, "ts", F.col("value").alias("network_idle"), (F.col("value") < min_network).alias("sat")))
    cols = ["queue", "limit", "limit_from_config", "handler_idle", "network_idle"]
    samples = None
    for df in (queue, handler, network):
        df = df.select(*KEY, "ts", "sat", *[F.col(c) if c in df.columns else F.lit(None).alias(c) for c in cols])
        samples = df if samples is None else samples.unionByName(df)
    sat = samples.where(F.col("sat"))
    per = (sat.groupBy(*KEY)
           .agg(F.min("ts").alias("first_seen"), F.max("ts").alias("last_seen"),
                F.count_distinct("ts").alias("saturated_samples"),
                F.max("queue").alias("max_queue"), F.max("limit").alias("limit"),
                F.max("limit_from_config").alias("limit_from_config"),
                F.min("handler_idle").alias("min_handler_idle"), F.min("network_idle").alias("min_network_idle"))
           .join(samples.groupBy(*KEY).agg(F.count_distinct("ts").alias("samples")), KEY))
    src = F.when(F.col("limit_from_config"), F.lit("KafkaConfig")).otherwise(F.lit("default"))
    evidence = F.concat_ws(
        "; ",
        F.when(F.col("max_queue").isNotNull(),
               F.format_string("RequestQueueSize up to %.0f >= %.2f x queued.max.requests=%d (%s)", F.col("max_queue"),
                               F.lit(ratio), F.col("limit").cast("int"), src)),
        F.when(F.col("min_handler_idle").isNotNull(),
               F.format_string("RequestHandlerAvgIdlePercent down to %.3f < %.3f", F.col("min_handler_idle"),
                               F.lit(min_handler))),
        F.when(F.col("min_network_idle").isNotNull(),
               F.format_string("NetworkProcessorAvgIdlePercent down to %.3f < %.3f", F.col("min_network_idle"),
                               F.lit(min_network))),
        F.format_string("%d of %d samples saturated, %s - %s", F.col("saturated_samples"), F.col("samples"),
                        F.date_format("first_seen", TS_FMT), F.date_format("last_seen", TS_FMT)))
    return finding(per, KIND, thresholds[f"{KIND}.severity"],
                   entity=F.concat(F.lit("broker-"), F.col("broker_id")),
                   first_seen=F.col("first_seen"), last_seen=F.col("last_seen"),
                   evidence=evidence, hour=facts.hour_col)
