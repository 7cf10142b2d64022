"""An hour written into a Delta table's files but not committed: write-audit-publish without a copy.

bronze.records and silver's tables are computed once, straight into Parquet files of the published
table inside an open Delta transaction (Delta's own `writeFiles`, the step a `replaceWhere` write
takes before its commit). The gate reads those files (`Staged.frame`, column by column); publishing
commits them with the removal of the hours they replace (the same actions and history entry a
`replaceWhere` overwrite commits); a rejected hour's files are deleted. Until the commit no reader
of the table sees them.

Files of a run killed between writing and committing are referenced by no commit: VACUUM
(lake.maintenance) deletes them after its retention. Delta's transaction API is its Scala one
(DeltaLog, OptimisticTransaction), reached through Py4J.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

from pyspark.sql import DataFrame, SparkSession

from fleethealth.lake import tables as lake
from fleethealth.lake.catalog import Lakehouse
from fleethealth.runtime.frames import concurrently, local_frame


class Staged:
    """`df` (rows of `hours` only) written into `qualified`'s files, uncommitted."""

    def __init__(self, spark: SparkSession, df: DataFrame, qualified: str, hours: Sequence[datetime],
                 lakehouse: Lakehouse):
        self.spark, self.qualified, self.hours = spark, qualified, list(hours)
        self.path, self.lakehouse = lake.table(qualified).path(lakehouse), lakehouse
        self._prepare_table(df)
        jvm = spark._jvm
        self._jvm = jvm
        self._log = jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, self.path)
        self._txn = self._log.startTransaction()
        self._added = self._txn.writeFiles(df._jdf)
        self.frame = DataFrame(self._log.createDataFrame(self._txn.snapshot(), self._added, False,
                                                         jvm.scala.Option.empty()), spark)
        self.committed = self.discarded = False

    def _prepare_table(self, df: DataFrame) -> None:
        """A new table, or one without some of df's columns (written by an earlier version), gets
        df's schema in a commit of no rows first (a transaction's files must fit its table's schema)."""
        if lake.exists(self.spark, self.qualified, self.lakehouse):
            have = set(self.spark.read.format("delta").load(self.path).dtypes)
            if set(df.dtypes) <= have:
                return
        # of df's schema only: running df's plan would complete its observations (bronze's cuts) empty
        (local_frame(self.spark, [], df.schema).write.format("delta").mode("append").option("mergeSchema", "true")
         .partitionBy("hour").save(self.path))

    def commit(self) -> int | None:
        """Publish the files: one commit adding them and removing the files of the hours they
        replace. Returns the table version, or None when that changes nothing (no rows written, none
        published in those hours): no commit then, and the written (empty) files are deleted."""
        jvm, seq = self._jvm, lake.scala_seq
        predicate = lake.hour_predicate(self.hours)
        table = self.spark.read.format("delta").load(self.path).where(predicate)
        condition = table._jdf.queryExecution().analyzed().condition()
        replaced = self._txn.filterFiles(seq(jvm, [condition]), False)
        if not replaced.size() and self.rows_written() == 0:
            self.discard()
            return None
        actions = [self._added.apply(i) for i in range(self._added.size())]
        actions += [replaced.apply(i).remove() for i in range(replaced.size())]
        operation = getattr(jvm.org.apache.spark.sql.delta, "DeltaOperations$Write")(
            jvm.org.apache.spark.sql.SaveMode.Overwrite, jvm.scala.Some(seq(jvm, ["hour"])),
            jvm.scala.Some(predicate), *[jvm.scala.Option.empty()] * 6)
        version = self._txn.commit(seq(jvm, actions), operation)
        self.committed = True
        return version

    def rows_written(self) -> int | None:
        """The rows of the written files, from their statistics (None: a file without them)."""
        total = 0
        for i in range(self._added.size()):
            stats = self._added.apply(i).stats()
            if not stats:
                return None
            total += json.loads(stats).get("numRecords", 0)
        return total

    def discard(self) -> None:
        """Delete the written files (nothing was committed; a no-op after commit)."""
        if self.committed or self.discarded:
            return
        conf = self.spark._jsparkSession.sessionState().newHadoopConf()
        for i in range(self._added.size()):
            path = self._added.apply(i).absolutePath(self._log)
            path.getFileSystem(conf).delete(path, False)
        self.discarded = True


def stage_all(spark: SparkSession, frames: dict, hours: Sequence[datetime], lakehouse: Lakehouse) -> dict:
    """Stage each of `frames` (qualified name -> rows of `hours`) at once: name -> Staged. If one
    fails (or a signal cancels its jobs), the files of those already written are deleted."""
    staged = {}

    def stage(item):
        staged[item[0]] = Staged(spark, item[1], item[0], hours, lakehouse)

    try:
        concurrently(stage, frames.items())      # returns or raises once every table's write ended
    except BaseException:
        discard_all(staged)
        raise
    return {name: staged[name] for name in frames}


def discard_all(staged: dict) -> None:
    for s in staged.values():
        s.discard()

