"""Where things live: the one place for paths, environment variables and connection names.

Every job, the DAG, the CLI and docker-compose.yaml read these names from here (tests check that
docker-compose.yaml agrees).
"""
from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[3]

ENV_LAKEHOUSE = "FLEETHEALTH_LAKEHOUSE"
ENV_INVENTORY = "FLEETHEALTH_INVENTORY"
ENV_JARS = "FLEETHEALTH_JARS"
ENV_THRESHOLDS = "FLEETHEALTH_THRESHOLDS"

SPARK_CONN_ID = "spark_default"
DAG_ID = "fleet_health_hourly"
MAINTENANCE_DAG_ID = "fleet_health_maintenance"

LAYERS = ("landing", "bronze", "silver", "gold")


def lakehouse_dir(explicit: str | os.PathLike | None = None) -> Path:
    """The lakehouse root: explicit argument, else $FLEETHEALTH_LAKEHOUSE, else ./lakehouse."""
    value = explicit or os.environ.get(ENV_LAKEHOUSE) or "lakehouse"
    return Path(value).expanduser().resolve()


def jars_dir() -> Path:
    """Folder of JVM jars resolved by Maven at set-up (pom.xml); Spark is pointed at it explicitly."""
    return Path(os.environ.get(ENV_JARS) or PROJECT_ROOT / "jars").resolve()


def jar_files() -> list[Path]:
    folder = jars_dir()
    jars = sorted(folder.glob("*.jar")) if folder.is_dir() else []
    if not jars:
        raise FileNotFoundError(
            f"no jars in {folder}: run `make setup` (Maven resolves the Delta jars from pom.xml)"
        )
    return jars


def spark_dir() -> Path:
    """Folder of the spark-submit entry points."""
    return PROJECT_ROOT / "spark"


def expectations_dir() -> Path:
    return PROJECT_ROOT / "expectations"
