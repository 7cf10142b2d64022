"""Parse throughput of the non-log sources (Jolokia JSON, jmx_exporter scrapes, jstack dumps,
kafka-log-dirs snapshots): silver parser vs Spark's own scan of the same bytes (docs/targets.md).

Prints figures, not a verdict (exit 0 unless something breaks).

    . scripts/env.sh && .venv/bin/python bench/parse_throughput_nonlog.py [--mb 40] [--repeats 3]

Inputs are built from the realistic files under tests/fixtures (golden cases and the real
jmx_exporter scrape), multiplied to about --mb MB per source, laid out as landed files of one hour:
  jolokia     JSON-lines files (one bulk read response per line: the golden bulk + pattern reads)
  prometheus  one scrape per file (the real 414-series jmx_exporter 0.6 scrape, 60 KB)
  jstack      one dump per file (the JDK 8 Kafka 0.10.1.0 dump, its threads repeated to ~150 per dump,
              with its 3-thread deadlock)
  logdirs     kafka-log-dirs output per file (banner lines + one JSON line, 3 brokers x 2 dirs x 1000
              partitions)
Per source, best of --repeats wall times:
  spark-scan  spark.read.text(paths) + sum(length(value)), collected
  bronze      fleethealth.bronze.tables.records(...) (noop write)
  silver      bronze -> the source's parser(s) as silver.build calls them, every output (noop writes)
MB/s = input bytes / 10**6 / seconds; ratio = silver MB/s / spark-scan MB/s.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import load  # noqa: E402
from parse_throughput import PYTHON_UDF_NODES  # noqa: E402  (one definition for both benches)

from fleethealth.lake.catalog import Lakehouse

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "fixtures" / "golden"
SCRAPE = ROOT / "tests" / "fixtures" / "samples" / "tangfeixiong_kafka-0.10_jmx_exporter-0.6_scrape.prom"
HOUR = datetime(2026, 11, 20, 10, tzinfo=timezone.utc)


def _inputs(landing: Path, mb: float) -> dict[str, list[tuple[str, str, int]]]:
    """source -> [(landing folder, relative file, size)] of about `mb` MB each."""
    target = int(mb * 1e6)
    out: dict[str, list[tuple[str, str, int]]] = {}

    def put(source: str, folder: str, name: str, text: str) -> None:
        rel = f"bench/broker-{len(out.get(source, [])) % 5}/{folder}/{name}"
        (landing / rel).parent.mkdir(parents=True, exist_ok=True)
        (landing / rel).write_text(text)
        out.setdefault(source, []).append((folder, rel, len(text.encode())))

    lines = [x for x in (GOLDEN / "jolokia" / "jolokia-1.x-bulk-pattern-404.jsonl").read_text().splitlines()
             if x.startswith("[")]
    bulk = json.loads(lines[0]) + json.loads((GOLDEN / "jolokia" / "jolokia-2.x-bulk-pattern-no-attribute.json").read_text())
    line = json.dumps(bulk, separators=(",", ":")) + "\n"
    per_file = max(1, int(4e6 // len(line)))
    for i in range(max(1, target // (per_file * len(line)))):
        put("jolokia", "jmx", f"jolokia-{i}.jsonl.2026-11-20-05", line * per_file)

    scrape = SCRAPE.read_text()
    for i in range(max(1, target // len(scrape))):
        put("prometheus", "jmx", f"metrics-{i:05d}-2026-11-20T05-{i % 60:02d}-00.prom", scrape)

    dump = (GOLDEN / "jstack" / "kafka-0.10.1.0-jdk8-deadlock.txt").read_text()
    head, rest = dump.split("\n\n", 1)
    threads, tail = rest.split("JNI global references", 1)
    big = head + "\n\n" + threads * 25 + "JNI global references" + tail
    for i in range(max(1, target // len(big))):
        put("jstack", "threaddumps", f"jstack-{i:04d}-2026-11-20T05-45-00.txt", big)

    doc = {"version": 1, "brokers": [{"broker": b, "logDirs": [
        {"logDir": f"/data/d{d}/kafka", "error": None, "partitions": [
            {"partition": f"topic-{p % 40}-{p}", "size": 1048576 * p, "offsetLag": 0, "isFuture": False}
            for p in range(500)]} for d in (1, 2)]} for b in (1, 2, 3)]}
    snap = ("Querying brokers for log directories information\nReceived log directory information from brokers 1,2,3\n"
            + json.dumps(doc, separators=(",", ":")) + "\n")
    for i in range(max(1, target // len(snap))):
        put("logdirs", "logdirs", f"logdirs-{i:04d}-2026-11-20T05-00-00.txt", snap)
    return out


def _best(label: str, fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    print(f"  {label:<28} runs {' '.join(f'{t:6.2f}s' for t in times)}   best {min(times):6.2f}s", flush=True)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mb", type=float, default=40.0, help="input MB per source (default 40)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--sources", default="jolokia,prometheus,jstack,logdirs")
    a = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="fleethealth-bench-nonlog-"))
    try:
        return _run(a, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run(a, work: Path) -> int:
    from pyspark.sql import functions as F

    from fleethealth.bronze import tables as bronze
    from fleethealth.pull.landing import Landed
    from fleethealth.runtime.session import build_session
    from fleethealth.silver.parsers import jolokia, logdirs, prometheus, threaddump

    lakehouse = work / "lakehouse"
    landing = Lakehouse.at(lakehouse).landing(HOUR)
    t0 = time.perf_counter()
    inputs = _inputs(landing, a.mb)
    print(f"fleethealth non-log parse throughput — {datetime.now().astimezone():%Y-%m-%d %H:%M %Z}, "
          f"{os.cpu_count()} CPUs, load average {load()}; inputs written in {time.perf_counter() - t0:.1f}s")
    spark = build_session("bench-nonlog", str(lakehouse))
    spark.sparkContext.setLogLevel("ERROR")
    spark.range(1000).selectExpr("sum(length(cast(id as string)))").collect()
    tz = F.lit("Europe/Berlin")

    def noop(*dfs) -> None:
        for df in dfs:
            df.write.format("noop").mode("overwrite").save()

    parsers = {
        "jolokia": lambda b: jolokia.parse(b),
        "prometheus": lambda b: prometheus.parse(b, tz),
        "jstack": lambda b: (*threaddump.parse(b, tz), *threaddump.deadlocks(b, tz)),
        "logdirs": lambda b: logdirs.parse(b, tz),
    }
    results = []
    for source in a.sources.split(","):
        files = inputs[source]
        nbytes = sum(size for _, _, size in files)
        mb = nbytes / 1e6
        landed = [Landed("bench", rel.split("/")[1], folder, rel, size, "sha", 0.0, 0.0) for folder, rel, size in files]
        paths = [str(landing / rel) for _, rel, _ in files]
        print(f"{source}: {len(files)} files, {mb:.1f} MB", flush=True)

        def bronze_df():
            return bronze.records(spark, landed, landing, HOUR)

        t_scan = _best("spark-scan", lambda: spark.read.text(paths).agg(F.sum(F.length("value"))).collect(), a.repeats)
        t_bronze = _best("bronze (noop)", lambda: noop(bronze_df()), a.repeats)

        def silver():
            noop(*parsers[source](bronze_df()))
            spark.catalog.clearCache()

        t_silver = _best("bronze + silver parse (noop)", silver, a.repeats)
        plans = " ".join(df._jdf.queryExecution().executedPlan().toString() for df in parsers[source](bronze_df()))
        udf = sorted({n for n in PYTHON_UDF_NODES if n in plans})
        results.append((source, mb, t_scan, t_bronze, t_silver, udf))
    spark.stop()
    print()
    print(f"{'source':<12}{'MB':>7}{'scan MB/s':>11}{'bronze MB/s':>13}{'silver MB/s':>13}{'silver/scan':>13}  python UDF")
    for source, mb, ts, tb, tsv, udf in results:
        print(f"{source:<12}{mb:>7.1f}{mb / ts:>11.1f}{mb / tb:>13.1f}{mb / tsv:>13.1f}{ts / tsv:>12.2f}x  "
              f"{', '.join(udf) or 'no'}")
    print(f"load average now {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
