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
from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from fleethealth.runtime.validation import fail, holds, says

PROJECT_ROOT = Path(__file__).resolve().parents[3]

SPARK_CONN_ID = "spark_default"
DAG_ID = "fleet_health_hourly"
MAINTENANCE_DAG_ID = "fleet_health_maintenance"
BACKFILL_DAG_ID = "fleet_health_backfill"


PREFIX = "FLEETHEALTH_"
# what a setting accepts (its value as written: a string), up to a bound that keeps every use of it
# (a timedelta of the DAGs, a sleep, a plan's size) finite: a mistake is one line, not a DAG import error
DAY_S = 86_400
TEN_YEARS_H = 87_660


def _at_most(high: float, unit: str = "") -> AfterValidator:
    return holds(lambda v: v <= high, f"expected at most {high:,}{unit}, got {{got}}")


Seconds = Annotated[float, Field(ge=0), says("expected a number of seconds >= 0, got {got}"), _at_most(DAY_S, " seconds (a day)")]
Timeout = Annotated[float, Field(gt=0), says("expected a number of seconds > 0, got {got}"), _at_most(DAY_S, " seconds (a day)")]
Count = Annotated[int, Field(ge=0), says("expected a whole number >= 0, got {got}")]
Retries = Annotated[Count, _at_most(100)]
Rows = Annotated[Count, _at_most(100_000_000)]
Hours = Annotated[int, Field(ge=1), says("expected a whole number of hours >= 1, got {got}"),
                  _at_most(TEN_YEARS_H, " hours (ten years)")]
Megabytes = Annotated[float, Field(gt=0), says("expected a number of MB > 0, got {got}"),
                      _at_most(1_048_576, " MB (a TB)")]
Fraction = Annotated[float, Field(gt=0, le=0.9), says("expected a fraction > 0 and <= 0.9, got {got}")]
Flag = Annotated[bool, says("expected true or false (1 or 0), got {got}")]
Instant = Annotated[datetime, BeforeValidator(lambda v: datetime.fromisoformat(v) if isinstance(v, str) else v),
                    says("expected an ISO-8601 date and time, e.g. 2026-01-01T00:00:00+00:00, got {got}")]


def _spark_conf_file(value: str) -> str:
    path = Path(value).expanduser()
    if value and not path.is_file():
        raise fail("expected a file of Spark settings (`spark.<name> <value>` lines), got {got}: "
                   + ("a folder" if path.is_dir() else "no such file"), value)
    return value


def _tables_root(value: str) -> str:
    if is_uri(value) and not value.startswith(("s3a://", "file:/")):
        # a URI's user:password@ is not repeated
        shown = re.sub(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/@]*@", r"\1…@", value)
        raise fail("expected a folder, or an s3a:// or file:/ URI (what Spark and delta-rs both read), got {got}", shown)
    return value


SparkConfFile = Annotated[str, AfterValidator(_spark_conf_file)]
TablesRoot = Annotated[str, AfterValidator(_tables_root)]


class SettingError(ValueError):
    """A FLEETHEALTH_* variable holds what it does not accept; one line per variable."""


class Settings(BaseSettings):
    """Every FLEETHEALTH_* variable: the field's name in capitals after the prefix, what it accepts,
    its default as one writes it, and what it does (`description`). Empty counts as unset."""
    model_config = SettingsConfigDict(env_prefix=PREFIX, env_ignore_empty=True, validate_default=True, frozen=True)

    lakehouse: str = Field(str(PROJECT_ROOT / "lakehouse"), description="the lakehouse folder (fleethealth.lake.catalog)")
    tables: TablesRoot = Field("", description="where the Delta tables live, if not in the lakehouse folder: a folder, or a URI that Spark (Hadoop's file systems) and delta-rs both read, e.g. s3a://bucket/prefix; landing, locks, the report and Data Docs stay in the lakehouse folder")
    inventory: Path = Field(str(PROJECT_ROOT / "inventory.yaml"), description="the fleet inventory YAML the DAG reads")
    jars: Path = Field(str(PROJECT_ROOT / "jars"), description="JVM jars resolved by Maven at set-up (pom.xml)")
    thresholds: str = Field("", description="a YAML of threshold overrides (values only); none: the defaults")
    spark_master: str = Field("local[*]", description="Spark master of sessions not started by spark-submit")
    spark_conf: SparkConfFile = Field("", description="a file of Spark settings for this deployment (spark-defaults.conf format: `key value` lines); they add to and override fleethealth's own (runtime/spark_conf.py)")
    lock_wait_s: Seconds = Field("600", description="seconds a run waits for an hour another run holds, then refuses")
    data_docs: Flag = Field("1", description="0: no GX Data Docs are written (validation still runs)")
    gx_pandas_max_rows: Rows = Field("20000", description="a table of at most this many rows is validated on a pandas copy (GX's pandas engine: one Spark job instead of one or more per expectation, the same results); 0: every table on Spark")
    run_window_hours: Hours = Field("24", description="`fleethealth run`: at most this many hours in one Spark plan; a run of no more hours starts its JVM as the DAG's jobs do (first JIT tier only)")
    run_window_mb: Megabytes = Field("256", description="`fleethealth run`: at most this many MB landed in one Spark plan")
    window_max_hours: Hours = Field("8760", description="`pull`, `run`, `backfill`, `simulate`, `report`: a window (--from, --to) holds at most this many hours")
    start_date: Instant = Field("2026-01-01T00:00:00+00:00", description="the hourly DAG's start date (ISO-8601)")
    catchup: Flag = Field("false", description="true: the hourly DAG runs the hours since its start date")
    pull_retries: Retries = Field("3", description="the DAG's tries of a host's pull after the first")
    pull_retry_delay_s: Seconds = Field("30", description="the DAG's first delay between pull tries (exponential back-off)")
    pull_timeout_s: Timeout = Field("900", description="a host's pull (a try of the DAG's task, `pull`, `run`) stops after this many seconds, a file's read included (the file is rejected, those read before land)")
    notify_max_age_hours: Hours = Field("6", description="notifications.max_age: a transition is sent only while it is news: its incident open in an hour at most this old, or the transition that recent (older ones are recorded `skipped`)")
    stale_after_hours: Hours = Field("3", description="the pipeline is stale when its newest processed hour ended longer ago than this: the report says so at the top of every page (incidents shown open were open then)")
    notify_send_timeout_s: Timeout = Field("20", description="one delivery to a receiver (connect, send, answer) fails after this many seconds in all")
    notify_timeout_s: Timeout = Field("300", description="one notify run returns within this long: each channel, sent concurrently with the others, sends for at most this long, the wait for another run's notify included (the rest waits for the next run); the DAG's notify task is stopped a minute after it")
    query_memory: Fraction = Field("0.25", description="`fleethealth query` (DuckDB): the share of the machine's memory a query may use, and may spill as much again to its own temporary folder")
    notify_channel_modules: str = Field("", description="more notification channel types: Python modules (comma-separated, importable) each defining one (fleethealth.notify.channels.ChannelType)")


