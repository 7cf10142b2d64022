"""A window of hours through bronze, silver and gold in one pass, without the Delta round trips and
gates (test_jobs, test_scenarios and the end-to-end DAG test cover those): each hour is pulled into
landing, bronze, silver and gold are built for all hours at once with the jobs' functions (rows keep
their hour; `gold.job.gold_tables` over a window gives what each hour gives alone)."""
from __future__ import annotations

from datetime import datetime, timedelta
from functools import reduce

from pyspark.sql import DataFrame

from fleethealth.lake.catalog import Lakehouse
from fleethealth.gold import job as gold_job
from fleethealth.bronze import tables as bronze
from fleethealth.gold import thresholds
from fleethealth.pull import hour as pull
from fleethealth.runtime import frames
from fleethealth.silver import tables as silver


def run_window(spark, inventory, hours, lakehouse) -> dict:
    """{"records": bronze, "files": bronze.files, "silver": {table: frame}, "recon": frame,
    "gold": {table: frame} (every hourly gold table), "findings": [row dicts], "health": [row dicts]} of
    the hours (frames materialized)."""
    per_hour, files = [], []
    for hour in hours:
        landed = pull.pull_hour(inventory, hour, Lakehouse.at(lakehouse))
        records = bronze.records(spark, landed, lakehouse.landing(hour), hour)
        per_hour.append(records)
        files.append(bronze.files(spark, landed, records, hour))
    records = frames.materialize(reduce(DataFrame.unionByName, per_hour))
    files = frames.materialize(reduce(DataFrame.unionByName, files))
    tables = frames.materialize_all(silver.build(spark, records, inventory, files))
    recon = frames.materialize(silver.reconciliation(records, tables, tables["silver.quarantine"], files))
    window_silver = {name: tables[f"silver.{name}"] for name in gold_job.INPUTS if name != "reconciliation"}
    window_silver["reconciliation"] = recon
    hosts = silver.hosts_frame(spark, gold_job.found_modes(inventory, tables["silver.kafka_events"],
                                                           tables["silver.jmx_samples"]))
    limits = thresholds.load()
    out = gold_job.gold_tables(gold_job.facts_of(hours, hosts, window_silver, limits["incidents.lookback_minutes"]), limits)
    findings = [r.asDict() for r in out["gold.incident_findings"].collect()]
    health = [r.asDict() for r in out["gold.broker_health_hourly"].collect()]
    return {
"records": records, "files": files, "silver": tables, "recon": recon, "gold": out,
            "findings": findings, "health": health, "hosts": hosts}


def incidents(out: dict) -> list[dict]:
    """gold.incidents of a run_window's hours from scratch (the lifecycle of its findings and host-hours, and
    what explains each: caused_by) as row dicts, caused_by's entries dicts."""
    from fleethealth.gold import causes
    from fleethealth.gold.incidents import lifecycle

    limits = thresholds.load()
    rows = lifecycle(out["gold"]["gold.incident_findings"], out["gold"]["gold.broker_health_hourly"],
                     limits["incidents.resolve_after_hours"], out["hosts"]).incidents
    rows = rows.join(causes.caused_by(rows), "incident_id")
    return [r.asDict(recursive=True) for r in rows.collect()]


def against_truth(findings: list[dict], expected: list[dict], tolerance: timedelta = timedelta(minutes=5)
                  ) -> tuple[list, list, list]:
    """(missed, late, false) of the findings against the simulator's expected incidents, by (cluster, kind,
    entity): expected and not found, found with a first_seen more than `tolerance` off, found and not expected."""
    found: dict[tuple, datetime] = {}
    for f in findings:
        k = (f["cluster"], f["kind"], f["entity"])
        found[k] = min(found.get(k, f["first_seen"]), f["first_seen"])
    truth = {(i["cluster"], i["kind"], i["entity"]): _naive(i["first_seen"]) for i in expected}
    return (sorted(k for k in truth if k not in found),
            sorted(k for k in truth if k in found and abs(found[k] - truth[k]) > tolerance),
            sorted(k for k in found if k not in truth))


def _naive(v) -> datetime:
    return datetime.fromisoformat(v.replace("Z", "+00:00")).replace(tzinfo=None) if isinstance(v, str) else v
