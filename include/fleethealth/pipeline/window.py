"""The one driver of the layers: a window of (already pulled) hours through bronze, silver and gold,
each hour gated per layer, in one Spark session. spark/layers.py (the DAG's Spark step, a window of
one hour), `fleethealth run` / `backfill` and the tests run hours through it; its error policy is
the product's:

  - bronze hour by hour, then silver and gold each computed once for the hours that passed the layer
    below (a window's plan costs about what one hour's does), each hour audited on its own and the
    hours that passed published together;
  - an hour that fails a gate (or whose job raises) is left out of the layers above it; the other
    hours go on;
  - if computing a window raises, its hours are retried one by one, so one hour's input cannot fail
    the others;
  - a signal (runtime.interrupt) stops the window between jobs: it is never taken for a failed hour.
"""
from __future__ import annotations

import logging
from datetime import datetime

from pyspark.sql import SparkSession

from fleethealth.bronze import job as bronze_job
from fleethealth.gold import job as gold_job
from fleethealth.lake import tables as lake
from fleethealth.lake.catalog import Lakehouse
from fleethealth.quality import gate
from fleethealth.runtime import config, interrupt
from fleethealth.runtime.frames import LAYER_PROPERTY
from fleethealth.silver import job as silver_job

log = logging.getLogger("fleethealth.pipeline")
# what an hour's outcome holds of each layer
RESULTS = {"bronze": "bronze_records", "silver": "reconciliation", "gold": "incidents"}


class LayerFailed(Exception):
    """An hour's layer failed (`cause`: its QualityGateError or what its job raised); the layers above
    it did not run for that hour. `done`: what the layers below it gave (as an hour's outcome)."""

    def __init__(self, layer: str, hour: datetime, cause: BaseException, done: dict | None = None):
        super().__init__(str(cause))
        self.layer, self.hour, self.cause, self.done = layer, hour, cause, done or {}


def run_hour(spark: SparkSession, hour: datetime, inventory_path: str, lakehouse: Lakehouse,
             thresholds_path: str | None = None, echo=None) -> dict:
    """Bronze, silver and gold of one (already pulled) hour, each gated. Raises the exception that
    stopped it (a QualityGateError for a failed gate)."""
    outcome = run_window(spark, [hour], inventory_path, lakehouse, thresholds_path, echo)[hour]
    if isinstance(outcome, LayerFailed):
        raise outcome.cause
    return outcome


def run_window(spark: SparkSession, hours: list[datetime], inventory_path: str, lakehouse: Lakehouse,
               thresholds_path: str | None = None, echo=None, layers=lake.LAYERS) -> dict:
    """`layers` (default all, in their order) of (already pulled) `hours`, by the policy above.
    `echo(text)` receives each gate's summary.

    Per hour: {"bronze_records", "reconciliation", "incidents"} (of the layers run: gold.job.hour_incidents)
    and "gates" (layer -> its quality.gate.GateReport), or a LayerFailed naming the layer that stopped it."""
    echo = echo or log.info
    out: dict = {hour: {} for hour in sorted(hours)}
    jobs = {"bronze": None,
            "silver": (silver_job.window, (inventory_path, lakehouse)),
            "gold": (gold_job.window, (inventory_path, lakehouse, thresholds_path))}

    def settle(layer: str, outcomes: dict) -> None:
        for hour, outcome in sorted(outcomes.items()):
            if isinstance(outcome, BaseException):
                out[hour] = LayerFailed(layer, hour, outcome, out[hour])
            else:
                out[hour][RESULTS[layer]], report = outcome
                out[hour].setdefault("gates", {})[layer] = report
                echo(report.summary())

    def going() -> list[datetime]:
        return [hour for hour, outcome in out.items() if not isinstance(outcome, BaseException)]

    chosen = [x for x in lake.LAYERS if x in layers]
    try:
        with gate.results_together(lakehouse, chosen[-1] if chosen else ""):
            for layer in chosen:
                hours_left = going()
                if not hours_left:
                    break
                interrupt.check()
                _mark(spark, layer)
                if jobs[layer] is None:     # bronze: an hour's files are its own, hour by hour
                    settle(layer, {hour: _outcome(bronze_job.run, spark, hour, lakehouse) for hour in hours_left})
                    continue
                window_fn, args = jobs[layer]
                try:
                    outcomes = window_fn(spark, hours_left, *args)
                except Exception as exc:
                    interrupt.check()     # a job the signal cancelled: not a failed window
                    if len(hours_left) == 1:
                        outcomes = {hours_left[0]: exc}
                    else:
                        log.warning("%s of %d hours failed (%s); hour by hour instead", layer, len(hours_left), exc)
                        outcomes = {hour: _outcome(window_fn, spark, [hour], *args, of=hour) for hour in hours_left}
                settle(layer, outcomes)
    finally:
        _mark(spark, None)
    return out


def _mark(spark: SparkSession | None, layer: str | None) -> None:
    """Every Spark job of the layer says so (a job property, in an event log or the UI: bench/)."""
    if spark is not None:
        spark.sparkContext.setLocalProperty(LAYER_PROPERTY, layer)


def full(window: list) -> bool:
    """Whether pulled hours [(hour, landed files)] make a window: as many hours, or as many landed
    bytes, as one Spark plan should hold (FLEETHEALTH_RUN_WINDOW_HOURS, FLEETHEALTH_RUN_WINDOW_MB)."""
    hours, megabytes = config.run_window()
    landed = sum(x.size for _, files in window for x in files)
    return len(window) >= hours or landed >= megabytes * 1e6


def _outcome(fn, *args, of: datetime | None = None):
    """fn(*args), or the exception it raised; `of`: take that hour's outcome of a window function."""
    interrupt.check()
    try:
        result = fn(*args)
    except Exception as exc:
        interrupt.check()         # a job the signal cancelled: not a failed hour
        return exc
    return result[of] if of is not None else result
