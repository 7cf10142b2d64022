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
    session = build_session("fleethealth-tests", lakehouse=str(lakehouse), master="local[2]")
    session.conf.set("spark.sql.shuffle.partitions", "2")
    yield session
    session.stop()


@pytest.fixture
def lakehouse(tmp_path, monkeypatch):
    path = tmp_path / "lakehouse"
    monkeypatch.setenv("FLEETHEALTH_LAKEHOUSE", str(path))
    return path


# Seconds each file took in a full `make test` (2026-11-26, fresh clone, 2 workers on a 2-core machine, the
# scenarios and test_jobs' hours as windows). Under `--dist loadfile` xdist hands files out by how many
# tests they hold, which can put a long file last and make it the run's tail; the longest go first.
SLOW_FILES = {
    "test_jobs.py": 460, "test_e2e_dag.py": 370, "test_faults.py": 240, "test_scenarios.py": 170,
    "test_healthy_day.py": 120, "test_archive_equivalence.py": 75, "test_broken_inputs.py": 65,
    "test_cli.py": 50, "test_gold_detector_metadata_divergence.py": 40, "test_silver.py": 40,
    "test_gold_fact_metadata_divergence.py": 35, "test_silver_golden.py": 25, "test_lake_maintenance.py": 15,
    "test_bronze_big_files.py": 240,     # with make test-big's files, in make test-slow
    # make test-slow's (2026-11-27, each alone on a machine loaded by others)
    "test_scheduler.py": 750, "test_cluster.py": 530, "test_interrupt.py": 300, "test_notify_pipeline.py": 170,
    "test_scenarios_straddling.py": 150,
}


def _loadfile(config) -> bool:
    return getattr(config.option, "dist", "no") == "loadfile"


def pytest_configure(config):
    if _loadfile(config) and hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False      # keep the order below


def pytest_collection_modifyitems(config, items):
    if hasattr(config, "workerinput"):    # an xdist worker (its option.dist is "no"): the order it sends
        items.sort(key=lambda item: -SLOW_FILES.get(item.path.name, 0))   # stable: tests keep their order
