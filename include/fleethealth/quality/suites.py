"""Great Expectations gate run inside the Spark jobs (GX Core 1.x, no Airflow provider).

The suites are data: ``expectations/<table>.json`` in GX 1.x suite JSON
(``{"name", "expectations": [{"type", "kwargs", "meta"}], "meta"}``). Per expectation,
``meta.severity`` is ``"critical"`` (default: a failure stops the job in :func:`enforce`) or
``"warning"`` (recorded only). Hour-relative values may be written as placeholders in kwargs and are
substituted by :func:`validate` for the processed hour:

* ``"$hour"``       the processed hour (start of the window)
* ``"$hour_start"`` hour - ``meta.hour_tolerance_minutes`` (suite level, default 0)
* ``"$hour_end"``   hour + 1 h + the tolerance

Allowed-value sets that the code owns are named, not copied: ``"value_set": "$values:<name>"`` is
replaced by ``VALUE_SETS[name]()`` (incident kinds from the detector registry, event types from the
rules YAML files: each registered by the layer that owns it, `register_values`; severities and
sources from the floors below), so a new detector or event rule widens the suite without editing JSON. Suite ``meta.row_keys`` names the columns shown with each offending
value (e.g. cluster, host, source), so a failure message points at rows, not just values.

Typical use in a job::

    results = quality.validate_tables({"gold.incident_findings": df}, hour=hour, data_docs_dir=docs)
    rows = quality.results_rows(results, hour)   # -> gold.quality_results (RESULTS_SCHEMA_DDL)
    quality.enforce(results)

(fleethealth.quality.gate does that on the computed tables of a layer, and writes the rows with the
layer's tables, or with its staged tables when the gate fails.)

GX is imported lazily (it takes seconds) and its context is created once per process
(fleethealth.quality.context, with the Data Docs site's stores). The gate
never creates a Spark session: it validates the DataFrame it is given, on that DataFrame's session
(persisted for the duration of the validation, as every GX metric is a Spark job).

Passing expectations have an empty ``observed`` (the first pass is BOOLEAN_ONLY, see TWO_PASS);
failed ones carry the observed value, or the count and a few offending values/rows, or the error.
With ``data_docs_dir`` the (two-pass) results are also stored and the GX Data Docs site
``<data_docs_dir>/index.html`` is updated once per call of :func:`validate_tables` (GX's stores
behind it live in ``<data_docs_dir>/_gx``). Its pages load nothing from the network, and results
older than the tables' retention are pruned with their pages by the maintenance job
(fleethealth.quality.docs).
"""
from __future__ import annotations

import copy
import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from fleethealth.quality import context
from fleethealth.runtime.config import expectations_dir

SEVERITIES = ("critical", "warning", "info")
DEFAULT_SEVERITY = "critical"
SAMPLE_SIZE = 5  # offending values kept per expectation
VALIDATION_THREADS = 4
RESULT_FORMAT = {"result_format": "SUMMARY", "partial_unexpected_count": SAMPLE_SIZE}
# Spark metrics are slow per expectation, and collecting the unexpected values costs about as much
# again: first run the whole suite BOOLEAN_ONLY, then re-run only the failed expectations with
# RESULT_FORMAT to get their offending values (a clean hour pays for one cheap pass only).
TWO_PASS = True
# A table of at most FLEETHEALTH_GX_PANDAS_MAX_ROWS rows takes the first pass on a pandas copy (GX's
# pandas engine): one Spark job to collect it instead of a Spark job or more per expectation (a small
# fleet's hour: about 200 such jobs for a few thousand rows). The detailed second pass stays on Spark,
# so a failure's observed values read the same whichever engine found it.
# judged on the frame's schema (Spark types, no Spark job): always on the Spark frame
SCHEMA_EXPECTATIONS = frozenset({
    "expect_column_values_to_be_of_type", "expect_column_values_to_be_in_type_list",
    "expect_table_columns_to_match_set", "expect_table_columns_to_match_ordered_list",
    "expect_column_to_exist", "expect_table_column_count_to_equal",
})
_OBSERVED_MAX_CHARS = 500
# kwargs shown in an expectation's label (stable across hours: labels use the unsubstituted values)
_LABEL_KWARGS = ("column", "column_list", "column_A", "column_B", "min_value", "max_value",
                 "type_", "or_equal", "value", "regex")
