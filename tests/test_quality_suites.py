"""fleethealth.quality.suites: the GX gate on gold tables (GX Core 1.x on a local SparkSession)."""
from __future__ import annotations

import json
import os
import time
from datetime import datetime, timedelta, timezone

import pytest

os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")

from fleethealth.quality import context  # noqa: E402
from fleethealth.quality import suites as quality  # noqa: E402
from fleethealth.quality.suites import ExpectationResult, QualityGateError  # noqa: E402
from fleethealth.runtime.config import SettingError  # noqa: E402
from fleethealth.runtime.frames import local_frame

pytestmark = pytest.mark.spark

UTC = timezone.utc
HOUR = datetime(2024, 3, 5, 10, tzinfo=UTC)


# `spark`: the session-scoped SparkSession of tests/conftest.py


@pytest.fixture(params=["pandas", "spark"])
def engine(request, monkeypatch):
    """The first pass on a pandas copy (a small table, the default) or on Spark (over the limit):
    the same results either way."""
    if request.param == "spark":
        monkeypatch.setenv("FLEETHEALTH_GX_PANDAS_MAX_ROWS", "0")
    else:
        monkeypatch.delenv("FLEETHEALTH_GX_PANDAS_MAX_ROWS", raising=False)
    return request.param


def _incidents_schema():
    from pyspark.sql.types import StringType, StructField, StructType, TimestampType

    return StructType([
        StructField("cluster", StringType(), False),
        StructField("kind", StringType(), False),
        StructField("severity", StringType(), True),
        StructField("entity", StringType(), True),
        StructField("first_seen", TimestampType(), True),
        StructField("last_seen", TimestampType(), True),
        StructField("evidence", StringType(), True),
        StructField("known_bug", StringType(), True),
        StructField("hour", TimestampType(), True),
    ])


def _incident(**over):
    row = {
        "cluster": "prod-a", "kind": "log_cleaner_dead", "severity": "critical", "entity": "broker-219",
        "first_seen": HOUR + timedelta(minutes=5), "last_seen": HOUR + timedelta(minutes=50),
        "evidence": "thread dump: 3-thread deadlock", "known_bug": "KAFKA-3994", "hour": HOUR,
    }
    row.update(over)
    return row


def _clean_incidents():
    return [
        _incident(),
        _incident(kind="offsets_partition_bloat", severity="major", known_bug=None,
                  evidence="OpenFileDescriptorCount 326639 > 10x median 12800"),
        # ends a few minutes into the next hour: inside the 10-minute tolerance
        _incident(kind="data_missing", severity="info", entity="broker-218/jmx", known_bug=None,
                  first_seen=HOUR - timedelta(minutes=9), last_seen=HOUR + timedelta(minutes=65)),
    ]


def _df(spark, rows, schema):
    cols = [f.name for f in schema.fields]
    return local_frame(spark, [tuple(r[c] for c in cols) for r in rows], schema)


def _incidents_df(spark, rows):
    return _df(spark, rows, _incidents_schema())


def _failed(results):
    return {r.expectation for r in results if not r.success}


def _by_label(results, label):
    [match] = [r for r in results if r.expectation == label]
    return match


