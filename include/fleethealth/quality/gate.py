"""The quality gate of a layer (write-audit-publish): validate an hour's computed tables with their
GX suites (fleethealth.quality.suites), record the results in gold.quality_results and the Data
Docs, and only if no critical expectation failed publish them (replaceWhere of the hour). A failed
gate raises QualityGateError, leaves the published tables as they were and stages the rejected ones
in <lakehouse>/_staging/<hour>/<layer>/. Owns gold.quality_results. A layer may add audits: frames
derived across its tables, validated with their own suite and never stored (gold's completeness).
A window of hours is audited hour by hour (`of_hours`) and the hours that passed are published
together (`publish_passed`); the gates of a window's layers record their results in one commit
(`results_together`).
"""
from __future__ import annotations

import logging
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from fleethealth.lake import locks
from fleethealth.lake import tables as lake
from fleethealth.lake.catalog import Lakehouse
from fleethealth.quality import suites as quality
from fleethealth.runtime import config, interrupt
from fleethealth.runtime.frames import local_frame, materialize_all, run_all

log = logging.getLogger("fleethealth.quality.gate")


@dataclass
class GateReport:
    layer: str
    hour: datetime
    results: list = field(default_factory=list)
    published: list = field(default_factory=list)
    data_docs: Path | None = None
    validated: list = field(default_factory=list)   # the tables (and audits) the results are of
    rows: DataFrame | None = None                   # the results as gold.quality_results rows

    def summary(self) -> str:
        failed = [r for r in self.results if not r.success]
        text = (f"validate_{self.layer} {self.hour.isoformat()}: {len(self.results)} expectations on "
                f"{len({r.table for r in self.results})} tables, {len(failed)} failed "
                f"({sum(r.critical for r in failed)} critical)")
        if self.published:
            text += f"; published {', '.join(self.published)}"
        return text


def data_docs_dir(lakehouse: Lakehouse) -> Path | None:
    """Where Data Docs go, or None when FLEETHEALTH_DATA_DOCS=0 (validation still runs)."""
    return lakehouse.data_docs if config.data_docs_enabled() else None


@locks.holding_hour("validate_{layer}")
def gate(spark: SparkSession, layer: str, hour: datetime, tables: dict, lakehouse: Lakehouse,
         audits: dict | None = None, staged: dict | None = None) -> GateReport:
    """The quality gate of `layer` for `hour` on the layer's computed tables (name -> materialized
    frame, or the frame of its files `staged`, see publish): validate them (and the layer's `audits`),
    record the results, then either publish them (one commit per table) or, on a critical failure,
    stage them for inspection and raise QualityGateError (nothing published)."""
    report = audit(spark, layer, hour, tables, lakehouse, audits)
    publish(tables, [hour], lakehouse, [report], staged)
    report.published = lake.layer_tables(layer)
    return report


@locks.holding_hour("validate_{layer}")
def audit(spark: SparkSession, layer: str, hour: datetime, tables: dict, lakehouse: Lakehouse,
          audits: dict | None = None) -> GateReport:
    """The gate without its publishing: validate the hour's tables and the layer's `audits` (name ->
    a frame derived across them, validated with expectations/<name>.json, never stored); on a
    critical failure record the results, stage the tables for inspection and raise QualityGateError.
    The results of an hour that passed are recorded when it is published (`publish(..., reports)`,
    in the same batch of writes). A window validates each of its hours so, then publishes those that
    passed at once."""
    if layer not in lake.LAYERS:
        raise ValueError(f"unknown layer {layer!r}; one of {', '.join(lake.LAYERS)}")
    names = lake.layer_tables(layer)
    if sorted(tables) != sorted(names):
        raise ValueError(f"the {layer} gate needs exactly the tables {', '.join(names)}; got {', '.join(tables)}")
    frames = dict(tables, **materialize_all(audits or {}))
    docs = data_docs_dir(lakehouse)
    report = GateReport(layer, hour, data_docs=docs / "index.html" if docs else None)
    report.results = quality.validate_tables(frames, hour=hour, data_docs_dir=docs, persist=False)
    report.validated = list(frames)
    report.rows = local_frame(spark, quality.results_rows(report.results, hour), quality.RESULTS_SCHEMA_DDL)
    log.info(report.summary())
    lake.drop_staging(spark, hour, layer, lakehouse)   # a rejected earlier attempt of this hour
    try:
        quality.enforce(report.results)
    except quality.QualityGateError:
        interrupt.check()       # the failures of jobs a signal cancelled: nothing to record
        reports = [report, *_pending_results(take=True)]
        run_all([lambda: record(reports, lakehouse)] + [
            lambda item=item: lake.stage(item[1], item[0], hour, lakehouse) for item in tables.items()])
        raise
    return report


