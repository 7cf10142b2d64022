"""A backfill through Airflow against `fleethealth backfill` (issue 49: ≤ 1.5×, identical gold tables).

    make bench ARGS="backfill-airflow --hours 24"

Simulates the demo's fleet for the window into a scratch folder, then backfills it twice into two
lakehouses: `fleethealth backfill --from --to` (one process, one Spark session), and the backfill DAG
as README tells a user to run it (`fleet_health_backfill` with the window as its conf; here through
`airflow dags test`, the DAG's tasks run by Airflow in one process, as `make demo` runs the hourly DAG).
Prints both wall times, their ratio and whether every gold table (but quality_results, whose rows
carry the time they ran) holds the same rows.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from common import load

TARGET_X = 1.5


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--hours", type=int, default=24)
    p.add_argument("--workdir", help="scratch folder (default: a new temporary folder, removed afterwards)")
    a = p.parse_args(argv)
    work = Path(a.workdir or tempfile.mkdtemp(prefix="fleethealth-bench-backfill-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        return _run(a.hours, work)
    finally:
        if not a.workdir:
            shutil.rmtree(work, ignore_errors=True)


def _run(n_hours: int, work: Path) -> int:
    from fleethealth.cli.demo import SCENARIOS, START
    from fleethealth.runtime import config
    from fleethealth.simulate import simulate

    end = START + timedelta(hours=n_hours)
    print(f"fleethealth backfill through Airflow vs the CLI — {time.strftime('%Y-%m-%d %H:%M %Z')}, "
          f"{os.cpu_count()} CPUs, load average {load()}; the demo's fleet, {n_hours} hours")
    inventory = simulate(work / "fleet", SCENARIOS, START, end)
    window = {"from": START.isoformat(), "to": end.isoformat()}
    bin_dir = Path(sys.executable).parent

    t0 = time.perf_counter()
    cli = subprocess.run([str(bin_dir / "fleethealth"), "backfill", "--inventory", str(inventory),
                          "--lakehouse", str(work / "cli"), "--from", window["from"], "--to", window["to"]],
                         capture_output=True, text=True)
    took_cli = time.perf_counter() - t0
    (work / "cli.log").write_text(cli.stdout + cli.stderr)
    print(f"  fleethealth backfill        {took_cli:7.1f}s  exit {cli.returncode}", flush=True)

    env = dict(os.environ, **{config.ENV_INVENTORY: str(inventory), config.ENV_LAKEHOUSE: str(work / "dag")})
    t0 = time.perf_counter()
    dag = subprocess.run([str(bin_dir / "airflow"), "dags", "test", config.BACKFILL_DAG_ID, "--conf", json.dumps(window)],
                         env=env, capture_output=True, text=True)
    took_dag = time.perf_counter() - t0
    (work / "dag.log").write_text(dag.stdout + dag.stderr)
    ok = dag.returncode == 0 and "state=success" in dag.stdout + dag.stderr
    print(f"  Airflow fleet_health_backfill {took_dag:5.1f}s  {'success' if ok else 'FAILED'}", flush=True)
    if cli.returncode or not ok:
        print((work / ("cli.log" if cli.returncode else "dag.log")).read_text()[-4000:], file=sys.stderr)
        return 1
    same = _same_gold(work)
    print(f"goal 49c  Airflow backfill / fleethealth backfill ({n_hours} hours)   {took_dag / took_cli:.2f}x "
          f"({took_dag:.0f}s / {took_cli:.0f}s)   target <= {TARGET_X}x   "
          f"{'met' if took_dag <= TARGET_X * took_cli and same else 'MISSED'}; gold tables {'identical' if same else 'DIFFER'}")
    print(f"load average now {load()}")
    return 0


def _same_gold(work: Path) -> bool:
    from fleethealth.lake import tables as lake
    from fleethealth.lake.catalog import Lakehouse
    from fleethealth.runtime.session import build_session

    spark = build_session("bench-backfill-compare")
    try:
        a, b = (lake.contents(spark, "gold", Lakehouse.at(work / x)) for x in ("cli", "dag"))
        differ = sorted(name for name in a.keys() | b.keys() if a.get(name) != b.get(name))
        if differ:
            print(f"  gold tables that differ: {', '.join(differ)}")
        return not differ
    finally:
        spark.stop()


if __name__ == "__main__":
    sys.exit(main())
