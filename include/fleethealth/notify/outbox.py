"""gold.notifications, the outbox: one row per (incident_id, transition, severity, channel) that a
channel wanted, and what became of it. A row 'sent' or 'suppressed' (a --no-notify run's own hour)
is never sent again; a 'pending' or 'failed' one is tried again on the next run; a 'skipped' one
(not news: `reason` says why) is sent if its incident is later seen open in a recent hour.

A small table, read whole and rewritten whole (delta-rs, no Spark) after each delivery's outcome, so
a crash re-sends at most the message in flight; under lake.locks.table_lock so that runs of
different hours do not overwrite each other's record.
"""
from __future__ import annotations

from datetime import datetime

import pyarrow as pa

from fleethealth.lake import tables as lake
from fleethealth.lake.catalog import Lakehouse

TABLE = "gold.notifications"
KEY = ("incident_id", "transition", "severity", "channel")
STATUSES = ("pending", "sent", "failed", "suppressed", "skipped")
DONE = ("sent", "suppressed")          # never sent again
_TS = pa.timestamp("us", tz="UTC")
SCHEMA = pa.schema([
    ("incident_id", pa.string()), ("transition", pa.string()), ("severity", pa.string()),
    ("channel", pa.string()), ("cluster", pa.string()), ("kind", pa.string()), ("entity", pa.string()),
    ("hour", _TS), ("status", pa.string()), ("attempts", pa.int32()), ("last_error", pa.string()), ("reason", pa.string()),
    ("created_at", _TS), ("sent_at", _TS), ("updated_at", _TS),
])


def key(row: dict) -> tuple:
    return tuple(row[k] for k in KEY)


def read_rows(path: str) -> list[dict] | None:
    """The rows of the Delta table at `path`, or None when there is none yet."""
    from deltalake import DeltaTable

    if not DeltaTable.is_deltatable(path):
        return None
    return lake.arrow_rows(path).to_pylist()


def read(lakehouse: Lakehouse) -> dict[tuple, dict]:
    """The outbox by KEY (empty before the first run)."""
    rows = read_rows(lake.table(TABLE).path(lakehouse)) or []
    return {key(r): {**{f: None for f in SCHEMA.names}, **r} for r in rows}     # a row written before `reason`


def write(rows: dict[tuple, dict], lakehouse: Lakehouse) -> None:
    from deltalake import write_deltalake

    ordered = sorted(rows.values(), key=lambda r: (r["hour"], r["created_at"], *key(r)))
    write_deltalake(lake.table(TABLE).path(lakehouse), pa.Table.from_pylist(ordered, SCHEMA),
                    mode="overwrite", schema_mode="overwrite")


def new_row(history: dict, channel: str, now: datetime, status: str = "pending") -> dict:
    return {"incident_id": history["incident_id"], "transition": history["transition"],
            "severity": history["severity"], "channel": channel, "cluster": history["cluster"],
            "kind": history["kind"], "entity": history["entity"], "hour": history["hour"],
            "status": status, "attempts": 0, "last_error": None, "reason": None, "created_at": now, "sent_at": None,
            "updated_at": now}


def mark(row: dict, now: datetime, error: str | None) -> None:
    """Record one delivery attempt of `row`: sent, or failed with the error, already described and
    redacted (tried again next run)."""
    row["attempts"] = (row["attempts"] or 0) + 1
    row["updated_at"] = now
    if error is None:
        row.update(status="sent", sent_at=now, last_error=None, reason=None)
    else:
        row.update(status="failed", last_error=error)


def describe(error: BaseException) -> str:
    """An error in one line, at most 500 characters: its type and message."""
    text = " ".join(f"{type(error).__name__}: {error}".split())
    return text if len(text) <= 500 else text[:497] + "..."
