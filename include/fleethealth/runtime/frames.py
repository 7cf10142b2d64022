"""Small DataFrame helpers of the jobs: local rows handed to the JVM, and frames computed once."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from pyspark.sql import DataFrame

WRITE_THREADS = 4
# the Spark local property naming the layer a job is of (pipeline.window sets it)
LAYER_PROPERTY = "fleethealth.layer"


def local_frame(spark, rows, schema):
    """A DataFrame of a few local rows (tuples in the order of `schema`, or dicts), handed to the JVM
    as Arrow. (createDataFrame of a Python list is a Python RDD: every job that scans it runs a Python
    worker, and a small frame such as the inventory is scanned by dozens of jobs; starting those
    workers cost a fresh spark-submit job seconds.)"""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import StructType

    struct = schema if isinstance(schema, StructType) else StructType.fromDDL(schema)
    names = struct.fieldNames()
    columns: dict[str, list] = {name: [] for name in names}
    for row in rows:
        for name, value in zip(names, [row[n] for n in names] if isinstance(row, dict) else row):
            columns[name].append(value)
    return spark.createDataFrame(pa.table(columns, schema=to_arrow_schema(struct)), struct)


def concurrently(fn, items) -> list:
    """Run fn(item) for several tables at once: Spark runs jobs of several threads concurrently, and
    most of a small write is driver-side work (planning, Delta commit) that overlaps well."""
    fn = spark_thread(fn)
    with ThreadPoolExecutor(max_workers=WRITE_THREADS) as pool:
        return [future.result() for future in [pool.submit(fn, item) for item in items]]


def spark_thread(fn):
    """`fn` to run on another thread with the calling thread's LAYER_PROPERTY (the layer its Spark jobs
    are of, pipeline.window), as threads Spark starts itself inherit their local properties. (PySpark's
    inheritable_thread_target shares one copy of every property between the threads it starts, Spark's
    own per-job ones included.)"""
    from pyspark import SparkContext

    sc = SparkContext._active_spark_context
    if sc is None:
        return fn
    layer = sc.getLocalProperty(LAYER_PROPERTY)

    def run(*args, **kwargs):
        sc.setLocalProperty(LAYER_PROPERTY, layer)
        return fn(*args, **kwargs)
    return run


def run_all(calls) -> None:
    """Call each of `calls` at once (e.g. the writes of a layer)."""
    concurrently(lambda call: call(), calls)


def materialize(df: DataFrame) -> DataFrame:
    """Compute `df` once and cut its lineage. The optimizer of every plan that scans a Delta table
    runs Delta's file pruning again (about a second per plan, far more on a cold JVM); the layer
    functions plan the same hour dozens of times, so they start from the materialized hour."""
    return df.localCheckpoint(eager=True)


def materialize_all(frames: dict) -> dict:
    return dict(zip(frames, concurrently(materialize, frames.values())))
