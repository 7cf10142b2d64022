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
