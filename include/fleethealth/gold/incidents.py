"""gold.incidents and gold.incident_history from gold.incident_findings and gold.broker_health_hourly.

An incident is the findings of one (cluster, kind, entity) until the entity is healthy again: it stays
`open` through hours with findings and through hours in which its host sent nothing (no data is not
healthy), and is `resolved` once `incidents.resolve_after_hours` processed hours in a row had data
from its host and no finding; `resolved_at` is the first of those hours. A finding after that opens a
new incident. `incident_id` is a fingerprint of cluster, kind, entity and the hour the episode opened.
Each incident keeps the evidence that first fired it (`first_evidence`) and what fires it in its last
hour (`evidence`); gold.incident_history has its transitions (opened, escalated, resolved), which is
what notifications are sent for.

lifecycle() computes both from findings and host-hours: from scratch, or carrying open incidents on
from their rows (STATE); gold.lifecycle decides which, so that the published tables always equal a
rebuild, whatever the order in which hours are run.
"""
from __future__ import annotations

from datetime import datetime, timedelta
from typing import NamedTuple

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from fleethealth.fleet import entities
from fleethealth.runtime.frames import materialize
from fleethealth.runtime.vocabulary import SEVERITY_RANK

KEY = ["cluster", "kind", "entity"]
# what carries an incident from one hour to the next, beside its findings' aggregates: the processed
# hours with data from its host and no finding since its last finding (at most resolve_after_hours),
# the first of them, and the hour that resolved it
STATE = ("clean_hours", "clean_since", "resolved_hour")
HOUR = timedelta(hours=1)
TRANSITIONS = ("opened", "escalated", "resolved")
ANY_HOST = "*"   # an entity no inventory host answers for: any data from its cluster counts


def severity_rank(col: str | Column = "severity") -> Column:
    """A severity's rank (runtime.vocabulary.SEVERITY_RANK: critical 4 ... info 1): what sorts and compares."""
    rank = F.create_map(*[x for k, v in SEVERITY_RANK.items() for x in (F.lit(k), F.lit(v))])
    return rank[F.col(col) if isinstance(col, str) else col]


def data_hours(health: DataFrame) -> DataFrame:
    """(cluster, process, hour) of every processed host-hour in which the host sent data, under each
    name an incident entity may give it: its process's (fleet.entities), the host, and ANY_HOST."""
    sent = health.where(F.size("sources_arrived") > 0)
    process = entities.process_col(F.col("role"), F.col("broker_id"), F.col("zk_myid"))
    names = F.array(process, F.col("host"), F.lit(ANY_HOST))
    return sent.select("cluster", F.explode(names).alias("process"), "hour").distinct()


def _process(df: DataFrame, known: DataFrame) -> DataFrame:
    """`df` with `process`: the name data_hours() knows the entity's host by, else ANY_HOST."""
    df = df.withColumn("process", entities.process_of(F.col("entity")))
    known = known.select("cluster", "process").distinct().withColumn("known", F.lit(True))
    return (df.join(known, ["cluster", "process"], "left")
            .withColumn("process", F.when(F.col("known"), F.col("process")).otherwise(F.lit(ANY_HOST)))
            .drop("known"))


class Lifecycle(NamedTuple):
    incidents: DataFrame   # gold.incidents
    history: DataFrame     # gold.incident_history
    states: DataFrame      # gold.incident_state: each incident after each hour that changed it (`hour`)


