"""Shared by the bench scripts (run as `python bench/<script>.py`, so this folder is on sys.path)."""
from __future__ import annotations

import os


def load() -> str:
    """The load average, printed with every figure: other work on the cores skews all of them."""
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def floor_seconds(work) -> float:
    """Wall seconds of bench/floor_job.py submitted as the DAG submits an hour (Airflow's Spark hook on
    spark_default, the DAG's settings: fleethealth.runtime.spark_conf with short_lived)."""
    import logging
    import time
    from pathlib import Path

    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

    from fleethealth.runtime import config
    from fleethealth.runtime.spark_conf import spark_conf

    work = Path(work)
    hook = SparkSubmitHook(conf=spark_conf(work / "floor-warehouse", short_lived=True),
                           conn_id=config.SPARK_CONN_ID, name="fleethealth-floor", verbose=False,
                           application_args=[str(work / "floor-table")])
    if isinstance(hook.log, logging.Logger):   # outside a task Airflow 3 may give a structlog proxy: left as is
        hook.log.setLevel(logging.WARNING)   # its INFO lines are the command line and spark-submit's output
    t0 = time.perf_counter()
    hook.submit(str(Path(__file__).with_name("floor_job.py")))
    return time.perf_counter() - t0
