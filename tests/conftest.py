"""Shared fixtures: one SparkSession for the whole run (a JVM start costs ~10 s), a lakehouse per test."""
from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

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
    yield session
    session.stop()


@pytest.fixture
def lakehouse(tmp_path, monkeypatch):
    path = tmp_path / "lakehouse"
    monkeypatch.setenv("FLEETHEALTH_LAKEHOUSE", str(path))
    return path


# Seconds each file's tests take in `make test` and in `make test-slow` (fresh clone, 2 workers on a
# 2-core machine). Under `--dist loadfile` xdist hands files out by how many tests they hold, which can
# put a long file last and make it the run's tail; the longest of the run's own go first (a file such as
# test_bronze_big_files has a short test in make test and its big files in make test-slow).
TEST_FILES = {      # make test (2026-11-27)
    "test_jobs.py": 520, "test_scenarios.py": 270, "test_bronze_big_files.py": 95, "test_broken_inputs.py": 90,
    "test_cli.py": 60, "test_gold_detector_metadata_divergence.py": 40, "test_silver.py": 40,
    "test_gold_fact_metadata_divergence.py": 35, "test_silver_golden.py": 25, "test_silver_samples.py": 25,
    "test_gold_incidents.py": 25, "test_notify_delivery.py": 25, "test_lake_maintenance.py": 15,
    "test_gold_lifecycle.py": 150, "test_scenarios_kraft.py": 180, "test_mixed_fleet.py": 150,
}
SLOW_FILES = {      # make test-slow (2026-11-27)
    "test_scheduler.py": 800, "test_bronze_big_files.py": 475, "test_interrupt.py": 470, "test_e2e_dag.py": 370,
    "test_notify_pipeline.py": 850, "test_faults.py": 200, "test_scenarios_straddling.py": 160,
    "test_archive_equivalence.py": 75, "test_healthy_day.py": 500, "test_lakehouse_s3.py": 250,
    "test_scenarios_kraft.py": 290,
    "test_lifecycle_orders.py": 450,
}


def weights(config) -> dict[str, int]:
    """make test's weights when the run leaves the slow tests out (-m "... not slow"), else make test-slow's."""
    return TEST_FILES if "not slow" in (config.option.markexpr or "") else SLOW_FILES


def _loadfile(config) -> bool:
    return getattr(config.option, "dist", "no") == "loadfile"


def pytest_configure(config):
    if _loadfile(config) and hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False      # keep the order below


def pytest_collection_modifyitems(config, items):
    if hasattr(config, "workerinput"):    # an xdist worker (its option.dist is "no"): the order it sends
        files = weights(config)
        items.sort(key=lambda item: -files.get(item.path.name, 0))   # stable: tests keep their order
