"""The lakehouse's catalog: every path of one lakehouse, built once at an entry point and passed down.

A lakehouse is a folder (`root`) for what a run keeps beside its tables (landing, the pull state,
the hour locks, the Data Docs, the report) and a tables root (`tables`): the same folder, or
$FLEETHEALTH_TABLES (a folder, or a URI such as s3a://bucket/prefix). Every sub-path is built here,
with one hour stamp (`stamp`). The CLI, the spark-submit entry points, the DAG's tasks and the tests
build one (`Lakehouse.from_settings`, `Lakehouse.at`); the layers take it as an argument.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from fleethealth.runtime import config

LANDING = "landing"
PULL_STATE = "_state"    # under landing: what each host's last pull took (fleethealth.pull.identity)
LOCKS = "_locks"
STAGING = "_staging"     # under the tables root: the tables of a rejected hour, for inspection
WAREHOUSE = "_warehouse"


class LakehouseError(ValueError):
    """A lakehouse the settings cannot name without ambiguity (the CLI prints it as one line)."""


@dataclass(frozen=True)
class Lakehouse:
    root: Path      # the lakehouse folder (absolute)
    tables: str     # where the Delta tables live: a folder (absolute) or a URI

    @classmethod
    def from_settings(cls, explicit: str | os.PathLike | None = None) -> Lakehouse:
        """The lakehouse of an entry point: `explicit` (e.g. --lakehouse), else $FLEETHEALTH_LAKEHOUSE;
        its tables where $FLEETHEALTH_TABLES says, else in it. An explicit folder other than
        $FLEETHEALTH_LAKEHOUSE while $FLEETHEALTH_TABLES is set is refused: whose tables those are
        would be a guess."""
        configured = _folder(config.setting(config.ENV_LAKEHOUSE))
        root = _folder(explicit) if explicit else configured
        tables = config.setting(config.ENV_TABLES)
        if not tables:
            return cls(root, str(root))
        if root != configured:
            raise LakehouseError(
                f"--lakehouse {root} is not ${config.ENV_LAKEHOUSE} ({configured}), whose tables "
                f"${config.ENV_TABLES} puts at {tables}: set {config.ENV_LAKEHOUSE}={root} for these "
                f"tables, or unset {config.ENV_TABLES} to keep the tables in {root}")
        return cls(root, tables.rstrip("/") if config.is_uri(tables) else str(_folder(tables)))

    @classmethod
    def at(cls, root: str | os.PathLike | Lakehouse) -> Lakehouse:
        """The lakehouse in folder `root`, as a process handed the folder (a DAG task's param, a
        test) sees it: from_settings(root)."""
        return root if isinstance(root, Lakehouse) else cls.from_settings(root)

    def __fspath__(self) -> str:
        return str(self.root)

    def __str__(self) -> str:
        return str(self.root)

    @staticmethod
    def stamp(hour: datetime) -> str:
        """An hour as every path names it: 2026-11-20T10."""
        return hour.strftime("%Y-%m-%dT%H")

    # ------------------------------------------------------------------------------ the tables
    def table(self, layer: str, name: str) -> str:
        return f"{self.tables}/{layer}/{name}"

    def staging(self, hour: datetime, layer: str | None = None) -> str:
        folder = f"{self.tables}/{STAGING}/{self.stamp(hour)}"
        return f"{folder}/{layer}" if layer else folder

    # ------------------------------------------------------------------- beside the tables
    def landing(self, hour: datetime | None = None) -> Path:
        """The landing folder, or an hour's: <root>/landing/<stamp>/<cluster>/<host>/<source>/<file>."""
        base = self.root / LANDING
        return base / self.stamp(hour) if hour is not None else base

    def pull_state(self, cluster: str, host: str) -> Path:
        return self.root / LANDING / PULL_STATE / cluster / f"{host}.json"

    def hour_lock(self, hour: datetime, part: str = "") -> Path:
        return self.root / LOCKS / f"{self.stamp(hour)}{f'.{part}' if part else ''}.lock"

    def table_lock(self, qualified: str) -> Path:
        return self.root / LOCKS / f"{qualified}.lock"

    @property
    def data_docs(self) -> Path:
        """Where GX Data Docs (HTML) are written."""
        return self.root / "quality" / "data_docs"

    @property
    def report(self) -> Path:
        """Where the HTML report (fleethealth.report.html) is refreshed by the DAG, `run` and the demo."""
        return self.root / "report"

    @property
    def warehouse(self) -> Path:
        """Spark's warehouse folder (nothing of fleethealth's is kept there)."""
        return self.root / WAREHOUSE


def _folder(value: str | os.PathLike) -> Path:
    return Path(value).expanduser().resolve()
