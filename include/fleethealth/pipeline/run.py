"""The run loop of `fleethealth run` / `backfill` and of spark/backfill.py: hours, landed one by one
(`land`: pulled here, or read from their manifests), gathered into windows (window.full), each window
through the layers in one Spark session (window.run_window), each hour's outcome reported as it is
known; an hour that failed a layer is one text, wherever it runs (`failure_text`)."""
from __future__ import annotations

import gc
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from pyspark.sql import SparkSession

from fleethealth.lake.catalog import Lakehouse
from fleethealth.pipeline import window as pipeline_window
from fleethealth.quality.suites import QualityGateError
from fleethealth.runtime import interrupt


class NotLanded(Exception):
    """Raised by `land`: the hour failed before its layers (the caller said why). `landed`: the files
    that did land (its layers run on them; the hour counts failed all the same), or None."""

    def __init__(self, landed: list | None = None):
        super().__init__("not landed")
        self.landed = landed


@dataclass
class Progress:
    """The hours of a run so far: published (every layer), failed (a layer, or before them)."""
    published: list[datetime] = field(default_factory=list)
    failed: list[datetime] = field(default_factory=list)
    # why a failed hour was not published (a layer's failure or its gate's rejection; not a host's pull)
    reasons: dict[datetime, str] = field(default_factory=dict)


def failure_text(out: pipeline_window.LayerFailed, lakehouse: Lakehouse) -> str:
    """The lines an hour that failed a layer is reported with (on stderr)."""
    hour = out.hour.isoformat()
    if isinstance(out.cause, QualityGateError):
        return (f"{hour}: FAILED quality gate validate_{out.layer}, nothing of the layer published (rejected "
                f"tables staged in {lakehouse.staging(out.hour, out.layer)}):\n{out.cause}")
    return f"{hour}: FAILED in {out.layer}: {out.cause}"


def failure_reason(out: pipeline_window.LayerFailed, lakehouse: Lakehouse) -> str:
    """An hour's failure in one line (a notification's reason)."""
    if isinstance(out.cause, QualityGateError):
        failed = str(out.cause).strip().splitlines()
        return (f"the quality gate validate_{out.layer} rejected it ({failed[0] if failed else 'see the log'}); "
                f"the rejected tables are staged in {lakehouse.staging(out.hour, out.layer)}")
    return f"{out.layer} failed: {str(out.cause).strip().splitlines()[0] if str(out.cause).strip() else type(out.cause).__name__}"


def run_hours(spark: SparkSession, hours: list[datetime], land: Callable[[datetime], list],
              inventory_path: str, lakehouse: Lakehouse, thresholds_path: str | None,
              echo: Callable[[str], None], done: Callable[..., None],
              progress: Progress | None = None, window_done: Callable[[], None] | None = None) -> Progress:
    """Each of `hours` (in order) landed by `land(hour)` (its landed files; NotLanded: failed), the
    landed ones run a window at a time (pipeline.window's policy; `echo` receives each gate's summary).
    Per hour of a window: `done(hour, landed, outcome, seconds, hours_in_window)` (outcome: what
    window.run_window gives, a LayerFailed included), then a failed one's failure_text on stderr;
    `window_done()` after each window. `progress` receives the hours as they are known."""
    progress = progress if progress is not None else Progress()
    window: list = []
    for i, hour in enumerate(hours):
        interrupt.check()
        try:
            landed = land(hour)
        except NotLanded as exc:
            progress.failed.append(hour)
            landed = exc.landed
        if landed is not None:
            window.append((hour, landed))
        if window and (i == len(hours) - 1 or pipeline_window.full(window)):
            _run_window(spark, window, inventory_path, lakehouse, thresholds_path, echo, done, progress)
            window = []
            if window_done:
                window_done()
    return progress


def _run_window(spark, window: list, inventory_path, lakehouse, thresholds_path, echo, done,
                progress: Progress) -> None:
    t0 = time.monotonic()
    outcomes = pipeline_window.run_window(spark, [hour for hour, _ in window], inventory_path, lakehouse,
                                          thresholds_path, echo)
    seconds = time.monotonic() - t0
    # the window's DataFrames, some in reference cycles, hold its plans, broadcasts and checkpoints in
    # the JVM: freed now, not when Python's collector (paced by Python's small allocations) gets to them,
    # so that a run of many windows (a backfill) does not pile them up (tests/conftest.py measured it)
    gc.collect()
    for hour, landed in window:
        out = outcomes[hour]
        done(hour, landed, out, seconds, len(window))
        if isinstance(out, pipeline_window.LayerFailed):
            if hour not in progress.failed:
                progress.failed.append(hour)
            progress.reasons[hour] = failure_reason(out, lakehouse)
            print(failure_text(out, lakehouse), file=sys.stderr)
        else:
            progress.published.append(hour)
