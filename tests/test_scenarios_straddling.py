"""The post-mortems moved so that each episode (isolation, a follower disconnect, a dead cleaner, an
expiry storm, flapping with an epoch lag) straddles the end of its first hour, run hour by hour
as the DAG runs them (each hour's gold reads the end of the hour before from published silver): the
same incidents as where they do not straddle, each first seen when its episode began.

Without the look-back (`incidents.lookback_minutes: 0`) this fails: pm5's four session losses in 34
minutes become one loss before the hour end and three after (flapping and the epoch lag seen 10
minutes late), pm4's session expiry is dated by its first line after the hour end.

The KRaft scenarios' episodes (kraft_scenarios.STRADDLING_SHIFTS) straddle the same hour end in the same
fleet and run: one incident each, first seen when it began."""
from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest
import yaml

from fleethealth.lake.catalog import Lakehouse
from fleethealth.pipeline import window as pipeline
from fleethealth.cli import demo
from fleethealth.fleet.inventory import load_inventory
from fleethealth.gold.detectors import DETECTORS
from fleethealth.lake import tables as lake
from fleethealth.pull import hour as pull
from fleethealth.simulate import kraft_scenarios as kr, simulate

pytestmark = [pytest.mark.spark, pytest.mark.slow]

START = demo.START
TOLERANCE = timedelta(minutes=5)
MINUTE = 60_000
# how much later than usual (ms) each scenario's episode starts: just before the end of the first hour
SHIFTS = {
    "pm1-deadlock": 44 * MINUTE,                      # deadlock at 59:00, peers time out every 30 s after
    "pm2-zk-follower-reset": 35 * MINUTE - 382,       # the follower's lines at 59:59.998, its election after
    "pm3-dead-cleaner": 40 * MINUTE - 1_000,          # the cleaner dies at 59:59.412, stale in JMX after 60:00
    "pm4-zk-expiry-storm": 25 * MINUTE - 542,         # session lost at 59:59.970, leaders move after 60:00
    "pm5-metadata-divergence": 45 * MINUTE,           # losses at 55, 65, 76, 89 minutes
}


def tolerance(kind: str) -> timedelta:
    """An episode's first line, to the second, for the detectors of episodes (without the look-back,
    flapping and the epoch lag are 10 minutes late, pm4's expiry 1.2 s: the first line after the hour
    end); the others date a finding by a sample or a thread dump (test_scenarios' five minutes)."""
    return timedelta(seconds=1) if getattr(DETECTORS[kind], "LOOKBACK", False) else TOLERANCE


def first_seen(i: dict) -> datetime:
    v = i["first_seen"]
    return datetime.fromisoformat(v.replace("Z", "+00:00")).replace(tzinfo=None) if isinstance(v, str) else v


def key(i: dict) -> tuple[str, str, str]:
    return i["cluster"], i["kind"], i["entity"]


@pytest.fixture(scope="module")
def runs(spark, tmp_path_factory):
    """The ZooKeeper scenarios shifted (and as they are, for their expected incidents) and the KRaft ones
    shifted, in one inventory, run hour by hour."""
    end = START + timedelta(hours=2)
    root = tmp_path_factory.mktemp("straddling")
    shifted = simulate(root / "shifted", list(SHIFTS), START, end, jmx_samples_per_broker_hour=0, shifts=SHIFTS)
    unshifted = simulate(root / "unshifted", list(SHIFTS), START, end, jmx_samples_per_broker_hour=0)
    kraft = simulate(root / "kraft", list(kr.STRADDLING_SHIFTS), START, end, jmx_samples_per_broker_hour=0,
                     bytes_per_broker_hour=20_000, shifts=kr.STRADDLING_SHIFTS)
    doc = yaml.safe_load(shifted.read_text())
    doc["clusters"] += yaml.safe_load(kraft.read_text())["clusters"]
    inventory = root / "inventory.yaml"
    inventory.write_text(yaml.safe_dump(doc))
    lakehouse = Lakehouse.at(root / "lakehouse")
    inv = load_inventory(inventory)
    for hour in (START, START + timedelta(hours=1)):     # as the DAG runs them: one hour at a time
        pull.pull_hour(inv, hour, Lakehouse.at(lakehouse))
        pipeline.run_hour(spark, hour, str(inventory), Lakehouse.at(lakehouse))
    found = [r.asDict() for r in lake.read(spark, "gold.incidents", Lakehouse.at(lakehouse)).collect()]
    return {"found": [i for i in found if i["cluster"] in SHIFTS],
            "expected": json.loads((root / "shifted" / "expected_incidents.json").read_text()),
            "unshifted": json.loads((unshifted.parent / "expected_incidents.json").read_text()),
            "kraft_found": [i for i in found if i["cluster"] in kr.STRADDLING_SHIFTS],
            "kraft_expected": json.loads((kraft.parent / "expected_incidents.json").read_text())}


def test_the_episodes_straddle_the_hour_end(runs):
    hour_end = START.replace(tzinfo=None) + timedelta(hours=1)
    windows = runs["expected"]
    assert {i["cluster"] for i in windows} == set(SHIFTS)
    assert all(hour_end - timedelta(minutes=10) < first_seen(i) < hour_end + timedelta(minutes=10) for i in windows
               if i["kind"] in ("broker_flapping", "leader_election_storm", "zk_follower_disconnect")), windows


def test_the_same_incidents_as_unshifted_each_first_seen_when_it_began(runs):
    found = {key(i): i for i in runs["found"]}
    expected = {key(i): i for i in runs["expected"]}
    assert sorted(found) == sorted(expected) == sorted(key(i) for i in runs["unshifted"])
    late = sorted((k, str(first_seen(expected[k])), str(first_seen(found[k]))) for k in expected
                  if abs(first_seen(found[k]) - first_seen(expected[k])) > tolerance(k[1]))
    assert late == []
    # one incident each, not one per hour it touched
    assert len(runs["found"]) == len(found)


@pytest.mark.parametrize("scenario", kr.STRADDLING_SHIFTS)
def test_a_kraft_straddling_episode_is_one_incident_first_seen_when_it_began(runs, scenario):
    assert {i["cluster"] for i in runs["found"] + runs["kraft_found"]} == set(SHIFTS) | set(kr.STRADDLING_SHIFTS)
    found = [i for i in runs["kraft_found"] if i["cluster"] == scenario]
    expected = {(i["kind"], i["entity"]): first_seen(i) for i in runs["kraft_expected"] if i["cluster"] == scenario}
    assert sorted((i["kind"], i["entity"]) for i in found) == sorted(expected)
    late = [(i["kind"], i["entity"]) for i in found
            if abs(first_seen(i) - expected[(i["kind"], i["entity"])]) > TOLERANCE]
    assert late == []