# meta keys under which validate() tags each expectation (label shown in Data Docs; index to match
# GX's results, which come back in another order, to the suite's expectations)
_LABEL_META = "expectation"
_INDEX_META = "fleethealth_index"

RESULTS_COLUMNS = ("table", "hour", "suite", "expectation", "success", "observed_value",
                   "critical", "validated_at")
RESULTS_SCHEMA_DDL = (
    "table STRING, hour TIMESTAMP, suite STRING, expectation STRING, success BOOLEAN, "
    "observed_value STRING, critical BOOLEAN, validated_at TIMESTAMP"
)


class QualityGateError(Exception):
    """A critical expectation failed; the message names table, suite, expectations and values."""

    def __init__(self, message: str, failures: list["ExpectationResult"] | None = None):
        super().__init__(message)
        self.failures = failures or []


@dataclass(frozen=True)
class ExpectationResult:
    table: str
    suite: str
    expectation: str  # type + key kwargs, e.g. "expect_column_values_to_not_be_null(column=entity)"
    success: bool
    observed: str  # observed value, or a few unexpected values, or the error raised
    critical: bool


# --------------------------------------------------------------------------------------- suites
def suite_path(table: str, directory: Path | None = None) -> Path:
    return Path(directory or expectations_dir()) / f"{table}.json"


def load_suite(table: str, *, directory: Path | None = None) -> dict:
    """The suite dict of ``table`` from ``expectations/<table>.json``; ValueError/FileNotFoundError
    with the file name when it is missing or malformed."""
    path = suite_path(table, directory)
    if not path.is_file():
        raise FileNotFoundError(f"no expectation suite for table {table!r}: {path} does not exist")
    try:
        suite = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: invalid JSON at line {exc.lineno}: {exc.msg}") from None
    if not isinstance(suite, dict) or not isinstance(suite.get("expectations"), list):
        raise ValueError(f"{path}: not a GX suite (expected an object with an 'expectations' list)")
    suite.setdefault("name", table)
    for i, exp in enumerate(suite["expectations"]):
        if not isinstance(exp, dict) or not isinstance(exp.get("type"), str):
            raise ValueError(f"{path}: expectation #{i} has no 'type'")
        severity = _severity(exp)
        if severity not in SEVERITIES:
            raise ValueError(
                f"{path}: expectation #{i} ({exp['type']}): severity {severity!r} "
                f"is not one of {', '.join(SEVERITIES)}"
            )
    return suite


def _severity(exp: dict) -> str:
    meta = exp.get("meta") or {}
    return str(meta.get("severity") or exp.get("severity") or DEFAULT_SEVERITY).lower()


def _as_utc(hour: datetime) -> datetime:
    return hour.replace(tzinfo=timezone.utc) if hour.tzinfo is None else hour.astimezone(timezone.utc)


def hour_placeholders(suite: dict, hour: datetime) -> dict[str, datetime]:
    hour = _as_utc(hour)
    tolerance = timedelta(minutes=float((suite.get("meta") or {}).get("hour_tolerance_minutes", 0)))
    return {
        "$hour": hour,
        "$hour_start": hour - tolerance,
        "$hour_end": hour + timedelta(hours=1) + tolerance,
    }


def _severities() -> list[str]:
    from fleethealth.runtime.vocabulary import SEVERITY_RANK

    return sorted(SEVERITY_RANK)


def _severity_ranks() -> list[int]:
    from fleethealth.runtime.vocabulary import SEVERITY_RANK

    return sorted(SEVERITY_RANK.values())


def _sources() -> list[str]:
    from fleethealth.fleet.sources import NAMES

    return sorted(NAMES)


# "$values:<name>" in a suite -> the list the code owns (called when a suite is read: some need pyspark);
# the layers above add theirs (register_values) when their package is imported
VALUE_SETS = {
    "severities": _severities,
    "severity_ranks": _severity_ranks,
    "sources": _sources,
}


def register_values(name: str, values) -> None:
    """Let suites name `values()` (a callable returning the allowed values) as "$values:<name>"."""
    VALUE_SETS[name] = values
_VALUES_PREFIX = "$values:"