# ----------------------------------------------------------------------------- pure functions
def test_substitute_hour_placeholders():
    suite = {
        "name": "t",
        "meta": {"hour_tolerance_minutes": 10},
        "expectations": [
            {"type": "expect_column_values_to_be_between",
             "kwargs": {"column": "ts", "min_value": "$hour_start", "max_value": "$hour_end"}},
            {"type": "expect_column_values_to_be_between",
             "kwargs": {"column": "hour", "min_value": "$hour", "max_value": "$hour"}},
            {"type": "expect_column_values_to_be_in_set",
             "kwargs": {"column": "s", "value_set": ["$hour_start", "x"]}},
        ],
    }
    out = quality.substitute_hour(suite, datetime(2024, 3, 5, 10))  # naive: taken as UTC
    first, second, third = (e["kwargs"] for e in out["expectations"])
    assert first["min_value"] == datetime(2024, 3, 5, 9, 50, tzinfo=UTC)
    assert first["max_value"] == datetime(2024, 3, 5, 11, 10, tzinfo=UTC)
    assert second["min_value"] == second["max_value"] == datetime(2024, 3, 5, 10, tzinfo=UTC)
    assert third["value_set"] == [datetime(2024, 3, 5, 9, 50, tzinfo=UTC), "x"]
    # the input is untouched
    assert suite["expectations"][0]["kwargs"]["min_value"] == "$hour_start"
    # a non-UTC hour is converted, no tolerance means exactly the hour
    suite["meta"] = {}
    cet = timezone(timedelta(hours=1))
    out = quality.substitute_hour(suite, datetime(2024, 3, 5, 11, tzinfo=cet))
    assert out["expectations"][0]["kwargs"]["min_value"] == datetime(2024, 3, 5, 10, tzinfo=UTC)
    assert out["expectations"][0]["kwargs"]["max_value"] == datetime(2024, 3, 5, 11, tzinfo=UTC)
    with pytest.raises(ValueError, match=r"\$hour_start.*no hour"):
        quality.substitute_hour(suite, None)


def test_every_table_has_a_suite_and_value_sets_come_from_code():
    import fleethealth.silver  # noqa: F401 - the layer registers its event types
    from fleethealth.gold.detectors import DETECTORS, RETIRED
    from fleethealth.lake import tables as lake

    gated = {*lake.layer_tables("bronze"), *lake.layer_tables("silver"), *lake.layer_tables("gold")}
    suites = {p.stem for p in quality.suite_path("x").parent.glob("*.json")}
    assert suites == gated | {"gold.completeness"}
    for table in suites:   # every suite loads, and every placeholder resolves
        quality.substitute_hour(quality.load_suite(table), HOUR)
    findings = quality.substitute_hour(quality.load_suite("gold.incident_findings"), HOUR)
    [kinds] = [e["kwargs"]["value_set"] for e in findings["expectations"]
               if e["type"] == "expect_column_values_to_be_in_set" and e["kwargs"]["column"] == "kind"]
    assert kinds == sorted([*DETECTORS, *RETIRED])       # a retired kind's old rows stay valid
    assert quality.VALUE_SETS["severities"]() == ["critical", "info", "major", "minor"]
    assert {"other", "cleaner_error"} <= set(quality.VALUE_SETS["kafka_event_types"]())
    with pytest.raises(ValueError, match=r"unknown value set '\$values:nope'"):
        quality.substitute_hour({"name": "t", "expectations": [
            {"type": "expect_column_values_to_be_in_set", "kwargs": {"column": "a", "value_set": "$values:nope"}}]}, HOUR)


def test_load_suite_files_and_errors(tmp_path):
    for table in ("gold.incident_findings", "gold.consumer_offsets_partitions"):
        suite = quality.load_suite(table)
        assert suite["name"] == table
        assert suite["expectations"]
        assert all(e["meta"]["severity"] in ("critical", "warning") for e in suite["expectations"])
    with pytest.raises(FileNotFoundError, match="gold.nope.*does not exist"):
        quality.load_suite("gold.nope")
    (tmp_path / "gold.bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="gold.bad.json: invalid JSON"):
        quality.load_suite("gold.bad", directory=tmp_path)
    (tmp_path / "gold.sev.json").write_text(json.dumps({"name": "gold.sev", "expectations": [
        {"type": "expect_column_to_exist", "kwargs": {"column": "a"}, "meta": {"severity": "fatal"}}]}))
    with pytest.raises(ValueError, match="severity 'fatal'"):
        quality.load_suite("gold.sev", directory=tmp_path)


def test_expectation_label():
    assert quality.expectation_label(
        {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "broker_id"}}
    ) == "expect_column_values_to_not_be_null(column=broker_id)"
    assert quality.expectation_label(
        {"type": "expect_compound_columns_to_be_unique", "kwargs": {"column_list": ["a", "b"]}}
    ) == "expect_compound_columns_to_be_unique(column_list=a,b)"


