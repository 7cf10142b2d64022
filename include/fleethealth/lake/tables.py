"""The lakehouse catalog and its I/O: every Delta table's name, layer and location in one place.

Tables live at <tables root>/<layer>/<table>, the root being the lakehouse folder or
$FLEETHEALTH_TABLES (an object store URI such as s3a://bucket/prefix: fleethealth.lake.catalog, which
every function here is given); hourly tables are partitioned by `hour` (UTC) and an hour is rewritten
with `replaceWhere`, so re-running an hour replaces exactly that hour.

Write-audit-publish: a layer job computes its hour's tables, its quality gate validates them, and
only then are they published into the real tables (`write_hour`: replaceWhere of its hours, or the
commit of files written uncommitted, fleethealth.lake.staged). A
rejected hour is written to a staging Delta table <tables root>/_staging/<hour>/<layer>/<table>
(`stage`) for inspection instead; the published tables are untouched.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from fleethealth.lake.catalog import STAGING, Lakehouse
from fleethealth.runtime import config


@dataclass(frozen=True)
class Table:
    layer: str
    name: str
    hourly: bool = True
    doc: str = ""
    # written by its layer's job and checked by that layer's gate; False: written beside the jobs
    # (the gates' own results, the notification outbox), so no suite and no Asset of the layer
    gated: bool = True

    @property
    def qualified(self) -> str:
        return f"{self.layer}.{self.name}"

    def path(self, lakehouse: Lakehouse) -> str:
        return lakehouse.table(self.layer, self.name)


TABLES = {t.qualified: t for t in (
    Table("bronze", "records", doc="one row per raw record (line, JSON document or dump) with lineage"),
    Table("bronze", "files", doc="one row per file listed for the hour: read or rejected, why, records it gave"),
    Table("silver", "kafka_events", doc="Kafka broker log4j records, typed, UTC"),
    Table("silver", "zk_events", doc="ZooKeeper server log records, typed, UTC"),
    Table("silver", "jmx_samples", doc="JMX samples in long form: ObjectName + attribute -> value"),
    Table("silver", "threads", doc="thread-dump threads: name, state, top frames"),
    Table("silver", "deadlocks", doc="thread-dump Java-level deadlock cycles: one row per thread, lock awaited/held"),
    Table("silver", "partition_sizes", doc="log-dir snapshot partition sizes per broker"),
    Table("silver", "consumer_offsets", doc="consumer-groups snapshot offsets and lag per group, topic and partition"),
    Table("silver", "quarantine", doc="bronze records that did not parse, with the reason"),
    Table("silver", "reconciliation", doc="per source and hour: bronze = silver + quarantine"),
    Table("gold", "consumer_offsets_partitions", doc="__consumer_offsets partition size and growth per broker-hour"),
    Table("gold", "log_cleaner_status", doc="log-cleaner liveness per broker-hour, with each signal"),
    Table("gold", "broker_health_hourly", doc="one row per host-hour: which sources arrived, record counts"),
    Table("gold", "group_coordinators", doc="consumer group -> __consumer_offsets partition -> coordinator broker, per hour"),
    Table("gold", "deadlocks", doc="Java-level deadlock cycles per broker-hour: threads, lock classes, dumps, known bugs"),
    Table("gold", "isr_churn", doc="ISR shrinks and expands per partition and reporting broker-hour, ISR sizes"),
    Table("gold", "zk_sessions", doc="broker ZooKeeper sessions per broker-hour: expiries, timeouts, re-registrations, JMX"),
    Table("gold", "zk_quorum", doc="ZooKeeper server quorum per server-hour: state, elections, follower disconnects"),
    Table("gold", "kraft_quorum", doc="KRaft quorum per cluster-hour: Raft leader and epoch, elections, fenced brokers, JMX"),
    Table("gold", "leader_elections", doc="leader-change windows per trigger (broker loss, Offline): partitions, offsets partitions, groups moved"),
    Table("gold", "metadata_divergence", doc="per partition and broker: epochs given by the controller and not taken, the lag window"),
    Table("gold", "request_saturation", doc="request queue and handler/network idle per broker-hour, saturated samples"),
    Table("gold", "cluster_availability_hourly",
          doc="per node-hour: under-replicated, offline and under-min-ISR partitions, active controller, log-dir bytes"),
    Table("gold", "known_bug_exposure", doc="catalogued bugs each cluster's Kafka versions carry, and the hosts (advice, not incidents)"),
    Table("gold", "incident_findings", doc="what each detector found in each hour"),
    Table("gold", "incidents", hourly=False, doc="incidents: findings of one entity until healthy again, open or resolved"),
    Table("gold", "incident_history", hourly=False, doc="each incident's transitions: opened, escalated, resolved"),
    Table("gold", "incident_state", hourly=False,
          doc="each incident after each hour that changed it: where a re-run or a backfill carries it on from"),
    Table("gold", "quality_results", gated=False, doc="Great Expectations results: table, hour, expectation, success"),
    Table("gold", "notifications", hourly=False, gated=False,
          doc="the outbox: per incident transition and channel, pending, sent, failed or suppressed (fleethealth.notify)"),
)}


# the layers of tables, in the order an hour flows through them (landing holds files, not tables)
LAYERS = tuple(dict.fromkeys(t.layer for t in TABLES.values()))


def table(qualified: str) -> Table:
    try:
        return TABLES[qualified]
    except KeyError:
        raise KeyError(f"unknown table {qualified!r}; known: {', '.join(sorted(TABLES))}") from None


def exists(spark, qualified: str, lakehouse: Lakehouse) -> bool:
    from delta.tables import DeltaTable

    return DeltaTable.isDeltaTable(spark, table(qualified).path(lakehouse))


def holds_tables(lakehouse: Lakehouse, path: Path) -> bool:
    """Whether `path` (absolute, links resolved) is where the tables are kept: in the tables root when
    that is a folder of its own, else in a layer's folder or the staging one (the landing and the
    report share the lakehouse folder with them)."""
    if config.is_uri(lakehouse.tables):
        return False
    tables = Path(lakehouse.tables)
    if tables != lakehouse.root:
        return path.is_relative_to(tables)
    return any(path.is_relative_to(tables / folder) for folder in (*LAYERS, STAGING))


# How deep below a folder a Delta table is looked for: a lakehouse's tables are <root>/<layer>/<table>
# (a tables root's too), so a folder up to two levels above a lakehouse's root is seen as one; at most
# TABLE_SEARCH_FOLDERS folders are listed, so `--out ~` costs a bounded walk, not the home's tree.
TABLE_SEARCH_DEPTH = 5
TABLE_SEARCH_FOLDERS = 10_000


def delta_table_near(path: Path) -> tuple[str, Path] | None:
    """("inside", table) if `path` (absolute, links resolved) is in a Delta table of any lakehouse, a
    folder holding a `_delta_log` (it or a parent); ("above", table) if it is a folder with one below
    it (TABLE_SEARCH_DEPTH levels, links not followed); else None. What a command writes never goes
    there (`query --out`, `report --out`), whichever lakehouse the table belongs to."""
    for folder in (path, *path.parents):
        if (folder / "_delta_log").is_dir():
            return "inside", folder
    if not path.is_dir() or path.is_symlink():
        return None
    level, listed = [path], 0
    for _ in range(TABLE_SEARCH_DEPTH):
        below = []
        for folder in level:
            listed += 1
            if listed > TABLE_SEARCH_FOLDERS:
                return None
            try:
                entries = sorted((e for e in os.scandir(folder) if e.is_dir(follow_symlinks=False)), key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                if entry.name == "_delta_log":
                    return "above", Path(folder)
                below.append(Path(entry.path))
        level = below
    return None


def present(qualified: str, lakehouse: Lakehouse) -> bool:
    """Whether the table exists, asked of delta-rs (no Spark; an object store's credentials and
    endpoint come from the standard AWS_* variables, as for every AWS tool)."""
    from deltalake import DeltaTable

    return DeltaTable.is_deltatable(table(qualified).path(lakehouse))


def arrow_dataset(table):
    """A Delta table (`table`: a path, or delta-rs's DeltaTable) as an Arrow dataset, the one way
    fleethealth reads with delta-rs (arrow_rows, `query`'s DuckDB views). delta-rs's own reads
    (to_pyarrow_table(), to_pandas(), to_pyarrow_dataset()) give Arrow a file system written in Python,
    which Arrow's I/O threads (read-ahead, pre-buffering) may still be calling when the interpreter
    ends: a thread taking the GIL then is ended by pthread_exit, through C++ frames that may not unwind,
    and the process aborted ("terminate called without an active exception", exit 134: 11 of 20 runs
    reading one gold table here; delta-io/delta-rs#2184, apache/arrow#39862). A local table's files
    are read by Arrow's own local file system (an object store's keep delta-rs's)."""
    import pyarrow.fs as pa_fs
    from deltalake import DeltaTable

    table = table if isinstance(table, DeltaTable) else DeltaTable(str(table))
    files = None
    if table.table_uri.startswith("file:"):
        local, path = pa_fs.FileSystem.from_uri(table.table_uri)
        files = pa_fs.SubTreeFileSystem(path, local)
    return table.to_pyarrow_dataset(filesystem=files)


def arrow_rows(table, columns: list[str] | None = None, filter=None):
    """A Delta table's rows (arrow_dataset) as an Arrow table, scanned on the calling thread: no
    Arrow thread is left reading when the process ends."""
    return arrow_dataset(table).to_table(columns=columns, filter=filter, use_threads=False)


def read(spark, qualified: str, lakehouse: Lakehouse, hour: datetime | Sequence[datetime] | None = None):
    """The table's rows (of one hour, or of several, if given)."""
    from pyspark.sql import functions as F

    df = spark.read.format("delta").load(table(qualified).path(lakehouse))
    if hour is not None:
        df = df.where(F.expr(hour_predicate(hour)))
    return df


def read_listed(spark, qualified: str, lakehouse: Lakehouse, hour: datetime | Sequence[datetime] | None = None,
                where=None):
    """The rows of `hour` (or hours, or all) and `where` (a Column) as `read` gives them, over the files
    the table holds for them now, listed once: the plans that read the frame scan those files without
    each filtering the table's file list again (a Spark job or two per plan, on the Delta log's state;
    silver's plans read an hour's bronze.records dozens of times). `where` selects files by their
    partition values and statistics and stays on the frame as a filter. For tables whose writers the
    caller's locks keep out."""
    from pyspark.sql import DataFrame

    jvm = spark._jvm
    log = jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, table(qualified).path(lakehouse))
    txn = log.startTransaction()        # read only: never committed
    df = read(spark, qualified, lakehouse, hour)
    if where is not None:
        df = df.where(where)
    conditions = [df._jdf.queryExecution().analyzed().condition()] if hour is not None or where is not None else []
    files = txn.filterFiles(scala_seq(jvm, conditions), False)
    # the files of the hours exactly (partition values); `where` may select some of their rows only
    listed = DataFrame(log.createDataFrame(txn.snapshot(), files, False, jvm.scala.Option.empty()), spark)
    return listed.where(where) if where is not None else listed


def scala_seq(jvm, items: list):
    """A Scala Seq of Py4J objects (Delta's Scala API)."""
    java = jvm.java.util.ArrayList()
    for item in items:
        java.add(item)
    return jvm.scala.jdk.javaapi.CollectionConverters.asScala(java).toSeq()


def contents(spark, layer: str, lakehouse: Lakehouse, skip: Sequence[str] = ("gold.quality_results",)) -> dict:
    """Every published table of `layer` but `skip` (quality_results' rows carry the time they ran) as
    sorted rows of text, columns by name: what two lakehouses are compared by."""
    out = {}
    for name in layer_tables(layer):
        if name not in skip and exists(spark, name, lakehouse):
            df = read(spark, name, lakehouse)
            out[name] = sorted(tuple(map(str, r)) for r in df.select(*sorted(df.columns)).collect())
    return out


def read_or_empty(spark, qualified: str, schema, lakehouse: Lakehouse,
                  hour: datetime | Sequence[datetime] | None = None):
    if exists(spark, qualified, lakehouse):
        return read(spark, qualified, lakehouse, hour)
    from fleethealth.runtime.frames import local_frame

    return local_frame(spark, [], schema)


def hour_predicate(hour: datetime | Sequence[datetime]) -> str:
    """The SQL predicate of one hour, or of several."""
    if isinstance(hour, datetime):
        return f"hour = {_timestamp(hour)}"
    return f"hour IN ({', '.join(_timestamp(h) for h in hour)})"


def _timestamp(hour: datetime) -> str:
    return f"TIMESTAMP '{hour.strftime('%Y-%m-%d %H:%M:%S')}'"


def write_hour(df, qualified: str, hour: datetime | Sequence[datetime], lakehouse: Lakehouse,
               where: str | None = None) -> None:
    """Replace exactly `hour` (or hours) of an hourly table with `df` (whose rows must all be of
    them), in one commit; `where` narrows what is replaced further (e.g. one validated table's
    quality results)."""
    t = table(qualified)
    assert t.hourly, qualified
    predicate = hour_predicate(hour) + (f" AND ({where})" if where else "")
    # mergeSchema: a table written by an earlier version gains the columns added since
    (df.write.format("delta").mode("overwrite")
       .option("replaceWhere", predicate)
       .option("mergeSchema", "true")
       .partitionBy("hour")
       .save(t.path(lakehouse)))


@dataclass(frozen=True)
class Merge:
    """A change to a table written whole (not hourly): `rows` upserted by `key`, the published rows
    whose key is in `removed` (key columns only) deleted, in one commit (`merge`)."""
    rows: object        # DataFrame
    removed: object     # DataFrame
    key: tuple[str, ...]


def merge(change: Merge, qualified: str, lakehouse: Lakehouse) -> None:
    """Apply `change` with one Delta MERGE (the table is created from its rows if there is none; a
    table an earlier version wrote gains the rows' new columns first), none when it changes nothing."""
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    rows, path = change.rows, table(qualified).path(lakehouse)
    spark = rows.sparkSession
    if not exists(spark, qualified, lakehouse):
        overwrite(rows, qualified, lakehouse)
        return
    one = F.lit(1).alias("one")
    if rows.select(one).limit(1).union(change.removed.select(one).limit(1)).isEmpty():
        return      # no change: not even the file a MERGE writes without committing it
    if not set(rows.columns) <= set(spark.read.format("delta").load(path).columns):
        rows.limit(0).write.format("delta").mode("append").option("mergeSchema", "true").save(path)
    source = rows.withColumn("_delete", F.lit(False)).unionByName(
        change.removed.select(*change.key).withColumn("_delete", F.lit(True)), allowMissingColumns=True)
    values = {f"`{c}`": f"s.`{c}`" for c in rows.columns}
    (DeltaTable.forPath(spark, path).alias("t")
     .merge(source.alias("s"), " AND ".join(f"t.`{k}` = s.`{k}`" for k in change.key))
     .whenMatchedDelete("s._delete")
     .whenMatchedUpdate(set=values)
     .whenNotMatchedInsert("NOT s._delete", values=values)
     .execute())


def overwrite(df, qualified: str, lakehouse: Lakehouse) -> None:
    (df.write.format("delta").mode("overwrite").option("overwriteSchema", "true")
       .save(table(qualified).path(lakehouse)))


def layer_tables(layer: str) -> list[str]:
    """The published tables of a layer, in catalog order: those its job writes and its gate checks
    (not gold.quality_results, the gates' own record, nor gold.notifications, fleethealth.notify's)."""
    return [q for q, t in TABLES.items() if t.layer == layer and t.gated]


def staging_path(qualified: str, hour: datetime, lakehouse: Lakehouse) -> str:
    t = table(qualified)
    return f"{lakehouse.staging(hour, t.layer)}/{t.name}"


def stage(df, qualified: str, hour: datetime, lakehouse: Lakehouse) -> None:
    """Write the rejected hour of `qualified` (or the whole table, if not hourly) to its staging table."""
    (df.write.format("delta").mode("overwrite").option("overwriteSchema", "true")
       .save(staging_path(qualified, hour, lakehouse)))


def read_staged(spark, qualified: str, hour: datetime, lakehouse: Lakehouse):
    path = staging_path(qualified, hour, lakehouse)
    from delta.tables import DeltaTable

    if not DeltaTable.isDeltaTable(spark, path):
        raise FileNotFoundError(f"{qualified} of {hour.isoformat()} is not staged ({path}): "
                                f"only an hour rejected by the {table(qualified).layer} gate is staged")
    return spark.read.format("delta").load(path)


def drop_staging(spark, hour: datetime, layer: str, lakehouse: Lakehouse) -> None:
    """Delete the layer's staged tables of the hour, and the hour's folder once its last layer is gone
    (through Hadoop's file system of the tables' root: a folder or an object store alike)."""
    jvm = spark._jvm
    folder = jvm.org.apache.hadoop.fs.Path(lakehouse.staging(hour, layer))
    fs = folder.getFileSystem(spark._jsparkSession.sessionState().newHadoopConf())
    fs.delete(folder, True)
    parent = folder.getParent()
    if fs.exists(parent) and not fs.listStatus(parent):
        fs.delete(parent, False)


def register_all(spark, lakehouse: Lakehouse) -> list[str]:
    """Make every existing table addressable as layer.name in SQL; returns the registered names."""
    registered = []
    layers = sorted({t.layer for t in TABLES.values()})
    for layer in layers:
        spark.sql(f"CREATE DATABASE IF NOT EXISTS {layer}")
    for t in TABLES.values():
        # external tables: dropping the catalog entry leaves the data; re-pointing it keeps a
        # session that queries several lakehouses honest
        _unregister(spark, t.layer, t.name)
        if exists(spark, t.qualified, lakehouse):
            # the path as an argument, never spliced into SQL text (a lakehouse path may hold a quote)
            spark.catalog.createTable(t.qualified, path=str(t.path(lakehouse)), source="delta")
            registered.append(t.qualified)
    return registered


def _unregister(spark, layer: str, name: str) -> None:
    """Drop the catalog entry layer.name, if any, without reading its table: `DROP TABLE` and
    `catalog.listTables` load a Delta table first, and fail when the folder the entry names is gone (a
    session that queried a lakehouse since deleted). The entry is external: its data, if any, stays."""
    jvm = spark._jvm
    ident = jvm.org.apache.spark.sql.catalyst.TableIdentifier(name, jvm.scala.Option.apply(layer))
    catalog = spark._jsparkSession.sessionState().catalog()
    catalog.refreshTable(ident)     # the session's resolved relation of it
    catalog.dropTable(ident, True, False)


def latest_hours(lakehouse: Lakehouse, since: datetime) -> dict[str, datetime]:
    """cluster -> its latest gold hour at or after `since` (gold.broker_health_hourly), read from the
    table's file list (partition values, the cluster's min/max statistics), and only where a file
    holds several clusters, that file's cluster column: not the table."""
    import pyarrow as pa
    import pyarrow.dataset as ds
    from deltalake import DeltaTable

    path = table("gold.broker_health_hourly").path(lakehouse)
    if not DeltaTable.is_deltatable(path):
        return {}
    health = DeltaTable(path)
    out: dict[str, datetime] = {}
    mixed = set()
    for action in pa.table(health.get_add_actions(flatten=True)).to_pylist():
        hour = _utc_hour(action.get("partition.hour"))
        if hour is None or hour < since:
            continue
        low, high = action.get("min.cluster"), action.get("max.cluster")
        if low is not None and low == high:
            out[low] = max(out.get(low, hour), hour)
        else:
            mixed.add(hour)
    if mixed:
        rows = arrow_rows(health, columns=["cluster", "hour"],
                          filter=ds.field("hour").isin(pa.array(sorted(mixed), pa.timestamp("us", tz="UTC"))))
        for r in rows.to_pylist():
            hour = _utc_hour(r["hour"])
            out[r["cluster"]] = max(out.get(r["cluster"], hour), hour)
    return out


def _utc_hour(value) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    if not isinstance(value, datetime):
        return None
    # delta-rs gives naive datetimes for timestamps without a zone
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)
