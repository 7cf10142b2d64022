"""Shared fixtures: one SparkSession for the whole run (a JVM start costs ~10 s), a lakehouse per test."""
from __future__ import annotations

import gc
import json
import logging
import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

PROJECT = Path(__file__).resolve().parents[1]


def _shared_samples() -> Path:
    """A `shared/samples` folder beside the checkout, or beside an ancestor (a git worktree under
    ../wt/<name>); FLEETHEALTH_SHARED_SAMPLES overrides. May not exist: tests using it skip then."""
    if os.environ.get("FLEETHEALTH_SHARED_SAMPLES"):
        return Path(os.environ["FLEETHEALTH_SHARED_SAMPLES"])
    for parent in PROJECT.parents:
        if (parent / "shared" / "samples").is_dir():
            return parent / "shared" / "samples"
    return PROJECT.parent / "shared" / "samples"


# Hypothesis (tests/test_fuzz.py): in every run the same examples (derandomised: CI and a laptop see
# the same inputs), a fixed number of them, no deadline (a Spark job's time is no property), no
# example database (.hypothesis/ is not written); shrinking stays, bounded by Hypothesis's own limits.
# HYPOTHESIS_PROFILE=explore draws fresh random examples, more of them.
settings.register_profile("ci", derandomize=True, max_examples=8, deadline=None, database=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("explore", max_examples=200, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

SHARED_SAMPLES = _shared_samples()
FIXTURES = Path(__file__).parent / "fixtures"

os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")
# py4j logs "Closing down clientserver connection" from __del__ after pytest closed its streams
logging.getLogger("py4j").setLevel(logging.WARNING)
os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
os.environ.setdefault("AIRFLOW_HOME", str(PROJECT / "airflow"))
os.environ.setdefault("FLEETHEALTH_JARS", str(PROJECT / "jars"))


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    from fleethealth.runtime.session import build_session

    lakehouse = tmp_path_factory.mktemp("session-lakehouse")
    session = build_session("fleethealth-tests", lakehouse / "_warehouse", master="local[2]")
    session.conf.set("spark.sql.shuffle.partitions", "2")
    # the tests' small frames are local relations (runtime.frames.local_frame, tests/test_suite_rules.py):
    # unfolded, as a table's rows are, so a projection of one runs compiled as on a table (the engine's
    # functions included) instead of being evaluated by the optimizer
    session.conf.set("spark.sql.optimizer.excludedRules", "org.apache.spark.sql.catalyst.optimizer.ConvertToLocalRelation")
    yield session
    session.stop()


@pytest.fixture
def lakehouse(tmp_path, monkeypatch):
    path = tmp_path / "lakehouse"
    monkeypatch.setenv("FLEETHEALTH_LAKEHOUSE", str(path))
    return path


# Seconds each file's tests take in `make test` and in `make test-slow` (2 workers on a 2-core machine),
# as measured by the hook below: `FLEETHEALTH_FILE_TIMES=write make test` (or test-slow) rewrites that
# suite's part. Under `--dist loadfile` xdist hands files out in the order the workers send, which can put
# a long file last and make it the run's tail: the longest go first (a file such as test_bronze_big_files
# has a short test in make test and its big files in make test-slow).
FILE_SECONDS = Path(__file__).with_name("file_seconds.json")


def suite(config) -> str:
    """"test" when the run leaves the slow tests out (-m "... not slow"), else "slow"."""
    return "test" if "not slow" in (config.option.markexpr or "") else "slow"


def weights(config) -> dict[str, float]:
    return json.loads(FILE_SECONDS.read_text())[suite(config)]


def _loadfile(config) -> bool:
    return getattr(config.option, "dist", "no") == "loadfile"


def pytest_configure(config):
    if _loadfile(config) and hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False      # keep the order below


def pytest_collection_modifyitems(config, items):
    if hasattr(config, "workerinput"):    # an xdist worker (its option.dist is "no"): the order it sends
        files = weights(config)
        items.sort(key=lambda item: -files.get(item.path.name, 0))   # stable: tests keep their order


# ------------------------------------------------------------------ where the suite's time goes
# Every run prints its wall time, each worker's idle seconds at the end and its slowest files (the
# seconds of their tests' set-up, call and tear-down: a module fixture counts in its file);
# FLEETHEALTH_FILE_TIMES=all prints every file, =write also keeps them in tests/file_seconds.json (a
# passing run's). docs/development.md keeps the budget.
_FILE_SECONDS: dict[str, list] = {}
_WORKER_DONE: dict[str, float] = {}
_STARTED = time.monotonic()


def pytest_runtest_logreport(report):
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return                              # the controller sums its workers' reports
    seconds_tests = _FILE_SECONDS.setdefault(report.nodeid.split("::")[0].rsplit("/", 1)[-1], [0.0, 0])
    seconds_tests[0] += report.duration
    seconds_tests[1] += report.when == "call"
    node = getattr(report, "node", None)
    _WORKER_DONE[node.gateway.id if node is not None else "main"] = time.monotonic()


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if os.environ.get("PYTEST_XDIST_WORKER") or not _FILE_SECONDS:
        return
    end = time.monotonic()
    rows = sorted(_FILE_SECONDS.items(), key=lambda kv: -kv[1][0])
    mode = os.environ.get("FLEETHEALTH_FILE_TIMES", "")
    shown = rows if mode in ("all", "write") else rows[:10]
    write = terminalreporter.write_line
    write(f"wall {end - _STARTED:.0f} s; per file (set-up + tests + tear-down), {len(shown)} of {len(rows)}:")
    for name, (seconds, tests) in shown:
        write(f"  {seconds:7.1f} s  {tests:4d} tests  {name}")
    write("  workers idle at the end: " + ", ".join(
        f"{w} {end - done:.0f} s" for w, done in sorted(_WORKER_DONE.items())))
    if mode == "write" and exitstatus == 0:
        table = json.loads(FILE_SECONDS.read_text())
        table[suite(config)] = {name: round(seconds) for name, (seconds, _) in rows if seconds >= 1}
        FILE_SECONDS.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
        write(f"  written to {FILE_SECONDS}")



@pytest.fixture(scope="module", autouse=True)
def _release_frames():
    """After each test file, the DataFrames it left in reference cycles are freed. A DataFrame is a few
    hundred bytes of Python holding a plan, broadcast relations and checkpointed rows in the JVM, so
    Python's collector, paced by Python allocations, left them for hours: a worker's 4 GB heap was
    full after 15 minutes of make test (full collections back to back; in make test-slow, likely the
    SparkContext that shut down mid-test), with 1.3-1.8 GB of it freed by one gc.collect()."""
    yield
    gc.collect()
