"""Tests of fleethealth.lake.staged: an hour written into a Delta table's files, invisible to readers
until committed, then published exactly as a replaceWhere overwrite of its hours would; or deleted."""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from fleethealth.lake.catalog import Lakehouse
from fleethealth.lake import tables as lake
from fleethealth.lake.staged import Staged

pytestmark = pytest.mark.spark

H10 = datetime(2026, 11, 20, 10, tzinfo=timezone.utc)
H11 = datetime(2026, 11, 20, 11, tzinfo=timezone.utc)
H12 = datetime(2026, 11, 20, 12, tzinfo=timezone.utc)
TABLE = "silver.partition_sizes"   # any hourly table: the test writes its own columns


def frame(spark, hour: datetime, n: int, tag: str, extra: bool = False):
    df = spark.range(n).select(F.col("id"), F.lit(tag).alias("tag"), F.lit(hour).cast("timestamp").alias("hour"))
    return df.withColumn("more", F.lit(1)) if extra else df


def published(spark, lakehouse) -> list[tuple]:
    return sorted((r.id, r.tag, r.hour.hour) for r in lake.read(spark, TABLE, Lakehouse.at(lakehouse)).collect())


def data_files(lakehouse) -> set[str]:
    return {str(p) for p in Path(lake.table(TABLE).path(Lakehouse.at(lakehouse))).rglob("*.parquet")}


def test_commit_replaces_exactly_its_hours_and_readers_see_nothing_before(spark, lakehouse):
    lake.write_hour(frame(spark, H10, 3, "old").unionByName(frame(spark, H11, 2, "old")), TABLE, [H10, H11],
                    Lakehouse.at(lakehouse))
    before = published(spark, lakehouse)
    staged = Staged(spark, frame(spark, H10, 4, "new").unionByName(frame(spark, H12, 1, "new")), TABLE,
                    [H10, H12], Lakehouse.at(lakehouse))
    assert sorted((r.id, r.tag, r.hour.hour) for r in staged.frame.collect()) == [
        (0, "new", 10), (0, "new", 12), (1, "new", 10), (2, "new", 10), (3, "new", 10)]
    assert published(spark, lakehouse) == before            # written, not visible
    version = staged.commit()
    assert published(spark, lakehouse) == sorted(
        [(i, "new", 10) for i in range(4)] + [(i, "old", 11) for i in range(2)] + [(0, "new", 12)])
    last = spark.sql(f"DESCRIBE HISTORY delta.`{lake.table(TABLE).path(Lakehouse.at(lakehouse))}`").orderBy(
        F.col("version").desc()).first()
    assert last.version == version and last.operation == "WRITE"
    assert last.operationParameters["mode"] == "Overwrite"
    assert last.operationParameters["predicate"] == lake.hour_predicate([H10, H12])
    staged.discard()                                        # after a commit: nothing to delete
    assert published(spark, lakehouse)[0] == (0, "new", 10)


def test_discard_deletes_the_written_files_and_leaves_the_table(spark, lakehouse):
    lake.write_hour(frame(spark, H10, 3, "old"), TABLE, [H10], Lakehouse.at(lakehouse))
    files = data_files(lakehouse)
    staged = Staged(spark, frame(spark, H10, 5, "rejected"), TABLE, [H10], Lakehouse.at(lakehouse))
    assert len(data_files(lakehouse)) > len(files)
    staged.discard()
    assert data_files(lakehouse) == files
    assert published(spark, lakehouse) == [(i, "old", 10) for i in range(3)]


def test_a_new_table_and_a_new_column(spark, lakehouse):
    staged = Staged(spark, frame(spark, H10, 2, "first"), TABLE, [H10], Lakehouse.at(lakehouse))
    staged.commit()
    assert published(spark, lakehouse) == [(0, "first", 10), (1, "first", 10)]
    staged = Staged(spark, frame(spark, H11, 1, "wider", extra=True), TABLE, [H11], Lakehouse.at(lakehouse))
    staged.commit()
    table = lake.read(spark, TABLE, Lakehouse.at(lakehouse))
    assert "more" in table.columns
    assert sorted((r.hour.hour, r.more) for r in table.collect()) == [(10, None), (10, None), (11, 1)]


def test_no_rows_for_an_hour_empties_it(spark, lakehouse):
    lake.write_hour(frame(spark, H10, 3, "old").unionByName(frame(spark, H11, 1, "old")), TABLE, [H10, H11],
                    Lakehouse.at(lakehouse))
    staged = Staged(spark, frame(spark, H10, 0, "none"), TABLE, [H10], Lakehouse.at(lakehouse))
    assert staged.frame.count() == 0
    staged.commit()
    assert published(spark, lakehouse) == [(0, "old", 11)]


def test_no_rows_for_an_hour_that_had_none_commits_nothing(spark, lakehouse):
    """Issue 65: a table the hour leaves unchanged gets no commit (and no file: the empty ones
    written are deleted); an hour that had rows and now has none is still a change."""
    lake.write_hour(frame(spark, H10, 3, "old"), TABLE, [H10], Lakehouse.at(lakehouse))
    log = Path(lake.table(TABLE).path(Lakehouse.at(lakehouse))) / "_delta_log"
    versions, files = sorted(log.glob("*.json")), data_files(lakehouse)
    staged = Staged(spark, frame(spark, H11, 0, "none"), TABLE, [H11], Lakehouse.at(lakehouse))
    assert staged.commit() is None
    assert sorted(log.glob("*.json")) == versions and data_files(lakehouse) == files
    staged = Staged(spark, frame(spark, H10, 0, "none"), TABLE, [H10], Lakehouse.at(lakehouse))
    assert staged.commit() == len(versions)
    assert published(spark, lakehouse) == []
