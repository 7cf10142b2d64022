"""Kafka log parsing throughput: silver vs Spark's own scan vs a plain-Python regex parser (docs/targets.md).

Prints figures, not a verdict: nothing here fails on a missed target (exit 0 unless something breaks).

    . scripts/env.sh && .venv/bin/python bench/parse_throughput.py [--brokers 5]
        [--bytes-per-broker-hour 20000000] [--hours 1] [--repeats 3] [--workdir DIR --keep]

Steps: simulate the `healthy` cluster, pull the hour(s) into a scratch lakehouse, then time (best of
--repeats, wall clock) over the same landed Kafka log files:

  spark-scan  spark.read.text(paths) + sum(length(value)), collected        (Spark's floor)
  bronze      fleethealth.bronze.tables.records(...) where source = 'kafka'         noop write
  silver      materialized bronze -> log4j.assemble -> parse_records -> with_events, noop write
              (as silver.job.window runs it: from the bronze hour computed once, `frames.materialize`)
  python      one process, per line: log4j.KAFKA.header with `re`           (alternative 1)
  duckdb      DuckDB (every core): each line through regexp_extract of the same header regex into
              its named groups, every field summed                          (alternative 2)

plus two partial silver chains (assemble only; assemble + parse_records) to show where time goes,
and whether the silver plan holds a Python UDF node. MB/s = landed Kafka bytes / 10**6 / seconds.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from common import load

from fleethealth.lake.catalog import Lakehouse

PYTHON_UDF_NODES = ("BatchEvalPython", "ArrowEvalPython", "MapInPandas", "MapInArrow",
                    "FlatMapGroupsInPandas", "FlatMapGroupsInArrow", "FlatMapCoGroupsIn")
TARGET_VS_SCAN = 0.5
TARGET_VS_PYTHON = 1.5


def _args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--brokers", type=int, default=5, help="brokers of the simulated cluster (default 5)")
    p.add_argument("--bytes-per-broker-hour", type=int, default=20_000_000,
                   help="Kafka log bytes per broker and hour (default 20000000)")
    p.add_argument("--hours", type=int, default=1, help="hours to simulate and parse (default 1)")
    p.add_argument("--start", default="2026-11-20T10:00:00+00:00", help="first hour, ISO, UTC (default %(default)s)")
    p.add_argument("--repeats", type=int, default=3, help="timed runs per figure; the best counts (default 3)")
    p.add_argument("--timezone", default="Europe/Berlin", help="zone of the log timestamps (default %(default)s)")
    p.add_argument("--no-breakdown", action="store_true", help="skip the partial silver chains")
    p.add_argument("--workdir", help="scratch folder (default: a new temporary folder, removed afterwards)")
    p.add_argument("--keep", action="store_true", help="keep the scratch folder")
    a = p.parse_args(argv)
    if a.brokers < 1 or a.bytes_per_broker_hour < 1 or a.hours < 1 or a.repeats < 1:
        p.error("--brokers, --bytes-per-broker-hour, --hours and --repeats must be >= 1")
    return a


def _best(label: str, fn, repeats: int) -> tuple[float, object]:
    """Best wall time of `repeats` runs of fn() and the last result."""
    times, result = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    print(f"  {label:<34} runs {' '.join(f'{t:6.2f}s' for t in times)}   best {min(times):6.2f}s", flush=True)
    return min(times), result


def python_parse(paths: list[str], header: str) -> tuple[int, int]:
    """Plain-Python per-line parser: the Kafka header regex on every line. Returns (lines, headers)."""
    rx = re.compile(header)
    match = rx.match
    lines = headers = 0
    rows = []
    for path in paths:
        with open(path, encoding="utf-8", errors="replace", newline="\n") as fh:
            for line in fh:
                lines += 1
                m = match(line.rstrip("\r\n"))
                if m:
                    headers += 1
                    ts, alt_level, thread, alt_logger, level, body = m.groups()
                    rows.append((ts, alt_level or level, thread, alt_logger, body))
                    if len(rows) >= 10_000:  # fields are materialised, then dropped (like a noop sink)
                        rows.clear()
    return lines, headers


def duckdb_parse(paths: list[str], header: str) -> tuple[int, int]:
    """DuckDB on every core: read the files line by line, the Kafka header regex's groups extracted in one
    `regexp_extract` per line (RE2), every field used so none is optimised away. Returns (lines, headers)."""
    import duckdb

    groups = ["ts", "alt_level", "thread", "alt_logger", "level", "body"]
    pattern = header.replace("'", "''")
    con = duckdb.connect()
    try:
        return con.execute(f"""
            WITH m AS (
                SELECT regexp_extract(line, '{pattern}', {groups!r}) AS g
                FROM read_csv(?, columns = {{'line': 'VARCHAR'}}, header = false, delim = '\x1f',
                              quote = '', escape = '', auto_detect = false, new_line = '\\n'))
            SELECT count(*), count_if(g.ts <> ''),
                   sum(length(g.ts) + length(g.alt_level) + length(g.thread) + length(g.alt_logger)
                       + length(g.level) + length(g.body))
            FROM m""", [paths]).fetchone()[:2]
    finally:
        con.close()


def main(argv: list[str] | None = None) -> int:
    a = _args(argv)
    t_start = time.perf_counter()
    work = Path(a.workdir) if a.workdir else Path(tempfile.mkdtemp(prefix="fleethealth-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        return _run(a, work, t_start)
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"scratch kept: {work}")


def _run(a: argparse.Namespace, work: Path, t_start: float) -> int:
    from fleethealth.fleet.inventory import load_inventory
    from fleethealth.pull.hour import pull_hour
    from fleethealth.simulate import simulate

    start = datetime.fromisoformat(a.start)
    if start.tzinfo is None:
        start = start.replace(tzinfo=timezone.utc)
    start = start.astimezone(timezone.utc)
    end = start + timedelta(hours=a.hours)
    lakehouse = work / "lakehouse"

    t0 = time.perf_counter()
    inv = simulate(work / "sim", ["healthy"], start, end, brokers=a.brokers,
                   bytes_per_broker_hour=a.bytes_per_broker_hour)
    t_sim = time.perf_counter() - t0
    t0 = time.perf_counter()
    inventory = load_inventory(inv)
    hours = [start + timedelta(hours=i) for i in range(a.hours)]
    landed = {h: [x for x in pull_hour(inventory, h, Lakehouse.at(lakehouse)) if x.source == "kafka"] for h in hours}
    t_pull = time.perf_counter() - t0
    paths = [str(Lakehouse.at(lakehouse).landing(h) / x.file) for h in hours for x in landed[h]]
    nbytes = sum(x.size for h in hours for x in landed[h])
    if not nbytes:
        print("no Kafka log bytes landed: nothing to measure", file=sys.stderr)
        return 1
    mb = nbytes / 1e6
    print(f"fleethealth parse throughput — {datetime.now().astimezone():%Y-%m-%d %H:%M %Z}, "
          f"{os.cpu_count()} CPUs, load average {load()} (other work on the cores skews every figure)")
    print(f"input: {a.brokers} brokers x {a.hours} h x {a.bytes_per_broker_hour:,} B/broker-hour "
          f"-> {len(paths)} landed Kafka log files, {nbytes:,} bytes ({mb:.1f} MB)")
    print(f"  simulate {t_sim:.1f}s, pull {t_pull:.1f}s (not measured below)", flush=True)

    # (d) first: no JVM running yet, so the Python figure is not competing with a warm-up GC.
    print(f"timing, best of {a.repeats}:", flush=True)
    header = _header()  # imports pyspark (through fleethealth.silver.parsers): outside the timed runs
    t_py, (n_lines, n_headers) = _best("python (re, 1 process)", lambda: python_parse(paths, header), a.repeats)
    t_duck, duck_counts = _best("duckdb (regexp_extract, all cores)", lambda: duckdb_parse(paths, header), a.repeats)
    if duck_counts != (n_lines, n_headers):
        print(f"  note: duckdb read {duck_counts[0]:,} lines / {duck_counts[1]:,} headers, python "
              f"{n_lines:,} / {n_headers:,}", flush=True)

    from pyspark.sql import functions as F

    from fleethealth.bronze import tables as bronze
    from fleethealth.runtime.frames import materialize
    from fleethealth.runtime.session import build_session
    from fleethealth.silver.parsers import log4j

    t0 = time.perf_counter()
    spark = build_session("bench", str(lakehouse))
    spark.sparkContext.setLogLevel("ERROR")
    spark.range(1000).selectExpr("sum(length(cast(id as string)))").collect()  # untimed JVM warm-up
    t_session = time.perf_counter() - t0
    master = spark.sparkContext.master
    parallelism = spark.sparkContext.defaultParallelism

    def noop(df) -> None:
        df.write.format("noop").mode("overwrite").save()

    def bronze_df():
        frames = [bronze.records(spark, landed[h], Lakehouse.at(lakehouse).landing(h), h) for h in hours]
        df = frames[0]
        for f in frames[1:]:
            df = df.unionByName(f)
        return df.where(F.col("source") == "kafka")

    kafka_bronze = {}

    def assembled():
        records, _orphans = log4j.assemble(kafka_bronze["df"], log4j.KAFKA)
        return records

    def parsed():
        return log4j.parse_records(assembled(), log4j.KAFKA, F.lit(a.timezone))

    def silver():
        return log4j.with_events(parsed(), "kafka")

    def scan():
        return spark.read.text(paths).agg(F.sum(F.length("value"))).collect()[0][0]

    t_scan, scanned_chars = _best("spark-scan (read.text + sum length)", scan, a.repeats)
    t_bronze, _ = _best("bronze (records, noop write)", lambda: noop(bronze_df()), a.repeats)
    t0 = time.perf_counter()
    kafka_bronze["df"] = materialize(bronze_df())
    t_materialize = time.perf_counter() - t0
    partial = {}
    if not a.no_breakdown:
        partial["  assemble"] = _best("assemble (noop)", lambda: noop(assembled()), a.repeats)[0]
        partial["  + parse_records"] = _best("  + parse_records (noop)", lambda: noop(parsed()), a.repeats)[0]
    t_silver, _ = _best("silver (+ with_events, noop)", lambda: noop(silver()), a.repeats)

    plan = silver()._jdf.queryExecution().executedPlan().toString()
    udf_nodes = sorted({n for n in PYTHON_UDF_NODES if n in plan})
    n_records = silver().count()
    spark.stop()

    def rate(t: float) -> float:
        return mb / t

    rows = [("spark-scan", t_scan), ("bronze", t_bronze), ("  (materialize bronze, once)", t_materialize),
            *((k, v) for k, v in partial.items()),
            ("silver (full Kafka parse)", t_silver), ("python per-line regex", t_py),
            ("duckdb regexp_extract", t_duck)]
    print()
    print(f"{'figure':<28}{'best s':>8}{'MB/s':>9}   (over {mb:.1f} MB of landed Kafka logs)")
    for name, t in rows:
        print(f"{name:<28}{t:>8.2f}{rate(t):>9.1f}")
    print()
    for name, ratio, target in (("silver / spark-scan", t_scan / t_silver, TARGET_VS_SCAN),
                                ("silver / python", t_py / t_silver, TARGET_VS_PYTHON),
                                ("silver / duckdb", t_duck / t_silver, TARGET_VS_PYTHON),
                                ("bronze / spark-scan", t_scan / t_bronze, TARGET_VS_SCAN)):
        print(f"goal 3  {name:<20} {ratio:5.2f}x   target >= {target}x   {'met' if ratio >= target else 'MISSED'}")
    print(f"bronze + silver / spark-scan  {t_scan / (t_bronze + t_silver):5.2f}x   (landed bytes to silver rows)")
    print(f"goal 3  python UDF in silver plan: {'yes (' + ', '.join(udf_nodes) + ')' if udf_nodes else 'no'}")
    print()
    print(f"lines {n_lines:,}, log4j headers {n_headers:,} (python), silver records {n_records:,}, "
          f"chars scanned {scanned_chars:,}")
    print(f"spark: {master}, default parallelism {parallelism}, session start + warm-up {t_session:.1f}s; "
          f"load average now {load()}; "
          f"total wall {time.perf_counter() - t_start:.0f}s")
    return 0


def _header() -> str:
    from fleethealth.silver.parsers.log4j import KAFKA
    return KAFKA.header


if __name__ == "__main__":
    sys.exit(main())
