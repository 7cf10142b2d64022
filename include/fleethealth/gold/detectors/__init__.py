"""Detectors: one module per incident kind, each `detect(facts, thresholds) -> findings`.

A finding row: cluster, kind, severity, entity, first_seen, last_seen (UTC), evidence, known_bug,
hour. Entities: `broker-<id>`, `zk-<myid>`, `<topic>-<partition>@broker-<id>`, `<host>:<source>`.
A module with `LOOKBACK = True` detects episodes that may straddle an hour end: it reads each hour
with the end of the hour before it (`incidents.lookback_minutes`).
"""
from __future__ import annotations

from functools import reduce

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from fleethealth.gold.detectors import (broker_deadlock, broker_flapping, broker_isolated, data_missing, fd_exhaustion,
                                        host_silent, known_bug_exposure, leader_election_storm, log_cleaner_dead,
                                        metadata_divergence, offsets_partition_bloat, request_queue_saturation,
                                        slow_group_load, zk_follower_disconnect, zk_session_expired)
from fleethealth.gold.detectors.base import FINDING_COLUMNS

DETECTORS = {m.KIND: m for m in (log_cleaner_dead, offsets_partition_bloat, host_silent, data_missing,
                                 known_bug_exposure, broker_deadlock, broker_isolated, fd_exhaustion, slow_group_load,
                                 zk_follower_disconnect, zk_session_expired, leader_election_storm,
                                 broker_flapping, metadata_divergence, request_queue_saturation)}


def detect_all(facts, thresholds: dict) -> DataFrame:
    """Every detector's findings of the hours of `facts`. A detector of episodes that may straddle an
    hour end (`LOOKBACK = True` in its module) reads `facts.lookback` when there is one (each hour with
    the end of the hour before it) and keeps what has a signal in the hour itself: an episode wholly
    before the hour was found in the hour it happened in."""
    found = []
    for module in DETECTORS.values():
        if getattr(module, "LOOKBACK", False) and facts.lookback is not None:
            found.append(module.detect(facts.lookback, thresholds).where(F.col("last_seen") >= F.col("hour")))
        else:
            found.append(module.detect(facts, thresholds))
    return reduce(DataFrame.unionByName, found).select(*FINDING_COLUMNS)
