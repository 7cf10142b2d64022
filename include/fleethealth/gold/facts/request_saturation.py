"""gold.request_saturation: per broker-hour, its request queue and request threads' idle time against their limits.

Signals and limits: fleethealth.gold.detectors.request_queue_saturation, the detector that reads it.
"""
from __future__ import annotations

from pyspark.sql import functions as F

from fleethealth.fleet import mbeans

THRESHOLDS = "request_queue_saturation"  # the detector whose thresholds this fact applies
KEY = ["cluster", "broker_id", "hour"]


def queued_max_requests(events):
    """(cluster, broker_id, hour, queued_max_requests) from the brokers' last KafkaConfig block of the hour."""
    value = F.regexp_extract(F.concat_ws("\n", "message", "detail"), r"\bqueued\.max\.requests = (\d+)", 1)
    return (events.where(F.col("event_type") == "kafka_config")
            .select(*KEY, "ts", F.when(value != "", value.cast("int")).alias("qmr"))
            .where(F.col("qmr").isNotNull())
            .groupBy(*KEY).agg(F.max_by("qmr", "ts").alias("queued_max_requests")))


def saturation(facts, thresholds):
    """gold.request_saturation: one row per (cluster, broker_id, hour) of a broker with any sample of
    RequestQueueSize, RequestHandlerAvgIdlePercent (OneMinuteRate) or NetworkProcessorAvgIdlePercent.

    Columns: cluster, broker_id, hour, samples (distinct sample times of the three MBeans),
    saturated_samples (sample times at which any of them is saturated, see the module doc), max_queue
    (largest RequestQueueSize), queue_limit (queued.max.requests: the broker's last KafkaConfig block of
    the hour, else `request_queue_saturation.queued_max_requests`), limit_from_config (true when from
    KafkaConfig), min_handler_idle, min_network_idle (smallest idle share, 0..1), first_saturated_ts /
    last_saturated_ts (NULL when no sample is saturated). max_queue / min_*_idle are NULL when that MBean
    has no sample. Samples without a broker_id (a host missing from the inventory) are left out.

    Limits: gauges sampled at scrape times only (a burst between two scrapes is missed; the handler
    idle is a one-minute rate); KafkaConfig is logged at start-up, so the broker's own
    queued.max.requests is known only in an hour it restarted; saturated_samples depends on the
    thresholds the table was built with.
    """
    ratio = thresholds[f"{THRESHOLDS}.queue_full_ratio"]
    min_handler = thresholds[f"{THRESHOLDS}.min_handler_idle"]
    min_network = thresholds[f"{THRESHOLDS}.min_network_idle"]
    jmx = facts.jmx
    qmr = queued_max_requests(facts.kafka_events)
    limit = F.coalesce(F.col("queued_max_requests"), F.lit(thresholds[f"{THRESHOLDS}.queued_max_requests"]))
    queue = (jmx.where(mbeans.REQUEST_QUEUE_SIZE.matches()).join(qmr, KEY, "left")
             .select(*KEY, "ts", F.col("value").alias("queue"), (F.col("value") >= F.lit(ratio) * limit).alias("sat")))
    handler = (jmx.where(mbeans.REQUEST_HANDLER_IDLE.matches())
               .select(*KEY, "ts", F.col("value").alias("handler_idle"), (F.col("value") < min_handler).alias("sat")))
    network = (jmx.where(mbeans.NETWORK_PROCESSOR_IDLE.matches())
               .select(*KEY, "ts", F.col("value").alias("network_idle"), (F.col("value") < min_network).alias("sat")))
    cols = ["queue", "handler_idle", "network_idle"]
    samples = None
    for df in (queue, handler, network):
        df = df.select(*KEY, "ts", "sat", *[F.col(c) if c in df.columns else F.lit(None).alias(c) for c in cols])
        samples = df if samples is None else samples.unionByName(df)
    sat_ts = F.when(F.col("sat"), F.col("ts"))
    per = (samples.where(F.col("cluster").isNotNull() & F.col("broker_id").isNotNull()).groupBy(*KEY)
           .agg(F.count_distinct("ts").alias("samples"), F.count_distinct(sat_ts).alias("saturated_samples"),
                F.max("queue").alias("max_queue"), F.min("handler_idle").alias("min_handler_idle"),
                F.min("network_idle").alias("min_network_idle"),
                F.min(sat_ts).alias("first_saturated_ts"), F.max(sat_ts).alias("last_saturated_ts"))
           .join(qmr, KEY, "left"))
    return per.select(
        F.col("cluster").cast("string"), F.col("broker_id").cast("int"), "hour",
        F.col("samples").cast("int"), F.col("saturated_samples").cast("int"), F.col("max_queue").cast("double"),
        limit.cast("int").alias("queue_limit"), F.col("queued_max_requests").isNotNull().alias("limit_from_config"),
        F.col("min_handler_idle").cast("double"), F.col("min_network_idle").cast("double"),
        F.col("first_saturated_ts").cast("timestamp"), F.col("last_saturated_ts").cast("timestamp"))
