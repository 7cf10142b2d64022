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

from fleethealth.gold import causes, lifecycle
from fleethealth.gold.incidents import lifecycle as rebuild
from fleethealth.lake import tables as lake
from fleethealth.lake.catalog import Lakehouse
from fleethealth.runtime.frames import local_frame
from test_gold_incidents import FINDINGS, HEALTH

STATUS = [c.split()[0] for c in lifecycle.INCIDENTS_SCHEMA.split(", ")].index("status")   # a row's status
pytestmark = pytest.mark.spark

H0 = datetime(2026, 11, 21, 0)
HOURS = [H0 + timedelta(hours=n) for n in range(8)]
AFTER = 2
HOSTS = [("c1", "kafka-1", "kafka", 1, None), ("c1", "kafka-2", "kafka", 2, None), ("c1", "zk-1", "zookeeper", None, 1)]
KEYS = [("log_cleaner_dead", "broker-1"), ("broker_flapping", "broker-2"), ("zk_follower_disconnect", "zk-1"),
        ("data_missing", "kafka-2:jmx"), ("leader_election_storm", "c1"),
        # explained by the dead cleaner, the fence (gold.causes) when their times meet
        ("offsets_partition_bloat", "__consumer_offsets-3@broker-1"), ("broker_fenced", "broker-2"),
        ("leader_election_storm", "broker-2")]
SEVERITIES = ("minor", "major", "critical")


def drawn(seed: int) -> tuple[list[tuple], list[tuple]]:
    """(findings, host-hours) of HOURS: each key found in about a third of the hours, each host silent
    in about one hour of six."""
    rnd = random.Random(seed)
    findings, health = [], []
    for hour in HOURS:
        seen = {}
        for kind, entity in KEYS:
            if entity == "broker-2" and kind == "leader_election_storm":   # the storm of a fence's minutes
                at = seen.get("broker_fenced") and seen["broker_fenced"] + timedelta(minutes=1)
            elif kind == "offsets_partition_bloat":      # a partition growing while the cleaner is dead
                at = seen.get("log_cleaner_dead") and hour + timedelta(minutes=59)
            else:
                at = hour + timedelta(minutes=rnd.randrange(60)) if rnd.random() < 0.35 else None
            if at:
                seen[kind] = at
                findings.append(("c1", kind, rnd.choice(SEVERITIES), entity, at, at + timedelta(minutes=1),
                                 f"{kind} at {at:%H:%M}", "KAFKA-1" if kind == "log_cleaner_dead" else None, hour))
        for cluster, host, role, broker, zk in HOSTS:
            sources = [] if rnd.random() < 0.17 else ["jmx", "kafka"]
            health.append((cluster, host, role, broker, zk, hour, sources))
    return findings, health


def hosts_frame(spark):
    """HOSTS as silver's hosts frame (their process names the hosts frame's `entity`)."""
    from fleethealth.silver import tables as silver

    return silver.hosts_of(spark, [(c, h, role, b, z, None, "UTC", 50, []) for c, h, role, b, z in HOSTS])


def publish(spark, computed: dict, hours: list[datetime], root) -> lifecycle.Change:
    """What gold.job.window publishes of `hours` (each hour's lifecycle change given by the hours
    before it in the window, the last change published)."""
    hosts = hosts_frame(spark)
    change = lifecycle.update(spark, computed, hours, root, hosts, AFTER)
    for name in (lifecycle.FINDINGS, lifecycle.HEALTH):
        lake.write_hour(computed[name].where(F.expr(lake.hour_predicate(hours))), name, hours, root)
    lake.merge(change.incidents, lifecycle.INCIDENTS, root)
    lake.merge(change.history, lifecycle.HISTORY, root)
    lake.merge(change.states, lifecycle.STATES, root)
    return change


def rows(df, drop=()) -> list[tuple]:
    return sorted(tuple(r) for r in df.drop(*drop).collect())


def frames(spark, seed: int) -> dict:
    findings, health = drawn(seed)
    return {lifecycle.FINDINGS: local_frame(spark, findings, FINDINGS),
            lifecycle.HEALTH: local_frame(spark, health, HEALTH)}


def expected(spark, computed: dict) -> tuple:
    """The rebuild's (incidents, history, states) rows."""
    hosts = hosts_frame(spark)
    incidents, history, states = rebuild(computed[lifecycle.FINDINGS], computed[lifecycle.HEALTH], AFTER, hosts)
    return (rows(incidents.join(causes.caused_by(incidents), "incident_id")), rows(history), rows(states))


def published(spark, root) -> tuple:
    return (rows(lake.read(spark, lifecycle.INCIDENTS, root), drop=("updated_hour",)),
            rows(lake.read(spark, lifecycle.HISTORY, root)), rows(lake.read(spark, lifecycle.STATES, root)))


def delete_hours(root_dir, before: datetime | None = None) -> int:
    """Delete the published partitions of findings and host-hours (before `before`): a read of one fails."""
    import shutil

    deleted = 0
    for name in (lifecycle.FINDINGS, lifecycle.HEALTH):
        for part in (root_dir / "gold" / name.split(".")[1]).iterdir():
            if part.name.startswith("hour=") and (before is None or part.name < f"hour={before:%Y-%m-%d %H}"):
                shutil.rmtree(part)
                deleted += 1
    return deleted


