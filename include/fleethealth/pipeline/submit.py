"""Command-line arguments and the main body shared by the spark-submit entry points in spark/."""
from __future__ import annotations

import argparse
import sys
import time

from fleethealth.lake import tables as lake
from fleethealth.lake.catalog import Lakehouse, LakehouseError
from fleethealth.lake.hours import parse_hour


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--hour", required=True, type=parse_hour, help="processed hour, ISO-8601 UTC")
    p.add_argument("--lakehouse", default=None, help="the lakehouse folder (default $FLEETHEALTH_LAKEHOUSE)")
    p.add_argument("--inventory", required=True, help="fleet inventory YAML")
    return p


def layers(text: str) -> list[str]:
    """`--layers bronze,silver`: known layers, in the layers' order."""
    chosen = {x.strip() for x in text.split(",") if x.strip()}
    unknown = chosen - set(lake.LAYERS)
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"layers are some of {','.join(lake.LAYERS)}; got {text!r}")
    return [layer for layer in lake.LAYERS if layer in chosen]


def lakehouse_of(p: argparse.ArgumentParser, args: argparse.Namespace) -> Lakehouse:
    """The catalog of the entry point's --lakehouse; a usage error (exit 2) when it is ambiguous."""
    try:
        return Lakehouse.from_settings(args.lakehouse)
    except LakehouseError as exc:
        p.error(str(exc))


def run_steps(args: argparse.Namespace, lakehouse: Lakehouse, steps: list) -> int:
    """The body of a spark-submit entry point: each (layer, run) in turn in one Spark session;
    `run(spark)` computes and gates the layer's hour and returns (text to print, the gate's report).
    Exit status 1 at the first gate that failed (that layer not published, the layers after it not
    run; the message names the failed expectations)."""
    from fleethealth.quality import gate
    from fleethealth.quality import suites as quality
    from fleethealth.runtime.session import build_session

    quality.preload()  # overlaps the GX import with the JVM start
    spark = build_session(f"fleethealth-{'-'.join(layer for layer, _ in steps)}", lakehouse.warehouse,
                          tables=lakehouse.tables)
    docs = gate.data_docs_dir(lakehouse)
    try:
        for layer, run in steps:
            started = time.monotonic()
            try:
                text, report = run(spark)
            except quality.QualityGateError as exc:
                print(f"validate_{layer} {args.hour.isoformat()}: nothing published (rejected tables staged in "
                      f"{lakehouse.staging(args.hour, layer)})\n{exc}", file=sys.stderr)
                return 1
            print(text)
            print(f"{report.summary()} ({time.monotonic() - started:.1f} s)", flush=True)
        return 0
    finally:
        if docs:
            print(f"Data Docs: {docs / 'index.html'}")
        spark.stop()
