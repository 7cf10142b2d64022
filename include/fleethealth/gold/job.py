"""The gold job of a window of hours: the published silver -> fact tables and findings, then each hour
in time order gated with the incident lifecycle carried forward by it (gold.lifecycle), the hours that
passed published together."""
from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from functools import reduce

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from fleethealth.fleet.inventory import Inventory, load_inventory
from fleethealth.gold import incidents as gold_incidents
from fleethealth.gold import lifecycle as gold_lifecycle
from fleethealth.gold import thresholds as thresholds_mod
from fleethealth.gold import detectors
from fleethealth.gold.facts import core as gold_facts
from fleethealth.gold.facts import kraft
from fleethealth.gold.facts import registry as fact_tables
from fleethealth.lake import locks
from fleethealth.lake import tables as lake
from fleethealth.lake.catalog import Lakehouse
from fleethealth.pull import landing
from fleethealth.quality.gate import audit, of_hours, publish_passed
from fleethealth.quality.suites import QualityGateError
from fleethealth.runtime.frames import materialize, materialize_all
from fleethealth.runtime.session import small_input
from fleethealth.silver import tables as silver

# gold's inputs: silver table names (gold.facts.core.SILVER_INPUTS says which Facts frame each is)
INPUTS = tuple(gold_facts.SILVER_INPUTS.values())
# the silver tables a look-back reads, by their Facts field
LOOKBACK_INPUTS = {field: gold_facts.SILVER_INPUTS[field] for field in gold_facts.LOOKBACK_FIELDS}
LIFECYCLE_TABLES = ("gold.incidents", "gold.incident_history", "gold.incident_state")
# checked across the gold tables of an hour: a derived frame validated with expectations/<name>.json
COMPLETENESS = "gold.completeness"


def window(spark: SparkSession, hours: list[datetime], inventory_path: str, lakehouse: Lakehouse,
           thresholds_path: str | None = None) -> dict:
    """Published silver of `hours` -> their gold tables computed at once (one plan per table), each
    hour in time order audited with the incident lifecycle as publishing it will leave it (the incidents
    it changes: gold.lifecycle), then the hours that passed published together. Per hour: (its incidents,
    gate report), or the QualityGateError of its failed gate."""
    inventory = load_inventory(inventory_path)
    limits, per_cluster = thresholds_mod.load_all(thresholds_path, [c.name for c in inventory.clusters])
    landed = [x for hour in hours for x in landing.read_manifests(hour, lakehouse)]
    with locks.hours_lock(hours, lakehouse, "gold job"), small_input(spark, sum(x.size for x in landed)):
        try:
            inputs = {name: gold_facts.silver_read(name, lake.read(spark, f"silver.{name}", lakehouse, hours))
                      for name in INPUTS}
            inputs = materialize_all(inputs)
            minutes = limits["incidents.lookback_minutes"]
            earlier = materialize_all(read_lookback(spark, min(hours), minutes, lakehouse)) if minutes else {}
            asked = [c.name for c in inventory.clusters if c.mode_from_logs]
            events = (lake.read(spark, "silver.kafka_events", lakehouse, hours).where(F.col("cluster").isin(*asked))
                      if asked else None)
            hosts = silver.hosts_frame(spark, found_modes(inventory, events, inputs["jmx_samples"],
                                                          kraft_before(spark, min(hours), lakehouse)))
            facts = facts_of(hours, hosts, inputs, minutes, earlier)
            computed = gold_tables(facts, limits, per_cluster)
            out, passed, lifecycle = {}, [], {}
            for hour in hours:
                outputs = of_hours(computed, hour)
                # the lifecycle as publishing this hour and the window's hours passed so far will leave it
                change = gold_lifecycle.update(spark, computed, passed + [hour], lakehouse, hosts,
                                               limits["incidents.resolve_after_hours"])
                merges = dict(zip(LIFECYCLE_TABLES, (change.incidents, change.history, change.states)))
                outputs.update({name: m.rows for name, m in merges.items()})
                try:
                    report = audit(spark, "gold", hour, outputs, lakehouse, audits(hosts, outputs))
                except QualityGateError as exc:
                    out[hour] = exc
                    continue
                passed.append(hour)
                lifecycle = merges
                out[hour] = (hour_incidents(outputs["gold.incidents"], outputs["gold.incident_findings"]), report)
            publish_passed(dict(computed, **lifecycle), passed, out, lakehouse)
            return out
        finally:
            spark.catalog.clearCache()