@pytest.mark.slow    # make test-slow: test_lifecycle_orders checks the orders on the scenarios too
def test_any_order_of_runs_equals_a_rebuild(spark, tmp_path):
    computed = frames(spark, 1)
    want = expected(spark, computed)
    assert len(want[0]) >= 5 and {r[STATUS] for r in want[0]} == {"open", "resolved"}
    assert len(want[2]) > len(want[0])
    caused = [r[-1] for r in want[0] if r[-1]]
    assert {c.kind for causes_ in caused for c in causes_} == {"log_cleaner_dead", "broker_fenced"}
    orders = {   # the second half first, then the first (a backfill before published hours), then all
        # again as one backfill; hour by hour, re-runs and backfills of one hour: the test below
        "later hours first": [HOURS[4:], HOURS[:4], HOURS],
    }
    for name, runs in orders.items():
        root = Lakehouse.at(tmp_path / name.replace(" ", "-"))
        for hours in runs:
            publish(spark, computed, hours, root)
        assert published(spark, root) == want, name


def test_a_run_reads_the_published_hours_from_its_own_on(spark, tmp_path):
    """An hourly run carries the open incidents on from their rows; a re-run of the last hour, or a
    backfill of one in the middle, carries the incidents live at it on from their states before it
    (gold.incident_state), however long they have been open. None reads a published hour of findings
    or host-hours before its own (deleted here: a read of one fails), and each gives the rebuild's
    lifecycle. Without the states (a lakehouse an earlier version wrote) the incidents live at the hour
    are replayed from their first hour, and their states filled in for the next time."""
    import shutil

    computed = frames(spark, 5)
    want = expected(spark, computed)
    root = {name: Lakehouse.at(tmp_path / name) for name in ("hourly", "later", "no-states")}
    publish(spark, computed, HOURS[:-1], root["hourly"])
    shutil.copytree(tmp_path / "hourly", tmp_path / "later")
    assert lake.read(spark, lifecycle.INCIDENTS, root["hourly"]).where("status = 'open'").count() >= 1
    assert delete_hours(tmp_path / "hourly") >= 2 * (len(HOURS) - 3)
    assert publish(spark, computed, [HOURS[-1]], root["hourly"]).since == HOURS[-1]
    assert published(spark, root["hourly"]) == want

    publish(spark, computed, [HOURS[-1]], root["later"])
    shutil.copytree(tmp_path / "later", tmp_path / "no-states")
    live = lake.read(spark, lifecycle.INCIDENTS, root["later"]).where(
        f"first_hour < '{HOURS[4]}' AND (status = 'open' OR resolved_hour >= '{HOURS[4]}')")
    first = live.agg({"first_hour": "min"}).first()[0]
    assert first is not None     # so the backfill of hour 4 carries an incident begun before it
    for hour in (HOURS[4], HOURS[-1]):    # a backfill (carried on through the later hours), a re-run
        assert delete_hours(tmp_path / "later", before=hour) > 0
        assert publish(spark, computed, [hour], root["later"]).since == hour
        assert published(spark, root["later"]) == want

    shutil.rmtree(tmp_path / "no-states" / "gold" / "incident_state")
    assert publish(spark, computed, [HOURS[4]], root["no-states"]).since == first
    assert published(spark, root["no-states"])[:2] == want[:2]
    assert publish(spark, computed, [HOURS[4]], root["no-states"]).since == HOURS[4]


def test_a_table_an_earlier_version_wrote_gets_every_rows_severity_rank_once(spark, tmp_path):
    """Issue 62 items 3 and 4: gold.incidents written without severity_rank and caused_by gains them for
    every row, those the hour does not touch too, at the first run after the upgrade; then
    max(severity_rank) answers."""
    from fleethealth.runtime.vocabulary import SEVERITY_RANK

    computed = frames(spark, 5)
    root = Lakehouse.at(tmp_path / "lake")
    publish(spark, computed, HOURS[:-1], root)
    old = lake.read(spark, lifecycle.INCIDENTS, root).drop("severity_rank", "caused_by")
    untouched = {r["incident_id"] for r in old.where(f"status = 'resolved' AND resolved_hour < '{HOURS[-2]}'")
                 .collect()}
    assert untouched       # rows the last hour leaves alone: filled all the same
    lake.overwrite(local_frame(spark, [tuple(r) for r in old.collect()], old.schema), lifecycle.INCIDENTS, root)
    assert "severity_rank" not in lake.read(spark, lifecycle.INCIDENTS, root).columns
    publish(spark, computed, [HOURS[-1]], root)
    got = lake.read(spark, lifecycle.INCIDENTS, root)
    incidents = expected(spark, computed)[0]
    columns = [c.split()[0] for c in lifecycle.INCIDENTS_SCHEMA.split(", ") if not c.startswith("updated_hour")]
    assert rows(got.select(*columns)) == incidents     # caused_by too
    ranks = {r["incident_id"]: (r["severity"], r["severity_rank"]) for r in got.collect()}
    assert untouched <= set(ranks) and all(rank == SEVERITY_RANK[sev] for sev, rank in ranks.values())
    top = got.groupBy("cluster").agg(F.max("severity_rank").alias("r"), F.max("severity").alias("s")).first()
    assert top["r"] == max(SEVERITY_RANK[s] for s, _ in ranks.values())