def test_enforce_and_results_rows_without_spark():
    ok = ExpectationResult("gold.t", "gold.t", "expect_x(column=a)", True, "0 unexpected", True)
    warn = ExpectationResult("gold.t", "gold.t", "expect_y(column=b)", False, "1 unexpected, e.g. 'q'", False)
    bad = ExpectationResult("gold.t", "gold.t", "expect_z(column=c)", False, "2 unexpected, e.g. -5", True)
    quality.enforce([ok, warn])
    with pytest.raises(QualityGateError) as err:
        quality.enforce([ok, warn, bad])
    text = str(err.value)
    assert "gold.t" in text and "expect_z(column=c)" in text and "-5" in text
    assert "expect_x" not in text and "expect_y(column=b)" in text  # warnings mentioned as such
    assert err.value.failures == [bad]

    rows = quality.results_rows([ok, bad], datetime(2024, 3, 5, 10))
    assert [set(r) for r in rows] == [set(quality.RESULTS_COLUMNS)] * 2
    assert rows[1]["hour"] == HOUR and rows[1]["observed_value"] == "2 unexpected, e.g. -5"
    assert rows[1]["critical"] is True and rows[1]["success"] is False
    assert rows[0]["validated_at"].tzinfo is not None


# ---------------------------------------------------------------------------------- on Spark
def test_clean_incidents_pass(spark, engine):
    df = _incidents_df(spark, _clean_incidents())
    started = time.perf_counter()
    results = quality.validate(df, "gold.incident_findings", hour=HOUR)
    elapsed = time.perf_counter() - started
    print(f"validate gold.incident_findings ({len(results)} expectations, 3 rows): {elapsed:.2f}s")
    assert len(results) == len(quality.load_suite("gold.incident_findings")["expectations"])
    assert _failed(results) == set(), [r for r in results if not r.success]
    assert all(r.table == "gold.incident_findings" and r.suite == "gold.incident_findings" for r in results)
    quality.enforce(results)
    # the rows go into a Delta table with the documented schema
    rows = quality.results_rows(results, HOUR)
    out = local_frame(spark, rows, quality.RESULTS_SCHEMA_DDL)
    assert out.columns == list(quality.RESULTS_COLUMNS)
    assert out.count() == len(results)


def test_empty_incidents_pass(spark, engine):
    df = local_frame(spark, [], _incidents_schema())
    results = quality.validate(df, "gold.incident_findings", hour=HOUR)
    assert _failed(results) == set()


def test_corrupted_incidents_fail_with_the_right_expectation(spark, engine):
    rows = _clean_incidents() + [
        _incident(kind="broker_on_fire"),                                       # unknown kind
        _incident(kind="offsets_partition_bloat", entity=None),                           # null entity
        _incident(kind="offsets_partition_bloat", known_bug=None),                        # duplicate key
        _incident(kind="data_missing", entity="broker-8",              # ended before the hour
                  first_seen=HOUR - timedelta(hours=4), last_seen=HOUR - timedelta(hours=3)),
    ]
    results = quality.validate(_incidents_df(spark, rows), "gold.incident_findings", hour=HOUR)
    assert _failed(results) == {
        "expect_column_values_to_be_in_set(column=kind)",
        "expect_column_values_to_not_be_null(column=entity)",
        "expect_compound_columns_to_be_unique(column_list=cluster,kind,entity,hour)",
        "expect_column_values_to_be_between(column=last_seen, min_value=$hour_start, max_value=$hour_end)",
    }
    kind = _by_label(results, "expect_column_values_to_be_in_set(column=kind)")
    assert kind.critical and "'broker_on_fire'" in kind.observed and kind.observed.startswith("1 unexpected")
    dup = _by_label(results, "expect_compound_columns_to_be_unique(column_list=cluster,kind,entity,hour)")
    assert "kind='offsets_partition_bloat'" in dup.observed and "entity='broker-219'" in dup.observed
    early = _by_label(results, "expect_column_values_to_be_between(column=last_seen, "
                                "min_value=$hour_start, max_value=$hour_end)")
    assert "2024-03-05 07:00:00" in early.observed

    with pytest.raises(QualityGateError) as err:
        quality.enforce(results)
    text = str(err.value)
    assert "gold.incident_findings" in text
    assert "expect_column_values_to_be_in_set(column=kind)" in text and "broker_on_fire" in text
    assert "expect_column_values_to_not_be_null(column=entity)" in text
    assert len(err.value.failures) == 4