def substitute_hour(suite: dict, hour: datetime | None) -> dict:
    """A copy of ``suite`` whose kwargs placeholders ("$hour", "$hour_start", "$hour_end") are
    replaced by UTC datetimes for ``hour``, and "$values:<name>" by the named VALUE_SETS list.
    ValueError if hour placeholders are used without an hour, or a value set is unknown."""
    out = copy.deepcopy(suite)
    values = hour_placeholders(suite, hour) if hour is not None else {}

    def sub(value: Any) -> Any:
        if isinstance(value, str) and value.startswith(_VALUES_PREFIX):
            name = value[len(_VALUES_PREFIX):]
            if name not in VALUE_SETS:
                raise ValueError(f"suite {suite.get('name')!r}: unknown value set {value!r} "
                                 f"(known: {', '.join(sorted(VALUE_SETS))})")
            return VALUE_SETS[name]()
        if isinstance(value, str) and value in ("$hour", "$hour_start", "$hour_end"):
            if hour is None:
                raise ValueError(
                    f"suite {suite.get('name')!r} uses {value} but validate() was given no hour"
                )
            return values[value]
        if isinstance(value, list):
            return [sub(v) for v in value]
        if isinstance(value, dict):
            return {k: sub(v) for k, v in value.items()}
        return value

    for exp in out["expectations"]:
        exp["kwargs"] = sub(exp.get("kwargs") or {})
    return out


def expectation_label(exp: dict) -> str:
    kwargs = exp.get("kwargs") or {}
    parts = []
    for key in _LABEL_KWARGS:
        if key in kwargs:
            value = kwargs[key]
            text = ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
            parts.append(f"{key}={text}")
    return f"{exp['type']}({', '.join(parts)})"


# ------------------------------------------------------------------------------------ GX
def preload() -> threading.Thread:
    """Import GX (seconds) in a background thread, e.g. while a job's Spark session starts."""
    def load():
        os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")
        import great_expectations  # noqa: F401
    thread = threading.Thread(target=load, name="gx-preload", daemon=True)
    thread.start()
    return thread


def _gx_suite(suite: dict, source: str):
    from great_expectations.core.expectation_suite import ExpectationSuite

    expectations = []
    for exp in suite["expectations"]:
        severity = _severity(exp)
        meta = dict(exp.get("meta") or {}, severity=severity)
        meta[_LABEL_META] = exp["_label"]
        meta[_INDEX_META] = exp["_index"]
        expectations.append({"type": exp["type"], "kwargs": exp.get("kwargs") or {},
                             "meta": meta, "severity": severity})
    try:
        return ExpectationSuite(name=suite["name"], expectations=expectations,
                                meta=suite.get("meta") or {}, notes=suite.get("notes"))
    except Exception as exc:  # pydantic/GX errors on unknown types or bad kwargs
        raise ValueError(f"{source}: invalid expectation suite: {exc}") from exc


# ------------------------------------------------------------------------------------- validate
def validate(df, table: str, *, hour: datetime | None = None,
             data_docs_dir: Path | None = None) -> list[ExpectationResult]:
    """Run the suite of ``table`` on the Spark DataFrame ``df`` (on df's own session).

    ``hour`` fills the "$hour*" placeholders; ``data_docs_dir`` additionally stores the result and
    updates the GX Data Docs site there. Returns one result per expectation, in suite order."""
    return validate_tables({table: df}, hour=hour, data_docs_dir=data_docs_dir)


def validate_tables(frames: dict, *, hour: datetime | None = None, data_docs_dir: Path | None = None,
                    persist: bool = True) -> list[ExpectationResult]:
    """Validate each ``{table: DataFrame}`` with its suite; with ``data_docs_dir`` store the results
    and rebuild the Data Docs pages and index once for all of them. ``persist=False``: the frames
    are already materialized (e.g. checkpointed), do not cache another copy while validating."""
    from fleethealth.runtime.frames import spark_thread

    results: list[ExpectationResult] = []
    keep = data_docs_dir is not None
    # tables concurrently: each expectation is a small Spark job, and the driver overlaps them well
    with ThreadPoolExecutor(max_workers=VALIDATION_THREADS) as pool:
        outcomes = list(pool.map(spark_thread(lambda item: _validate_one(item[1], item[0], hour, keep, persist)),
                                 frames.items()))
    for table, (found, suite_dict, outcome) in zip(frames, outcomes):
        for i, exp in enumerate(suite_dict["expectations"]):
            res = found.get(i)
            results.append(ExpectationResult(
                table=table,
                suite=suite_dict["name"],
                expectation=exp["_label"],
                success=bool(res is not None and res.success),
                observed=_observed(res) if res is not None else "no result returned by GX",
                critical=_severity(exp) == "critical",
            ))
    if data_docs_dir is not None and outcomes:
        with context.docs_lock(data_docs_dir):
            stored = [_store(context.get(data_docs_dir), suite_dict, table, hour, outcome)
                      for table, (_, suite_dict, outcome) in zip(frames, outcomes)]
            context.build_docs(data_docs_dir, stored)
    return results