def found_modes(inventory: Inventory, kafka_events: DataFrame | None, jmx: DataFrame | None,
                known_kraft: Callable[[list[str]], set[str]] | None = None) -> Inventory:
    """The inventory with the mode of each cluster whose logs tell it (fleet.inventory.Cluster.mode_from_logs)
    as the window's silver rows show it (`kafka_events` as silver wrote them, every event type), else KRaft
    for those of them `known_kraft` (e.g. kraft_before) knows in KRaft mode, else as the inventory falls
    back. Per window: the gold job's is an hour."""
    asked = [c.name for c in inventory.clusters if c.mode_from_logs]
    if not asked:
        return inventory
    shown = {}
    if kafka_events is not None:
        mine = F.col("cluster").isin(*asked)
        found = kraft.modes_shown(kafka_events.where(mine), jmx.where(mine) if jmx is not None else None)
        shown = {r["cluster"]: r["mode"] for r in found.collect()}
    silent = [c for c in asked if c not in shown]
    if silent and known_kraft is not None:
        shown.update(dict.fromkeys(known_kraft(silent), kraft.KRAFT))
    return inventory.with_modes(shown)


def kraft_before(spark: SparkSession, first: datetime, lakehouse: Lakehouse) -> Callable[[list[str]], set[str]]:
    """clusters -> those of them gold found in KRaft mode in an hour before `first` (a row of
    gold.kraft_quorum, which only KRaft clusters have): an hour whose lines show neither mode (no
    snapshot, no KRaft prefix, no broker-metadata-metrics) keeps it, since a cluster migrates from
    ZooKeeper to KRaft and never back. Read only for clusters that are silent."""
    def known(clusters: list[str]) -> set[str]:
        if not lake.exists(spark, "gold.kraft_quorum", lakehouse):
            return set()
        rows = (lake.read(spark, "gold.kraft_quorum", lakehouse)
                .where(F.col("cluster").isin(*clusters) & (F.col("hour") < F.lit(first).cast("timestamp")))
                .select("cluster").distinct().collect())
        return {r["cluster"] for r in rows}
    return known


def facts_of(hours, hosts: DataFrame, silver_tables: dict, lookback_minutes: int = 0,
             earlier: dict | None = None) -> gold_facts.Facts:
    """The Facts of an hour or a window of hours from their silver tables (`silver_tables`: INPUTS
    name -> frame, rows of those hours), with their look-back (gold.facts.core.with_lookback) when
    `lookback_minutes`: from the window's own hours, and for its first hour from `earlier` (the rows
    of the hour before it: INPUTS name -> frame, e.g. read_lookback)."""
    facts = gold_facts.Facts(hours=hours, hosts=hosts, **{field: silver_tables[name] for field, name
                                                          in gold_facts.SILVER_INPUTS.items()})
    if lookback_minutes:
        before = {field: earlier[name] for field, name in LOOKBACK_INPUTS.items() if earlier and name in earlier}
        facts.lookback = gold_facts.with_lookback(facts, lookback_minutes, before)
    return facts


def read_lookback(spark: SparkSession, first: datetime, minutes: int, lakehouse: Lakehouse) -> dict:
    """The published silver rows of the last `minutes` of the hour before `first` that a look-back reads
    (LOOKBACK_INPUTS; none when that hour is not published): a bounded read, whatever the history."""
    before = first - timedelta(hours=1)
    since = F.lit(first - timedelta(minutes=minutes)).cast("timestamp")
    out = {}
    for name in LOOKBACK_INPUTS.values():
        if lake.exists(spark, f"silver.{name}", lakehouse):
            df = lake.read(spark, f"silver.{name}", lakehouse, before).where(F.col("ts") >= since)
            out[name] = gold_facts.silver_read(name, df)
    return out


def gold_tables(facts: gold_facts.Facts, limits: dict, per_cluster: dict[str, dict] | None = None,
                ) -> dict[str, DataFrame]:
    """Every hourly gold table of the hours of `facts` (all but gold.incidents), each computed once:
    the facts first, then the detectors that read them. A window of hours gives the rows each of its
    hours gives alone, in one plan per table (hour is a key of every fact and detector). The clusters of
    `per_cluster` (gold.thresholds.load_all) whose own thresholds differ from the fleet's `limits` are
    computed apart, each set of values once: a cluster is a key of every fact and detector too."""
    own = thresholds_mod.groups(limits, per_cluster or {})
    if not own:
        return _tables(facts, limits)
    apart = [c for _, clusters in own for c in clusters]
    parts = [_tables(facts.of_clusters(apart, keep=False), limits),
             *(_tables(facts.of_clusters(clusters), values) for values, clusters in own)]
    return {name: reduce(DataFrame.unionByName, (part[name] for part in parts)) for name in parts[0]}


