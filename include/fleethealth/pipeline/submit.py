"""Command-line arguments and the main body shared by the spark-submit entry points in spark/."""
from __future__ import annotations

import argparse
import sys
import time

from fleethealth.lake import tables as lake
from fleethealth.lake.catalog import Lakehouse, LakehouseError
from fleethealth.lake.hours import not_after_now, parse_hour, parse_window
from fleethealth.runtime import config

BACKFILL_MAX_HOURS = 168     # a backfill DAG run's window; its pull tasks get the hourly pull's deadline for each hour


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--hour", required=True, type=_hour, help="processed hour, ISO-8601 UTC, not after the current one")
    p.add_argument("--lakehouse", default=None, help="the lakehouse folder (default $FLEETHEALTH_LAKEHOUSE)")
    p.add_argument("--inventory", required=True, help="fleet inventory YAML")
    return p


def _hour(text: str):
    """--hour: a whole UTC hour, the current one at the latest (lake.hours.not_after_now)."""
    try:
        return not_after_now(parse_hour(text), f"--hour {text}")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def layers(text: str) -> list[str]:
    """`--layers bronze,silver`: known layers, in the layers' order."""
    chosen = {x.strip() for x in text.split(",") if x.strip()}
    unknown = chosen - set(lake.LAYERS)
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"layers are some of {','.join(lake.LAYERS)}; got {text!r}")
    return [layer for layer in lake.LAYERS if layer in chosen]


def lakehouse_of(p: argparse.ArgumentParser, args: argparse.Namespace) -> Lakehouse:
    """The catalog of the entry point's --lakehouse, every FLEETHEALTH_* setting checked first; a usage
    error (exit 2) when one is wrong or the lakehouse is ambiguous."""
    try:
        config.settings()
        return Lakehouse.from_settings(args.lakehouse)
    except (config.SettingError, LakehouseError) as exc:
        p.error(str(exc))


def window_parser(description: str) -> argparse.ArgumentParser:
    """The backfill entry point's arguments: a window [--from, --to) instead of one --hour."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--from", dest="start", required=True, help="first hour, ISO-8601 UTC")
    p.add_argument("--to", dest="end", required=True, help="end of the window (excluded), ISO-8601 UTC")
    p.add_argument("--lakehouse", default=None, help="the lakehouse folder (default $FLEETHEALTH_LAKEHOUSE)")
    p.add_argument("--inventory", required=True, help="fleet inventory YAML")
    p.add_argument("--thresholds", default=None, help="threshold overrides YAML")
    return p


def backfill_window(start: str, end: str, names: tuple[str, str] = ("--from", "--to")) -> list:
    """The hours of a backfill DAG run's window [start, end): a window to process (lake.hours.parse_window,
    until now) of at most BACKFILL_MAX_HOURS; else one ValueError line. The DAG's `window` task and
    spark/backfill.py both check it."""
    hours = parse_window(start, end, names, until_now=True)
    if len(hours) > BACKFILL_MAX_HOURS:
        raise ValueError(f"{names[0]} {start} {names[1]} {end}: {len(hours)} hours; a run backfills at most "
                         f"{BACKFILL_MAX_HOURS} (trigger one run per week)")
    return hours


def run_hour(args: argparse.Namespace, lakehouse: Lakehouse, layers: list[str]) -> int:
    """The body of spark/layers.py: `layers` of the hour `args.hour` in one Spark session, through the
    one driver (pipeline.window). Exit status 1 when a gate failed (that layer not published, the
    layers after it not run; the message, pipeline.run.failure_text, names the failed expectations)."""
    from fleethealth.pipeline import window
    from fleethealth.pipeline.run import failure_text
    from fleethealth.quality import suites as quality

    _check_inventory(args.inventory)
    spark, echo = _session(lakehouse, f"fleethealth-{'-'.join(layers)}")
    hour = args.hour
    try:
        out = window.run_window(spark, [hour], args.inventory, lakehouse, args.thresholds, echo, layers)[hour]
        _print_hour(hour, out.done if isinstance(out, window.LayerFailed) else out)
        if not isinstance(out, window.LayerFailed):
            return 0
        if not isinstance(out.cause, quality.QualityGateError):
            raise out.cause
        print(failure_text(out, lakehouse), file=sys.stderr)
        return 1
    finally:
        _stop(spark, lakehouse)


def run_hours(args: argparse.Namespace, lakehouse: Lakehouse) -> int:
    """The body of spark/backfill.py: the (already pulled) hours of [--from, --to) in one Spark
    session, by the run loop of `fleethealth backfill` (pipeline.run): windows of consecutive hours,
    each hour gated layer by layer and published. Exit status 1 when an hour failed (the others are
    published; the message names each failed hour and why)."""
    from fleethealth.lake.hours import HOUR
    from fleethealth.pipeline import run, window
    from fleethealth.pull.landing import read_manifests

    hours = args.hours
    _check_inventory(args.inventory)
    spark, echo = _session(lakehouse, "fleethealth-backfill")

    def done(hour, landed, out, seconds, n) -> None:
        _print_hour(hour, out.done if isinstance(out, window.LayerFailed) else out)

    try:
        progress = run.run_hours(spark, hours, lambda hour: read_manifests(hour, lakehouse), args.inventory,
                                 lakehouse, args.thresholds, echo, done)
        print(f"backfill {hours[0].isoformat()} - {(hours[-1] + HOUR).isoformat()}: "
              f"{len(hours) - len(progress.failed)} of {len(hours)} hours published")
        return 1 if progress.failed else 0
    finally:
        _stop(spark, lakehouse)


def _check_inventory(path: str) -> None:
    """The inventory read whole, `notifications:` too, before the session starts: a mistake anywhere in it
    fails the job with nothing published, as `check` and the DAG's first task report it (the layers' own
    loads skip the channels, which live in notify)."""
    from fleethealth.notify.inventory import load_inventory

    load_inventory(path)


def _session(lakehouse: Lakehouse, name: str):
    """The job's Spark session and the echo of each gate's summary, with the time its layer took."""
    from fleethealth.quality import suites as quality
    from fleethealth.runtime.session import build_session

    quality.preload()  # overlaps the GX import with the JVM start
    spark = build_session(name, lakehouse.warehouse, tables=lakehouse.tables)
    started = [time.monotonic()]

    def echo(summary: str) -> None:
        print(f"{summary} ({time.monotonic() - started[0]:.1f} s)", flush=True)
        started[0] = time.monotonic()
    return spark, echo


def _print_hour(hour, done: dict) -> None:
    from fleethealth.report import text as report

    if "bronze_records" in done:
        print(f"bronze {hour.isoformat()}: {done['bronze_records']} records")
    if "reconciliation" in done:
        print(report.reconciliation_text(done["reconciliation"]))
    if "incidents" in done:
        print(report.hour_incidents_text(hour, done["incidents"]))


def _stop(spark, lakehouse: Lakehouse) -> None:
    from fleethealth.quality import gate

    docs = gate.data_docs_dir(lakehouse)
    if docs:
        print(f"Data Docs: {docs / 'index.html'}")
    spark.stop()
