"""`fleethealth` command line: simulate, check, pull, run (windows of hours: the backfill path), parse, query, report.

User mistakes (bad inventory, bad time, unknown table) print one clear line and exit 2.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from fleethealth.cli.query_command import DEFAULT_QUERY_LIMIT, DEFAULT_QUERY_TIMEOUT_S, cmd_query
from fleethealth.cli.run import cmd_pull, cmd_run
from fleethealth.cli.usage import EXIT_USAGE, UsageError, session
from fleethealth.fleet.inventory import InventoryError
from fleethealth.gold.thresholds import ThresholdError
from fleethealth.lake import tables as lake_tables
from fleethealth.lake.catalog import Lakehouse
from fleethealth.lake.hours import HOUR, parse_window
from fleethealth.runtime import config


def cmd_simulate(args) -> int:
    from fleethealth.simulate import simulate

    hours = parse_window(args.start, args.end)
    inventory = simulate(Path(args.out), args.scenario, hours[0], hours[-1] + HOUR,
                         brokers=args.brokers, seed=args.seed, bytes_per_broker_hour=args.bytes_per_broker_hour,
                         jmx_samples_per_broker_hour=args.jmx_samples_per_broker_hour, layout=args.layout,
                         log_format=args.log_format, timezone=args.timezone)
    print(f"fleet written under {Path(args.out).resolve()}; inventory: {inventory}")
    return 0


def cmd_check(args) -> int:
    """Whether an hour would run as set up (fleethealth.cli.check): exit 0, else 2 and a line per problem."""
    from fleethealth.cli.check import check, stale

    if args.stale:
        return stale(args.inventory, args.lakehouse)
    return check(args.inventory, notify=args.notify, thresholds_path=args.thresholds)


def cmd_parse(args) -> int:
    """The silver rows (and quarantine rows) of one raw file, as JSON lines, via the silver job's code."""
    import tempfile
    import threading

    from fleethealth.cli.parse import SMALL_FILE_BYTES, parsed_file, utc_text
    from fleethealth.runtime.spark_conf import SMALL_INPUT_CONF

    raw = Path(args.file)
    if not raw.is_file():
        raise UsageError(f"{raw}: no such file")
    with tempfile.TemporaryDirectory() as tmp:
        spark = session("fleethealth-parse", None, cores="local[2]", short_lived=True, warehouse=tmp).newSession()
        if raw.stat().st_size <= SMALL_FILE_BYTES:
            for key, value in SMALL_INPUT_CONF.items():
                spark.conf.set(key, value)
        # a JVM's first job costs a second or so of one-off set-up: run one while this thread builds
        # the plans (mostly waiting on the JVM's analyser, single-threaded)
        threading.Thread(target=lambda: spark.range(1).collect(), daemon=True).start()
        with parsed_file(spark, raw, args.source, args.timezone, scratch=tmp) as (rows, quarantine, extras):
            parsed, set_aside = 0, 0
            for r in utc_text(rows).toLocalIterator():
                row = r.asDict(recursive=True)
                print(json.dumps(row, default=str, sort_keys=True))
                parsed += 1
                if row.get("field_errors"):     # a value its type cannot hold: NULL, its text here
                    print(json.dumps({"field_errors": row["field_errors"], "line_number": row.get("line_number")},
                                     sort_keys=True), file=sys.stderr)
                    set_aside += 1
            for name, more in extras.items():
                for r in utc_text(more).toLocalIterator():
                    print(json.dumps({"table": name, **r.asDict(recursive=True)}, default=str, sort_keys=True))
            reasons: dict[str, int] = {}
            for r in quarantine.toLocalIterator():
                print(json.dumps({"quarantine": r.reason, "line_number": r.line_number, "record": r.record}),
                      file=sys.stderr)
                reasons[r.reason] = reasons.get(r.reason, 0) + 1
    quarantined = sum(reasons.values())
    print(f"fleethealth: {raw}: {parsed} parsed"
          + (f" ({set_aside} with a value set aside in field_errors)" if set_aside else "")
          + f", {quarantined} quarantined"
          + (": " + "; ".join(f"{reason} ({n})" for reason, n in sorted(reasons.items(), key=lambda x: -x[1]))
             if reasons else ""), file=sys.stderr)
    return 0 if parsed else 1