@dataclass(frozen=True)
class Setting:
    env: str
    default: str
    doc: str


SETTINGS = {f"{PREFIX}{name.upper()}": Setting(f"{PREFIX}{name.upper()}", field.default, field.description)
            for name, field in Settings.model_fields.items()}
ENV_LAKEHOUSE = "FLEETHEALTH_LAKEHOUSE"
ENV_TABLES = "FLEETHEALTH_TABLES"
ENV_INVENTORY = "FLEETHEALTH_INVENTORY"
ENV_JARS = "FLEETHEALTH_JARS"
ENV_THRESHOLDS = "FLEETHEALTH_THRESHOLDS"


def settings() -> Settings:
    """Every FLEETHEALTH_* variable, read now and validated; SettingError names each wrong one."""
    try:
        return Settings()
    except ValidationError as exc:
        raise SettingError("\n".join(f"{PREFIX}{str(e['loc'][0]).upper()}: {e['msg']}" for e in exc.errors())) from None


def setting(env: str) -> str:
    """The value of a FLEETHEALTH_* variable as written, or its default (an empty value counts as unset)."""
    return os.environ.get(env) or SETTINGS[env].default


def spark_master() -> str:
    return settings().spark_master


def spark_conf_file() -> Path | None:
    value = settings().spark_conf
    return Path(value).expanduser() if value else None


def lock_wait_s() -> float:
    return settings().lock_wait_s


def data_docs_enabled() -> bool:
    return settings().data_docs


def gx_pandas_max_rows() -> int:
    return settings().gx_pandas_max_rows


def run_window() -> tuple[int, float]:
    """(hours, megabytes): the most one Spark plan of `fleethealth run` holds."""
    s = settings()
    return s.run_window_hours, s.run_window_mb


def window_max_hours() -> int:
    return settings().window_max_hours


def inventory_path() -> str:
    return str(settings().inventory)


def thresholds_path() -> str | None:
    return settings().thresholds or None


def dag_start_date() -> datetime:
    return settings().start_date


def dag_catchup() -> bool:
    return settings().catchup


def pull_retries() -> int:
    return settings().pull_retries


def pull_retry_delay_s() -> float:
    return settings().pull_retry_delay_s


def pull_timeout_s() -> float:
    return settings().pull_timeout_s


def notify_max_age_hours() -> int:
    return settings().notify_max_age_hours


def stale_after_hours() -> int:
    return settings().stale_after_hours


def notify_send_timeout_s() -> float:
    return settings().notify_send_timeout_s


def notify_timeout_s() -> float:
    return settings().notify_timeout_s


def query_memory() -> float:
    return settings().query_memory


def notify_channel_modules() -> tuple[str, ...]:
    return tuple(m.strip() for m in settings().notify_channel_modules.split(",") if m.strip())


def is_uri(location: str) -> bool:
    """A location with a scheme (s3a://, hdfs://, file:/...), not a plain path."""
    return re.match(r"[A-Za-z][A-Za-z0-9+.-]+:/", location) is not None


def jars_dir() -> Path:
    """Folder of JVM jars resolved by Maven at set-up (pom.xml); Spark is pointed at it explicitly."""
    return settings().jars.resolve()


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
