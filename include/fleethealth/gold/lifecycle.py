"""gold.incidents, gold.incident_history and gold.incident_state carried forward by a window of hours,
at the cost of those hours (and of the published hours after them) and not of the history (issue 45).

Published: the lifecycle of every hour processed so far, and each incident's state after each hour
that changed it. A window's hours (new, re-run or backfilled) change it only for the keys they touch:
a key with findings in them (found now or published before), and a key whose incident is open or was
resolved from the window's first hour on (its host's data in those hours may count). Each such key
continues from its state just before the window, through the window and every later published hour:
- an hourly run: its incident is open and was last written before the window (`updated_hour`), so its
  row (gold.incidents' STATE columns) is that state, and no published hour is read;
- a re-run or a backfill: its state at the last hour before the window that changed it
  (gold.incident_state); an incident with none stored (written by an earlier version) is replayed from
  its first hour, where the lifecycle starts afresh (its predecessor was resolved before it).
The new rows replace the key's incidents starting at or after its cut (and a carried-on incident, by
its id), and its history and states from the cut on: equal, row for row, to a rebuild from all
findings and host-hours.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from fleethealth.gold import causes
from fleethealth.gold import incidents as gold_incidents
from fleethealth.gold.incidents import KEY
from fleethealth.lake import tables as lake
from fleethealth.lake.catalog import Lakehouse
from fleethealth.runtime.frames import local_frame, materialize, materialize_all

FINDINGS, HEALTH = "gold.incident_findings", "gold.broker_health_hourly"
INCIDENTS, HISTORY = "gold.incidents", "gold.incident_history"
INCIDENTS_SCHEMA = ("incident_id string, cluster string, kind string, severity string, severity_rank int, "
                    "entity string, "
                    "status string, first_seen timestamp, last_seen timestamp, resolved_at timestamp, "
                    "evidence string, known_bug string, first_hour timestamp, last_hour timestamp, hours int, "
                    "first_evidence string, clean_hours int, clean_since timestamp, resolved_hour timestamp, "
                    f"updated_hour timestamp, caused_by {causes.CAUSED_BY_TYPE}")
HISTORY_KEY = ("incident_id", "transition", "severity")
STATES = "gold.incident_state"
# an incident's state after an hour: its row but for what follows from it (the rank of its severity) and
# from the other incidents (what explains it)
STATE_SCHEMA = ", ".join(c for c in INCIDENTS_SCHEMA.replace("updated_hour timestamp", "hour timestamp").split(", ")
                         if not c.startswith(("severity_rank", "caused_by")))
STATE_COLUMNS = [c.split()[0] for c in STATE_SCHEMA.split(", ")]
STATE_KEY = ("cluster", "kind", "entity", "hour")


@dataclass
class Change:
    """What a window's hours do to the published lifecycle: rows to upsert and published keys to delete
    (lake.Merge each), the upserted rows being what the gate validates; `since`: the first hour of
    findings and host-hours it read."""
    incidents: lake.Merge
    history: lake.Merge
    states: lake.Merge
    since: datetime


def update(spark: SparkSession, computed: dict, hours: list[datetime], lakehouse: Lakehouse,
           hosts: DataFrame, resolve_after_hours: int) -> Change:
    """The lifecycle change of publishing `hours` of `computed` (gold.incident_findings and
    gold.broker_health_hourly of at least those hours) over what is published."""
    w0 = min(hours)
    window = F.expr(lake.hour_predicate(hours))
    incidents = _published(spark, INCIDENTS, INCIDENTS_SCHEMA, lakehouse)
    has = {name: lake.exists(spark, name, lakehouse) for name in (FINDINGS, HEALTH, STATES, HISTORY)}
    found = computed[FINDINGS].where(window)
    touched = found.select(*KEY)
    if has[FINDINGS]:       # a finding published for these hours and not found again ends its incident too
        touched = touched.unionByName(lake.read_listed(spark, FINDINGS, lakehouse, hours).select(*KEY))
    live = (F.col("status") == "open") | F.coalesce(F.col("resolved_hour") >= F.lit(w0), F.lit(True))
    touched = touched.unionByName(incidents.where(live).select(*KEY)).distinct()
    # each touched key's latest incident that started before the window
    latest = (incidents.where(F.col("first_hour") < F.lit(w0))
              .groupBy(*KEY).agg(F.max_by(F.struct(*incidents.columns), "first_hour").alias("i"))
              .select("i.*"))
    from_row = (F.col("status") == "open") & F.coalesce(F.col("updated_hour") < F.lit(w0), F.lit(False))
    plan = materialize(touched.join(latest, KEY, "left").select(
        "*", F.coalesce(from_row, F.lit(False)).alias("from_row"),
        F.coalesce(F.col("first_hour").isNotNull() & live & ~from_row, F.lit(False)).alias("from_state")))
    seeds = plan.where("from_row").select(*incidents.columns)
    # a re-run or backfill: an incident live at the window, changed by later hours, continues from its
    # state before the window; one with no state stored (a table an earlier version wrote) is replayed
    # from its first hour
    prior = local_frame(spark, [], f"{STATE_SCHEMA}, known boolean").drop("hour")
    if has[STATES] and plan.where("from_state").limit(1).count():
        wanted = plan.where("from_state").select(*KEY, F.col("incident_id").alias("wanted"), "first_hour")
        lo = wanted.agg(F.min("first_hour")).first()[0]
        before = (F.col("hour") < F.lit(w0)) & (F.col("hour") >= F.lit(lo))
        prior = (lake.read_listed(spark, STATES, lakehouse, where=before)
                 .join(wanted.select(*KEY, "wanted"), KEY)
                 .groupBy(*KEY, "wanted").agg(F.max_by(F.struct(*STATE_COLUMNS), "hour").alias("s"))
                 .where(F.col("s.incident_id") == F.col("wanted"))
                 .select("s.*", F.lit(True).alias("known")).drop("hour"))
        prior = materialize(prior)
        seeds = seeds.unionByName(prior.where(F.col("status") == "open").drop("known"), allowMissingColumns=True)
    replayed = F.col("from_state") & F.col("known").isNull()
    cuts = materialize(plan.join(prior.select(*KEY, "known"), KEY, "left").select(
        *KEY, F.when(replayed, F.col("first_hour")).otherwise(F.lit(w0)).alias("cut")))
    since = cuts.agg(F.min("cut")).first()[0] or w0
    after = F.col("hour") >= F.lit(since)
    findings = found
    if has[FINDINGS]:
        findings = lake.read_listed(spark, FINDINGS, lakehouse, where=after & ~window).unionByName(findings)
    findings = findings.join(cuts, KEY).where(F.col("hour") >= F.col("cut")).drop("cut")
    health = computed[HEALTH].where(window)
    if has[HEALTH]:
        health = lake.read_listed(spark, HEALTH, lakehouse, where=after & ~window).unionByName(
            health, allowMissingColumns=True)
    health = materialize(health.select("cluster", "host", "role", "broker_id", "zk_myid", "hour", "sources_arrived"))
    # the last hour the new rows reflect: the window's, or a later published one a replay read
    newest = max(_naive(health.agg(F.max("hour")).first()[0] or max(hours)), _naive(max(hours)))
    new = gold_incidents.lifecycle(findings, health, resolve_after_hours, hosts, seeds, w0)
    states = new.states.join(cuts, KEY).where(F.col("hour") >= F.col("cut")).select(*STATE_COLUMNS)
    rows, changes, states = materialize_all({
        "incidents": new.incidents.withColumn("updated_hour", F.lit(newest).cast("timestamp")),
        "history": new.history, "states": states}).values()
    # the published rows the new ones replace and do not upsert
    gone = (incidents.join(cuts, KEY).where(F.col("first_hour") >= F.col("cut"))
            .select("incident_id").join(rows.select("incident_id"), "incident_id", "left_anti"))
    rows = _explained(rows, incidents, gone)
    removed = materialize_all({
        "incidents": gone,
        "history": _replaced(spark, HISTORY, HISTORY_KEY, changes, cuts, since, lakehouse, has[HISTORY]),
        "states": _replaced(spark, STATES, STATE_KEY, states, cuts, since, lakehouse, has[STATES])})
    return Change(lake.Merge(rows, removed["incidents"], ("incident_id",)),
                  lake.Merge(changes, removed["history"], HISTORY_KEY),
                  lake.Merge(states, removed["states"], STATE_KEY), _naive(since))


def _explained(rows: DataFrame, incidents: DataFrame, gone: DataFrame) -> DataFrame:
    """`rows` with `caused_by`, and every published row they leave whose `caused_by` or `severity_rank`
    is no longer what the table after this change gives it (gold.causes: of all its incidents; a table an
    earlier version wrote gets each rank and cause once)."""
    kept = (incidents.join(rows.select("incident_id"), "incident_id", "left_anti")
            .join(gone, "incident_id", "left_anti"))
    after = materialize(rows.unionByName(kept.drop("caused_by")))
    found = materialize(causes.caused_by(after).withColumnRenamed("caused_by", "found"))
    stale = (kept.join(found, "incident_id")
             .where(F.col("severity_rank").isNull() | ~F.col("caused_by").eqNullSafe(F.col("found")))
             .withColumn("severity_rank", gold_incidents.severity_rank().cast("int"))
             .withColumn("caused_by", F.col("found")).drop("found"))
    return materialize(rows.join(found, "incident_id").withColumnRenamed("found", "caused_by")
                       .unionByName(stale))


def _replaced(spark: SparkSession, name: str, key: tuple, new: DataFrame, cuts: DataFrame, since: datetime,
              lakehouse: Lakehouse, published: bool) -> DataFrame:
    """The keys of the published rows of `name` from their key's cut on that `new` does not upsert."""
    if not published:
        return new.select(*key).limit(0)
    return (lake.read_listed(spark, name, lakehouse, where=F.col("hour") >= F.lit(since))
            .join(cuts, KEY).where(F.col("hour") >= F.col("cut"))
            .select(*key).join(new.select(*key), list(key), "left_anti"))


def _published(spark: SparkSession, name: str, schema: str, lakehouse: Lakehouse) -> DataFrame:
    """The published table with every column of `schema` (a table an earlier version wrote lacks the
    state columns: null, which replays its incidents once), or no rows before the first run."""
    if not lake.exists(spark, name, lakehouse):
        return local_frame(spark, [], schema)
    df = lake.read_listed(spark, name, lakehouse)    # read by several plans: its files listed once
    empty = local_frame(spark, [], schema)
    return df.select(*[F.col(f.name) if f.name in df.columns else F.lit(None).cast(f.dataType).alias(f.name)
                       for f in empty.schema.fields])


def _naive(hour: datetime) -> datetime:
    """An hour as Spark gives it back (naive, in the session's time zone, UTC)."""
    return hour.astimezone(timezone.utc).replace(tzinfo=None) if hour.tzinfo else hour