def cmd_report(args) -> int:
    """The offline HTML report of a window: OUT/index.html and one page per cluster (fleethealth.report.html)."""
    from fleethealth.report import html

    root = args.lakehouse
    if bool(args.start) != bool(args.end):
        raise UsageError("give both --from and --to, or neither (the last 24 processed hours)")
    if args.start:
        hours = parse_window(args.start, args.end)
        start, end = hours[0], hours[-1] + HOUR
    if not root.root.is_dir():
        raise UsageError(f"no lakehouse at {root} (give --lakehouse, or set ${config.ENV_LAKEHOUSE})")
    if not args.start:    # the DAG's report task's window, ending with the last processed hour
        last = html.last_processed_hour(root)
        if last is None:
            raise UsageError(f"{root}: no processed hour yet; give a window (--from, --to) "
                             "or run `fleethealth run` or the DAG first")
        start, end = html.last_hours(last)
        print(f"fleethealth: the last 24 processed hours: --from {start:%Y-%m-%dT%H:%M}Z --to {end:%Y-%m-%dT%H:%M}Z",
              file=sys.stderr)
    out = Path(args.out).resolve() if args.out else root.report
    if out.is_file():
        raise UsageError(f"--out {args.out}: a file; give a folder")
    if lake_tables.holds_tables(root, out):
        raise UsageError(f"--out {args.out}: inside the lakehouse's tables; give a folder of its own")
    if near := lake_tables.delta_table_near(out):
        raise UsageError(f"--out {args.out}: {near[0]} a Delta table ({near[1]}); give a folder of its own")
    t0 = time.monotonic()
    try:
        index = html.write_report(root, start, end, out, cluster=args.cluster)
    except html.ReportError as exc:
        raise UsageError(str(exc)) from None
    pages = len(list(out.glob("cluster-*.html")))
    print(f"HTML report: {index} ({pages} cluster page(s), {time.monotonic() - t0:.1f} s)")
    return 0


# options that name a file, each falling back on its FLEETHEALTH_* variable when not given (main():
# --lakehouse through Lakehouse.from_settings, these through config.setting)
PATH_SETTINGS = {"inventory": config.ENV_INVENTORY, "thresholds": config.ENV_THRESHOLDS}
# each subcommand's examples, the epilog of its --help
EXAMPLES = {
    "simulate": ["fleethealth simulate --out fleet --scenario healthy,pm3-dead-cleaner "
                 "--from 2026-11-20T10:00Z --to 2026-11-20T13:00Z",
                 "fleethealth simulate --out kraft-fleet --scenario kraft --from 2026-11-20T10:00Z --to 2026-11-20T13:00Z"],
    "check": ["fleethealth check --inventory inventory.yaml", "fleethealth check --notify"],
    "pull": ["fleethealth pull --inventory inventory.yaml --from 2026-11-20T10:00Z --to 2026-11-20T11:00Z"],
    "run": ["fleethealth run --inventory fleet/inventory.yaml --from 2026-11-20T10:00Z --to 2026-11-20T13:00Z"],
    "backfill": ["fleethealth backfill --from 2026-11-01T00:00Z --to 2026-11-08T00:00Z --no-notify"],
    "parse": ["fleethealth parse --source kafka server.log.2026-11-20-10",
              "fleethealth parse --source jstack --timezone Europe/Berlin threaddump-1.txt"],
    "query": ["fleethealth query \"SELECT kind, count(*) AS n FROM gold.incidents GROUP BY kind\"",
              "fleethealth query --format csv --out incidents.csv \"SELECT * FROM gold.incidents\""],
    "report": ["fleethealth report", "fleethealth report --from 2026-11-20T10:00Z --to 2026-11-20T13:00Z "
               "--cluster c1 --out /tmp/report"],
}


