"""The incremental lifecycle (fleethealth.gold.lifecycle.update): hours published in any order - one by
one, as a window, re-run, backfilled before later hours - leave gold.incidents and gold.incident_history
equal, row for row, to a rebuild from all findings and host-hours (gold.incidents.lifecycle), on
findings and silent hours drawn at random (fixed seeds) for a few entities, with the publish the gold
job does (hourly tables by replaceWhere, the lifecycle by MERGE)."""
from __future__ import annotations

import random
from datetime import datetime, timedelta

import pytest
from pyspark.sql import functions as F

from fleethealth.gold import lifecycle
from fleethealth.gold.incidents import lifecycle as rebuild
from fleethealth.lake import tables as lake
from fleethealth.lake.catalog import Lakehouse
from test_gold_incidents import FINDINGS, HEALTH

pytestmark = pytest.mark.spark

H0 = datetime(2026, 11, 21, 0)
HOURS = [H0 + timedelta(hours=n) for n in range(8)]
AFTER = 2
HOSTS = [("c1", "kafka-1", "kafka", 1, None), ("c1", "kafka-2", "kafka", 2, None), ("c1", "zk-1", "zookeeper", None, 1)]
KEYS = [("log_cleaner_dead", "broker-1"), ("broker_flapping", "broker-2"), ("zk_follower_disconnect", "zk-1"),
        ("data_missing", "kafka-2:jmx"), ("leader_election_storm", "c1")]
SEVERITIES = ("minor", "major", "critical")


def drawn(seed: int) -> tuple[list[tuple], list[tuple]]:
    """(findings, host-hours) of HOURS: each key found in about a third of the hours, each host silent
    in about one hour of six."""
    rnd = random.Random(seed)
    findings, health = [], []
    for hour in HOURS:
        for kind, entity in KEYS:
            if rnd.random() < 0.35:
                at = hour + timedelta(minutes=rnd.randrange(60))
                findings.append(("c1", kind, rnd.choice(SEVERITIES), entity, at, at + timedelta(minutes=1),
                                 f"{kind} at {at:%H:%M}", "KAFKA-1" if kind == "log_cleaner_dead" else None, hour))
        for cluster, host, role, broker, zk in HOSTS:
            sources = [] if rnd.random() < 0.17 else ["jmx", "kafka"]
            health.append((cluster, host, role, broker, zk, hour, sources))
    return findings, health


def publish(spark, computed: dict, hours: list[datetime], root) -> None:
    """What gold.job.window publishes of `hours` (each hour's lifecycle change given by the hours
    before it in the window, the last change published)."""
    hosts = spark.createDataFrame(HOSTS, "cluster string, host string, role string, broker_id int, zk_myid int")
    change = lifecycle.update(spark, computed, hours, root, hosts, AFTER)
    for name in (lifecycle.FINDINGS, lifecycle.HEALTH):
        lake.write_hour(computed[name].where(F.expr(lake.hour_predicate(hours))), name, hours, root)
    lake.merge(change.incidents, lifecycle.INCIDENTS, root)
    lake.merge(change.history, lifecycle.HISTORY, root)


def rows(df, drop=()) -> list[tuple]:
    return sorted(tuple(r) for r in df.drop(*drop).collect())


def test_any_order_of_runs_equals_a_rebuild(spark, tmp_path):
    findings, health = drawn(1)
    computed = {lifecycle.FINDINGS: spark.createDataFrame(findings, FINDINGS),
                lifecycle.HEALTH: spark.createDataFrame(health, HEALTH)}
    hosts = spark.createDataFrame(HOSTS, "cluster string, host string, role string, broker_id int, zk_myid int")
    incidents, history = rebuild(computed[lifecycle.FINDINGS], computed[lifecycle.HEALTH], AFTER, hosts)
    expected = rows(incidents), rows(history)
    assert len(expected[0]) >= 5 and {r[5] for r in expected[0]} == {"open", "resolved"}
    orders = {   # hour by hour after a first window, then all again as one backfill
        "in sequence": [HOURS[:4]] + [[h] for h in HOURS[4:]] + [HOURS],
        # the second half first, then the first: a backfill before published hours, and re-runs
        "later hours first": [HOURS[4:], HOURS[:4], [HOURS[2]], [HOURS[5]]],
    }
    for name, runs in orders.items():
        root = Lakehouse.at(tmp_path / name.replace(" ", "-").replace(",", ""))
        for hours in runs:
            publish(spark, computed, hours, root)
        got = (rows(lake.read(spark, lifecycle.INCIDENTS, root), drop=("updated_hour",)),
               rows(lake.read(spark, lifecycle.HISTORY, root)))
        assert got[0] == expected[0], name
        assert got[1] == expected[1], name


def test_an_hourly_run_reads_no_published_hour(spark, tmp_path):
    """The hour after the last published one carries the open incidents on from their rows: with the
    files of every published hour of findings and host-hours deleted (a read of one fails), it still
    gives the rebuild's lifecycle."""
    import shutil

    findings, health = drawn(3)
    computed = {lifecycle.FINDINGS: spark.createDataFrame(findings, FINDINGS),
                lifecycle.HEALTH: spark.createDataFrame(health, HEALTH)}
    root = Lakehouse.at(tmp_path / "lh")
    publish(spark, computed, HOURS[:-1], root)
    assert lake.read(spark, lifecycle.INCIDENTS, root).where("status = 'open'").count() >= 1
    for name in (lifecycle.FINDINGS, lifecycle.HEALTH):
        parts = [p for p in (tmp_path / "lh" / "gold" / name.split(".")[1]).iterdir() if p.name.startswith("hour=")]
        assert len(parts) >= len(HOURS) - 3
        for part in parts:
            shutil.rmtree(part)
    publish(spark, computed, [HOURS[-1]], root)
    hosts = spark.createDataFrame(HOSTS, "cluster string, host string, role string, broker_id int, zk_myid int")
    incidents, history = rebuild(computed[lifecycle.FINDINGS], computed[lifecycle.HEALTH], AFTER, hosts)
    assert rows(lake.read(spark, lifecycle.INCIDENTS, root), drop=("updated_hour",)) == rows(incidents)
    assert rows(lake.read(spark, lifecycle.HISTORY, root)) == rows(history)
