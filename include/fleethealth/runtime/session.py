"""Build the SparkSession of a fleethealth job (Delta enabled, UTC, jars from the project folder)."""
from __future__ import annotations

import os
import shlex
from contextlib import contextmanager

from fleethealth.runtime import config, interrupt
from fleethealth.runtime.spark_conf import (SMALL_HOUR_BYTES, SMALL_INPUT_CONF, SMALL_INPUT_PLAN_CONF, is_local,
                                            library_zip, properties_file, spark_conf, submitted_conf)


def build_session(app_name: str, warehouse: str | os.PathLike | None = None, *, tables: str = "",
                  master: str | None = None, short_lived: bool = False):
    """A Delta-enabled session. Under spark-submit the master comes from the submit arguments; on a
    cluster master the executors get the jars (spark_conf) and the fleethealth package (library_zip).
    `warehouse`, `tables`, `short_lived`: see spark_conf (a lakehouse's: fleethealth.lake.catalog)."""
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    config.jar_files()  # fail early with a clear message when set-up did not run
    builder = SparkSession.builder.appName(app_name)
    launched_by_spark_submit = "PYSPARK_GATEWAY_PORT" in os.environ
    if master or not launched_by_spark_submit:
        master = master or config.spark_master()
        builder = builder.master(master)
    else:
        # spark-submit's --master, from its JVM's conf (before a context exists SparkConf() only loads
        # the JVM's defaults once connected to it)
        SparkContext._ensure_initialized()
        master = SparkConf().get("spark.master", "local[*]")
    conf = spark_conf(warehouse, tables=tables, short_lived=short_lived, master=master)
    if launched_by_spark_submit or SparkContext._gateway is not None:   # a JVM runs: they go to it, on no command line
        spark = _built(builder, conf)
    else:       # PySpark starts spark-submit: the settings that may hold secrets go in a file
        public, private = submitted_conf(conf)
        with properties_file(private) as path:
            spark = _built(builder, public, f"--properties-file {shlex.quote(str(path))}" if private else "")
    if not is_local(master):
        # executors import fleethealth from this zip (ahead of anything installed on the nodes);
        # addPyFile works whether the JVM was started by spark-submit or by this builder
        spark.sparkContext.addPyFile(str(library_zip()))
    return spark


def _built(builder, conf: dict, submit_args: str = ""):
    """builder.getOrCreate() with `conf`, PySpark's spark-submit given `submit_args` too."""
    for key, value in conf.items():
        builder = builder.config(key, value)
    before = os.environ.get("PYSPARK_SUBMIT_ARGS")
    if submit_args:
        os.environ["PYSPARK_SUBMIT_ARGS"] = f"{submit_args} {before or 'pyspark-shell'}"
    try:
        return builder.getOrCreate()
    finally:
        if submit_args:
            if before is None:
                os.environ.pop("PYSPARK_SUBMIT_ARGS")
            else:
                os.environ["PYSPARK_SUBMIT_ARGS"] = before


@contextmanager
def settings(spark, conf: dict):
    """The session's SQL settings `conf` for the block, then the ones it had."""
    before = {key: spark.conf.get(key, None) for key in conf}
    for key, value in conf.items():
        spark.conf.set(key, value)
    try:
        yield spark
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def small_input(spark, landed_bytes: int, compiled: bool = False):
    """The session set for a small input (spark_conf.SMALL_INPUT_CONF) for a block, if the files landed
    for the hours it computes are that small; `compiled`: with generated code still (SMALL_INPUT_PLAN_CONF:
    silver's parse is faster compiled even then)."""
    small = SMALL_INPUT_PLAN_CONF if compiled else SMALL_INPUT_CONF
    return settings(spark, small if landed_bytes < SMALL_HOUR_BYTES else {})


# what the JVM prints on every start that says nothing to a user of the command line: Spark's
# launcher always adds the incubating Vector API module (the JVM announces it), and PySpark's JVM
# runs as Spark's shell, which announces its log level
JVM_NOISE = ("WARNING: Using incubator modules: jdk.incubator.vector", 'Setting default log level to "',
             "To adjust logging level use sc.setLogLevel(newLevel).")


@contextmanager
def jvm_stderr_filtered():
    """Start the JVM (a child process) with its stderr a pipe: a thread forwards every line to our
    stderr but the JVM_NOISE ones, for as long as the JVM lives."""
    import threading

    if jvm_stderr_filtered.started:        # one JVM per process (getOrCreate)
        yield
        return
    read_end, write_end = os.pipe()
    real = os.dup(2)
    os.dup2(write_end, 2)
    os.close(write_end)

    def forward() -> None:
        with os.fdopen(read_end, "rb") as lines, os.fdopen(real, "wb", buffering=0) as out:
            for line in lines:
                if interrupt.requested():   # after Ctrl-C the JVM only reports the jobs cancelled
                    continue
                if not line.rstrip(b"\r\n").decode(errors="replace").startswith(JVM_NOISE):
                    out.write(line)

    try:
        yield
    finally:
        os.dup2(real, 2)     # ours again; the JVM keeps the pipe
        threading.Thread(target=forward, name="jvm-stderr", daemon=True).start()
        jvm_stderr_filtered.started = True


jvm_stderr_filtered.started = False