class _Help(argparse.HelpFormatter):
    """The description wrapped, the examples (the epilog) a line each."""

    def _fill_text(self, text, width, indent):
        return text if text.startswith("examples:") else super()._fill_text(text, width, indent)


def _command(sub, name: str, help_: str) -> argparse.ArgumentParser:
    """A subcommand whose --help ends with its examples."""
    return sub.add_parser(name, help=help_, description=help_, formatter_class=_Help,
                          epilog="examples:\n  " + "\n  ".join(EXAMPLES[name]))


def _path(s, flag: str, what: str, example: str) -> None:
    """A file option that falls back on its FLEETHEALTH_* variable (PATH_SETTINGS)."""
    env = PATH_SETTINGS[flag.lstrip("-")]
    s.add_argument(flag, default=None, metavar="FILE", help=f"{what} (default ${env}), e.g. {flag} {example}")


def _lakehouse(s) -> None:
    s.add_argument("--lakehouse", default=None, metavar="DIR",
                   help=f"the lakehouse folder (default ${config.ENV_LAKEHOUSE}), e.g. --lakehouse /data/lakehouse")


def _window(s, required: bool = True, until_now: bool = False) -> None:
    """--from/--to: the window [--from, --to) of whole UTC hours, read by lake.hours.parse_window
    (`until_now`: a window to pull or process, ending by the end of the current hour)."""
    unless = "" if required else "; without --from and --to: the last 24 processed hours"
    latest = "; at the latest the end of the current hour (UTC)" if until_now else ""
    s.add_argument("--from", dest="start", required=required, metavar="HOUR",
                   help=f"the window's first hour, ISO-8601 UTC on the hour, e.g. --from 2026-11-20T10:00Z{unless}")
    s.add_argument("--to", dest="end", required=required, metavar="HOUR",
                   help="the hour the window ends before (exclusive), e.g. --to 2026-11-20T13:00Z: "
                        f"hours 10:00, 11:00 and 12:00{latest}")


