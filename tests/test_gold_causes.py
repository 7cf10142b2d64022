"""gold.causes: which incident explains which (issue 62 item 4), rule by rule on hand-made incidents: each rule
of causes.yaml names its cause, and a cause of another process or partition, of other minutes, resolved
before the effect, or of another cluster does not."""
from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from fleethealth.gold import causes
from fleethealth.runtime.frames import local_frame

pytestmark = pytest.mark.spark

T = datetime(2026, 11, 20, 10, 12)
M = timedelta(minutes=1)
COLUMNS = ("incident_id string, cluster string, kind string, entity string, first_seen timestamp, "
           "last_seen timestamp, resolved_at timestamp")


def explained(spark, rows: list[tuple]) -> dict[str, list[tuple]]:
    got = causes.caused_by(local_frame(spark, rows, COLUMNS)).collect()
    return {r.incident_id: [(c.kind, c.entity, c.first_seen) for c in r.caused_by] for r in got}


def test_each_rule_names_its_cause_and_nothing_else(spark):
    fence = ("f", "c1", "broker_fenced", "broker-2", T, T + 25 * M, T + 48 * M)
    expiry = ("z", "c1", "zk_session_expired", "broker-2", T + 2 * M, T + 2 * M, T + 48 * M)
    cleaner = ("d", "c1", "log_cleaner_dead", "broker-2", T, T + 170 * M, None)
    bloat = ("b", "c1", "offsets_partition_bloat", "__consumer_offsets-38@broker-2", T + 28 * M, T + 170 * M, None)
    rows = [
        fence, expiry, cleaner, bloat,
        ("s", "c1", "leader_election_storm", "broker-2", T + 1 * M, T + 26 * M, T + 48 * M),
        # the storm of another broker, of other minutes, of another cluster: none
        ("s3", "c1", "leader_election_storm", "broker-3", T, T + 5 * M, None),
        ("late", "c1", "leader_election_storm", "broker-2", T + 40 * M, T + 41 * M, None),
        ("s-c2", "c2", "leader_election_storm", "broker-2", T, T + 5 * M, None),
        # the slow load of the bloated partition on its new coordinator, and of another partition
        ("g", "c1", "slow_group_load", "__consumer_offsets-38@broker-5", T + 119 * M, T + 121 * M, None),
        ("g7", "c1", "slow_group_load", "__consumer_offsets-7@broker-2", T + 119 * M, T + 121 * M, None),
        # a bloat after its broker's dead cleaner resolved
        ("old", "c1", "log_cleaner_dead", "broker-4", T - 300 * M, T - 200 * M, T - 120 * M),
        ("b4", "c1", "offsets_partition_bloat", "__consumer_offsets-9@broker-4", T, T + 10 * M, None),
    ]
    got = explained(spark, rows)
    key = {r[0]: (r[2], r[3], r[4]) for r in rows}
    assert got == {
        "s": [key["f"], key["z"]],                  # sorted by kind
        "b": [key["d"]], "g": [key["b"]],
        **{i: [] for i in ("f", "z", "d", "s3", "late", "s-c2", "g7", "old", "b4")},
    }


def test_a_broker_s_outage_explains_the_partition_states_of_its_cluster(spark):
    """`entity: cluster`: the controller's offline partitions and another broker's under-min-ISR partitions are
    explained by any broker of the cluster that went silent or was fenced while they were seen."""
    silent = ("h", "c1", "host_silent", "broker-2", T, T + 59 * M, T + 60 * M)
    fence = ("f", "c1", "broker_fenced", "broker-4", T + 70 * M, T + 71 * M, T + 130 * M)
    rows = [
        silent, fence,
        ("o", "c1", "partitions_offline", "partitions", T + 1 * M, T + 50 * M, None),
        ("m", "c1", "partitions_under_min_isr", "broker-1", T + 73 * M, T + 80 * M, None),
        # of another cluster; under min ISR long after the fence and before the silence: none
        ("o2", "c2", "partitions_offline", "partitions", T + 1 * M, T + 50 * M, None),
        ("m-early", "c1", "partitions_under_min_isr", "broker-3", T - 60 * M, T - 20 * M, T - 10 * M),
    ]
    got = explained(spark, rows)
    assert got == {"o": [("host_silent", "broker-2", T)], "m": [("broker_fenced", "broker-4", T + 70 * M)],
                   "h": [], "f": [], "o2": [], "m-early": []}


def test_the_rules_are_valid_and_name_kinds_with_runbooks():
    from fleethealth.gold import runbooks

    assert causes.explained_kinds() == {
        "leader_election_storm": ("broker_fenced", "zk_session_expired"),
        "offsets_partition_bloat": ("log_cleaner_dead",), "slow_group_load": ("offsets_partition_bloat",),
        "log_dir_filling": ("log_cleaner_dead", "offsets_partition_bloat"),
        "partitions_offline": ("host_silent", "broker_isolated", "broker_fenced"),
        "partitions_under_min_isr": ("host_silent", "broker_isolated", "broker_fenced", "zk_session_expired"),
        "no_active_controller": ("controller_quorum_unstable", "zk_session_expired", "zk_follower_disconnect",
                                 "host_silent")}
    assert {k for r in causes.rules() for k in (r.effect, r.cause)} <= set(runbooks.load())
