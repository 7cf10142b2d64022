"""The detector registry: every module of fleethealth.gold.detectors but its helpers is a detector,
found by discovery, with what docs/development.md's "How to add … a detector" names (KIND, detect, REPORT,
its `<kind>.severity`, its row in docs/incidents.md's kinds; its runbook: tests/test_gold_runbooks.py); a module added
to the package is found."""
from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from fleethealth.gold import detectors, thresholds
from fleethealth.gold.detectors import DETECTORS, HELPERS
from fleethealth.report.html import incidents, read

PACKAGE = "fleethealth.gold.detectors"
KINDS_DOC = Path(__file__).resolve().parents[1] / "docs" / "incidents.md"
HOUR = datetime(2026, 11, 21, 6)
NEW = '''
from pyspark.sql import functions as F

from fleethealth.gold.detectors.base import finding

KIND = "aa_new_kind"
REPORT = {"chart": None, "table": "deadlocks", "columns": ["hour", "broker_id"]}


def detect(facts, thresholds):
    return finding(facts.deadlocks, KIND, thresholds[f"{KIND}.severity"],
                   entity=F.format_string("broker-%d", F.col("broker_id")), first_seen=F.col("ts"),
                   last_seen=F.col("ts"), evidence=F.lit("a test's"), hour=F.col("hour"))
'''


@pytest.fixture
def package_with(tmp_path, monkeypatch):
    """The package as it imports with `modules` (name -> source) beside its own (`only`: instead of
    them), in sys.modules for the test."""
    added = []

    def make(modules: dict[str, str], only: bool = False):
        folder = tmp_path / "detectors"
        folder.mkdir()
        for name, source in modules.items():
            (folder / f"{name}.py").write_text(source)
        added.extend(modules)
        locations = [str(folder)] if only else [*detectors.__path__, str(folder)]
        spec = importlib.util.spec_from_file_location(PACKAGE, detectors.__file__,
                                                      submodule_search_locations=locations)
        package = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, PACKAGE, package)
        incidents.shown.cache_clear()
        spec.loader.exec_module(package)
        return package

    yield make
    for name in added:
        sys.modules.pop(f"{PACKAGE}.{name}", None)
    incidents.shown.cache_clear()


def test_every_module_of_the_package_is_a_detector_or_a_helper():
    modules = {p.stem for p in Path(detectors.__file__).parent.glob("*.py")} - {"__init__"}
    assert modules == set(DETECTORS) | set(HELPERS)
    assert list(DETECTORS) == sorted(DETECTORS)
    for kind, module in DETECTORS.items():
        assert module.__name__ == f"{PACKAGE}.{kind}" and module.KIND == kind and callable(module.detect)


def test_every_kind_has_its_severity_threshold_and_its_row_in_the_docs():
    """docs/incidents.md's table, written by hand, has a row per kind with the default severity
    thresholds.yaml declares (issue 62 item 8): it cannot drift from the thresholds."""
    declared = thresholds.declarations()
    assert [kind for kind in DETECTORS if f"{kind}.severity" not in declared] == []
    table = KINDS_DOC.read_text().split(
        "| kind | default severity | fires on | signals (any that is available) |\n|---|---|---|---|\n", 1)[1]
    rows = [re.match(r"^\| `(\w+)` \| (\w+)(?: \(flapping: (\w+)\))? \|", line).groups()
            for line in table.split("\n\n", 1)[0].splitlines()]
    assert sorted(kind for kind, *_ in rows) == sorted(DETECTORS)
    for kind, severity, flapping in rows:
        assert severity == declared[f"{kind}.severity"]["value"], kind
        assert flapping == declared.get(f"{kind}.flapping_severity", {}).get("value"), kind


def test_the_report_shows_what_each_module_declares():
    assert incidents.shown() == {kind: incidents.Shown(**m.REPORT) if m.REPORT else None
                                 for kind, m in DETECTORS.items()}
    assert incidents.shown()["metadata_snapshots_disabled"] is None
    assert incidents.chart_of("offsets_partition_bloat") == "chart-offsets"
    assert incidents.chart_of("broker_deadlock") is None and incidents.chart_of("metadata_lag") is None
    # the tables the report reads ("fd": open files from silver.jmx_samples, gold keeps no fd table)
    assert {s.table for s in incidents.shown().values() if s} <= {*read.HOURLY, "fd"}


def test_the_report_reads_the_declarations_without_spark():
    code = ("import json, sys\nfrom fleethealth.report.html import incidents\nincidents.shown()\n"
            "print(json.dumps(sorted(sys.modules)))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(Path(detectors.__file__).parents[3])))
    assert proc.returncode == 0, proc.stderr[-2000:]
    imported = json.loads(proc.stdout.splitlines()[-1])
    assert [m for m in imported if m.split(".")[0] in ("pyspark", "py4j", "delta") or m.startswith(PACKAGE)] == []


def test_a_module_added_to_the_package_is_discovered(package_with):
    from fleethealth.quality import suites

    package = package_with({"aa_new_kind": NEW})
    assert list(package.DETECTORS) == ["aa_new_kind", *DETECTORS]
    assert package.DETECTORS["aa_new_kind"].__name__ == f"{PACKAGE}.aa_new_kind"
    # and a retired kind stays valid for the rows it left in gold.incidents
    assert suites.VALUE_SETS["incident_kinds"]() == sorted(["aa_new_kind", *DETECTORS, "known_bug_exposure"])
    assert incidents.shown()["aa_new_kind"] == incidents.Shown(None, "deadlocks", ["hour", "broker_id"])


@pytest.mark.parametrize("source, message", [
    ('KIND = "aa_bad"\nREPORT = None\n', "a detector module defines KIND, detect, REPORT; it has no detect"),
    ("def detect(facts, thresholds):\n    pass\n", "a detector module defines KIND, detect, REPORT; it has no KIND, REPORT"),
    ('KIND = "other"\nREPORT = None\ndef detect(facts, thresholds):\n    pass\n', "KIND is 'other', not the module's name"),
])
def test_a_module_that_is_no_detector_stops_the_import(package_with, source, message):
    with pytest.raises(TypeError) as err:    # the DetectorError of the package imported anew
        package_with({"aa_bad": source})
    assert type(err.value).__name__ == "DetectorError"
    assert str(err.value).startswith(f"{PACKAGE}.aa_bad: {message}")


@pytest.mark.spark
def test_detect_all_runs_a_discovered_module(package_with, spark):
    from fleethealth.gold.facts.core import Facts
    from fleethealth.runtime.frames import local_frame

    package = package_with({"aa_new_kind": NEW}, only=True)
    deadlocks = local_frame(spark, [("c1", 3, HOUR, HOUR)], "cluster string, broker_id int, ts timestamp, hour timestamp")
    facts = Facts(HOUR, None, None, None, None, None, None, None, deadlocks)
    [row] = package.detect_all(facts, {"aa_new_kind.severity": "minor"}).collect()
    assert (row.kind, row.severity, row.entity, row.evidence) == ("aa_new_kind", "minor", "broker-3", "a test's")
