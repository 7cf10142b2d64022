"""Spark configuration shared by the jobs, the tests' session and the DAG's SparkSubmitOperators.

No pyspark import here: the DAG file reads it at parse time.
"""
from __future__ import annotations

from fleethealth import config


def spark_conf(lakehouse: str | None = None) -> dict[str, str]:
    """Settings every fleethealth Spark application gets.

    The Delta jars come from the Maven-resolved folder on the class path (never Ivy at run time).
    """
    classpath = f"{config.jars_dir()}/*"
    log4j = config.PROJECT_ROOT / "include" / "fleethealth" / "log4j2.properties"
    conf = {
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        "spark.driver.extraClassPath": classpath,
        "spark.executor.extraClassPath": classpath,
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": "8",
        "spark.sql.adaptive.enabled": "true",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.databricks.delta.schema.autoMerge.enabled": "false",
        "spark.databricks.delta.snapshotPartitions": "2",
        "spark.sql.sources.partitionOverwriteMode": "static",
        "spark.driver.memory": "4g",
        "spark.driver.extraJavaOptions": f"-Dlog4j.configurationFile=file:{log4j}",
    }
    if lakehouse:
        conf["spark.sql.warehouse.dir"] = f"{lakehouse}/_warehouse"
    return conf
