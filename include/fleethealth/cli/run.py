"""`fleethealth pull`, `run` and `backfill`: the hours of a window landed, then (run, backfill) each
through the layers by the run loop (fleethealth.pipeline.run) in one Spark session, then the
incidents' summary, the notifications and the HTML report."""
from __future__ import annotations

import sys
from contextlib import ExitStack

from fleethealth.cli.usage import session
from fleethealth.lake import locks
from fleethealth.lake.catalog import Lakehouse
from fleethealth.lake.hours import HOUR, parse_window
from fleethealth.notify.inventory import load_inventory
from fleethealth.gold import thresholds
from fleethealth.runtime import config, interrupt


def cmd_pull(args) -> int:
    from fleethealth.pull import hour as pull
    from fleethealth.report import text as report

    inventory = load_inventory(args.inventory)
    rc = 0
    for hour in parse_window(args.start, args.end, until_now=True):
        try:
            landed = pull.pull_hour(inventory, hour, args.lakehouse)
        except pull.HostsFailed as exc:   # one line per failed host; the others landed
            print(f"{hour.isoformat()}: " + f"\n{hour.isoformat()}: ".join(map(report.printable, exc.errors)),
                  file=sys.stderr)
            landed, rc = exc.landed, 1
        rejected = [x for x in landed if x.status == "rejected"]
        print(f"{hour.isoformat()}: {len(landed) - len(rejected)} files landed"
              + (f", {len(rejected)} rejected:" if rejected else ""))
        for x in rejected:
            print(f"  {report.printable(x.file)}: {report.printable(x.reason)}")
    return rc


def cmd_run(args) -> int:
    """Pull, then bronze, silver and gold, each computed, validated hour by hour by its gate and
    published (the DAG's steps in one Spark session). Consecutive hours are processed as windows
    (silver and gold computed once per window and the hours that passed published together,
    pipeline.window), each window holding its hours' locks from pull to publish. A failed critical
    expectation fails that hour (its layer and everything above it unpublished) and the command exits 1 naming the expectation. Ctrl-C or SIGTERM cancels the
    Spark jobs, publishes nothing more (a layer being published is finished: runtime.interrupt),
    prints one line naming the hours not published and exits 130 or 143."""
    inventory = load_inventory(args.inventory)
    # a bad file is refused now, not by every hour's gold after its pull
    thresholds.load(args.thresholds, [c.name for c in inventory.clusters])
    hours = parse_window(args.start, args.end, until_now=True)
    published: list = []
    try:
        with interrupt.signals_stop_the_run():
            return _run(args, inventory, hours, published)
    # KeyboardInterrupt: PySpark's own SIGINT handler, in place while the session starts
    except (interrupt.Interrupted, KeyboardInterrupt) as exc:
        print(_interrupted(hours, published), file=sys.stderr)
        return exc.exit_code if isinstance(exc, interrupt.Interrupted) else 130


def _interrupted(hours: list, published: list) -> str:
    """The one line an interrupted run ends with."""
    left = [hour for hour in hours if hour not in published]
    if not left:
        return (f"interrupted: all {len(hours)} hour(s) published, the summary and notifications not done; "
                "re-run the window")
    what = (f"hour {left[0].isoformat()}" if len(left) == 1 else
            f"{len(left)} hours from {left[0].isoformat()} to {left[-1].isoformat()}")
    before = f" ({len(published)} hour(s) published before)" if published else ""
    return f"interrupted: {what} not published{before}; re-run the window"


def _one_window(hours: list) -> bool:
    """Whether a run of `hours` starts its JVM as the DAG's jobs do (spark_conf's short_lived: C1 alone,
    no whole-stage code generation; a CLI run of 2 small hours takes 25 % less CPU): a run of at most one
    window, as each application of the backfill DAG is. A longer run compiles its hot code fully. A
    session already running in this process keeps its own settings."""
    from pyspark import SparkContext

    return len(hours) <= config.run_window()[0] and SparkContext._active_spark_context is None


