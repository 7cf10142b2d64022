"""`make demo`: simulate 3 hours of a small mixed fleet (a ZooKeeper-mode cluster with post-mortem 3, the
dead log cleaner, and a KRaft cluster whose controllers fence a broker), run the hourly DAG for each hour
through Airflow (`airflow dags test`: real task runs, SparkSubmitOperator, Delta), then print the
incidents from gold and write the offline HTML report.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from fleethealth.lake.catalog import Lakehouse
from fleethealth.lake.hours import HOUR, hours_between
from fleethealth.runtime import config

DEMO_DIR = config.PROJECT_ROOT / "demo"
START = datetime(2026, 11, 20, 10, tzinfo=timezone.utc)
END = datetime(2026, 11, 20, 13, tzinfo=timezone.utc)
# one ZooKeeper-mode cluster and one KRaft cluster (3 controllers, brokers on 3.9.1 and 4.1.0), each with incidents
SCENARIOS = ["pm3-dead-cleaner", "kraft-broker-fenced"]


def run_dag_hour(hour: datetime, env: dict, log: Path) -> bool:
    """`airflow dags test` for the run whose data interval is `hour` (logical date = hour + 1 h)."""
    airflow = str(Path(sys.executable).with_name("airflow"))
    cmd = [airflow, "dags", "test", config.DAG_ID, (hour + HOUR).isoformat()]
    with log.open("w") as out:
        proc = subprocess.run(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)
    return proc.returncode == 0 and "state=success" in log.read_text()


def print_incidents(lakehouse: Lakehouse) -> int:
    from fleethealth.report import text as report

    rows = report.incident_rows(lakehouse)
    print("\n" + report.incidents_report(rows, exposure=report.exposure_rows(lakehouse)))
    return len(rows)


def write_report(lakehouse: Lakehouse) -> Path:
    """The demo window's HTML report (the DAG's report task wrote the last 24 hours' there already)."""
    from fleethealth.report import html

    return html.write_report(lakehouse, START, END)


def main() -> int:
    t0 = time.monotonic()
    from fleethealth.simulate import simulate

    lakehouse = DEMO_DIR / "lakehouse"
    logs = DEMO_DIR / "logs"
    shutil.rmtree(lakehouse, ignore_errors=True)
    logs.mkdir(parents=True, exist_ok=True)
    inventory = simulate(DEMO_DIR / "fleet", SCENARIOS, START, END)
    print(f"simulated {', '.join(SCENARIOS)} for {START:%Y-%m-%d %H:%M} - {END:%H:%M} UTC; inventory: {inventory}")
    env = dict(os.environ, **{config.ENV_INVENTORY: str(inventory), config.ENV_LAKEHOUSE: str(lakehouse)})
    for hour in hours_between(START, END):
        t = time.monotonic()
        log = logs / f"{config.DAG_ID}-{hour:%Y%m%dT%H}.log"
        ok = run_dag_hour(hour, env, log)
        print(f"{config.DAG_ID} hour {hour:%Y-%m-%d %H:%M}Z: {'success' if ok else 'FAILED'} "
              f"({time.monotonic() - t:.0f} s, log {log.relative_to(config.PROJECT_ROOT)})")
        if not ok:
            print("".join(log.read_text().splitlines(keepends=True)[-40:]), file=sys.stderr)
            return 1
    catalog = Lakehouse.at(lakehouse)
    print_incidents(catalog)
    print(f"\nlakehouse: {lakehouse}  (query it: .venv/bin/fleethealth query --lakehouse {lakehouse} "
          f"\"SELECT kind, count(*) AS n FROM gold.incidents GROUP BY kind\")")
    print(f"Data Docs: {catalog.data_docs / 'index.html'}")
    print(f"HTML report: {write_report(catalog)}")
    print(f"demo wall time: {time.monotonic() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
