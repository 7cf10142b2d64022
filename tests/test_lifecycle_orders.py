"""Issue 45's acceptance of the incremental lifecycle: the same 6 hours of every post-mortem scenario,
their gold run through the gold job in three orders - in sequence, then a backfill of all 6 after the
last; hours 4-6 then 1-3 - leave gold.incidents and gold.incident_history equal, row for row, to a
rebuild from all the published findings and host-hours (gold.incidents.lifecycle)."""
from __future__ import annotations

import shutil
from datetime import timedelta

import pytest

from fleethealth.cli import demo
from fleethealth.fleet.inventory import load_inventory
from fleethealth.gold import causes, lifecycle, thresholds
from fleethealth.gold.incidents import lifecycle as rebuild
from fleethealth.lake import tables as lake
from fleethealth.lake.catalog import Lakehouse
from fleethealth.pipeline import window as pipeline
from fleethealth.pull import hour as pull
from fleethealth.silver import tables as silver
from fleethealth.simulate import SCENARIOS, simulate

STATUS = [c.split()[0] for c in lifecycle.INCIDENTS_SCHEMA.split(", ")].index("status")   # a row's status
pytestmark = [pytest.mark.spark, pytest.mark.slow]

START = demo.START
HOURS = [START + timedelta(hours=n) for n in range(6)]


@pytest.fixture(scope="module")
def landed(spark, tmp_path_factory):
    """The 6 hours pulled, with bronze and silver published: gold not run yet."""
    root = tmp_path_factory.mktemp("orders")
    inventory = simulate(root, list(SCENARIOS), HOURS[0], HOURS[-1] + timedelta(hours=1),
                         jmx_samples_per_broker_hour=0)
    lakehouse = Lakehouse.at(root / "lakehouse")
    for hour in HOURS:
        pull.pull_hour(load_inventory(inventory), hour, lakehouse)
    out = pipeline.run_window(spark, HOURS, str(inventory), lakehouse, layers=("bronze", "silver"))
    assert not [h for h, o in out.items() if isinstance(o, Exception)], out
    return root, inventory


def copy_of(landed, tmp_path, name: str) -> Lakehouse:
    shutil.copytree(landed[0] / "lakehouse", tmp_path / name)
    return Lakehouse.at(tmp_path / name)


def gold(spark, landed, lakehouse: Lakehouse, runs: list[list]) -> None:
    for hours in runs:
        out = pipeline.run_window(spark, hours, str(landed[1]), lakehouse, layers=("gold",))
        assert not [h for h, o in out.items() if isinstance(o, Exception)], out


def rows(df, drop=()) -> list[tuple]:
    return sorted((tuple(r) for r in df.drop(*drop).collect()), key=repr)


def check(spark, landed, lakehouse: Lakehouse, order: str) -> tuple:
    """The published lifecycle equals the rebuild of the published findings and host-hours."""
    after = thresholds.load(None)["incidents.resolve_after_hours"]
    hosts = silver.hosts_frame(spark, load_inventory(landed[1]))
    incidents, history, states = rebuild(lake.read(spark, lifecycle.FINDINGS, lakehouse),
                                         lake.read(spark, lifecycle.HEALTH, lakehouse), after, hosts)
    want = rows(incidents.join(causes.caused_by(incidents), "incident_id")), rows(history), rows(states)
    assert (rows(lake.read(spark, lifecycle.INCIDENTS, lakehouse), drop=("updated_hour",)),
            rows(lake.read(spark, lifecycle.HISTORY, lakehouse)),
            rows(lake.read(spark, lifecycle.STATES, lakehouse))) == want, order
    return want


def published(spark, lakehouse: Lakehouse) -> tuple:
    """What the rebuild reads (the findings and host-hours) and the lifecycle, as published."""
    return (rows(lake.read(spark, lifecycle.FINDINGS, lakehouse)), rows(lake.read(spark, lifecycle.HEALTH, lakehouse)),
            rows(lake.read(spark, lifecycle.INCIDENTS, lakehouse), drop=("updated_hour",)),
            rows(lake.read(spark, lifecycle.HISTORY, lakehouse)), rows(lake.read(spark, lifecycle.STATES, lakehouse)))


def test_three_orders_equal_a_rebuild(spark, landed, tmp_path):
    sequence = copy_of(landed, tmp_path, "sequence")
    gold(spark, landed, sequence, [[h] for h in HOURS])
    want = check(spark, landed, sequence, "in sequence")
    # every scenario has incidents, some resolved within the 6 hours
    assert len({r[1] for r in want[0]}) >= len(SCENARIOS) - 1 and {r[STATUS] for r in want[0]} == {"open", "resolved"}
    first = published(spark, sequence)
    # the other orders publish the same findings and host-hours, hence the same rebuild: their lifecycle
    # must be `want` (the rebuild itself is not run again)
    gold(spark, landed, sequence, [HOURS])
    assert published(spark, sequence) == first, "a backfill of all 6 after the last"
    later_first = copy_of(landed, tmp_path, "later-first")
    gold(spark, landed, later_first, [HOURS[3:], HOURS[:3]])
    assert published(spark, later_first) == first, "hours 4-6, then 1-3"