def _run(args, inventory, hours: list, published: list) -> int:
    """cmd_run's work, by the run loop (pipeline.run): each hour pulled and locked from its pull to
    its window's publish; `published` receives the hours published."""
    from fleethealth.pipeline import run as pipeline_run
    from fleethealth.pull import hour as pull
    from fleethealth.quality import gate
    from fleethealth.report import text as report

    spark = session("fleethealth-run", args.lakehouse, args.master or config.spark_master(),
                     short_lived=_one_window(hours))
    interrupt.handle_signals(spark.sparkContext.cancelAllJobs)    # in place of PySpark's SIGINT handler
    progress = pipeline_run.Progress(published=published)
    with ExitStack() as locked:
        def land(hour):
            try:
                # one run of an hour at a time: the DAG's jobs of this hour wait, or this run waits
                locked.enter_context(locks.hour_lock(hour, args.lakehouse, "fleethealth run"))
                return pull.pull_hour(inventory, hour, args.lakehouse)
            except pull.HostsFailed as exc:   # the others landed: gold marks these host-hours data_missing
                interrupt.check()
                print(f"{hour.isoformat()}: pull failed for {len(exc.errors)} host(s):\n  "
                      + "\n  ".join(map(report.printable, exc.errors)), file=sys.stderr)
                raise pipeline_run.NotLanded(exc.landed) from None
            except Exception as exc:  # one hour failing must not hide the others
                interrupt.check()
                print(f"{hour.isoformat()}: FAILED: {report.printable(str(exc))}", file=sys.stderr)
                raise pipeline_run.NotLanded() from None

        def done(hour, landed, out, seconds, n) -> None:
            if isinstance(out, dict):
                took = f"{seconds:.1f} s" + (f" for {n} hours" if n > 1 else "")
                print(f"{hour.isoformat()}: {len(landed)} files, {out['bronze_records']} bronze records, "
                      f"{len(out['incidents'])} incident(s) in the hour ({took})")
                print(report.reconciliation_text(out["reconciliation"]))

        pipeline_run.run_hours(spark, hours, land, args.inventory, args.lakehouse, args.thresholds, print, done,
                               progress, window_done=locked.close)
    failed = progress.failed
    interrupt.check()
    rows = report.incident_rows(args.lakehouse)
    # a failed run's summary is of the hours published before: never a healthy fleet's "no incidents"
    print("\n" + report.incidents_report(rows, failed=f"{len(failed)} of {len(hours)} hours failed" if failed else "",
                                         exposure=report.exposure_rows(args.lakehouse)))
    interrupt.check()
    if inventory.notifications and len(failed) < len(hours):
        from fleethealth.notify import notify

        # --no-notify: nothing to people (the window's own hours and the retractions it finds recorded
        # suppressed, the rest left to the next run); Alertmanager kept equal to the open incidents
        from fleethealth.notify.inventory import host_names

        print(notify(args.lakehouse, inventory.notifications, quiet_hours=() if args.notify else hours,
                     hosts=host_names(inventory), maintenance=inventory.maintenance).summary())
    if inventory.notifications and progress.reasons and args.notify:
        from fleethealth.notify.run import tell_failures

        for line in tell_failures(inventory.notifications, progress.reasons):
            print(report.printable(line), file=sys.stderr)
    docs = gate.data_docs_dir(args.lakehouse)
    if docs:
        print(f"Data Docs: {docs / 'index.html'}")
    if len(failed) < len(hours):
        _refresh_report(args.lakehouse, hours[0], hours[-1] + HOUR)
    if failed:
        print(f"{len(failed)} of {len(hours)} hours failed: {', '.join(h.isoformat() for h in sorted(failed))}",
              file=sys.stderr)
        return 1
    return 0


def _refresh_report(lakehouse: Lakehouse, start, end) -> None:
    """The HTML report of the run's window into <lakehouse>/report/; a failure of it is one line on
    stderr, never the run's."""
    from fleethealth.report import html

    try:
        print(f"HTML report: {html.write_report(lakehouse, start, end)}")
    except Exception as exc:  # noqa: BLE001 - the report is a view of gold: gold is published either way
        print(f"fleethealth: HTML report not written: {exc}", file=sys.stderr)
