"""Rules of the test suite that keep it inside its budget (docs/development.md, "The test budget")."""
from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).parent
# the comment that lets a test build a frame of Python rows, on the line before the call
PYTHON_ROWS = "# a scan of Python rows"


def python_row_frames(text: str) -> list[int]:
    """Line numbers of `createDataFrame(` calls not marked with PYTHON_ROWS on the line before."""
    lines = text.splitlines()
    return [n for n, line in enumerate(lines, 1) if re.search(r"\.createDataFrame\(", line)
            and not (n > 1 and lines[n - 2].strip().startswith(PYTHON_ROWS))]


def test_small_frames_are_local_relations_not_python_rows():
    """A frame of Python rows (spark.createDataFrame of a list) is a Python RDD: every job that scans it
    starts Python workers and pickles the rows through them, two thirds of a detector test's CPU
    (make test 1,232 -> 718 s when the tests' frames became local_frame's Arrow local relations)."""
    found = {p.name: python_row_frames(p.read_text()) for p in sorted(TESTS.glob("*.py")) if p != Path(__file__)}
    assert {name: lines for name, lines in found.items() if lines} == {}


def test_the_rule_sees_an_unmarked_call_and_lets_a_marked_one_pass():
    assert python_row_frames('x = 1\ndf = spark.createDataFrame([(1,)], "a int")\n') == [2]
    assert python_row_frames(f'{PYTHON_ROWS}: the plan\ndf = spark.createDataFrame([(1,)], "a int")\n') == []
    assert python_row_frames('df = local_frame(spark, [(1,)], "a int")\n') == []


def slow_files(tests: Path) -> list[str]:
    """The test files with a test in make test-slow (marked slow or big)."""
    return sorted(p.name for p in tests.glob("test_*.py")
                  if re.search(r"pytest\.mark\.(slow|big)\b", p.read_text(encoding="utf-8")))


def test_every_slow_file_has_a_weight_so_none_is_handed_out_last_by_mistake():
    """`--dist loadfile` hands the files out heaviest first by tests/file_seconds.json (conftest): a slow file
    with no weight went last and made the run's tail while the other worker idled (test_scenarios_prometheus
    until stop 80). `FLEETHEALTH_FILE_TIMES=write make test-slow` writes measured weights."""
    import json

    weights = json.loads((TESTS / "file_seconds.json").read_text())["slow"]
    assert [name for name in slow_files(TESTS) if name not in weights and name != Path(__file__).name] == []


def test_the_slow_files_are_found_by_their_marks(tmp_path):
    (tmp_path / "test_a.py").write_text("import pytest\npytestmark = [pytest.mark.spark, pytest.mark.slow]\n")
    (tmp_path / "test_b.py").write_text("import pytest\n@pytest.mark.big\ndef test_x(): pass\n")
    (tmp_path / "test_c.py").write_text("import pytest\n@pytest.mark.slowish\ndef test_x(): pass\n")
    assert slow_files(tmp_path) == ["test_a.py", "test_b.py"]
