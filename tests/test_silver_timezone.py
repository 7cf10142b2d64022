"""Log timestamps are local to the cluster's inventory timezone and stored in UTC, whatever the zone
of the process running the job. The suite also passes with a non-UTC TZ (e.g.
`TZ=America/Los_Angeles make test`); this test proves it cheaply inside one run by switching the
JVM's and Python's default zone between two parses of the same records.
"""
from __future__ import annotations

import os
import time

import pytest
from pyspark.sql import functions as F

from fleethealth.cli.parse import utc_text
from fleethealth.silver.parsers import log4j
from fleethealth.runtime.frames import local_frame

RECORDS = [
    # (format, cluster timezone, record text, UTC expected)
    ("kafka", "Asia/Kolkata", "[2026-11-20 15:30:00,250] INFO [KafkaServer id=1] started (kafka.server.KafkaServer)",
     "2026-11-20T10:00:00.250Z"),                                     # +05:30
    ("kafka", "America/New_York", "[2026-07-01 06:00:00,000] WARN x (kafka.server.KafkaServer)",
     "2026-07-01T10:00:00.000Z"),                                     # EDT, -04:00
    ("kafka", "America/New_York", "[2026-11-20 05:00:00,000] WARN x (kafka.server.KafkaServer)",
     "2026-11-20T10:00:00.000Z"),                                     # EST, -05:00
    ("zookeeper", "Australia/Sydney",
     "2026-11-20 21:00:00,001 [myid:1] - INFO  [main:QuorumPeer@1] - LOOKING", "2026-11-20T10:00:00.001Z"),  # AEDT
    ("zookeeper", "UTC", "2026-11-20 10:00:00,002 - INFO  [main:QuorumPeer@1] - LOOKING", "2026-11-20T10:00:00.002Z"),
]
FORMATS = {"kafka": log4j.KAFKA, "zookeeper": log4j.ZOOKEEPER}


def _parse(spark) -> list[str]:
    out = []
    for name, fmt in FORMATS.items():
        rows = [(i, text, tz) for i, (f, tz, text, _) in enumerate(RECORDS) if f == name]
        df = local_frame(spark, rows, "i int, text string, timezone string")
        parsed = utc_text(log4j.parse_records(df, fmt, F.col("timezone")).select("i", "ts"))
        out += [(r.i, r.ts) for r in parsed.collect()]
    return [ts for _, ts in sorted(out)]


def _set_default_zone(spark, zone: str) -> None:
    jvm = spark.sparkContext._jvm
    jvm.java.util.TimeZone.setDefault(jvm.java.util.TimeZone.getTimeZone(zone))
    os.environ["TZ"] = zone
    time.tzset()


@pytest.fixture
def restore_zone(spark):
    jvm = spark.sparkContext._jvm
    jvm_zone = jvm.java.util.TimeZone.getDefault().getID()
    env = os.environ.get("TZ")
    yield
    jvm.java.util.TimeZone.setDefault(jvm.java.util.TimeZone.getTimeZone(jvm_zone))
    if env is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = env
    time.tzset()


def test_parsed_timestamps_do_not_depend_on_the_process_zone(spark, restore_zone):
    expected = [utc for *_, utc in RECORDS]
    seen = {}
    for zone in ("America/Los_Angeles", "Asia/Kathmandu", "UTC"):
        _set_default_zone(spark, zone)
        seen[zone] = _parse(spark)
    assert seen == {zone: expected for zone in seen}
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"


EDGES = [
    # (local text, zone, UTC expected or None)
    ("2026-03-29 02:30:00,123", "Europe/Berlin", "2026-03-29T01:30:00.123Z"),   # in the spring-forward gap
    ("2026-10-25 02:30:00,999", "Europe/Berlin", "2026-10-25T00:30:00.999Z"),   # repeated hour: the earlier
    ("2024-02-29 23:59:59,999", "America/New_York", "2024-03-01T04:59:59.999Z"),
    ("2026-02-29 00:00:00,000", "UTC", None),
    ("2026-11-31 10:00:00,000", "UTC", None),
    ("2026-11-20 24:00:00,000", "UTC", None),
    ("2026-11-20 10:60:00,000", "UTC", None),
    ("2026-11-20 10:00:60,000", "UTC", None),   # make_timestamp would roll second 60 into the next minute
    ("0000-01-01 00:00:00,000", "UTC", "0000-01-01T00:00:00.000Z"),
    ("2026-13-01 00:00:00,000", "UTC", None),
    ("2026-11-00 00:00:00,000", "UTC", None),
    ("2026-11-20 10:00:00,000", "Mars/Olympus", None),   # not a zone: no timestamp, not a failed hour
    # a zone's offsets are cached per local hour: neighbours of another zone and hour in one task
    ("2026-03-29 01:59:59,999", "Europe/Berlin", "2026-03-29T00:59:59.999Z"),
    ("2026-03-29 03:00:00,000", "Europe/Berlin", "2026-03-29T01:00:00.000Z"),
    ("2026-03-29 03:00:00,000", "Asia/Kathmandu", "2026-03-28T21:15:00.000Z"),
    ("2026-03-29 03:00:00,000", "+05:30", "2026-03-28T21:30:00.000Z"),
]


def test_local_to_utc_edges(spark):
    rows = [(i, f"[{t}] INFO x (a.B)", z) for i, (t, z, _) in enumerate(EDGES)]
    df = local_frame(spark, rows, "i int, text string, z string").coalesce(1)
    parsed = utc_text(log4j.parse_records(df, log4j.KAFKA, F.col("z")).select("i", "ts")).orderBy("i").collect()
    assert [r.ts for r in parsed] == [want for _, _, want in EDGES]
