"""A backfill of consecutive hours two ways, in one Spark session: hour by hour (`pipeline.run_hour`, what
the DAG does) and as one window (`pipeline.run_window`, what `fleethealth run` does). Both gate and
publish every hour; each round writes a fresh lakehouse from the same landed hours, after one warm-up
hour. Prints seconds per round and window / hour by hour.

    make bench ARGS="backfill --hours 3 --scenario healthy,pm3-dead-cleaner"
"""
from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from fleethealth.lake.catalog import Lakehouse

os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")

START = datetime(2026, 11, 20, 10, tzinfo=timezone.utc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hours", type=int, default=3)
    ap.add_argument("--scenario", default="healthy,pm3-dead-cleaner", help="comma-separated")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--workdir", help="keep the fleet and lakehouses here (default: a temporary folder, removed)")
    args = ap.parse_args()

    from fleethealth.pipeline import window as pipeline
    from fleethealth.fleet.inventory import load_inventory
    from fleethealth.pull import hour as pull
    from fleethealth.runtime.session import build_session
    from fleethealth.simulate import simulate

    work = Path(args.workdir or tempfile.mkdtemp(prefix="fleethealth-backfill-"))
    hours = [START + timedelta(hours=h) for h in range(args.hours)]
    inventory_path = simulate(work / "fleet", args.scenario.split(","), START, hours[-1] + timedelta(hours=1),
                              jmx_samples_per_broker_hour=0)
    inventory = load_inventory(inventory_path)
    spark = build_session("bench-backfill", lakehouse=str(work / "warehouse"), master="local[*]")
    print(f"load average at start: {os.getloadavg()[0]:.1f}; {len(hours)} hours of {args.scenario}")

    def landed(name: str) -> str:
        lakehouse = str(work / name)
        for hour in hours:
            pull.pull_hour(inventory, hour, Lakehouse.at(lakehouse))
        return lakehouse

    pipeline.run_hour(spark, hours[0], str(inventory_path), Lakehouse.at(landed("warm-up")))
    try:
        for round_ in range(args.rounds):
            lakehouse = landed(f"hourly-{round_}")
            t = time.perf_counter()
            for hour in hours:
                pipeline.run_hour(spark, hour, str(inventory_path), Lakehouse.at(lakehouse))
            hourly = time.perf_counter() - t
            lakehouse = landed(f"window-{round_}")
            t = time.perf_counter()
            outcomes = pipeline.run_window(spark, hours, str(inventory_path), Lakehouse.at(lakehouse))
            window = time.perf_counter() - t
            failed = [h.isoformat() for h, out in outcomes.items() if isinstance(out, Exception)]
            assert not failed, f"hours failed in the window: {failed}"
            print(f"round {round_}: hour by hour {hourly:6.1f} s, as a window {window:6.1f} s "
                  f"(window / hour by hour = {window / hourly:.2f})", flush=True)
    finally:
        spark.stop()
        print(f"load average at end: {os.getloadavg()[0]:.1f}")
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
