"""KRaft roles of the inventory's hosts as gold reads them, shared by the detectors of KRaft clusters.

A KRaft node id names one process of its cluster: a broker (`broker-<id>`, combined nodes too) or a
dedicated controller (`controller-<id>`); silver's `broker_id` of a controller's rows is its node id,
so a detector naming an entity from `broker_id` asks `with_process` which it is. A hosts frame without
the mode columns (silver.tables.HOSTS_KRAFT_FIELDS; a unit test's HOSTS_SCHEMA frame) reads as
ZooKeeper mode but for `controller` hosts; no hosts frame at all names every id a broker.
"""
from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

KRAFT = "kraft"


def roles(hosts: DataFrame) -> DataFrame:
    """(cluster, broker_id, role, kraft, runs_controller, process) of every Kafka host (no hour): `kraft`
    when its cluster is in KRaft mode, `process` its entity name (broker-N, controller-N)."""
    cols = hosts.columns
    is_controller = F.col("role") == "controller"
    controller = (F.col("controller") | is_controller) if "controller" in cols else is_controller
    mode = F.col("mode") == KRAFT if "mode" in cols else controller
    kafka = hosts.where(F.col("role").isin("kafka", "controller") & F.col("broker_id").isNotNull())
    kraft = kafka.groupBy("cluster").agg(F.max(mode).alias("kraft"))
    return (kafka.select("cluster", "broker_id", "role", controller.alias("runs_controller"),
                         _entity().alias("process")).distinct()
            .join(kraft, "cluster"))


def kraft_clusters(hosts: DataFrame | None) -> DataFrame | None:
    """(cluster) of the clusters in KRaft mode (None without hosts)."""
    if hosts is None:
        return None
    return roles(hosts).where("kraft").select("cluster").distinct()


def zookeeper_mode_only(df: DataFrame, hosts: DataFrame | None) -> DataFrame:
    """`df` without the rows of KRaft clusters: a ZooKeeper-only signal has no meaning there."""
    kraft = kraft_clusters(hosts)
    return df if kraft is None else df.join(F.broadcast(kraft), "cluster", "left_anti")


def with_process(df: DataFrame, hosts: DataFrame | None, id_col: str = "broker_id") -> DataFrame:
    """`df` with `process`: the entity of the Kafka host whose node id is `id_col` in its cluster
    (`controller-N` for a dedicated controller), `broker-N` when no host of the inventory has it."""
    broker = F.format_string("broker-%d", F.col(id_col))
    if hosts is None:
        return df.withColumn("process", broker)
    names = roles(hosts).select(F.col("cluster").alias("_cluster"), F.col("broker_id").alias("_id"),
                                F.col("process").alias("_process"))
    on = (F.col("cluster") == F.col("_cluster")) & (F.col(id_col) == F.col("_id"))
    return (df.join(F.broadcast(names), on, "left").drop("_cluster", "_id")
            .withColumn("process", F.coalesce(F.col("_process"), broker)).drop("_process"))


def is_controller_host(hosts: DataFrame | None) -> DataFrame | None:
    """(cluster, broker_id) of the hosts that run a KRaft controller (None without hosts)."""
    if hosts is None:
        return None
    return roles(hosts).where("runs_controller").select("cluster", "broker_id").distinct()


def _entity():
    """gold.detectors.base.process_entity of a Kafka host (not imported: the detectors import this module)."""
    return (F.when(F.col("role") == "controller", F.format_string("controller-%d", F.col("broker_id")))
            .otherwise(F.format_string("broker-%d", F.col("broker_id"))))