def _tables(facts: gold_facts.Facts, limits: dict) -> dict[str, DataFrame]:
    """gold_tables of `facts` with the thresholds `limits`."""
    facts.offsets_groups = materialize(facts.offsets_groups)  # read by three of the frames below
    independent = materialize_all({
        "offsets": gold_facts.offsets_partitions(facts),
        "cleaner": gold_facts.cleaner_status(facts, limits["log_cleaner_dead.stale_ms"]),
        **{name: facts.table(name, limits) for name in fact_tables.BUILDERS}})
    facts.offsets_partitions, facts.cleaner_status = independent.pop("offsets"), independent.pop("cleaner")
    facts.derived.update(independent)
    facts.broker_health = materialize(gold_facts.broker_health(facts))  # joins the two above
    if facts.lookback is not None:   # the hours' own, whatever a look-back detector reads of them
        # computed once: each detector reads them a dozen times, and a union of the hour with the end
        # of the hour before in each of those reads made their plans seconds longer to build and run
        lookback = materialize_all({name: getattr(facts.lookback, name) for name in gold_facts.LOOKBACK_FIELDS})
        for name, df in lookback.items():
            setattr(facts.lookback, name, df)
        facts.lookback.offsets_partitions, facts.lookback.cleaner_status, facts.lookback.broker_health = (
            facts.offsets_partitions, facts.cleaner_status, facts.broker_health)
    return {
        "gold.consumer_offsets_partitions": facts.offsets_partitions,
        "gold.log_cleaner_status": facts.cleaner_status,
        "gold.broker_health_hourly": facts.broker_health,
        **facts.derived,
        # each detector's plan computed alone, several at once: one plan of them all took twice as long
        # to build, plan and run (its union re-analyses a tree of thousands of nodes per detector)
        "gold.incident_findings": detectors.union(materialize_all(detectors.detect_each(facts, limits)).values()),
    }


def audits(hosts: DataFrame, tables: dict) -> dict:
    """The gold gate's audits of an hour's tables (`hosts`: the inventory's, silver.hosts_frame)."""
    return {COMPLETENESS: completeness(hosts, tables["gold.broker_health_hourly"], tables["gold.incident_findings"])}


def completeness(hosts: DataFrame, health: DataFrame, findings: DataFrame) -> DataFrame:
    """One row per inventory host and expected source: did it arrive, or is a data_missing finding
    (or, for a host that sent nothing, a host_silent one) reporting it? `unreported` (host:source) is
    set when neither: no data must never look healthy."""
    expected = hosts.select("cluster", "host", F.explode("expect").alias("source"), F.col("entity").alias("process"))
    arrived = health.select("cluster", "host", F.explode("sources_arrived").alias("source"),
                            F.lit(True).alias("arrived"))
    reported = (findings.where(F.col("kind") == "data_missing")
                .select("cluster", F.col("entity").alias("_entity"), F.lit(True).alias("reported")))
    silent = (findings.where(F.col("kind") == "host_silent")
              .select("cluster", F.col("entity").alias("process"), F.lit(True).alias("silent")).distinct())
    out = (expected.join(arrived, ["cluster", "host", "source"], "left")
           .withColumn("_entity", F.concat_ws(":", "host", "source"))
           .join(reported, ["cluster", "_entity"], "left")
           .join(silent, ["cluster", "process"], "left"))
    ok = (F.coalesce("arrived", F.lit(False)) | F.coalesce("reported", F.lit(False))
          | F.coalesce("silent", F.lit(False)))
    return out.select("cluster", "host", "source",
                      F.coalesce("arrived", F.lit(False)).alias("arrived"),
                      (F.coalesce("reported", F.lit(False)) | F.coalesce("silent", F.lit(False))).alias("reported"),
                      F.when(~ok, F.col("_entity")).alias("unreported"))


def hour_incidents(incidents: DataFrame, findings: DataFrame) -> list[dict]:
    """The incidents an hour's findings belong to (the gold step's log lists them), most severe first."""
    keys = findings.select(*gold_incidents.KEY, "hour").distinct()
    hit = incidents.join(keys, gold_incidents.KEY).where(F.col("hour").between(F.col("first_hour"), F.col("last_hour")))
    return [r.asDict() for r in hit.drop("hour").distinct().orderBy(
        gold_incidents.severity_rank().desc(), "first_seen", *gold_incidents.KEY).collect()]