def lifecycle(findings: DataFrame, health: DataFrame, resolve_after_hours: int, hosts: DataFrame | None = None,
              seed: DataFrame | None = None, cut: datetime | None = None) -> Lifecycle:
    """gold.incidents, gold.incident_history and gold.incident_state of the findings and processed
    host-hours given.

    From scratch: every finding and host-hour. Carried on (`seed`): the incidents open before `cut`
    (gold.incidents rows, STATE included) continue with the findings and host-hours from `cut` on, as if
    their earlier hours were given; the history then has only the transitions from `cut` on, the states
    those from `cut` on and each seed's own.
    `hosts` (the inventory's, silver.hosts_frame) names the processes an entity may be answered by;
    without it, those that sent data in `health`.
    """
    # one row per key and hour (a detector names an entity once an hour; this keeps it so)
    hourly = (findings.withColumn("rank", severity_rank())
              .groupBy(*KEY, "hour")
              .agg(F.min("first_seen").alias("first_seen"), F.max("last_seen").alias("last_seen"),
                   F.max("rank").alias("rank"), F.max_by("severity", "rank").alias("severity"),
                   F.min_by("evidence", "first_seen").alias("evidence"),
                   _first_known_bug("first_seen").alias("known_bug"))
              .select("*", F.col("hour").alias("first_hour"), F.lit(1).alias("n"),
                      F.col("evidence").alias("first_evidence"), F.lit(False).alias("seeded"),
                      F.lit(0).alias("clean0"), F.lit(None).cast("timestamp").alias("clean_since0")))
    if seed is not None:      # an open incident stands for its hours so far: one row at its last hour
        hourly = hourly.unionByName(seed.select(
            *KEY, F.col("last_hour").alias("hour"), "first_seen", "last_seen", severity_rank().alias("rank"),
            "severity", "evidence", "known_bug", "first_hour", F.col("hours").alias("n"), "first_evidence",
            F.lit(True).alias("seeded"), F.col("clean_hours").alias("clean0"),
            F.col("clean_since").alias("clean_since0")))
    known = data_hours(health)
    names = known if hosts is None else _names(hosts)
    since = F.min("hour")
    if seed is not None:      # a seed's clean hours before `cut` are counted in it already
        since = F.when(F.max("seeded"), F.greatest(since, F.lit(cut - HOUR).cast("timestamp"))).otherwise(since)
    keys = _process(hourly.groupBy(*KEY).agg(since.alias("since")), names)
    # hours with data from the entity's host and no finding of the key, after its first finding
    clean = (keys.join(known, ["cluster", "process"])
             .where(F.col("hour") > F.col("since"))
             .select(*KEY, "hour")
             .join(hourly.select(*KEY, "hour"), [*KEY, "hour"], "left_anti"))
    w = Window.partitionBy(*KEY).orderBy("hour")
    events = (hourly.select(*KEY, "hour", F.lit(1).alias("is_finding"), "clean0", "clean_since0")
              .unionByName(clean.select(*KEY, "hour", F.lit(0).alias("is_finding"), F.lit(0).alias("clean0"),
                                        F.lit(None).cast("timestamp").alias("clean_since0")))
              # each finding hour starts a group; the clean hours after it (until the next finding) join it
              .withColumn("grp", F.sum("is_finding").over(w.rowsBetween(Window.unboundedPreceding, 0))))
    in_group = Window.partitionBy(*KEY, "grp").orderBy("hour")
    # a seed's group starts with the clean hours it had already
    events = events.withColumn("clean_pos", F.row_number().over(in_group) - 1 + F.first("clean0").over(in_group))
    is_clean = F.col("is_finding") == 0
    groups = events.groupBy(*KEY, "grp").agg(
        F.max("clean_pos").alias("clean_after"),
        F.coalesce(F.max("clean_since0"),
                   F.min(F.when(is_clean & (F.col("clean_pos") == 1), F.col("hour")))).alias("first_clean_hour"))
    rows = (events.where(F.col("is_finding") == 1).select(*KEY, "hour", "grp")
            .join(groups, [*KEY, "grp"])
            .join(hourly, [*KEY, "hour"]))
    # a finding after resolve_after_hours clean hours opens a new incident
    new_run = F.coalesce(F.lag("clean_after").over(w) >= resolve_after_hours, F.lit(True)).cast("int")
    # read by all three tables: computed once
    rows = materialize(rows.withColumn("run", F.sum(new_run).over(w.rowsBetween(Window.unboundedPreceding, 0))))
    # an incident's findings up to each of its finding hours (a group's: its clean hours share them)
    upto = Window.partitionBy(*KEY, "run").orderBy("hour").rowsBetween(Window.unboundedPreceding, 0)
    so_far = rows.select(
        *KEY, "grp", "run", "first_clean_hour",
        F.min("first_seen").over(upto).alias("first_seen"), F.max("last_seen").over(upto).alias("last_seen"),
        F.max_by("severity", "rank").over(upto).alias("severity"), "evidence",
        F.min_by("first_evidence", "hour").over(upto).alias("first_evidence"),
        _first_known_bug("hour").over(upto).alias("known_bug"),
        F.min("first_hour").over(upto).alias("first_hour"), F.col("hour").alias("last_hour"),
        F.sum("n").over(upto).cast("int").alias("hours"))
    incident_id = F.sha2(F.concat_ws("|", *KEY, F.col("first_hour").cast("string")), 256).substr(1, 16)
    resolved = F.col("clean_pos") >= resolve_after_hours
    # each incident's state after each hour that changed it (a clean hour after it resolved changes nothing)
    states = materialize(
        events.where(F.col("clean_pos") <= resolve_after_hours).select(*KEY, "grp", "hour", "clean_pos")
        .join(so_far, [*KEY, "grp"])
        .select(incident_id.alias("incident_id"), "cluster", "kind", "severity", "entity",
                F.when(resolved, "resolved").otherwise("open").alias("status"),
                "first_seen", "last_seen", F.when(resolved, F.col("first_clean_hour")).alias("resolved_at"),
                "evidence", "known_bug", "first_hour", "last_hour", "hours", "first_evidence",
                F.col("clean_pos").cast("int").alias("clean_hours"),
                F.when(F.col("clean_pos") > 0, F.col("first_clean_hour")).alias("clean_since"),
                F.when(resolved, F.col("hour")).alias("resolved_hour"), "hour"))
    # an incident: its last state, and the rank of its severity
    cols = [c for c in states.columns if c != "hour"]
    at = cols.index("severity") + 1
    incidents = (states.groupBy("incident_id").agg(F.max_by(F.struct(*states.columns), "hour").alias("s"))
                 .select("s.*").select(*cols[:at], severity_rank().cast("int").alias("severity_rank"), *cols[at:]))
    return Lifecycle(incidents, _history(rows, incidents), states)


