"""The JVM class-data-sharing archive of the Spark driver (AppCDS), built once at set-up.

Every hourly DAG run starts a short-lived Spark JVM (and `make test` hundreds); each spends seconds
loading and verifying the same ~20,000 classes of Spark, Delta and Hadoop. `make setup` runs `python -m fleethealth.setup.class_sharing`,
which starts one Spark driver exactly as the jobs do (same class path), exercises a Delta write and
read and the silver parsers (one simulated file of each source, through `fleethealth parse`'s code),
and dumps the loaded classes into `<jars>/spark-cds.jsa` at exit
(`-XX:ArchiveClassesAtExit`). fleethealth.runtime.cds then maps the archive into every driver
(`-XX:SharedArchiveFile`): about 5 s less per JVM start here. A stale archive (other jars, other JDK)
is ignored by the JVM, silently: it only costs the time it would have saved.
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from fleethealth.runtime.cds import QUIET, archive_path

# a scrape of the one source the simulator does not write
PROMETHEUS_SCRAPE = ('# TYPE kafka_server_replicamanager_value gauge\n'
                     'kafka_server_replicamanager_value{name="UnderReplicatedPartitions",} 0.0\n')


def _parse_one_file_each(spark, tmp: Path) -> None:
    """Parse a small file of each source: the classes of the parsers' expressions join the archive
    (`fleethealth parse` of a small file: about 0.5 s less, bench/parse_file.py)."""
    from datetime import datetime, timezone

    from fleethealth.cli.parse import SOURCES, parsed_file
    from fleethealth.simulate import simulate

    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    simulate(tmp / "sim", "healthy", start, start.replace(hour=1), brokers=1, bytes_per_broker_hour=20_000,
             jmx_samples_per_broker_hour=100)
    (tmp / "scrape.prom").write_text(PROMETHEUS_SCRAPE)
    for source, folder in SOURCES.items():
        written = [tmp / "scrape.prom"] if source == "prometheus" else sorted((tmp / "sim").glob(f"fleet/*/*/{folder}/*"))
        if not written:
            continue        # a source the healthy scenario does not write (consumer-group snapshots)
        raw = written[0]
        with parsed_file(spark, raw, source, scratch=str(tmp)) as (rows, quarantine, extras):
            for df in (rows, quarantine, *extras.values()):
                df.collect()


def build() -> Path:
    """Start a driver with -XX:ArchiveClassesAtExit, run a small Delta round trip, stop it."""
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from fleethealth.runtime.spark_conf import java_options_string, spark_conf

    target = archive_path()
    target.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="fleethealth-cds-") as tmp:
        conf = spark_conf(tmp, class_sharing=False)
        conf["spark.driver.extraJavaOptions"] += " " + java_options_string([f"-XX:ArchiveClassesAtExit={target}", *QUIET])
        builder = SparkSession.builder.master("local[2]").appName("fleethealth-cds")
        for key, value in conf.items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
        df = (spark.range(100).withColumn("hour", F.lit("2026-01-01 00:00:00").cast("timestamp"))
              .withColumn("text", F.regexp_extract(F.col("id").cast("string"), r"(\d)", 1)))
        path = f"{tmp}/t"
        df.write.format("delta").mode("overwrite").partitionBy("hour").save(path)
        df.write.format("delta").mode("overwrite").option("replaceWhere", "hour = '2026-01-01'").save(path)
        spark.read.format("delta").load(path).groupBy("text").count().collect()
        _parse_one_file_each(spark, Path(tmp))
        jvm = spark.sparkContext._gateway.proc  # the driver JVM pyspark launched
        spark.stop()
        jvm.stdin.close()  # pyspark's JVM exits when its stdin closes; it writes the archive then
        jvm.wait(timeout=300)
    return target


if __name__ == "__main__":
    print(f"class-data-sharing archive: {build()}")
    sys.exit(0)
