"""Hours of a simulated fleet end to end, layer by layer (docs/targets.md; issue 13 goals 2, 5 and 6).

Prints figures, not a verdict: nothing here fails on a missed target (exit 0 unless something breaks).

    . scripts/env.sh && .venv/bin/python bench/fleet_hour.py [--brokers 10[,30,100]] [--hours 1]
        [--bytes-per-broker-hour 20000000] [--jmx-samples-per-broker-hour 20000] [--workdir DIR --keep]

For each fleet size (--brokers, comma-separated): simulate the `healthy` cluster for --hours hours,
then for each hour, in one Spark session as `fleethealth run` runs it: pull, bronze, silver, gold
(each layer with its gate and its one write), and Spark's own scan of the hour's landed bytes
(`read.text` + `sum(length)`, every landed file). Prints seconds and MB/s per layer, end to end /
scan (goal 2: <= 20x), the JVM heap (goal 2: within 4 GB), the last hour over the first
(goal 5, with --hours >= 2: <= 1.25x; also in CPU seconds of the driver's Python and JVM, which
other work on a shared machine skews far less than wall time) and, for several sizes, MB/s per layer by size (goal 6:
throughput should not fall as the fleet grows).
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from common import load

from fleethealth.lake.catalog import Lakehouse

TARGET_VS_SCAN = 20.0
TARGET_GROWTH = 1.25
TARGET_FLEET100_S = 180.0
LAYERS = ("pull", "bronze", "silver", "gold")


def _args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--brokers", default="10", help="fleet sizes, comma-separated (default 10)")
    p.add_argument("--hours", type=int, default=1, help="consecutive hours per fleet (default 1)")
    p.add_argument("--bytes-per-broker-hour", type=int, default=20_000_000,
                   help="Kafka log bytes per broker and hour (default 20000000)")
    p.add_argument("--jmx-samples-per-broker-hour", type=int, default=20_000,
                   help="JMX samples per broker and hour (default 20000)")
    p.add_argument("--start", default="2026-11-20T10:00:00+00:00", help="first hour, ISO, UTC (default %(default)s)")
    p.add_argument("--goals", default="2,5,6", help="which goals' lines to print (default 2,5,6)")
    p.add_argument("--workdir", help="scratch folder (default: a new temporary folder, removed afterwards)")
    p.add_argument("--keep", action="store_true", help="keep the scratch folder")
    a = p.parse_args(argv)
    try:
        a.sizes = [int(x) for x in a.brokers.split(",") if x.strip()]
    except ValueError:
        p.error(f"--brokers: comma-separated integers, got {a.brokers!r}")
    a.goals = {g.strip() for g in a.goals.split(",")}
    if not a.sizes or min(a.sizes) < 1 or a.hours < 1 or a.bytes_per_broker_hour < 1:
        p.error("--brokers, --hours and --bytes-per-broker-hour must be >= 1")
    return a


def main(argv: list[str] | None = None) -> int:
    a = _args(argv)
    work = Path(a.workdir) if a.workdir else Path(tempfile.mkdtemp(prefix="fleethealth-bench-fleet-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        return _run(a, work)
    finally:
        if a.keep:
            print(f"scratch kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def _run(a: argparse.Namespace, work: Path) -> int:
    from pyspark.sql import functions as F

    from fleethealth.pipeline import window as pipeline
    from fleethealth.fleet.inventory import load_inventory
    from fleethealth.pull.hour import pull_hour
    from fleethealth.runtime.session import build_session
    from fleethealth.simulate import simulate

    start = datetime.fromisoformat(a.start)
    start = (start if start.tzinfo else start.replace(tzinfo=timezone.utc)).astimezone(timezone.utc)
    hours = [start + timedelta(hours=i) for i in range(a.hours)]
    t_begin = time.perf_counter()
    print(f"fleethealth fleet hours — {datetime.now().astimezone():%Y-%m-%d %H:%M %Z}, {os.cpu_count()} CPUs, "
          f"load average {load()} (other work on the cores skews every figure)")
    print(f"per fleet: healthy scenario, {a.hours} h x {a.bytes_per_broker_hour:,} B of logs and "
          f"{a.jmx_samples_per_broker_hour:,} JMX samples per broker-hour", flush=True)

    spark = build_session("bench-fleet", str(work / "warehouse"))
    spark.sparkContext.setLogLevel("ERROR")
    spark.range(1000).selectExpr("sum(length(cast(id as string)))").collect()  # untimed JVM warm-up
    jvm_pid = spark._jvm.java.lang.ProcessHandle.current().pid()
    rows = []  # (brokers, hour, landed bytes, {figure: seconds})
    for size in a.sizes:
        fleet = work / f"fleet-{size}"
        t0 = time.perf_counter()
        inv = simulate(fleet / "sim", ["healthy"], start, start + timedelta(hours=a.hours), brokers=size,
                       bytes_per_broker_hour=a.bytes_per_broker_hour,
                       jmx_samples_per_broker_hour=a.jmx_samples_per_broker_hour)
        print(f"\n{size} brokers: simulated in {time.perf_counter() - t0:.0f}s", flush=True)
        inventory, lakehouse = load_inventory(inv), str(fleet / "lakehouse")
        for hour in hours:
            t = {}
            cpu0 = _cpu_seconds(jvm_pid)
            t0 = time.perf_counter()
            landed = pull_hour(inventory, hour, Lakehouse.at(lakehouse))
            t["pull"] = time.perf_counter() - t0
            paths = [str(Lakehouse.at(lakehouse).landing(hour) / x.file) for x in landed]
            nbytes = sum(x.size for x in landed)
            t0, c0 = time.perf_counter(), _cpu_seconds(jvm_pid)
            spark.read.text(paths).agg(F.sum(F.length("value"))).collect()
            t["scan"], t["scan_cpu"] = time.perf_counter() - t0, _cpu_seconds(jvm_pid) - c0
            for layer in ("bronze", "silver", "gold"):
                t0 = time.perf_counter()
                out = pipeline.run_window(spark, [hour], str(inv), Lakehouse.at(lakehouse), layers=[layer])[hour]
                if isinstance(out, pipeline.LayerFailed):
                    raise out.cause
                t[layer] = time.perf_counter() - t0
            t["cpu"] = _cpu_seconds(jvm_pid) - cpu0 - t.pop("scan_cpu")
            rows.append((size, hour, nbytes, t))
            _print_hour(size, hour, nbytes, t)
        if not a.keep:
            shutil.rmtree(fleet, ignore_errors=True)
    heap_peak, heap_max = _heap(spark)
    spark.stop()
    _summary(a, rows, heap_peak, heap_max)
    print(f"\nload average now {load()}; total wall {time.perf_counter() - t_begin:.0f}s")
    return 0


def _cpu_seconds(jvm_pid: int) -> float:
    """CPU seconds so far of this Python process and the driver's JVM (local mode: every executor)."""
    fields = Path(f"/proc/{jvm_pid}/stat").read_text().rsplit(")", 1)[1].split()
    return time.process_time() + (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _total(t: dict) -> float:
    return sum(t[x] for x in LAYERS)


def _print_hour(size: int, hour: datetime, nbytes: int, t: dict) -> None:
    mb = nbytes / 1e6
    print(f"  {hour:%Y-%m-%d %H:%M} landed {mb:8.1f} MB  scan {t['scan']:6.1f}s  "
          + "  ".join(f"{x} {t[x]:6.1f}s" for x in LAYERS)
          + f"  total {_total(t):6.1f}s ({mb / _total(t):5.1f} MB/s, {_total(t) / t['scan']:5.1f}x scan)  cpu {t['cpu']:6.1f}s",
          flush=True)


def _summary(a: argparse.Namespace, rows: list, heap_peak: float, heap_max: float) -> None:
    print(f"\n{'brokers':>7} {'hours':>5} {'MB/hour':>8} {'scan s':>7}"
          + "".join(f"{x + ' s':>9}" for x in LAYERS) + f"{'total s':>9}{'total/scan':>11}")
    by_size = {}
    for size, _hour, nbytes, t in rows:
        by_size.setdefault(size, []).append((nbytes, t))
    for size, hs in by_size.items():
        n = len(hs)
        mean = {k: sum(t[k] for _, t in hs) / n for k in ("scan", *LAYERS)}
        mb = sum(b for b, _ in hs) / n / 1e6
        print(f"{size:>7} {n:>5} {mb:>8.1f} {mean['scan']:>7.1f}" + "".join(f"{mean[x]:>9.1f}" for x in LAYERS)
              + f"{_total(mean):>9.1f}{_total(mean) / mean['scan']:>10.1f}x")
    print()
    if "2" in a.goals:
        _goal2(by_size, heap_peak, heap_max)
    if "5" in a.goals:
        _goal5(a, by_size)
    if "6" in a.goals:
        _goal6(by_size)


def _goal2(by_size: dict, heap_peak: float, heap_max: float) -> None:
    biggest = max(by_size)  # the goal is the 2 GB hour; a small hour is all fixed cost and no scan
    worst = max(_total(t) / t["scan"] for _, t in by_size[biggest])
    print(f"goal 2  end to end / scan   {biggest} brokers, worst hour {worst:5.1f}x   target <= {TARGET_VS_SCAN:.0f}x   "
          f"{'met' if worst <= TARGET_VS_SCAN else 'MISSED'}")
    if 100 in by_size:
        secs = max(_total(t) for _, t in by_size[100])
        print(f"goal 2  fleet-100 hour (100 brokers)   {secs:6.1f}s   target <= {TARGET_FLEET100_S:.0f}s   "
              f"{'met' if secs <= TARGET_FLEET100_S else 'MISSED'}   (ZooKeeper servers included; the DAG's "
              "spark-submits not measured here)")
    print(f"goal 2  JVM heap            max {heap_max / 2**20:,.0f} MB (spark.driver.memory; every hour above ran within it), "
          f"old generation peak {heap_peak / 2**20:,.0f} MB   target: within 4096 MB")


def _goal5(a: argparse.Namespace, by_size: dict) -> None:
    if a.hours >= 2:
        for size, hs in by_size.items():
            growth = _total(hs[-1][1]) / _total(hs[0][1])
            print(f"goal 5  {size} brokers: hour {len(hs)} / hour 1   {growth:5.2f}x   target <= {TARGET_GROWTH}x   "
                  f"{'met' if growth <= TARGET_GROWTH else 'MISSED'}   (hour 1 includes the JVM's warm-up)")
            if len(hs) >= 8:  # without the warm-up, and steadier: median of 3 hours at each end
                early = statistics.median(_total(t) for _, t in hs[1:4])
                late = statistics.median(_total(t) for _, t in hs[-3:])
                print(f"goal 5  {size} brokers: median of the last 3 hours / of hours 2-4   {late / early:5.2f}x   "
                      f"({late:.1f}s / {early:.1f}s)   {'met' if late / early <= TARGET_GROWTH else 'MISSED'}")
                early = statistics.median(t["cpu"] for _, t in hs[1:4])
                late = statistics.median(t["cpu"] for _, t in hs[-3:])
                print(f"goal 5  {size} brokers: the same in CPU seconds (Python + JVM)   {late / early:5.2f}x   "
                      f"({late:.1f}s / {early:.1f}s)   {'met' if late / early <= TARGET_GROWTH else 'MISSED'}")
                for layer in ("bronze", "silver", "gold"):
                    e = statistics.median(t[layer] for _, t in hs[1:4])
                    l_ = statistics.median(t[layer] for _, t in hs[-3:])
                    print(f"goal 5      {layer:<7} {e:6.1f}s -> {l_:6.1f}s   {l_ / e:5.2f}x")
    else:
        print("goal 5  (needs --hours >= 2; the goal's own run is --brokers 10 --hours 48)")


def _goal6(by_size: dict) -> None:
    if len(by_size) >= 2:
        print("goal 6  MB/s per layer by fleet size (landed MB / layer seconds, mean over the hours):")
        print(f"goal 6  {'brokers':>7}" + "".join(f"{x:>9}" for x in ("scan", *LAYERS, "total")))
        for size, hs in by_size.items():
            mb = sum(b for b, _ in hs) / 1e6
            secs = {k: sum(t[k] for _, t in hs) for k in ("scan", *LAYERS)}
            secs["total"] = sum(secs[x] for x in LAYERS)
            print(f"goal 6  {size:>7}" + "".join(f"{mb / secs[k]:>9.1f}" for k in ("scan", *LAYERS, "total")))
    else:
        print("goal 6  (needs several sizes, e.g. --brokers 10,30,100)")


def _heap(spark) -> tuple[float, float]:
    """Peak of the driver JVM's old generation (what outlives a task) and the heap's maximum (local
    mode: the executors run in the driver)."""
    mf = spark._jvm.java.lang.management.ManagementFactory
    peak = max((p.getPeakUsage().getUsed() for p in mf.getMemoryPoolMXBeans()
                if str(p.getType()) == "Heap memory" and "Old" in p.getName()), default=0)
    return float(peak), float(mf.getMemoryMXBean().getHeapMemoryUsage().getMax())


if __name__ == "__main__":
    sys.exit(main())
