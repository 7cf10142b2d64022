"""no_active_controller: no node of a cluster was its active controller: no leader is elected, no broker
fenced or unfenced, no topic created while it lasts (issue 63).

Signal: JMX kafka.controller:type=KafkaController,name=ActiveControllerCount (ZooKeeper mode: every broker
registers it, 1 on the controller; KRaft: the controllers only, 1 on the active one). At each time some node
of the cluster was sampled, each node's latest sample of the last `no_active_controller.max_sample_age_s`
stands for it; their sum is the cluster's active controllers. A run of such times summing to 0 that lasts
`no_active_controller.min_duration_s` is one finding, entity `controller` (a failover that completes
between two samples is none). A KRaft cluster listed without its controllers has no such sample: it gets
none (fleethealth check warns that it lists no controller) rather than a guess from its brokers.
"""
from __future__ import annotations

from pyspark.sql import Window
from pyspark.sql import functions as F

from fleethealth.fleet import mbeans
from fleethealth.gold.detectors.base import finding

KIND = "no_active_controller"
ENTITY = "controller"
LOOKBACK = True   # the state at the hour's start is in the hour before's last samples
REPORT = {"chart": None, "table": "cluster_availability_hourly",
          "columns": ["hour", "broker_id", "max_active_controller", "active_controller_samples", "samples"]}


def detect(facts, thresholds):
    age = int(thresholds[f"{KIND}.max_sample_age_s"])
    least = int(thresholds[f"{KIND}.min_duration_s"])
    s = (facts.jmx.where(mbeans.ACTIVE_CONTROLLER_COUNT.matches() & F.col("broker_id").isNotNull())
         .select("cluster", "hour", "broker_id", "ts", "value"))
    # a node's sample stands until its next one, or `age` after it: the times some node was active, merged
    # into islands (one while a controller holds: a join of every sample time with every sample would grow
    # with the square of a fleet's samples)
    node = Window.partitionBy("cluster", "hour", "broker_id").orderBy("ts")
    until = F.least(F.coalesce(F.lead("ts").over(node), F.col("ts") + F.expr(f"INTERVAL {age} SECONDS")),
                    F.col("ts") + F.expr(f"INTERVAL {age} SECONDS"))
    active = s.withColumn("until", until).where(F.col("value") >= 1).select(
        "cluster", "hour", F.col("ts").alias("start"), F.col("until").alias("end"))
    ordered = Window.partitionBy("cluster", "hour").orderBy("start", "end")
    islands = (active.withColumn("reach", F.max("end").over(ordered.rowsBetween(Window.unboundedPreceding, -1)))
               .withColumn("island", F.sum((F.col("reach").isNull() | (F.col("start") > F.col("reach"))).cast("int"))
                           .over(ordered.rowsBetween(Window.unboundedPreceding, 0)))
               .groupBy("cluster", "hour", "island").agg(F.min("start").alias("start"), F.max("end").alias("end")))
    held = ((F.col("t.cluster") == F.col("i.cluster")) & (F.col("t.hour") == F.col("i.hour"))
            & (F.col("t.ts") >= F.col("i.start")) & (F.col("t.ts") < F.col("i.end")))
    at = (s.alias("t").join(islands.alias("i"), held, "left_anti")
          .groupBy("cluster", "hour", F.col("ts").alias("at")).agg(F.collect_set("broker_id").alias("nodes")))
    # runs of such times with no time some node was active between them
    times = s.select("cluster", "hour", F.col("ts").alias("at")).distinct().join(
        at.select("cluster", "hour", "at", F.lit(True).alias("none")), ["cluster", "hour", "at"], "left")
    order = Window.partitionBy("cluster", "hour").orderBy("at")
    runs = (times.withColumn("none", F.coalesce("none", F.lit(False)))
            .withColumn("run", F.sum((F.col("none") != F.coalesce(F.lag("none").over(order), F.lit(False)))
                                     .cast("int")).over(order))
            .where("none").join(at, ["cluster", "hour", "at"])
            .groupBy("cluster", "hour", "run").agg(
                F.min("at").alias("first_at"), F.max("at").alias("last_at"), F.count(F.lit(1)).alias("times"),
                F.array_sort(F.array_distinct(F.flatten(F.collect_list("nodes")))).alias("nodes")))
    runs = runs.where(F.col("last_at") >= F.col("first_at") + F.expr(f"INTERVAL {least} SECONDS"))
    evidence = F.format_string(
        "no node's ActiveControllerCount was 1 from %s to %s (%d sample time(s); nodes sampled: %s)",
        F.date_format("first_at", "HH:mm:ss'Z'"), F.date_format("last_at", "HH:mm:ss'Z'"), F.col("times"),
        F.array_join(F.transform("nodes", lambda n: n.cast("string")), ", "))
    return finding(runs, KIND, thresholds[f"{KIND}.severity"], entity=F.lit(ENTITY), first_seen=F.col("first_at"),
                   last_seen=F.col("last_at"), evidence=evidence, hour=F.col("hour"))