def test_missing_column_is_reported_not_crashing(spark, engine):
    df = _incidents_df(spark, _clean_incidents()).drop("entity")
    results = quality.validate(df, "gold.incident_findings", hour=HOUR)
    failed = _failed(results)
    assert "expect_column_values_to_not_be_null(column=entity)" in failed
    assert "expect_table_columns_to_match_set()" in failed
    null_entity = _by_label(results, "expect_column_values_to_not_be_null(column=entity)")
    assert null_entity.observed.startswith("error:")
    with pytest.raises(QualityGateError, match="column=entity"):
        quality.enforce(results)


def test_warning_failure_is_recorded_but_does_not_raise(spark, engine):
    rows = _clean_incidents()
    rows[0] = _incident(evidence=None)  # evidence not null is a warning
    results = quality.validate(_incidents_df(spark, rows), "gold.incident_findings", hour=HOUR)
    [failed] = [r for r in results if not r.success]
    assert failed.expectation == "expect_column_values_to_not_be_null(column=evidence)"
    assert failed.critical is False
    quality.enforce(results)  # does not raise
    [row] = [r for r in quality.results_rows(results, HOUR) if not r["success"]]
    assert row["critical"] is False and row["observed_value"].startswith("1 unexpected")


def _incidents_table_df(spark, rows):
    from pyspark.sql.types import ArrayType, IntegerType, StringType, StructField, StructType, TimestampType

    ts = ("first_seen", "last_seen", "resolved_at", "first_hour", "last_hour")
    schema = StructType([StructField(c, TimestampType() if c in ts else IntegerType() if c in ("hours", "severity_rank") else
                                     ArrayType(StringType()) if c in ("first_evidence", "caused_by") else StringType(), True)
                         for c in quality.load_suite("gold.incidents")["expectations"][0]["kwargs"]["column_set"]])
    base = {"incident_id": "i-1", "cluster": "prod-a", "kind": "log_cleaner_dead", "severity": "critical",
            "severity_rank": 4, "entity": "broker-219", "status": "open", "first_seen": HOUR, "last_seen": HOUR + timedelta(minutes=50),
            "resolved_at": None, "evidence": "e", "known_bug": None, "first_hour": HOUR, "last_hour": HOUR,
            "hours": 1, "first_evidence": ["e"], "caused_by": []}
    return _df(spark, [dict(base, **row) for row in rows], schema)


def test_both_engines_give_the_same_results_on_row_conditions_and_failures(spark, monkeypatch):
    rows = [{},
            {"incident_id": "i-2", "status": "resolved"},                                 # resolved, no resolved_at
            {"incident_id": "i-3", "entity": "broker-1", "resolved_at": HOUR + timedelta(hours=2)},   # open, resolved_at
            {"incident_id": "i-4", "entity": None, "severity": "apocalyptic", "hours": -1}]
    df = _incidents_table_df(spark, rows).localCheckpoint()
    results = {}
    for engine in ("0", "5"):
        monkeypatch.setenv("FLEETHEALTH_GX_PANDAS_MAX_ROWS", engine)
        results[engine] = quality.validate(df, "gold.incidents", hour=HOUR)
    assert results["0"] == results["5"]
    failed = _failed(results["5"])
    assert {"expect_column_values_to_not_be_null(column=resolved_at)",
            "expect_column_values_to_be_null(column=resolved_at)",
            "expect_column_values_to_not_be_null(column=entity)"} <= failed, failed
    assert any(r.observed.startswith("1 unexpected") and "'apocalyptic'" in r.observed for r in results["5"])