def _validate_one(df, table: str, hour: datetime | None, keep_outcome: bool, persist: bool = True):
    raw = load_suite(table)
    for i, exp in enumerate(raw["expectations"]):
        exp["_label"] = expectation_label(exp)  # from unsubstituted kwargs: stable across hours
        exp["_index"] = i
    suite_dict = substitute_hour(raw, hour)
    source = str(suite_path(table))
    row_keys = [c for c in (raw.get("meta") or {}).get("row_keys", []) if c in df.columns]
    detail_format = dict(RESULT_FORMAT, **({"unexpected_index_column_names": row_keys} if row_keys else {}))

    copy_ = _local_copy(df) if TWO_PASS else None
    persisted = False
    if copy_ is None and persist and not df.is_cached:  # every metric is a Spark job: do not recompute df's lineage each time
        df = df.persist()
        persisted = True
    try:
        batch = context.get().batch_definition(table).get_batch(batch_parameters={"dataframe": df})
        fmt = {"result_format": "BOOLEAN_ONLY"} if TWO_PASS else detail_format
        if copy_ is None:
            outcome = batch.validate(_gx_suite(suite_dict, source), result_format=fmt)
        else:
            outcome = _validate_locally(batch, copy_, table, suite_dict, source, fmt)
        found = _by_index(outcome, suite_dict)
        failed = [i for i, res in found.items() if not res.success]
        if TWO_PASS and failed:
            retry = dict(suite_dict, expectations=[suite_dict["expectations"][i] for i in failed])
            detailed = _by_index(batch.validate(_gx_suite(retry, source), result_format=detail_format),
                                 suite_dict)
            found.update({i: res for i, res in detailed.items() if i in failed})
            if keep_outcome:  # Data Docs show the detailed result of the failed expectations
                outcome.results = [found[i] for i in sorted(found)]
    finally:
        if persisted:
            df.unpersist()
    return found, suite_dict, outcome


def _local_copy(df):
    """A pandas copy of the Spark frame `df` if it has at most FLEETHEALTH_GX_PANDAS_MAX_ROWS rows (one
    Spark job through Arrow; timestamps tz-aware, as the suites' hour bounds are), else None."""
    from fleethealth.runtime.config import gx_pandas_max_rows

    limit = gx_pandas_max_rows()
    if limit <= 0:
        return None
    table = df.limit(limit + 1).toArrow()
    if table.num_rows > limit:
        return None
    return table.to_pandas()


def _spark_only(exp: dict) -> bool:
    """Whether an expectation can only be judged on the Spark frame: on its schema (Spark's type
    names), or on rows chosen by a Spark SQL row_condition."""
    kwargs = exp.get("kwargs") or {}
    return exp["type"] in SCHEMA_EXPECTATIONS or bool(kwargs.get("row_condition")) and kwargs.get("condition_parser") == "spark"


def _validate_locally(batch, local_df, table: str, suite_dict: dict, source: str, fmt: dict):
    """The first pass of a suite whose rows are in `local_df` (pandas): the expectations only Spark can
    judge (_spark_only) on the Spark `batch`, the others on the copy; one outcome of them all, in the
    shape GX gives one suite's."""
    from great_expectations.validator.validation_statistics import calc_validation_statistics

    on_schema = [e for e in suite_dict["expectations"] if _spark_only(e)]
    on_rows = [e for e in suite_dict["expectations"] if not _spark_only(e)]
    local = context.get().batch_definition(table, local=True).get_batch(batch_parameters={"dataframe": local_df})
    outcome = local.validate(_gx_suite(dict(suite_dict, expectations=on_rows), source), result_format=fmt)
    if on_schema:
        schema = batch.validate(_gx_suite(dict(suite_dict, expectations=on_schema), source), result_format=fmt)
        outcome.results = sorted(list(outcome.results) + list(schema.results),
                                 key=lambda res: (res.expectation_config.meta or {})[_INDEX_META])
        stats = calc_validation_statistics(outcome.results)
        outcome.success = stats.success
        outcome.statistics = {"evaluated_expectations": stats.evaluated_expectations,
                              "successful_expectations": stats.successful_expectations,
                              "unsuccessful_expectations": stats.unsuccessful_expectations,
                              "success_percent": stats.success_percent}
    return outcome


