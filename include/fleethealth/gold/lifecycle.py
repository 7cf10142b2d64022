"""gold.incidents and gold.incident_history carried forward by a window of hours, at the cost of those
hours and not of the history (issue 45).

Published: the lifecycle of every hour processed so far. A window's hours (new, re-run or backfilled)
change it only for the keys they touch: a key with findings in them (found now or published before),
and a key whose incident is open or was resolved from the window's first hour on (its host's data in
those hours may count). Each such key is recomputed from a cut:
- carried on: its incident was open and was last written before the window (`updated_hour`), so no
  hour after it is published: the incident continues from its row (gold.incidents' STATE columns) with
  the window's hours alone;
- replayed: otherwise, from the first hour of its incident live at the window (an incident's first hour
  is where the lifecycle starts afresh: its predecessor was resolved before it), or from the window's
  first hour if none is, through every later published hour.
The new rows replace the key's incidents starting at or after the cut (and a carried-on incident, by its
id) and its history from the cut on: equal, row for row, to a rebuild from all findings and host-hours.
A replay reads the published findings and host-hours from the earliest cut on, so a re-run or a
backfill costs the hours back to the start of the oldest incident it touches; an hourly run reads
none of them.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from fleethealth.gold import incidents as gold_incidents
from fleethealth.gold.incidents import KEY
from fleethealth.lake import tables as lake
from fleethealth.lake.catalog import Lakehouse
from fleethealth.runtime.frames import local_frame, materialize, materialize_all

FINDINGS, HEALTH = "gold.incident_findings", "gold.broker_health_hourly"
INCIDENTS, HISTORY = "gold.incidents", "gold.incident_history"
INCIDENTS_SCHEMA = ("incident_id string, cluster string, kind string, severity string, entity string, "
                    "status string, first_seen timestamp, last_seen timestamp, resolved_at timestamp, "
                    "evidence string, known_bug string, first_hour timestamp, last_hour timestamp, hours int, "
                    "first_evidence string, clean_hours int, clean_since timestamp, resolved_hour timestamp, "
                    "updated_hour timestamp")
HISTORY_SCHEMA = ("incident_id string, cluster string, kind string, entity string, transition string, "
                  "severity string, hour timestamp, at timestamp, evidence string")
HISTORY_KEY = ("incident_id", "transition", "severity")


@dataclass
class Change:
    """What a window's hours do to the published lifecycle: rows to upsert and published keys to delete
    (lake.Merge each), the upserted rows being what the gate validates."""
    incidents: lake.Merge
    history: lake.Merge


def update(spark: SparkSession, computed: dict, hours: list[datetime], lakehouse: Lakehouse,
           hosts: DataFrame, resolve_after_hours: int) -> Change:
    """The lifecycle change of publishing `hours` of `computed` (gold.incident_findings and
    gold.broker_health_hourly of at least those hours) over what is published."""
    w0 = min(hours)
    window = F.expr(lake.hour_predicate(hours))
    incidents = _published(spark, INCIDENTS, INCIDENTS_SCHEMA, lakehouse)
    history = _published(spark, HISTORY, HISTORY_SCHEMA, lakehouse)
    has = {name: lake.exists(spark, name, lakehouse) for name in (FINDINGS, HEALTH)}
    found = computed[FINDINGS].where(window)
    touched = found.select(*KEY)
    if has[FINDINGS]:       # a finding published for these hours and not found again ends its incident too
        touched = touched.unionByName(lake.read(spark, FINDINGS, lakehouse, hours).select(*KEY))
    live = (F.col("status") == "open") | F.coalesce(F.col("resolved_hour") >= F.lit(w0), F.lit(True))
    touched = touched.unionByName(incidents.where(live).select(*KEY)).distinct()
    # each touched key's latest incident that started before the window, and so its cut
    latest = (incidents.where(F.col("first_hour") < F.lit(w0))
              .groupBy(*KEY).agg(F.max_by(F.struct(*incidents.columns), "first_hour").alias("i"))
              .select("i.*"))
    seeded = (F.col("status") == "open") & F.coalesce(F.col("updated_hour") < F.lit(w0), F.lit(False))
    replayed = F.col("first_hour").isNotNull() & live
    plan = materialize(touched.join(latest, KEY, "left").select(
        "*", F.coalesce(seeded, F.lit(False)).alias("seeded"),
        F.when(seeded, F.lit(w0)).when(replayed, F.col("first_hour")).otherwise(F.lit(w0)).alias("cut")))
    seeds = plan.where("seeded").select(*incidents.columns)
    cuts = plan.select(*KEY, "seeded", "cut")
    since = plan.agg(F.min("cut")).first()[0] or w0
    after = F.col("hour") >= F.lit(since)
    findings = found
    if has[FINDINGS]:
        findings = lake.read(spark, FINDINGS, lakehouse).where(after & ~window).unionByName(findings)
    findings = findings.join(cuts, KEY).where(F.col("hour") >= F.col("cut")).drop("seeded", "cut")
    health = computed[HEALTH].where(window)
    if has[HEALTH]:
        health = lake.read(spark, HEALTH, lakehouse).where(after & ~window).unionByName(
            health, allowMissingColumns=True)
    health = materialize(health.select("cluster", "host", "role", "broker_id", "zk_myid", "hour", "sources_arrived"))
    # the last hour the new rows reflect: the window's, or a later published one a replay read
    newest = max(_naive(health.agg(F.max("hour")).first()[0] or max(hours)), _naive(max(hours)))
    new, changes = gold_incidents.lifecycle(findings, health, resolve_after_hours, hosts, seeds, w0)
    new = new.withColumn("updated_hour", F.lit(newest).cast("timestamp"))
    new, changes = materialize_all({"incidents": new, "history": changes}).values()
    # the published rows the new ones replace and do not upsert
    gone = (incidents.join(cuts, KEY).where(F.col("first_hour") >= F.col("cut"))
            .select("incident_id").join(new.select("incident_id"), "incident_id", "left_anti"))
    dropped = (history.join(cuts, KEY).where(F.col("hour") >= F.col("cut"))
               .select(*HISTORY_KEY).join(changes.select(*HISTORY_KEY), list(HISTORY_KEY), "left_anti"))
    gone, dropped = materialize_all({"incidents": gone, "history": dropped}).values()
    return Change(lake.Merge(new, gone, ("incident_id",)), lake.Merge(changes, dropped, HISTORY_KEY))


def _published(spark: SparkSession, name: str, schema: str, lakehouse: Lakehouse) -> DataFrame:
    """The published table with every column of `schema` (a table an earlier version wrote lacks the
    state columns: null, which replays its incidents once), or no rows before the first run."""
    if not lake.exists(spark, name, lakehouse):
        return local_frame(spark, [], schema)
    df = lake.read(spark, name, lakehouse)
    empty = local_frame(spark, [], schema)
    return df.select(*[F.col(f.name) if f.name in df.columns else F.lit(None).cast(f.dataType).alias(f.name)
                       for f in empty.schema.fields])


def _naive(hour: datetime) -> datetime:
    """An hour as Spark gives it back (naive, in the session's time zone, UTC)."""
    return hour.astimezone(timezone.utc).replace(tzinfo=None) if hour.tzinfo else hour
