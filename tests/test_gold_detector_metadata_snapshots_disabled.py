"""metadata_snapshots_disabled (KRaft): the SnapshotGenerator's "Not emitting ... because snapshots are
disabled" lines of a node make one incident per node-hour; a node that writes its snapshots makes none."""
from __future__ import annotations

import pytest
from detector_frames import at, event, events, facts, findings, kraft_hosts

from fleethealth.gold import thresholds
from fleethealth.gold.detectors import run as run_detector
from fleethealth.gold.detectors import metadata_snapshots_disabled

pytestmark = pytest.mark.spark


def run(spark, rows, hosts=None):
    return findings(run_detector(metadata_snapshots_disabled, facts(spark, events(spark, rows), hosts=hosts),
                                 thresholds.load()))


def test_snapshots_disabled_on_a_controller(spark):
    rows = [event(3001, at(5), "metadata_snapshots_disabled", node=3001, reason="metadata loading fault"),
            event(3001, at(45), "metadata_snapshots_disabled", node=3001, reason="metadata loading fault"),
            event(3000, at(7), "metadata_snapshot_created", node=3000, reason="we have replayed at least 20971520 bytes")]
    [f] = run(spark, rows, hosts=kraft_hosts(spark))
    assert (f["kind"], f["entity"], f["severity"]) == ("metadata_snapshots_disabled", "controller-3001", "major")
    assert (f["first_seen"], f["last_seen"]) == (at(5), at(45))
    assert f["evidence"] == ("node 3001: 2 'Not emitting ... because snapshots are disabled' line(s) from 06:05:00Z "
                             "to 06:45:00Z (metadata loading fault): __cluster_metadata is no longer snapshotted "
                             "and grows until the node restarts")


def test_snapshots_written_are_no_incident(spark):
    rows = [event(3000, at(m), "metadata_snapshot_created", node=3000, reason="we have replayed at least 20971520 bytes")
            for m in (7, 37)]
    assert run(spark, rows, hosts=kraft_hosts(spark)) == []