def test_a_table_over_the_limit_is_validated_on_spark_and_a_bad_limit_is_an_error(spark, monkeypatch):
    local = []
    real = quality._validate_locally
    monkeypatch.setattr(quality, "_validate_locally", lambda *a, **k: local.append(1) or real(*a, **k))
    df = _incidents_df(spark, _clean_incidents())          # 3 rows
    monkeypatch.setenv("FLEETHEALTH_GX_PANDAS_MAX_ROWS", "2")
    over = quality.validate(df, "gold.incident_findings", hour=HOUR)
    assert local == []
    monkeypatch.setenv("FLEETHEALTH_GX_PANDAS_MAX_ROWS", "3")
    assert quality.validate(df, "gold.incident_findings", hour=HOUR) == over and local == [1]
    assert _failed(over) == set()
    monkeypatch.setenv("FLEETHEALTH_GX_PANDAS_MAX_ROWS", "lots")
    with pytest.raises(SettingError, match="FLEETHEALTH_GX_PANDAS_MAX_ROWS: expected a whole number"):
        quality.validate(df, "gold.incident_findings", hour=HOUR)


def _offsets_df(spark, rows):
    from pyspark.sql.types import (ArrayType, BooleanType, IntegerType, LongType, StringType, StructField, StructType,
                                   TimestampType)

    schema = StructType([
        StructField("cluster", StringType(), False),
        StructField("broker_id", IntegerType(), False),
        StructField("partition", IntegerType(), False),
        StructField("hour", TimestampType(), False),
        StructField("size_bytes", LongType(), True),
        StructField("max_size_bytes", LongType(), True),
        StructField("growth_bytes", LongType(), True),
        StructField("compaction_logged", BooleanType(), True),
        StructField("compaction_seen", BooleanType(), True),
        StructField("samples", IntegerType(), True),
        StructField("first_ts", TimestampType(), True),
        StructField("last_ts", TimestampType(), True),
        StructField("size_source", StringType(), True),
        StructField("groups", ArrayType(StringType()), True),
    ])
    return _df(spark, rows, schema)


def _offsets_row(**over):
    row = {"cluster": "prod-a", "broker_id": 219, "partition": 38, "hour": HOUR,
           "size_bytes": 500 * 1024**3, "max_size_bytes": 500 * 1024**3, "growth_bytes": None,
           "compaction_logged": False, "compaction_seen": False, "samples": 12,
           "first_ts": HOUR + timedelta(minutes=1), "last_ts": HOUR + timedelta(minutes=59),
           "size_source": "jmx", "groups": ["consumer-group"]}
    row.update(over)
    return row


def test_consumer_offsets_partitions(spark, engine):
    clean = [_offsets_row(), _offsets_row(partition=0, size_bytes=0, growth_bytes=-10,
                                          compaction_seen=True)]
    results = quality.validate(_offsets_df(spark, clean), "gold.consumer_offsets_partitions", hour=HOUR)
    assert _failed(results) == set()

    bad = clean + [_offsets_row(partition=1, size_bytes=-42)]
    results = quality.validate(_offsets_df(spark, bad), "gold.consumer_offsets_partitions", hour=HOUR)
    assert _failed(results) == {"expect_column_values_to_be_between(column=size_bytes, min_value=0)"}
    with pytest.raises(QualityGateError, match=r"(?s)gold.consumer_offsets_partitions.*size_bytes.*-42"):
        quality.enforce(results)


