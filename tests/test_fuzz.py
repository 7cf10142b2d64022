"""Property-based tests of silver's parsers (issue 59, item 9): drawn Kafka log lines, Jolokia
answers and Prometheus scrapes (tests/fuzz_inputs.py) of one host through silver on the shared
session. Whatever a host sends, nothing raises, every bronze record is accounted for (silver +
quarantine = bronze), and no value reaches silver that gold cannot hold: a JMX value is finite, NaN
or none, a JMX time inside its hour (or the 10 minutes before it), a log field its type could not
hold is NULL and named in field_errors.

Examples are derandomised and counted (profile "ci" in tests/conftest.py); HYPOTHESIS_PROFILE=explore
draws fresh ones. The one-hour run of a generated batch beside healthy hosts is
tests/test_hostile_values.py.
"""
from __future__ import annotations

import math
from datetime import timedelta

import pytest
from hypothesis import given

from fleethealth.bronze.tables import SCHEMA
from fleethealth.fleet.inventory import parse_inventory
from fleethealth.runtime.frames import local_frame
from fleethealth.silver import tables as silver
from fleethealth.silver.parsers.rules import load_fields
from fuzz_inputs import HOUR, jolokia_docs, log_lines, prometheus_scrape

pytestmark = pytest.mark.spark

INVENTORY = parse_inventory({"clusters": [{"name": "fz", "timezone": "UTC", "root": "/nonexistent", "hosts": [
    {"host": "h1", "role": "kafka", "broker_id": 1, "kafka_version": "3.6.1"}]}]}, "fuzz")
FILES = {"kafka": "fz/h1/kafka/server.log.2026-11-20-10", "jolokia": "fz/h1/jmx/jolokia.json.2026-11-20-10",
         "prometheus": "fz/h1/jmx/metrics-2026-11-20T10-30-00Z.prom"}
TYPED = [name for name, f in load_fields().items() if f.type != "string"]
PARTS = ("kafka", "jolokia", "prometheus")
LEDGER_COLUMNS = "cluster string, host string, source string, hour timestamp, file string, line_number int, line_count int"


def bronze(spark, kafka: list[str], jolokia: list[str], scrape: str):
    rows = [("fz", "h1", "kafka", FILES["kafka"], "sha", i, line, HOUR) for i, line in enumerate(kafka, 1)]
    rows += [("fz", "h1", "jmx", FILES["jolokia"], "sha", i, doc, HOUR) for i, doc in enumerate(jolokia, 1)]
    rows += [("fz", "h1", "jmx", FILES["prometheus"], "sha", 1, scrape, HOUR)]
    return local_frame(spark, rows, SCHEMA)


@given(kafka=log_lines(), jolokia=jolokia_docs(), scrape=prometheus_scrape())
def test_whatever_a_host_sends_silver_accounts_for_it_and_holds_only_values_gold_can(spark, kafka, jolokia, scrape):
    records = bronze(spark, kafka, jolokia, scrape).cache()
    # the parts of silver these sources go through, each table computed once (cached); the ledger is
    # silver's own, the other sources' tables empty
    tables = {name: df.cache() for name, df in silver.build(spark, records, INVENTORY, parts=PARTS).items()}
    ledger = {name: tables.get(name, local_frame(spark, [], LEDGER_COLUMNS)) for name in silver.SILVER_OF_SOURCE.values()}
    recon = silver.reconciliation(records, ledger, tables["silver.quarantine"]).collect()
    assert {r.source: r.bronze_records for r in recon} == {"kafka": len(kafka), "jmx": len(jolokia) + 1}
    assert [r.unaccounted for r in recon] == [0] * len(recon), [r.asDict() for r in recon]

    start, end = HOUR.replace(tzinfo=None) - timedelta(minutes=10), HOUR.replace(tzinfo=None) + timedelta(hours=1)
    for r in tables["silver.jmx_samples"].collect():
        assert r.value is None or math.isnan(r.value) or -2.0**63 <= r.value < 2.0**63, r
        assert r.ts is not None and start <= r.ts <= end, r
    for r in tables["silver.kafka_events"].collect():
        errors = r.field_errors or {}
        assert set(errors) <= set(TYPED), r
        assert all(r[name] is None for name in errors), r
    assert all(q.reason for q in tables["silver.quarantine"].collect())
    spark.catalog.clearCache()
