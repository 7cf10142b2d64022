"""notify(): after a run's gold is published, tell each channel about the incident transitions it
has not been told about yet (gold.incident_history -> gold.notifications -> the receivers).

Why an outbox: gold is recomputed whole every run and an hour may be re-run or backfilled, so "what
is new" cannot come from the run itself; the outbox remembers per channel what was sent, so each
transition reaches each channel exactly once, and what a receiver refused is tried again next run.
Nothing here raises for a receiver's failure: the data run must not fail because a mail server is down.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from fleethealth.lake import locks
from fleethealth.lake import tables as lake
from fleethealth.lake.catalog import Lakehouse
from fleethealth.notify import channels as delivery
from fleethealth.notify import messages, outbox
from fleethealth.fleet.channels import Channel

HISTORY = lake.table("gold.incident_history")


@dataclass
class ChannelResult:
    sent: int = 0
    failed: int = 0
    suppressed: int = 0
    already: int = 0      # sent or suppressed by an earlier run
    pending: int = 0      # not tried: an earlier message to the channel failed (kept in order)
    errors: list[str] = field(default_factory=list)


@dataclass
class NotifyResult:
    channels: dict[str, ChannelResult] = field(default_factory=dict)

    @property
    def errors(self) -> list[str]:
        return [f"{name}: {e}" for name, r in self.channels.items() for e in r.errors]

    def summary(self) -> str:
        """A few lines for the logs: per channel what was sent, suppressed or failed, and why."""
        if not self.channels:
            return "notifications: no channels"
        parts = []
        for name, r in self.channels.items():
            counts = [f"{n} {what}" for what, n in (("sent", r.sent), ("suppressed", r.suppressed),
                                                      ("pending", r.pending)) if n]
            if r.errors:
                counts.append(f"{r.failed} failed ({r.errors[0]})")
            parts.append(f"{name} {', '.join(counts) or 'nothing new'}")
        retried = any(r.errors or r.pending for r in self.channels.values())
        return "notifications: " + ";\n  ".join(parts) + (" -- retried next run" if retried else "")


def notify(lakehouse: Lakehouse, channels: Sequence[Channel], send: bool = True, now: datetime | None = None) -> NotifyResult:
    """Record (and, with `send`, deliver) every gold.incident_history transition each channel wants
    and has not had; with send=False (a quiet backfill) new ones are recorded 'suppressed', never sent."""
    now = messages.utc(now) or datetime.now(timezone.utc)
    result = NotifyResult({c.name: ChannelResult() for c in channels})
    history = _rows(HISTORY.path(lakehouse))
    if not channels or history is None:       # no channel, or no gold run yet: nothing to do
        return result
    history.sort(key=lambda h: (h["hour"], h["at"] or h["hour"], messages.TRANSITIONS.index(h["transition"])))
    incidents = {i["incident_id"]: i for i in _rows(lake.table("gold.incidents").path(lakehouse)) or []}
    with locks.table_lock(outbox.TABLE, lakehouse, "notify"):
        box = outbox.read(lakehouse)
        before = {k: dict(r) for k, r in box.items()}
        for channel in channels:
            due = _due(channel, history, box, send, now, result.channels[channel.name])
            if channel.type == "alertmanager":
                _alertmanager(channel, due, history, incidents, send, now, result.channels[channel.name])
            else:
                _deliver(channel, due, incidents, now, result.channels[channel.name])
        if box != before:
            outbox.write(box, lakehouse)
    return result


def _due(channel: Channel, history: list[dict], box: dict, send: bool, now: datetime,
         counts: ChannelResult) -> list[tuple[dict, dict]]:
    """The (history row, outbox row) pairs to deliver to `channel` now, in history order; new rows
    are added to `box` (suppressed when not sending)."""
    due = []
    for h in history:
        if not channel.wants(h["cluster"], h["kind"], h["severity"]):
            continue
        row = box.get(outbox.key({**h, "channel": channel.name}))
        if row is None:
            row = outbox.new_row(h, channel.name, now, "pending" if send else "suppressed")
            box[outbox.key(row)] = row
            counts.suppressed += not send
        elif row["status"] in outbox.DONE:
            counts.already += 1
            continue
        if send:
            due.append((h, row))
    return due


def _deliver(channel: Channel, due: list[tuple[dict, dict]], incidents: dict, now: datetime,
             counts: ChannelResult) -> None:
    """One message per transition, in order; the first failure stops the channel for this run (what
    follows stays pending, so a receiver never gets 'resolved' before the 'escalated' it missed)."""
    for n, (h, row) in enumerate(due):
        try:
            delivery.send(channel, messages.message(h, incidents.get(h["incident_id"])))
        except Exception as exc:  # noqa: BLE001 - any failure of the receiver is recorded, retried next run
            outbox.mark(row, now, exc)
            counts.failed += 1
            counts.errors.append(outbox.describe(exc))
            counts.pending += len(due) - n - 1
            return
        outbox.mark(row, now, None)
        counts.sent += 1


def _alertmanager(channel: Channel, due: list[tuple[dict, dict]], history: list[dict], incidents: dict,
                  send: bool, now: datetime, counts: ChannelResult) -> None:
    """One post of every open incident the channel wants (re-posted each run: that keeps the alert
    firing) and of every incident with a transition not yet delivered (a resolved one: its end)."""
    from fleethealth.notify import alertmanager

    if not send:
        return
    latest = {h["incident_id"]: h for h in history}          # history is in order: the last transition wins
    ids = [i for i, inc in incidents.items()
           if inc["status"] == "open" and channel.wants(inc["cluster"], inc["kind"], inc["severity"])]
    ids += [h["incident_id"] for h, _ in due if h["incident_id"] not in ids]
    if not ids:
        return
    msgs = [messages.incident_message(incidents[i], latest[i]["transition"] if i in latest else "opened")
            if i in incidents else messages.message(latest[i], None) for i in ids]
    try:
        payload = alertmanager.alerts(msgs, now, timedelta(seconds=channel.ends_after_seconds))
        alertmanager.post(channel.target, payload)
    except Exception as exc:  # noqa: BLE001 - as _deliver: recorded, retried next run
        error = outbox.describe(exc)
        for _, row in due:
            outbox.mark(row, now, exc)
        counts.failed += len(due)
        counts.errors.append(error)
        return
    for _, row in due:
        outbox.mark(row, now, None)
    counts.sent += len(due)


def _rows(path: str) -> list[dict] | None:
    """A gold table's rows with every timestamp aware UTC (delta-rs gives naive ones for a timestamp
    without a zone), or None when it does not exist yet."""
    rows = outbox.read_rows(path)
    if rows is None:
        return None
    return [{k: messages.utc(v) if isinstance(v, datetime) else v for k, v in r.items()} for r in rows]
