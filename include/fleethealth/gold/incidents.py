"""gold.incidents from gold.incident_findings: findings of one (cluster, kind, entity) in consecutive
hours are one incident (first_seen of the first, last_seen of the last), not one per hour. It keeps
the evidence that first fired it (`first_evidence`) and what fires it in its last hour (`evidence`).

Rebuilt whole from the findings after every hour, so re-running any hour gives the same incidents.
"""
from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

SEVERITY_RANK = {"critical": 4, "major": 3, "minor": 2, "info": 1}


def merge(findings: DataFrame) -> DataFrame:
    key = ["cluster", "kind", "entity"]
    w = Window.partitionBy(*key).orderBy("hour")
    gap = F.when(F.lag("hour").over(w) == F.col("hour") - F.expr("INTERVAL 1 HOUR"), 0).otherwise(1)
    rank = F.create_map(*[x for k, v in SEVERITY_RANK.items() for x in (F.lit(k), F.lit(v))])
    runs = (findings.withColumn("new_run", gap)
            .withColumn("run", F.sum("new_run").over(w.rowsBetween(Window.unboundedPreceding, 0)))
            .withColumn("rank", rank[F.col("severity")]))
    merged = runs.groupBy(*key, "run").agg(
        F.min("first_seen").alias("first_seen"), F.max("last_seen").alias("last_seen"),
        F.max_by("severity", "rank").alias("severity"),
        F.max_by("evidence", "hour").alias("evidence"),
        F.min_by("evidence", "hour").alias("first_evidence"),
        F.first("known_bug", ignorenulls=True).alias("known_bug"),
        F.min("hour").alias("first_hour"), F.max("hour").alias("last_hour"),
        F.count(F.lit(1)).cast("int").alias("hours"))
    return merged.select(
        F.sha2(F.concat_ws("|", "cluster", "kind", "entity", F.col("first_hour").cast("string")), 256)
        .substr(1, 16).alias("incident_id"),
        "cluster", "kind", "severity", "entity", "first_seen", "last_seen", "evidence", "known_bug",
        "first_hour", "last_hour", "hours", "first_evidence")