def _first_known_bug(order: str) -> Column:
    """The first known bug named (by `order`), whatever order the rows come in."""
    return F.min_by("known_bug", F.when(F.col("known_bug").isNotNull(), F.col(order)))


def _names(hosts: DataFrame) -> DataFrame:
    """(cluster, process) of every name an entity may give an inventory host (data_hours' names)."""
    names = F.array(F.col("entity"), F.col("host"), F.lit(ANY_HOST))
    return hosts.select("cluster", F.explode(names).alias("process")).distinct()


def _history(rows: DataFrame, incidents: DataFrame) -> DataFrame:
    """gold.incident_history: opened (the run's first finding hour), escalated (an hour whose severity
    is above every earlier one of the incident), resolved (the hour that made it so: the last of the
    clean hours needed; `at` = resolved_at). A seed's own row gives none (its hours were told before)."""
    w = Window.partitionBy(*KEY, "run").orderBy("hour")
    before = F.max("rank").over(w.rowsBetween(Window.unboundedPreceding, -1))
    ids = incidents.select(*KEY, "first_hour", "incident_id")
    changes = (rows.withColumn("first_hour", F.min("first_hour").over(w.rowsBetween(Window.unboundedPreceding, 0)))
               .withColumn("transition", F.when(before.isNull(), "opened").when(F.col("rank") > before, "escalated"))
               .where(F.col("transition").isNotNull() & ~F.col("seeded"))
               .join(ids, [*KEY, "first_hour"])
               .select("incident_id", *KEY, "transition", "severity", "hour", F.col("first_seen").alias("at"),
                       "evidence"))
    ended = incidents.where(F.col("status") == "resolved").select(
        "incident_id", *KEY, F.lit("resolved").alias("transition"), "severity",
        F.col("resolved_hour").alias("hour"), F.col("resolved_at").alias("at"), "evidence")
    return changes.unionByName(ended)