def _by_index(outcome, suite_dict) -> dict:
    """GX results keyed by the position of their expectation in suite_dict (GX reorders them)."""
    found = {}
    for res in outcome.results:
        found[(res.expectation_config.meta or {})[_INDEX_META]] = res
    return found


def _store(gxc: context.Gx, suite_dict: dict, table: str, hour: datetime | None, outcome):
    """Put one validation result in the Data Docs context's store; returns its identifier."""
    from great_expectations.core.run_identifier import RunIdentifier
    from great_expectations.data_context.types.resource_identifiers import (ExpectationSuiteIdentifier,
                                                                            ValidationResultIdentifier)

    run_name = f"{table}-{_as_utc(hour):%Y%m%dT%H%MZ}" if hour is not None else table
    identifier = ValidationResultIdentifier(
        expectation_suite_identifier=ExpectationSuiteIdentifier(name=suite_dict["name"]),
        run_id=RunIdentifier(run_name=run_name, run_time=datetime.now(timezone.utc)),
        batch_identifier=table)
    with context.lock:
        gxc.context.validation_results_store.set(identifier, outcome)
    return identifier


def _fmt(value: Any) -> str:
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={_fmt(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    return repr(value) if isinstance(value, str) or value is None else str(value)


def _observed(res) -> str:
    info = res.exception_info or {}
    if not info.get("raised_exception"):  # several metrics: {metric_id: {raised_exception...}}
        info = next((v for v in info.values() if isinstance(v, dict)
                     and v.get("raised_exception")), info)
    if info.get("raised_exception"):
        text = f"error: {info.get('exception_message')}"
    else:
        result = res.result or {}
        if "observed_value" in result:
            text = _fmt(result["observed_value"])
            details = result.get("details") or {}
            mismatched = details.get("mismatched")
            if mismatched and not res.success:
                text += f" (mismatched: {_fmt(mismatched)})"
        elif "unexpected_count" in result:
            text = f"{result['unexpected_count']} unexpected"
            sample: list = []
            # with meta.row_keys: the offending rows' keys and value, else the values alone
            rows = result.get("partial_unexpected_index_list")
            for value in (rows if isinstance(rows, list) and rows else
                          result.get("partial_unexpected_list") or []):
                if value not in sample:
                    sample.append(value)
            if sample:
                text += ", e.g. " + ", ".join(_fmt(v) for v in sample[:SAMPLE_SIZE])
        else:  # BOOLEAN_ONLY pass of a successful expectation
            text = "" if res.success else "failed"
    return text if len(text) <= _OBSERVED_MAX_CHARS else text[: _OBSERVED_MAX_CHARS - 3] + "..."


# -------------------------------------------------------------------------------------- enforce
def enforce(results: list[ExpectationResult]) -> None:
    """Raise QualityGateError if any critical expectation failed (warnings are only recorded)."""
    failures = [r for r in results if r.critical and not r.success]
    if not failures:
        return
    warnings = [r for r in results if not r.critical and not r.success]
    lines = []
    for (table, suite) in dict.fromkeys((r.table, r.suite) for r in failures):
        lines.append(f"quality gate failed for table {table} (suite {suite}):")
        lines += [f"  - {r.expectation}: {r.observed}" for r in failures
                  if (r.table, r.suite) == (table, suite)]
    if warnings:
        lines.append(f"  ({len(warnings)} warning expectation(s) also failed: "
                     + "; ".join(r.expectation for r in warnings) + ")")
    raise QualityGateError("\n".join(lines), failures)


def results_rows(results: list[ExpectationResult], hour: datetime | None) -> list[dict]:
    """Rows for the Delta table gold.quality_results (schema RESULTS_SCHEMA_DDL)."""
    validated_at = datetime.now(timezone.utc)
    hour_utc = _as_utc(hour) if hour is not None else None
    return [
        {"table": r.table, "hour": hour_utc, "suite": r.suite, "expectation": r.expectation,
         "success": r.success, "observed_value": r.observed, "critical": r.critical,
         "validated_at": validated_at}
        for r in results
    ]
