"""Build the SparkSession of a fleethealth job (Delta enabled, UTC, jars from the project folder)."""
from __future__ import annotations

import os

from fleethealth import config
from fleethealth.spark_conf import spark_conf


def build_session(app_name: str, lakehouse: str | None = None, master: str | None = None):
    """A Delta-enabled session. Under spark-submit the master comes from the submit arguments."""
    from pyspark.sql import SparkSession

    config.jar_files()  # fail early with a clear message when set-up did not run
    builder = SparkSession.builder.appName(app_name)
    launched_by_spark_submit = "PYSPARK_GATEWAY_PORT" in os.environ
    if master or not launched_by_spark_submit:
        builder = builder.master(master or os.environ.get("FLEETHEALTH_SPARK_MASTER", "local[*]"))
    for key, value in spark_conf(str(config.lakehouse_dir(lakehouse))).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    return spark
