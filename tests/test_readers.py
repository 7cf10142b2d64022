"""The lakehouse read from Python without Spark, exactly as docs/gold-tables.md shows it (deltalake, polars, DuckDB
over deltalake's Arrow dataset: no DuckDB extension to download)."""
from __future__ import annotations

from datetime import datetime

import pytest
from readme_blocks import block
from fleethealth.runtime.frames import local_frame


@pytest.mark.spark
def test_the_readme_python_route_reads_what_spark_wrote(spark, tmp_path, monkeypatch):
    from fleethealth.lake import tables as lake
    from fleethealth.lake.catalog import Lakehouse

    rows = [("c1", "log_cleaner_dead", "critical", datetime(2026, 11, 20, 10, 20)),
            ("c1", "data_missing", "major", datetime(2026, 11, 20, 11, 0)),
            ("c2", "data_missing", "major", datetime(2026, 11, 20, 12, 0))]
    lakehouse = tmp_path / "demo" / "lakehouse"      # the doc reads demo/lakehouse
    lake.overwrite(local_frame(spark, rows, "cluster string, kind string, severity string, first_seen timestamp"),
                   "gold.incidents", Lakehouse.at(lakehouse))
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(block("run", "readers").text, scope)       # noqa: S102 - the doc's own code, as written
    assert sorted(scope["incidents"]["kind"]) == ["data_missing", "data_missing", "log_cleaner_dead"]
    assert scope["frame"].height == 3 and set(scope["frame"].columns) >= {"cluster", "kind", "first_seen"}
    assert sorted(scope["by_kind"].fetchall()) == [("data_missing", 2), ("log_cleaner_dead", 1)]


def test_a_process_reading_gold_with_delta_rs_exits_0_twenty_times_of_twenty(tmp_path):
    """delta-rs's to_pyarrow_table() of a gold table aborted at the interpreter's exit ("terminate called
    without an active exception", exit 134) in 4 of 10 runs: Arrow's I/O threads still calling delta-rs's
    file system, written in Python, when the interpreter ends. lake.arrow_rows, the one way fleethealth
    reads with delta-rs, reads a local table with Arrow's own file system on the calling thread. The run
    summary (report.text.incident_rows) and a partitioned gold table, read by processes that then exit
    at once, two at a time: exit 0 every time, as printed."""
    import os
    import subprocess
    import sys
    from concurrent.futures import ThreadPoolExecutor
    from pathlib import Path

    import report_lakehouse as lh

    root = lh.build(tmp_path / "lakehouse")
    code = ("import sys\n"
            "from fleethealth.lake import tables as lake\n"
            "from fleethealth.lake.catalog import Lakehouse\n"
            "from fleethealth.report.text import incident_rows\n"
            "root = Lakehouse.at(sys.argv[1])\n"
            "print(len(incident_rows(root)), lake.arrow_rows(lake.table('gold.broker_health_hourly').path(root)).num_rows)\n")
    include = Path(__file__).resolve().parents[1] / "include"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(include), os.environ.get("PYTHONPATH")])))

    def run(_):
        return subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, env=env, timeout=60)

    with ThreadPoolExecutor(2) as pool:      # two at a time: half the wall time on two cores
        runs = list(pool.map(run, range(20)))
    assert [(r.returncode, r.stdout, r.stderr) for r in runs] == [(0, "2 30\n", "")] * 20
