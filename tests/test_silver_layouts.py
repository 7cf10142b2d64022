"""Known log4j layouts recognised per record (issue 61 items 1-3): golden files per layout under
tests/fixtures/layouts/ (every parsed field exact; configs cited in ORIGIN.md), a file mixing layouts,
never glue (a header line in any layout is a record of its own), a file in no known layout
quarantined with its first line, loggers matched by their simple name (`%c{1}`) and pull's record-start
finding. The forms of simulate/layouts.py through the pipeline: tests/test_scenarios_as_deployed.py.

    GENERATE=1 pytest tests/test_silver_layouts.py     rewrite the expected files (then review the diff!)
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from fleethealth.cli.parse import utc_text
from fleethealth.pull import linecut
from fleethealth.runtime.frames import local_frame
from fleethealth.silver.parsers import log4j, rules

pytestmark = pytest.mark.spark

LAYOUTS = Path(__file__).parent / "fixtures" / "layouts"
GENERATE = os.environ.get("GENERATE") == "1"
CASES = sorted(p.name for p in LAYOUTS.glob("*.log"))
FIELDS = ("line_number", "line_count", "ts", "level", "thread", "logger", "message", "detail")


def _lines(spark, files: dict[str, str], source: str = "kafka"):
    rows = [("c", "h", source, name, "sha", "2026-03-10T01", i, line)
            for name, text in files.items() for i, line in enumerate(text.split("\n"), start=1)]
    return local_frame(spark, rows, "cluster string, host string, source string, file string, file_sha256 string, "
                                    "hour string, line_number long, record string")


def _fmt(case: str):
    return log4j.ZOOKEEPER if case.startswith("zookeeper") else log4j.KAFKA


def _parse(spark, files: dict[str, str], fmt):
    records, orphans = log4j.assemble(_lines(spark, files, fmt.name), fmt)
    parsed = log4j.parse_records(records, fmt, F.lit("UTC"))
    return utc_text(parsed).select("file", *FIELDS).orderBy("file", "line_number"), orphans


@pytest.mark.parametrize("case", CASES)
def test_golden_layout(spark, case):
    """Each record of the case's layout parsed exactly (`<case>-expected.json`); no line left over."""
    text = (LAYOUTS / case).read_text().rstrip("\n")
    parsed, orphans = _parse(spark, {case: text}, _fmt(case))
    got = [{k: v for k, v in r.asDict().items() if k != "file" and v is not None} for r in parsed.collect()]
    expected = LAYOUTS / case.replace(".log", "-expected.json")
    if GENERATE:
        expected.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n")
    assert got == json.loads(expected.read_text())
    assert orphans.count() == 0
    assert all(r["level"] and r["ts"] for r in got)
    assert sum(r["line_count"] for r in got) == len(text.split("\n"))


def test_each_header_line_is_a_record_of_its_own(spark):
    """Never glue: the first line of every case, after a Kafka record with a stack trace, starts a
    record in either source, and each known layout's regex twin reads the header it is in."""
    firsts = [(LAYOUTS / c).read_text().split("\n")[0] for c in CASES]
    trace = "[2026-03-10 01:00:00,000] ERROR boom (k.F)\njava.io.IOException: x\n\tat a.b(C.java:1)"
    for fmt in (log4j.KAFKA, log4j.ZOOKEEPER):
        parsed, _ = _parse(spark, {"f": "\n".join([trace, *firsts])}, fmt)
        rows = parsed.collect()
        assert [r.line_count for r in rows] == [3] + [1] * len(firsts)
        assert all(r.level and r.ts for r in rows)
    for line in firsts:
        assert re.match(log4j.START, line)
        assert any(re.match(f.header, line) for f in log4j.KNOWN), line