def test_data_docs_index_written(spark, tmp_path):
    docs = tmp_path / "docs"
    rows = _clean_incidents() + [_incident(kind="broker_on_fire")]
    results = quality.validate(_incidents_df(spark, rows), "gold.incident_findings", hour=HOUR,
                               data_docs_dir=docs)
    assert _failed(results) == {"expect_column_values_to_be_in_set(column=kind)"}
    index = docs / "index.html"
    assert index.is_file()
    assert "gold.incident_findings-20240305T1000Z" in index.read_text()
    assert list((docs / "validations").rglob("*.html"))
    # a second hour through the same cached context updates the same site
    results = quality.validate(_incidents_df(spark, _clean_incidents()), "gold.incident_findings",
                               hour=HOUR, data_docs_dir=docs)
    assert _failed(results) == set()
    assert len(list((docs / "validations").rglob("*.html"))) == 2
    # the next hourly job is another process with a new GX context: earlier pages must stay
    context.contexts.pop(str(docs.resolve()))
    quality.validate(_incidents_df(spark, _clean_incidents()), "gold.incident_findings",
                     hour=HOUR + timedelta(hours=1), data_docs_dir=docs)
    pages = list((docs / "validations").rglob("*.html"))
    assert len(pages) == 3
    index = index.read_text()
    assert all(str(page.relative_to(docs)) in index for page in pages)
    assert "gold.incident_findings-20240305T1100Z" in index


def test_data_docs_index_links_the_latest_results_and_keeps_every_page(spark, tmp_path, monkeypatch):
    """The index's cost must not grow with history: it links the most recent results only."""
    monkeypatch.setattr(context, "DOCS_INDEX_RESULTS", 2)
    docs = tmp_path / "docs"
    for i in range(3):
        quality.validate(_incidents_df(spark, _clean_incidents()), "gold.incident_findings",
                         hour=HOUR + timedelta(hours=i), data_docs_dir=docs)
    context.contexts.pop(str(docs.resolve()))
    index = (docs / "index.html").read_text()
    assert "gold.incident_findings-20240305T1000Z" not in index
    assert "gold.incident_findings-20240305T1100Z" in index and "gold.incident_findings-20240305T1200Z" in index
    assert len(list((docs / "validations").rglob("*.html"))) == 3


def test_an_hours_data_docs_build_reads_no_older_result(spark, tmp_path, monkeypatch):
    """GX's own builders parse every retained result's key each build (about 60 an hour, 10,000 at a
    week's retention); the hour's build parses the hour's result and the index's newest pages only."""
    from great_expectations.data_context.types.resource_identifiers import ValidationResultIdentifier

    monkeypatch.setattr(context, "DOCS_INDEX_RESULTS", 2)
    docs = tmp_path / "docs"
    for i in range(2):
        quality.validate(_incidents_df(spark, _clean_incidents()), "gold.incident_findings",
                         hour=HOUR + timedelta(hours=i), data_docs_dir=docs)
    stored = next((docs / context.DOCS_STORES).rglob("*.json"))
    for n in range(200):    # older results, as a week of hours leaves them
        old = stored.parent.parent / f"20240101T{n // 60:02d}{n % 60:02d}00.000000Z" / stored.name
        old.parent.mkdir(parents=True)
        old.write_bytes(stored.read_bytes())
    parsed = []
    real = ValidationResultIdentifier.from_tuple.__func__
    monkeypatch.setattr(ValidationResultIdentifier, "from_tuple",
                        classmethod(lambda cls, t: parsed.append(t) or real(cls, t)))
    quality.validate(_incidents_df(spark, _clean_incidents()), "gold.incident_findings",
                     hour=HOUR + timedelta(hours=2), data_docs_dir=docs)
    assert len(parsed) <= 2 * context.DOCS_INDEX_RESULTS, len(parsed)
    index = (docs / "index.html").read_text()
    assert "gold.incident_findings-20240305T1100Z" in index and "gold.incident_findings-20240305T1200Z" in index
    assert "gold.incident_findings-20240305T1000Z" not in index
    assert len(list((docs / "validations").rglob("*.html"))) == 3
