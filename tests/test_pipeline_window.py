"""The one driver's error policy (pipeline.window), with the layer jobs replaced by functions that
return or raise what a job does: no Spark is started (the jobs themselves run on Spark in test_jobs)."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from fleethealth.lake.catalog import Lakehouse
from fleethealth.pipeline import window

H10, H11, H12 = (datetime(2026, 11, 20, h, tzinfo=timezone.utc) for h in (10, 11, 12))


class Report:
    def summary(self) -> str:
        return "ok"


@pytest.fixture
def layers(monkeypatch):
    """Calls of each layer's job: bronze fails H11; a window of silver with H12 in it raises, H12 alone
    fails its gate."""
    calls = []

    def bronze(spark, hour, lakehouse):
        calls.append(("bronze", [hour]))
        if hour == H11:
            raise ValueError("bronze gate")
        return 5, Report()

    def silver(spark, hours, inventory, lakehouse):
        calls.append(("silver", hours))
        if H12 in hours and len(hours) > 1:
            raise RuntimeError("the window's plan failed")
        return {h: (ValueError("silver gate") if h == H12 else ([{"host": "k1"}], Report())) for h in hours}

    def gold(spark, hours, inventory, lakehouse, thresholds):
        calls.append(("gold", hours))
        return {h: ([], Report()) for h in hours}

    monkeypatch.setattr(window.bronze_job, "run", bronze)
    monkeypatch.setattr(window.silver_job, "window", silver)
    monkeypatch.setattr(window.gold_job, "window", gold)
    return calls


def test_a_failed_hour_leaves_the_layers_above_and_the_others_go_on(layers, tmp_path):
    out = window.run_window(None, [H12, H10, H11], "inv.yaml", Lakehouse(tmp_path, str(tmp_path)), echo=lambda t: None)
    assert layers == [("bronze", [H10]), ("bronze", [H11]), ("bronze", [H12]),
                      ("silver", [H10, H12]), ("silver", [H10]), ("silver", [H12]),   # the window, then hour by hour
                      ("gold", [H10])]
    assert set(out[H10]) == {"bronze_records", "reconciliation", "incidents", "gates"}
    assert (out[H11].layer, str(out[H11].cause), out[H11].done) == ("bronze", "bronze gate", {})
    assert (out[H12].layer, str(out[H12].cause)) == ("silver", "silver gate")
    assert out[H12].done["bronze_records"] == 5 and set(out[H12].done["gates"]) == {"bronze"}


def test_some_layers_only_and_run_hour_raises_the_cause(layers, tmp_path):
    lakehouse = Lakehouse(tmp_path, str(tmp_path))
    out = window.run_window(None, [H10], "inv.yaml", lakehouse, layers=["silver", "bronze"])
    assert [layer for layer, _ in layers] == ["bronze", "silver"] and "incidents" not in out[H10]
    with pytest.raises(ValueError, match="bronze gate"):
        window.run_hour(None, H11, "inv.yaml", lakehouse)


def test_the_run_loop_gathers_windows_and_reports_a_failed_hour_in_one_text(monkeypatch, tmp_path, capsys):
    """pipeline.run.run_hours, the loop of `fleethealth run`/`backfill` and spark/backfill.py: hours
    landed one by one, a window run when full or at the last hour, each hour given to `done`, a failed
    one reported in failure_text's words (the same wherever it runs)."""
    from fleethealth.pipeline import run
    from fleethealth.quality.suites import QualityGateError

    lakehouse = Lakehouse.at(tmp_path)
    windows = []

    def run_window(spark, hours, inventory, lakehouse, thresholds, echo):
        windows.append(hours)
        return {h: window.LayerFailed("silver", h, QualityGateError("expect_x failed"), {"bronze_records": 1})
                if h == H11 else {"bronze_records": 2} for h in hours}

    def land(hour):
        if hour == H12:
            raise run.NotLanded()
        return [f"{hour:%H}.log"]

    monkeypatch.setattr(window, "run_window", run_window)
    monkeypatch.setattr(window, "full", lambda chunk: len(chunk) >= 2)
    done, closed = [], []
    progress = run.run_hours(None, [H10, H11, H12], land, "inventory.yaml", lakehouse, None, print,
                             lambda hour, landed, out, seconds, n: done.append((hour, landed, n)),
                             window_done=lambda: closed.append(1))
    assert windows == [[H10, H11]] and closed == [1]          # H12 landed nothing: no window of its own
    assert done == [(H10, ["10.log"], 2), (H11, ["11.log"], 2)]
    assert (progress.published, progress.failed) == ([H10], [H11, H12])
    assert capsys.readouterr().err == (
        f"{H11.isoformat()}: FAILED quality gate validate_silver, nothing of the layer published (rejected tables "
        f"staged in {lakehouse.staging(H11, 'silver')}):\nexpect_x failed\n")
    other = window.LayerFailed("gold", H10, RuntimeError("boom"))
    assert run.failure_text(other, lakehouse) == f"{H10.isoformat()}: FAILED in gold: boom"
