"""`fleethealth check --stale` from a timer (issue 62): a pipeline whose newest processed hour ended more than
FLEETHEALTH_STALE_AFTER_HOURS ago sends `pipeline_stale` once per spell to every channel (a real webhook
receiver here), exits 2, and `resolved` once an hour is processed again. No Spark: the lakehouse is
tests/report_lakehouse.py's (newest hour 2026-11-20 12:00Z)."""
from __future__ import annotations

from datetime import timedelta

import pyarrow as pa
import report_lakehouse as lh
from deltalake import DeltaTable, write_deltalake
from realservers import Receiver
from test_notify import write_inventory

from fleethealth.cli import check, main as cli
from fleethealth.lake.catalog import Lakehouse

def test_a_stale_pipeline_is_told_once_per_spell_and_resolved_when_hours_run_again(tmp_path):
    root = lh.build(tmp_path / "lakehouse", with_jmx=False)
    hook = Receiver()
    try:
        inventory = write_inventory(tmp_path, f"- {{name: oncall-hook, webhook: '{hook.url}/hook'}}\n")
        lakehouse, ended = Lakehouse.at(root), lh.END               # the newest hour, 12:00Z, ended at 13:00Z
        lines = []

        def run(after: timedelta) -> int:
            lines.clear()
            return check.stale(str(inventory), lakehouse, lines.append, now=ended + after)

        assert run(timedelta(hours=3)) == 0 and hook.bodies == []   # 3 h: not more than the limit
        assert lines == ["check --stale: the newest processed hour is 2026-11-20 12:00Z: not stale"]
        assert run(timedelta(hours=3, minutes=1)) == 2
        [stale] = hook.bodies
        assert (stale["kind"], stale["severity"], stale["status"], stale["transition"]) == (
            "pipeline_stale", "critical", "open", "opened")
        assert stale["summary"] == lines[0] == (
            "OPENED CRITICAL fleethealth pipeline_stale: the newest processed hour is 2026-11-20 12:00Z, which ended 3 h "
            "ago (more than FLEETHEALTH_STALE_AFTER_HOURS=3): nothing has been processed since; check the scheduler, "
            "the DAG's last runs and `fleethealth run`'s cron")
        assert run(timedelta(hours=4)) == 2 and len(hook.bodies) == 1  # told once per spell

        health = DeltaTable(str(root / "gold" / "broker_health_hourly")).to_pyarrow_table()
        newer = [dict(r, hour=lh.END) for r in health.to_pylist()[:1]]
        write_deltalake(str(root / "gold" / "broker_health_hourly"), pa.Table.from_pylist(newer, schema=health.schema),
                        mode="append", partition_by=["hour"])
        assert run(timedelta(hours=4)) == 0                           # 13:00Z processed: ended 3 h before
        assert [b["transition"] for b in hook.bodies] == ["opened", "resolved"]
        assert hook.bodies[1]["incident_id"] == stale["incident_id"] == "pipeline_stale-20261120T12"
        # 13:00Z's spell: a new one, told again; the command as a timer runs it tells no one twice
        assert run(timedelta(hours=4, minutes=30)) == 2 and len(hook.bodies) == 3
        assert hook.bodies[2]["incident_id"] == "pipeline_stale-20261120T13"
        assert cli.main(["check", "--stale", "--inventory", str(inventory), "--lakehouse", str(root)]) == 2
        assert len(hook.bodies) == 3
    finally:
        hook.stop()