def record(reports: list[GateReport], lakehouse: Lakehouse) -> None:
    """Write the results of gates (of one or several layers and hours) into gold.quality_results, in
    one commit replacing each gate's results (its hour's, of the tables it validated)."""
    by_hour: dict = {}
    for r in reports:
        by_hour.setdefault(r.hour, {}).update(dict.fromkeys(r.validated))
    where = " OR ".join(f"({lake.hour_predicate(hour)} AND `table` IN ({', '.join(repr(n) for n in names)}))"
                        for hour, names in by_hour.items())
    rows = reports[0].rows
    for report in reports[1:]:
        rows = rows.unionByName(report.rows)
    lake.write_hour(rows, "gold.quality_results", list(by_hour), lakehouse, where=where)


# the results of the gates of a `results_together` block not recorded yet, and the block's last layer
_together: ContextVar[tuple[list, str] | None] = ContextVar("fleethealth_gate_results", default=None)


@contextmanager
def results_together(lakehouse: Lakehouse, last_layer: str):
    """A block in which the gates of several layers (pipeline.window: an hour's bronze, silver and gold)
    record their results in one commit, not one each: with the publishing of `last_layer`, or with
    the failed gate that stops the block before it. If the block ends before either (a job raised, a
    signal), the results of the layers it published are recorded as it ends, a signal notwithstanding."""
    token = _together.set(([], last_layer))
    try:
        yield
    finally:
        pending = _pending_results(take=True)
        _together.reset(token)
        if pending:
            with interrupt.finishing():
                record(pending, lakehouse)


def _pending_results(take: bool = False) -> list[GateReport]:
    """The results of a results_together block not recorded yet (`take`: and none from now on)."""
    together = _together.get()
    if together is None:
        return []
    pending = list(together[0])
    if take:
        together[0].clear()
    return pending


def publish(tables: dict, hours: list[datetime], lakehouse: Lakehouse, reports: list[GateReport] = (),
            staged: dict | None = None) -> None:
    """Write validated tables (name -> frame holding rows of `hours` only) into the published ones:
    one commit per table replacing those hours (a table that is not hourly, whole); `reports` (the
    gates that passed those hours) are recorded in gold.quality_results in the same batch of writes
    (a tiny Delta write costs about as much as a big one: together they overlap), or, inside a
    results_together block, with its last layer's. A table `staged`
    (name -> lake.staged.Staged) for exactly these hours is published by committing its files.
    Not started after a signal, finished whatever signal comes while it runs (runtime.interrupt): a
    layer's hours are published whole or not at all."""
    def write(item):
        name, df = item
        done = (staged or {}).get(name)
        if done is not None and sorted(done.hours) == sorted(hours):
            done.commit()
        elif isinstance(df, lake.Merge):
            lake.merge(df, name, lakehouse)
        elif lake.table(name).hourly:
            lake.write_hour(df, name, hours, lakehouse)
        else:
            lake.overwrite(df, name, lakehouse)
    writes = [lambda item=item: write(item) for item in tables.items()]
    together = _together.get()
    if reports and together is not None and reports[0].layer != together[1]:
        together[0].extend(reports)     # recorded with the block's last layer (results_together)
    elif reports:
        reports = [*_pending_results(take=True), *reports]
        writes.insert(0, lambda: record(reports, lakehouse))
    with interrupt.publishing():
        run_all(writes)


def of_hours(tables: dict, hours) -> dict:
    """The rows of `hours` (or of one hour) of each hourly table of a window (a table that is not
    hourly as it is)."""
    return {name: df.where(F.expr(lake.hour_predicate(hours))) if lake.table(name).hourly else df
            for name, df in tables.items()}


def publish_passed(tables: dict, passed: list[datetime], out: dict, lakehouse: Lakehouse, staged=None) -> None:
    """Publish the rows of the hours of a window (`tables`) that passed their audit (`out`: hour ->
    (result, its GateReport)), at once (`staged`: see publish)."""
    if passed:
        publish(of_hours(tables, passed), passed, lakehouse, [out[hour][1] for hour in passed], staged)
        for hour in passed:
            out[hour][1].published = [name for name in lake.TABLES if name in tables]