def _scenarios(value: str) -> str:
    """--scenario: scenario names, `all` or `kraft`, comma-separated, each checked here."""
    from fleethealth.simulate import resolve

    try:
        resolve(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


def _version() -> str:
    from importlib.metadata import version

    return f"fleethealth {version('fleethealth')}"


def build_parser() -> argparse.ArgumentParser:
    from fleethealth.cli.parse import SOURCES as PARSE_SOURCES  # pure names: no Spark imported here
    from fleethealth.cli.query import CELL_WIDTH
    from fleethealth.simulate import AVAILABILITY_SCENARIOS, KRAFT_SCENARIOS, SCENARIOS
    from fleethealth.simulate.forms import FORMS

    p = argparse.ArgumentParser(prog="fleethealth", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=_version())
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND",
                         help="`fleethealth COMMAND --help`: what each option takes, with examples")

    s = _command(sub, "simulate", "write a simulated fleet (logs, JMX, dumps, log-dirs) and its inventory")
    s.add_argument("--out", required=True, metavar="DIR",
                   help="folder for the fleet's files and its inventory.yaml (created), e.g. --out fleet")
    s.add_argument("--scenario", type=_scenarios, default="all", metavar="NAME[,NAME...]",
                   help=f"comma-separated: ZooKeeper-mode clusters {', '.join(SCENARIOS)}; KRaft clusters "
                        f"{', '.join(KRAFT_SCENARIOS)}; availability {', '.join(AVAILABILITY_SCENARIOS)}; all (the "
                        "ZooKeeper-mode ones but availability's, the default), kraft (the KRaft ones) or availability")
    _window(s)
    s.add_argument("--brokers", type=int, default=3, metavar="N", help="brokers per cluster (default 3)")
    s.add_argument("--seed", type=int, default=7, metavar="N",
                   help="random seed: the same seed, the same files (default 7)")
    s.add_argument("--bytes-per-broker-hour", type=int, default=200_000, metavar="BYTES",
                   help="bytes of Kafka logs per broker-hour, ± 5 %% (default 200000)")
    s.add_argument("--jmx-samples-per-broker-hour", type=int, default=20_000, metavar="N",
                   help="JMX samples per broker-hour as silver counts them (one per attribute value, one per item "
                        "of a composite), ± 5 %% (default 20000; 0: only the MBeans fleethealth reads)")
    s.add_argument("--layout", choices=("hourly", "archive"), default="hourly",
                   help="hourly: one file per hour (default); archive: as copied off the hosts after an incident "
                        "(live and .gz Kafka logs, size-rolled ZooKeeper logs, one truncated .gz, mtimes = now)")
    s.add_argument("--log-format", choices=tuple(FORMS), default="kafka", metavar="FORM",
                   help=f"how the clusters' deployment writes its files: {', '.join(FORMS)} (default kafka: "
                        f"Kafka's default layout in files per log)")
    s.add_argument("--timezone", default=None, metavar="ZONE",
                   help="an IANA zone every cluster's logs are written in, e.g. --timezone Asia/Kolkata "
                        "(default: each scenario's own)")
    s.set_defaults(func=cmd_simulate)

    s = _command(sub, "check", "whether an hour would run as set up: the settings, the inventory, every host "
                               "reached as the pull reaches it (SSH host key, each source's folder, Jolokia); "
                               "a line per problem with what to do; exit 0 only when none")
    _path(s, "--inventory", "the inventory YAML", "inventory.yaml")
    _path(s, "--thresholds", "a YAML of threshold overrides (values only)", "thresholds.yaml")
    s.add_argument("--notify", action="store_true",
                   help="also send each notification channel one real message marked TEST")
    s.add_argument("--stale", action="store_true",
                   help="only whether the pipeline is stale: its newest processed hour ended more than "
                        "FLEETHEALTH_STALE_AFTER_HOURS ago (pipeline_stale sent once to each channel; exit 2); "
                        "run it from a timer")
    _lakehouse(s)
    s.set_defaults(func=cmd_check)

    s = _command(sub, "pull", "land the fleet's files of each hour of a window")
    _path(s, "--inventory", "the inventory YAML", "inventory.yaml")
    _window(s, until_now=True)
    _lakehouse(s)
    s.set_defaults(func=cmd_pull)

    for name, help_ in (("run", "pull + bronze + silver + gold, each hour gated (the DAG's jobs; windows of hours)"),
                        ("backfill", "same as run: recompute a window, idempotently")):
        s = _command(sub, name, help_)
        _path(s, "--inventory", "the inventory YAML", "inventory.yaml")
        _window(s, until_now=True)
        _lakehouse(s)
        _path(s, "--thresholds", "a YAML of threshold overrides (values only)", "thresholds.yaml")
        s.add_argument("--master", default=None, metavar="URL",
                       help="Spark master URL, e.g. spark://HOST:7077 (default $FLEETHEALTH_SPARK_MASTER or local[*])")
        s.add_argument("--no-notify", dest="notify", action="store_false",
                       help="send nothing to people (webhook, e-mail, Slack): the state changes of the window's "
                            "own hours and the retractions the run finds are recorded as never to be sent "
                            "(suppressed), the rest waits for the next run that notifies; Alertmanager is still "
                            "kept equal to the open incidents (state, not a message)")
        s.set_defaults(func=cmd_run)

    s = _command(sub, "parse", "the silver records of one raw file as JSON lines (quarantine and a summary on "
                               "stderr; exit 1 when nothing parsed)")
    s.add_argument("--source", required=True, choices=tuple(PARSE_SOURCES), metavar="SOURCE",
                   help=f"what the file is: one of {', '.join(PARSE_SOURCES)}")
    s.add_argument("--timezone", default="UTC", metavar="ZONE",
                   help="IANA zone of the file's timestamps, e.g. --timezone Europe/Berlin (default UTC)")
    s.add_argument("file", metavar="FILE", help="the raw file, e.g. server.log.2026-11-20-10")
    s.set_defaults(func=cmd_parse)

    s = _command(sub, "query", "read-only SQL over bronze.*, silver.*, gold.* tables")
    s.add_argument("sql", metavar="SQL", help="one statement that reads: SELECT/WITH/VALUES, SHOW, DESCRIBE, EXPLAIN")
    _lakehouse(s)
    s.add_argument("--format", choices=("table", "csv", "json"), default="table",
                   help="how rows are printed: table (default), csv (a header line), json (one object a line)")
    s.add_argument("--limit", type=int, default=None, metavar="N",
                   help=f"rows to print (default {DEFAULT_QUERY_LIMIT}; 0 for all; with --out: all)")
    s.add_argument("--out", default=None, metavar="FILE",
                   help="write the rows to FILE.parquet, .csv or .json (JSON lines) instead, e.g. --out incidents.csv")
    s.add_argument("--overwrite", action="store_true", help="let --out replace an existing file")
    s.add_argument("--wide", action="store_true",
                   help=f"--format table: show every cell whole (default: cut at {CELL_WIDTH} characters)")
    s.add_argument("--timeout", type=float, default=DEFAULT_QUERY_TIMEOUT_S, metavar="SECONDS",
                   help=f"seconds before the query is stopped (default {DEFAULT_QUERY_TIMEOUT_S:g})")
    s.add_argument("--engine", choices=("duckdb", "spark"), default="duckdb",
                   help="duckdb (default): DuckDB's SQL dialect, answers in about a second; spark: Spark SQL "
                        "in a local JVM (10-20 s), Delta's own reader, Spark's dialect")
    s.set_defaults(func=cmd_query)

    s = _command(sub, "report", "an offline HTML report of a window: fleet overview and one page per cluster, "
                                "with charts (read from gold without Spark)")
    _lakehouse(s)
    _window(s, required=False)
    s.add_argument("--cluster", default=None, metavar="NAME", help="only this cluster, e.g. --cluster c1")
    s.add_argument("--out", default=None, metavar="DIR",
                   help="folder for index.html and the cluster pages (created; default the lakehouse's report "
                        "folder, which the DAG refreshes), e.g. --out /tmp/report")
    s.set_defaults(func=cmd_report)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.func is not cmd_check:     # check reports wrong settings itself, with what to do
            config.settings()  # every FLEETHEALTH_* variable, before any host is pulled or a JVM starts
        for dest, env in PATH_SETTINGS.items():
            if hasattr(args, dest) and not getattr(args, dest):
                setattr(args, dest, config.setting(env) or None)
        if hasattr(args, "lakehouse"):
            args.lakehouse = Lakehouse.from_settings(args.lakehouse)
        return args.func(args)
    except InventoryError as exc:
        for line in exc.problems:
            print(f"fleethealth: {line}", file=sys.stderr)
        return EXIT_USAGE
    except ThresholdError as exc:               # a line per mistake in the thresholds file
        print("\n".join(f"fleethealth: {line}" for line in str(exc).splitlines()), file=sys.stderr)
        return EXIT_USAGE
    except config.SettingError as exc:          # a line per wrong variable
        print("\n".join(f"fleethealth: {line}" for line in str(exc).splitlines()), file=sys.stderr)
        return EXIT_USAGE
    except (UsageError, ValueError) as exc:     # DuckDB's hints may follow on lines of their own
        print(f"fleethealth: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
