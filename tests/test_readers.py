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
