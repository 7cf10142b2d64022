"""Where things live: the one place for paths, environment variables and connection names.

Every job, the DAG, the CLI and docker-compose.yaml read these names from here (tests check that
docker-compose.yaml agrees, and that no other module reads a FLEETHEALTH_* variable).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[3]

SPARK_CONN_ID = "spark_default"
DAG_ID = "fleet_health_hourly"
MAINTENANCE_DAG_ID = "fleet_health_maintenance"


@dataclass(frozen=True)
class Setting:
    env: str
    default: str
    doc: str


SETTINGS = {s.env: s for s in (
    Setting("FLEETHEALTH_LAKEHOUSE", str(PROJECT_ROOT / "lakehouse"), "the lakehouse folder (fleethealth.lake.catalog)"),
    Setting("FLEETHEALTH_TABLES", "", "where the Delta tables live, if not in the lakehouse folder: a folder, or a URI that Spark (Hadoop's file systems) and delta-rs both read, e.g. s3a://bucket/prefix; landing, locks, the report and Data Docs stay in the lakehouse folder"),
    Setting("FLEETHEALTH_INVENTORY", str(PROJECT_ROOT / "inventory.yaml"), "the fleet inventory YAML the DAG reads"),
    Setting("FLEETHEALTH_JARS", str(PROJECT_ROOT / "jars"), "JVM jars resolved by Maven at set-up (pom.xml)"),
    Setting("FLEETHEALTH_THRESHOLDS", "", "a YAML of threshold overrides (values only); none: the defaults"),
    Setting("FLEETHEALTH_SPARK_MASTER", "local[*]", "Spark master of sessions not started by spark-submit"),
    Setting("FLEETHEALTH_SPARK_CONF", "", "a file of Spark settings for this deployment (spark-defaults.conf format: `key value` lines); they add to and override fleethealth's own (runtime/spark_conf.py)"),
    Setting("FLEETHEALTH_LOCK_WAIT_S", "600", "seconds a run waits for an hour another run holds, then refuses"),
    Setting("FLEETHEALTH_DATA_DOCS", "1", "0: no GX Data Docs are written (validation still runs)"),
    Setting("FLEETHEALTH_RUN_WINDOW_HOURS", "24", "`fleethealth run`: at most this many hours in one Spark plan"),
    Setting("FLEETHEALTH_RUN_WINDOW_MB", "256", "`fleethealth run`: at most this many MB landed in one Spark plan"),
    Setting("FLEETHEALTH_START_DATE", "2026-01-01T00:00:00+00:00", "the hourly DAG's start date (ISO-8601)"),
    Setting("FLEETHEALTH_CATCHUP", "false", "true: the hourly DAG runs the hours since its start date"),
    Setting("FLEETHEALTH_PULL_RETRIES", "3", "the DAG's tries of a host's pull after the first"),
    Setting("FLEETHEALTH_PULL_RETRY_DELAY_S", "30", "the DAG's first delay between pull tries (exponential back-off)"),
    Setting("FLEETHEALTH_PULL_TIMEOUT_S", "900", "a host's pull (a try of the DAG's task, `pull`, `run`) stops after this many seconds"),
)}
ENV_LAKEHOUSE = "FLEETHEALTH_LAKEHOUSE"
ENV_TABLES = "FLEETHEALTH_TABLES"
ENV_INVENTORY = "FLEETHEALTH_INVENTORY"
ENV_JARS = "FLEETHEALTH_JARS"
ENV_THRESHOLDS = "FLEETHEALTH_THRESHOLDS"


def setting(env: str) -> str:
    """The value of a FLEETHEALTH_* variable, or its default (an empty value counts as unset)."""
    return os.environ.get(env) or SETTINGS[env].default


def spark_master() -> str:
    return setting("FLEETHEALTH_SPARK_MASTER")


def spark_conf_file() -> Path | None:
    value = setting("FLEETHEALTH_SPARK_CONF")
    return Path(value).expanduser() if value else None


def lock_wait_s() -> float:
    return float(setting("FLEETHEALTH_LOCK_WAIT_S"))


def data_docs_enabled() -> bool:
    return setting("FLEETHEALTH_DATA_DOCS") != "0"


def run_window() -> tuple[int, float]:
    """(hours, megabytes): the most one Spark plan of `fleethealth run` holds."""
    return int(setting("FLEETHEALTH_RUN_WINDOW_HOURS")), float(setting("FLEETHEALTH_RUN_WINDOW_MB"))


def inventory_path() -> str:
    return setting(ENV_INVENTORY)


def thresholds_path() -> str | None:
    return setting(ENV_THRESHOLDS) or None


def dag_start_date() -> datetime:
    return datetime.fromisoformat(setting("FLEETHEALTH_START_DATE"))


def dag_catchup() -> bool:
    return setting("FLEETHEALTH_CATCHUP").lower() == "true"


def pull_retries() -> int:
    return int(setting("FLEETHEALTH_PULL_RETRIES"))


def pull_retry_delay_s() -> float:
    return float(setting("FLEETHEALTH_PULL_RETRY_DELAY_S"))


def pull_timeout_s() -> float:
    return float(setting("FLEETHEALTH_PULL_TIMEOUT_S"))


def is_uri(location: str) -> bool:
    """A location with a scheme (s3a://, hdfs://, file:/...), not a plain path."""
    return re.match(r"[A-Za-z][A-Za-z0-9+.-]+:/", location) is not None


def jars_dir() -> Path:
    """Folder of JVM jars resolved by Maven at set-up (pom.xml); Spark is pointed at it explicitly."""
    return Path(setting(ENV_JARS)).resolve()


def jar_files() -> list[Path]:
    folder = jars_dir()
    jars = sorted(folder.glob("*.jar")) if folder.is_dir() else []
    if not jars:
        raise FileNotFoundError(
            f"no jars in {folder}: run `make setup` (Maven resolves the Delta jars from pom.xml)"
        )
    return jars


def cache_dir() -> Path:
    """This user's cache of built artefacts (the library's zip for Spark executors): $XDG_CACHE_HOME or
    ~/.cache, never a shared /tmp where another user could plant a file under the expected name."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fleethealth"


def spark_dir() -> Path:
    """Folder of the spark-submit entry points."""
    return PROJECT_ROOT / "spark"


def expectations_dir() -> Path:
    return PROJECT_ROOT / "expectations"
