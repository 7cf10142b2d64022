"""One raw file through the silver job's code (bronze.records -> silver.build): what `fleethealth
parse` prints and what the golden tests compare. The file is landed into a scratch folder as one
host of a one-host inventory whose cluster is in `timezone`.
"""
from __future__ import annotations

import re
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from fleethealth.fleet.inventory import parse_inventory
from fleethealth.fleet.sources import FORMATS
from fleethealth.fleet.sources import SOURCES as FLEET_SOURCES
from fleethealth.lake.hours import NO_HOUR

if TYPE_CHECKING:   # the CLI reads SOURCES for its --help: no Spark on import
    from pyspark.sql import DataFrame, SparkSession

# `parse --source` names (a format of a fleet source, and the part of silver that parses it) -> the
# fleet source folder a file of that kind lives in
SOURCES = FORMATS
# `fleethealth parse` of a file up to this size (a fresh JVM, a few rows) runs with spark_conf's
# SMALL_INPUT_CONF (prometheus's quarantine: ~1 s less of a cold JVM's planning). A larger file gets the
# jobs' settings: compiled code pays back over many rows.
SMALL_FILE_BYTES = 4 << 20
# lineage columns that are the same for every row of one parsed file
CONSTANT_COLUMNS = ("cluster", "host", "broker_id", "zk_myid", "hour", "source", "file")


def landed_name(raw: Path, source: str) -> str:
    """The file name to land `raw` under: bronze tells a Prometheus scrape from Jolokia JSON by the
    name (*.prom), so the name says what --source says."""
    from fleethealth.bronze import tables as bronze

    if source == "prometheus" and not re.search(bronze.PROMETHEUS_FILE, raw.name):
        return raw.name + ".prom"
    if source == "jolokia":
        return re.sub(r"\.prom", ".jolokia", raw.name)
    return raw.name


@contextmanager
def parsed_file(spark: SparkSession, raw: Path, source: str, timezone: str = "UTC",
                scratch: str | None = None) -> Iterator[tuple[DataFrame, DataFrame, dict[str, DataFrame]]]:
    """(silver rows, quarantine rows, {extra table: rows}) of one raw file, ordered by line number;
    valid inside the block."""
    from fleethealth.bronze import tables as bronze
    from fleethealth.pull.landing import Landed
    from fleethealth.silver import tables as silver

    folder = SOURCES[source]
    role = FLEET_SOURCES[folder].role
    host = ({"host": "file", "role": role, "zk_myid": 0} if role == "zookeeper"
            else {"host": "file", "role": role, "broker_id": 0, "kafka_version": "0.0.0"})
    inventory = parse_inventory({"clusters": [{"name": "parse", "timezone": timezone, "root": "/",
                                               "hosts": [host]}]}, "--timezone")
    hour = NO_HOUR
    with tempfile.TemporaryDirectory(dir=scratch) as tmp:
        landing = Path(tmp) / "landing"
        rel = f"parse/file/{folder}/{landed_name(raw, source)}"
        (landing / rel).parent.mkdir(parents=True)
        shutil.copyfile(raw, landing / rel)
        landed = [Landed("parse", "file", folder, rel, raw.stat().st_size, "", 0.0, 0.0)]
        records = bronze.records(spark, landed, landing, hour)
        tables = silver.build(spark, records, inventory, parts=(source,))
        def plain(df):
            return df.drop(*[c for c in df.columns if c in CONSTANT_COLUMNS]).orderBy("line_number")

        extras = {name: plain(tables[name]) for name in FLEET_SOURCES[folder].extra_tables}
        quarantine = tables["silver.quarantine"].orderBy("line_number")
        yield plain(tables[silver.SILVER_OF_SOURCE[folder]]), quarantine, extras
        spark.catalog.clearCache()


def utc_text(df: DataFrame) -> DataFrame:
    """Timestamps as UTC ISO-8601 text (`2021-04-28T10:11:56.161Z`), formatted by Spark in the UTC
    session zone: collecting a timestamp would give a naive datetime in the Python process's zone."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    return df.select(*[F.date_format(f.name, "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").alias(f.name)
                       if isinstance(f.dataType, T.TimestampType) else F.col(f.name)
                       for f in df.schema.fields])