def test_regex_twins_read_the_headers_as_the_engine(spark):
    """The first known layout whose header regex a record's first line matches gives the engine's level,
    thread and (when on that line) logger."""
    texts = {c: (LAYOUTS / c).read_text().rstrip("\n") for c in CASES}
    for case, text in texts.items():
        parsed, _ = _parse(spark, {case: text}, _fmt(case))
        lines = text.split("\n")
        for r in parsed.collect():
            first = lines[r.line_number - 1]
            fmt = next(f for f in log4j.KNOWN if re.match(f.header, first))
            m = re.match(fmt.header, first)
            group = {k: (m.group(g) if g else None) for k, g in fmt.groups.items()}
            assert r.level == (group.get("level") or group.get("alt_level")), first
            if group.get("thread") is not None:
                assert r.thread == group["thread"], first
            logger = group.get("logger") or group.get("alt_logger")
            if logger and fmt is not log4j.ZOOKEEPER:
                assert r.logger == logger, first


def test_a_file_in_no_known_layout_is_quarantined_with_its_first_line(spark):
    files = {"odd.log": "2026/03/10 01:00:00 INFO started\n2026/03/10 01:00:01 INFO more",
             "late.log": "starting kafka...\n[2026-03-10 01:00:00,101] INFO started (k.F)"}
    _, orphans = _parse(spark, files, log4j.KAFKA)
    got = sorted((r.file, r.line_number, r.reason) for r in orphans.collect())
    no_layout = ("no line of the file starts a record in a known log4j layout; its first line: "
                 "2026/03/10 01:00:00 INFO started")
    assert got == [("late.log", 1, log4j.BEFORE_FIRST), ("odd.log", 1, no_layout), ("odd.log", 2, no_layout)]


def test_rule_loggers_match_simple_names(spark):
    """A rule naming a qualified logger matches a record written with %c{1} and the reverse; a
    different class of the same simple name is not matched by a qualified rule."""
    rs = (rules.Rule("cleaner_error", "Error due to", logger="kafka.log.LogCleaner"),
          rules.Rule("follower_shutdown", "shutdown called", logger="Follower"))
    cases = [("Error due to", "LogCleaner", "cleaner_error"), ("Error due to", "kafka.log.LogCleaner", "cleaner_error"),
             ("Error due to", "other.LogCleaner", "other"), ("Error due to", "LogCleanerManager", "other"),
             ("shutdown called", "org.apache.zookeeper.server.quorum.Follower", "follower_shutdown"),
             ("shutdown called", "Follower", "follower_shutdown"), ("shutdown called", "Learner", "other")]
    df = local_frame(spark, [(i, m, None, lg) for i, (m, lg, _) in enumerate(cases)],
                     "i int, message string, detail string, logger string")
    got = [r.event_type for r in rules.with_event_columns(df, rs, "message", "detail", "logger").orderBy("i").collect()]
    assert got == [want for *_, want in cases]
    assert [("cleaner_error" if rules.logger_matches("kafka.log.LogCleaner", lg) else
             "follower_shutdown" if rules.logger_matches("Follower", lg) else "other")
            for m, lg, _ in cases if "due" in m or "shutdown" in m] == [want for *_, want in cases]


def test_pull_finds_record_starts_of_every_layout():
    """pull/linecut.py cuts hours at record starts: it sees the starts of every layout, with their keys."""
    for case in CASES:
        data = (LAYOUTS / case).read_bytes()
        want = [(m.start(), line) for m, line in
                ((re.match(log4j.START, line), line) for line in data.decode().split("\n")) if m]
        offsets = [o for o, line in _line_offsets(data) if re.match(log4j.START, line)]
        got = list(linecut._records_from(lambda at, n: data[at:at + n], len(data), 0))
        assert [o for o, _ in got] == offsets, case
        assert all(key.decode() in line.replace("T", " ")[:30] for (_, key), (_, line)
                   in zip(got, want)), case


def _line_offsets(data: bytes):
    at = 0
    for line in data.decode().split("\n"):
        yield at, line
        at += len(line.encode()) + 1
