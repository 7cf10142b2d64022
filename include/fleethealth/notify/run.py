"""notify(): after a run's gold is published, tell each channel about the incident transitions it
has not been told about yet and that are still news (gold.incident_history -> gold.notifications ->
the receivers), and withdraw what it was told of an incident that no longer is.

Why an outbox: gold is recomputed every run and an hour may be re-run or backfilled, so "what is new"
cannot come from the run itself; the outbox remembers per channel what was sent. Delivery is at
least once, with a key to de-duplicate: each outcome is committed before the next delivery starts,
so a crash re-sends at most the message in flight, with the same idempotency key.

News (the channels to people: webhook, e-mail, Slack): a transition is due while its incident is
open in an hour within max_age of the wall clock (FLEETHEALTH_NOTIFY_MAX_AGE_HOURS), or the
transition itself is that recent; a resolve is always sent where the opening was; a retraction is
due while the withdrawn incident, as the channel was told of it, was open in such an hour (or the
incident replacing it is). What is not news is recorded 'skipped' with the reason, and becomes due
if its incident is seen open in a recent hour later. So a backfill of last week pages no one, and a
late run still pages for what is open now. A --no-notify run (`quiet_hours`) sends nothing to
people: its own hours' transitions and the retractions it causes are recorded 'suppressed', the
rest waits for the next run that notifies.

State (a channel type with REFRESH: Alertmanager): not messages but the current state, kept equal to
gold.incidents at every run, quiet or not, whatever the hours' age: every open incident it wants is
active, and every incident it was told is open and no longer is, is ended (resolved or retracted).

Nothing here raises for a receiver's failure: the data run must not fail because a mail server is
down. Channels are sent concurrently, one thread each: every send has a deadline, each channel the
run's budget of its own (FLEETHEALTH_NOTIFY_TIMEOUT_S, the wait for the outbox's lock included), so a
slow receiver delays only itself and never the next hour.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from fleethealth.fleet.channels import Channel
from fleethealth.fleet.maintenance import Window
from fleethealth.notify.channels import redact
from fleethealth.notify.inventory import types
from fleethealth.lake import locks
from fleethealth.lake import tables as lake
from fleethealth.lake.catalog import Lakehouse
from fleethealth.notify import messages, outbox
from fleethealth.report.text import causal_text, causes_of, explained, explains_of, kraft_clusters
from fleethealth.runtime import config

HISTORY = lake.table("gold.incident_history")
ANNOUNCING = ("opened", "escalated")


@dataclass
class ChannelResult:
    sent: int = 0
    failed: int = 0
    suppressed: int = 0
    skipped: int = 0      # newly recorded as not news
    retracted: int = 0    # of them, retractions sent
    already: int = 0      # sent, suppressed or skipped by an earlier run
    pending: int = 0      # not tried: an earlier message to the channel failed (kept in order), or no time left
    held: int = 0         # in a maintenance window that has not ended (sent after it if still open)
    errors: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)   # why skipped


@dataclass
class NotifyResult:
    channels: dict[str, ChannelResult] = field(default_factory=dict)

    @property
    def errors(self) -> list[str]:
        return [f"{name}: {e}" for name, r in self.channels.items() for e in r.errors]

    def summary(self) -> str:
        """A few lines for the logs: per channel what was sent, skipped, suppressed or failed, and why
        (every error redacted: no receiver's token)."""
        if not self.channels:
            return "notifications: no channels"
        parts = []
        for name, r in self.channels.items():
            counts = [f"{n} {what}" for what, n in (("sent", r.sent), ("suppressed", r.suppressed),
                                                      ("pending", r.pending), ("held", r.held)) if n]
            if r.retracted:
                counts.append(f"{r.retracted} of them retracted")
            if r.skipped:
                counts.append(f"{r.skipped} skipped ({r.reasons[0]})")
            if r.errors:
                counts.append(f"{r.failed} failed ({r.errors[0]})")
            parts.append(f"{name} {', '.join(counts) or 'nothing new'}")
        retried = any(r.errors or r.pending for r in self.channels.values())
        return "notifications: " + ";\n  ".join(parts) + (" -- retried next run" if retried else "")


class DeadlineExceeded(Exception):
    """A delivery gave no outcome in time (FLEETHEALTH_NOTIFY_SEND_TIMEOUT_S, or the run's budget)."""


def notify(lakehouse: Lakehouse, channels: Sequence[Channel], quiet_hours: Iterable[datetime] = (),
           now: datetime | None = None, max_age: timedelta | None = None, send_timeout_s: float | None = None,
           budget_s: float | None = None, hosts: dict | None = None,
           maintenance: Sequence[Window] = ()) -> NotifyResult:
    """Record and deliver every transition each channel wants, has not had, and is news (see the
    module). `quiet_hours` (a --no-notify run's own hours) make a quiet run: nothing is sent to
    people; those hours' transitions and the retractions found are recorded 'suppressed';
    Alertmanager is still kept equal to the open incidents. `max_age`, `send_timeout_s` and
    `budget_s` default to the settings (FLEETHEALTH_NOTIFY_MAX_AGE_HOURS, _SEND_TIMEOUT_S, _TIMEOUT_S);
    the call returns within `budget_s` (plus the last outcome's commit). `hosts` ((cluster, process) ->
    host: notify.inventory.host_names) gives each message the host of its incident's entity.
    `maintenance` (the inventory's windows): a transition in one is held from people's channels until it
    ends, then sent if its incident is still open (its latest only) and else skipped; an incident that
    began in one carries its `maintenance` (an Alertmanager label)."""
    started = time.monotonic()
    now = messages.utc(now) or datetime.now(timezone.utc)
    max_age = max_age or timedelta(hours=config.notify_max_age_hours())
    send_timeout_s = send_timeout_s or config.notify_send_timeout_s()
    budget_s = budget_s or config.notify_timeout_s()
    quiet = {messages.utc(h) for h in quiet_hours}
    result = NotifyResult({c.name: ChannelResult() for c in channels})
    history = _rows(HISTORY.path(lakehouse))
    if not channels or history is None:       # no channel, or no gold run yet: nothing to do
        return result
    kinds = types()
    history.sort(key=lambda h: (h["hour"], h["at"] or h["hour"], messages.TRANSITIONS.index(h["transition"])))
    incidents = {i["incident_id"]: i for i in _rows(lake.table("gold.incidents").path(lakehouse)) or []}
    kraft = kraft_clusters(lakehouse)     # the runbook of a KRaft cluster's incident may differ
    for row in (*history, *incidents.values()):
        row["host"] = messages.host_of(row["cluster"], row["entity"], hosts or {})
        row["mode"] = "kraft" if row["cluster"] in kraft else None
    by_cause = explained(list(incidents.values()))
    for inc in incidents.values():
        inc["explains"] = explains_of(inc, by_cause)
        began = _window(inc, inc["first_seen"], maintenance)
        inc["maintenance"] = began.reason if began else None
    holds = Held(history, incidents, maintenance, now)
    news = News(incidents, history, lake.latest_hours(lakehouse, now - max_age), now - max_age, max_age)
    deadline = started + budget_s
    with ExitStack() as held:
        try:    # the wait for another run's notify is inside the budget (the DAG task's timeout is a minute more)
            held.enter_context(locks.table_lock(outbox.TABLE, lakehouse, "notify", wait_s=max(
                0.0, min(locks.wait_seconds(), deadline - time.monotonic()))))
        except locks.HourBusy as exc:
            for counts in result.channels.values():
                counts.errors.append(f"{exc} (sent next run)")
            return result
        box = outbox.read(lakehouse)
        before = {k: dict(r) for k, r in box.items()}
        plans = []
        for channel in channels:
            counts = result.channels[channel.name]
            if getattr(kinds[channel.type], "REFRESH", False):
                due, refresh = _state(channel, history, box, incidents, news, now, counts)
            else:
                due = _retractions(channel, box, incidents, news, now, counts, quiet=bool(quiet))
                due += _due(channel, history, box, incidents, news, quiet, now, counts, holds)
                refresh = []
            plans.append((channel, due, refresh))
        if box != before:                     # what is due, skipped or suppressed, before any send
            outbox.write(box, lakehouse)
        for kind in {channel.type: kinds[channel.type] for channel, due, refresh in plans if due or refresh}.values():
            prepare = getattr(kind, "prepare", None)
            if prepare is not None:
                try:
                    prepare()
                except Exception:  # noqa: BLE001 - its deliveries fail with the reason
                    pass
        commit = threading.Lock()             # one outcome committed at a time, whichever channel's
        workers = [threading.Thread(target=_deliver, name=f"fleethealth-notify-{channel.name}", daemon=True,
                                    args=(kinds[channel.type], channel, due, refresh, box, lakehouse, now,
                                          send_timeout_s, deadline, result.channels[channel.name], commit))
                   for channel, due, refresh in plans]
        for worker in workers:                # concurrently: a slow receiver delays only its own channel
            worker.start()
        for worker in workers:
            worker.join()                     # each returns by the deadline: every send is bounded (_next)
    return result


class News:
    """Which incidents are open in an hour within max_age of now (the cutoff), and so news."""

    def __init__(self, incidents: dict, history: list[dict], latest: dict[str, datetime], cutoff: datetime,
                 max_age: timedelta):
        self.incidents, self.latest, self.cutoff, self.max_age = incidents, latest, cutoff, max_age
        self.resolved_hour = {h["incident_id"]: h["hour"] for h in history if h["transition"] == "resolved"}
        self.last = {h["incident_id"]: h["transition"] for h in history}

    def latest_transition(self, incident_id: str) -> str:
        return self.last.get(incident_id, "opened")

    def last_open_hour(self, incident_id: str) -> datetime | None:
        """The latest hour the incident is open in: its cluster's latest gold hour while it is open,
        the hour of its `resolved` transition once resolved."""
        inc = self.incidents.get(incident_id)
        if inc is None:
            return None
        if inc["status"] == "open":
            latest = self.latest.get(inc["cluster"])
            return max(latest, inc["last_hour"]) if latest and inc["last_hour"] else latest or inc["last_hour"]
        return self.resolved_hour.get(incident_id) or inc["last_hour"]

    def open_recently(self, incident_id: str) -> bool:
        last = self.last_open_hour(incident_id)
        return last is not None and last >= self.cutoff

    def why_not(self, h: dict) -> str | None:
        """None when the transition `h` is news, else why not."""
        if self.open_recently(h["incident_id"]) or h["hour"] >= self.cutoff:
            return None
        return self.stale(self.last_open_hour(h["incident_id"]))

    def stale(self, last: datetime | None) -> str | None:
        """None when an incident open last in hour `last` is news, else why not."""
        if last is not None and last >= self.cutoff:
            return None
        hours = self.max_age.total_seconds() / 3600
        return (f"not news: open last in {messages.iso(last) if last else 'no hour'}, more than "
                f"{hours:g} h ago (FLEETHEALTH_NOTIFY_MAX_AGE_HOURS)")


def _window(row: dict, at: datetime | None, windows: Sequence[Window]) -> Window | None:
    """The maintenance window that covers `row` (an incident or its transition: cluster, host) at `at`."""
    if at is None:
        return None
    return next((w for w in windows if w.covers(row["cluster"], row.get("host"), at)), None)


class Held:
    """The transitions a maintenance window holds from people's channels: (why held now, or None when
    due) for each."""

    def __init__(self, history: list[dict], incidents: dict, windows: Sequence[Window], now: datetime):
        self.incidents, self.now = incidents, now
        self.window = {id(h): w for h in history if (w := _window(h, h["at"] or h["hour"], windows))}
        # of an open incident's held openings and escalations, the latest is sent after its window
        self.latest = {h["incident_id"]: id(h) for h in history
                       if id(h) in self.window and h["transition"] in ANNOUNCING}

    def why(self, h: dict, channel: Channel, box: dict) -> tuple[str, str] | None:
        """(status, reason) of a transition held or dropped by its window; None when the window (if any) says send."""
        w = self.window.get(id(h))
        if w is None:
            return None
        if self.now < w.end:
            return "pending", f"held until the end of the {w.text()}"
        inc = self.incidents.get(h["incident_id"])
        if h["transition"] == "resolved":
            return None if _announced(box, channel.name, h["incident_id"]) else (
                "skipped", f"opened and resolved within the {w.text()}")
        if inc is None or inc["status"] != "open":
            return "skipped", f"resolved before the end of the {w.text()}"
        if self.latest.get(h["incident_id"]) != id(h):
            return "skipped", f"in the {w.text()}: its latest transition is sent after it"
        return None


def _due(channel: Channel, history: list[dict], box: dict, incidents: dict, news: News, quiet: set,
         now: datetime, counts: ChannelResult, holds: Held | None = None) -> list[tuple[dict, dict]]:
    """The (message, outbox row) pairs of transitions to deliver to `channel` (a channel to people)
    now, in history order; new rows are added to `box`, those not due recorded suppressed or skipped.
    In a quiet run (`quiet`: its hours) nothing is due: the rest is left pending."""
    due = []
    for h in history:
        if not channel.wants(h["cluster"], h["kind"], h["severity"]):
            continue
        k = outbox.key({**h, "channel": channel.name})
        row = box.get(k)
        if row is not None and row["status"] in outbox.DONE:
            counts.already += 1
            continue
        if row is None:
            row = box[k] = outbox.new_row(h, channel.name, now)
            if h["hour"] in quiet:
                row.update(status="suppressed", reason="--no-notify: the run's own hour")
                counts.suppressed += 1
                continue
        why = _explained(channel, incidents.get(h["incident_id"]))
        if why:
            _skip(row, why, counts)
            continue
        hold = holds.why(h, channel, box) if holds else None
        if hold and hold[0] == "pending":
            row.update(status="pending", reason=hold[1])
            counts.held += 1
            continue
        if hold:
            _skip(row, hold[1], counts)
            continue
        if not (h["transition"] == "resolved" and _announced(box, channel.name, h["incident_id"])):
            why = news.why_not(h)
        if why:
            _skip(row, why, counts)
            continue
        if row["status"] == "skipped":
            row.update(status="pending", reason=None, updated_at=now)
        if quiet:                             # a quiet run sends nothing: due at the next run that notifies
            counts.pending += 1
            continue
        due.append((messages.message(h, incidents.get(h["incident_id"])), row))
    return due


def _explained(channel: Channel, incident: dict | None) -> str | None:
    """Why a `roots_only` channel gets nothing of `incident`: another incident explains it (gold.causes);
    None when it is a root (or the channel takes all). Asked again each run: what explains it may go."""
    if not channel.roots_only or incident is None or not causes_of(incident.get("caused_by")):
        return None
    return "roots_only: " + causal_text(incident["caused_by"], ()).removeprefix(" | ")


# a state channel may hold an incident whose announcing row is not 'sent': posted by a run whose
# answer was lost (failed, pending), or refreshed by a run before issue 59 that recorded it suppressed
MAY_HOLD = ("sent", "suppressed", "failed", "pending")


def _announced(box: dict, channel: str, incident_id: str, statuses: tuple = ("sent",)) -> list[dict]:
    """The rows of `incident_id`'s opening and escalations sent to `channel` (or in `statuses`),
    oldest first."""
    return sorted((r for r in box.values() if r["channel"] == channel and r["incident_id"] == incident_id
                   and r["transition"] in ANNOUNCING and r["status"] in statuses),
                  key=lambda r: (r["hour"], r["sent_at"] or r["hour"]))


def _skip(row: dict, why: str, counts) -> None:
    """Records that `row` is not news (`why`), counted once however many runs find it so."""
    if row["status"] != "skipped":
        counts.skipped += 1
        counts.reasons.append(why)
    else:
        counts.already += 1
    row.update(status="skipped", reason=why)


def _retractions(channel: Channel, box: dict, incidents: dict, news: News, now: datetime, counts: ChannelResult,
                 quiet: bool = False, state: bool = False) -> list[tuple[dict, dict]]:
    """A `retracted` message for each incident announced to `channel` (opened or escalated, sent) and
    not resolved there, that gold.incidents no longer has: a re-run or late data removed it or gave
    it another id. Sent once (its own outbox row), naming the incident that replaces it, if any.

    To people it follows the news rule (_retraction_news), and a quiet run records a new one
    suppressed and sends none; to a state channel (`state`: Alertmanager) it is always due."""
    held = MAY_HOLD if state else ("sent",)
    mine = [r for r in box.values() if r["channel"] == channel.name]
    closed = {r["incident_id"] for r in mine if r["transition"] == "resolved" and r["status"] == "sent"}
    gone = sorted({r["incident_id"] for r in mine if r["transition"] in ANNOUNCING and r["status"] in held
                   and r["incident_id"] not in incidents and r["incident_id"] not in closed})
    due = []
    for incident_id in gone:
        announced = _announced(box, channel.name, incident_id, held)
        last = announced[-1]
        k = outbox.key({**last, "transition": messages.RETRACTED})
        row = box.get(k)
        if row is not None and row["status"] in outbox.DONE:
            counts.already += 1
            continue
        replaced_by = _replacement(last, incidents, news)
        reason = ("re-identified by a re-run or late data" if replaced_by else
                  "no longer an incident after a re-run or late data")
        text = reason + (f" (replaced by {replaced_by})" if replaced_by else "")
        if row is None:
            row = box[k] = {**outbox.new_row({**last, "transition": messages.RETRACTED}, channel.name, now),
                            "reason": text}
            if quiet and not state:
                row.update(status="suppressed", reason=f"--no-notify: the run's retraction: {text}")
                counts.suppressed += 1
                continue
        why = None if state else _retraction_news(box, channel.name, last, announced, replaced_by, news)
        if why:
            _skip(row, why, counts)
            continue
        if row["status"] == "skipped":
            row.update(status="pending", reason=text, updated_at=now)
        if quiet and not state:               # found by an earlier run: due at the next run that notifies
            counts.pending += 1
            continue
        due.append((messages.retraction(last, reason, replaced_by, now), row))
    return due


def _retraction_news(box: dict, channel: str, last: dict, announced: list[dict], replaced_by: str | None,
                     news: News) -> str | None:
    """None when withdrawing the gone incident of `last` (its latest announcement to `channel`) is
    news, else why not: the news rule of every transition, for an incident gold no longer has. It
    was open, as the channel was told, through the hour of its `resolved` row there (a resolve not
    yet delivered), else through its cluster's latest gold hour (no end was told); or the incident
    replacing it is open recently."""
    if replaced_by and news.open_recently(replaced_by):
        return None
    ended = [r["hour"] for r in box.values() if r["channel"] == channel and r["incident_id"] == last["incident_id"]
             and r["transition"] == "resolved"]
    if ended:
        return news.stale(max(ended))
    hours = [r["hour"] for r in announced] + [h for h in (news.latest.get(last["cluster"]),) if h]
    return news.stale(max(hours))


def _state(channel: Channel, history: list[dict], box: dict, incidents: dict, news: News, now: datetime,
           counts: ChannelResult) -> tuple[list[tuple[dict, dict]], list[dict]]:
    """What a state channel (REFRESH: Alertmanager) is told this run, quiet or not, news or not: the
    (message, outbox row) pairs of every transition of an incident it wants that is open, or that it
    was told is open and no longer is (resolved: ended at its resolved_at; gone: retracted, ended now);
    and the current state of every other open incident it wants (`refresh`, outcomes not kept). A
    transition of an incident never posted there that is not open is recorded skipped: nothing to end
    (an end posted for an alert Alertmanager never had would be harmless, and is not needed)."""
    told = {r["incident_id"] for r in box.values() if r["channel"] == channel.name
            and r["transition"] in ANNOUNCING and r["status"] in MAY_HOLD}
    told -= {r["incident_id"] for r in box.values() if r["channel"] == channel.name
             and r["transition"] in ("resolved", messages.RETRACTED) and r["status"] == "sent"}
    due = _retractions(channel, box, incidents, news, now, counts, state=True)
    for h in history:
        if not channel.wants(h["cluster"], h["kind"], h["severity"]):
            continue
        if _explained(channel, incidents.get(h["incident_id"])) and h["incident_id"] not in told:
            continue          # roots_only: never posted there (one that was is kept up to date)
        k = outbox.key({**h, "channel": channel.name})
        row = box.get(k)
        if row is not None and row["status"] in outbox.DONE:
            counts.already += 1
            continue
        if row is None:
            row = box[k] = outbox.new_row(h, channel.name, now)
        inc = incidents.get(h["incident_id"])
        if (inc is not None and inc["status"] == "open") or h["incident_id"] in told:
            if row["status"] == "skipped":
                row.update(status="pending", reason=None, updated_at=now)
            due.append((messages.message(h, inc), row))
            continue
        if row["status"] != "skipped":
            counts.skipped += 1
            counts.reasons.append("never active there: nothing to end")
            row.update(status="skipped", reason="not open, and never active there: nothing to end")
        else:
            counts.already += 1
    posted = {m["incident_id"] for m, _ in due}
    refresh = [messages.incident_message(inc, news.latest_transition(i)) for i, inc in incidents.items()
               if i not in posted and channel.wants(inc["cluster"], inc["kind"], inc["severity"])
               and (inc["status"] == "open" or i in told) and not (_explained(channel, inc) and i not in told)]
    return due, refresh


def _replacement(row: dict, incidents: dict, news: News) -> str | None:
    """The incident of the same cluster, kind and entity that stands for a gone one: one open in the
    hour it was announced for, else the latest of that key."""
    same = [i for i in incidents.values()
            if (i["cluster"], i["kind"], i["entity"]) == (row["cluster"], row["kind"], row["entity"])]
    if not same:
        return None
    over = [i for i in same if i["first_hour"] and i["first_hour"] <= row["hour"]
            <= (news.last_open_hour(i["incident_id"]) or i["first_hour"])]
    return max(over or same, key=lambda i: i["first_hour"] or row["hour"])["incident_id"]


def _deliver(kind, channel: Channel, due: list[tuple[dict, dict]], refresh: list[dict], box: dict,
             lakehouse: Lakehouse, now: datetime, send_timeout_s: float, deadline: float,
             counts: ChannelResult, commit: threading.Lock | None = None) -> None:
    """Deliver in order, committing each outcome to the outbox before the next send; the first
    failure stops the channel for this run (what follows stays pending, so a receiver never gets
    'resolved' before the 'escalated' it missed). `refresh`: the REFRESH states, outcomes not kept.
    Runs in a channel's own thread: `commit` serialises the outbox's commits; nothing raises."""
    commit = commit or threading.Lock()
    try:
        _send(kind, channel, due, refresh, box, lakehouse, now, send_timeout_s, deadline, counts, commit)
    except Exception as exc:  # noqa: BLE001 - e.g. the outbox's commit: reported, never the run's failure
        counts.errors.append(redact(outbox.describe(exc), channel.urls()))


def _send(kind, channel: Channel, due: list[tuple[dict, dict]], refresh: list[dict], box: dict,
          lakehouse: Lakehouse, now: datetime, send_timeout_s: float, deadline: float,
          counts: ChannelResult, commit: threading.Lock) -> None:
    _send_due(kind, channel, due, refresh, box, lakehouse, now, send_timeout_s, deadline, counts, commit)
    beat = getattr(kind, "heartbeat", None)
    if beat is not None and time.monotonic() < deadline:      # this run happened (Alertmanager's Watchdog)
        outcome = _next(iter(beat(channel, now)), min(send_timeout_s, deadline - time.monotonic()))
        if outcome is not None and not counts.errors:          # a receiver that is down is one error
            counts.errors.append(redact(outbox.describe(outcome), channel.urls()))


def _send_due(kind, channel: Channel, due: list[tuple[dict, dict]], refresh: list[dict], box: dict,
              lakehouse: Lakehouse, now: datetime, send_timeout_s: float, deadline: float,
              counts: ChannelResult, commit: threading.Lock) -> None:
    if not due and not refresh:
        return
    if time.monotonic() >= deadline:
        counts.pending += len(due)
        return
    outcomes = iter(kind.deliver(channel, [m for m, _ in due] + refresh, now))
    for n, (msg, row) in enumerate([*due, *((m, None) for m in refresh)]):
        wait = min(send_timeout_s, deadline - time.monotonic())
        outcome = _next(outcomes, max(wait, 0.0)) if wait > 0 else DeadlineExceeded("no time left")
        if isinstance(outcome, DeadlineExceeded) and wait < send_timeout_s:
            outcome = DeadlineExceeded(f"the run's budget ran out after {wait:.3g} s of this send "
                                       "(FLEETHEALTH_NOTIFY_TIMEOUT_S)")
        error = None if outcome is None else redact(outbox.describe(outcome), channel.urls())
        if row is not None:
            with commit:
                outbox.mark(row, now, error)
                outbox.write(box, lakehouse)    # committed before the next delivery starts
            if error is None:
                counts.sent += 1
                counts.retracted += msg["transition"] == messages.RETRACTED
            else:
                counts.failed += 1
        if error is not None:
            counts.errors.append(error)
            counts.pending += sum(1 for _, r in due[n + 1:])
            return                              # a stalled one is abandoned with its generator


def send_test(channel: Channel, now: datetime | None = None) -> str | None:
    """Deliver one test message (messages.test_message) to `channel` through its type, as a run
    delivers (one send within FLEETHEALTH_NOTIFY_SEND_TIMEOUT_S): None when the receiver took it, else
    why not, redacted. Nothing is recorded in gold.notifications."""
    now = messages.utc(now) or datetime.now(timezone.utc)
    return send_one(channel, messages.test_message(channel.name, now), now)


def tell_failures(channels: Sequence[Channel], failures: dict[datetime, str], now: datetime | None = None) -> list[str]:
    """Send every channel an `hour_failed` message per failed hour (hour -> why); one line per channel
    it did not reach (a failure to tell never fails the run more)."""
    now = messages.utc(now) or datetime.now(timezone.utc)
    errors = []
    for hour, reason in sorted(failures.items()):
        msg = messages.hour_failed_message(hour, reason, now)
        for channel in channels:
            error = send_one(channel, msg, now)
            if error is not None:
                errors.append(f"notifications[{channel.name}]: {messages.HOUR_FAILED} of {msg['incident_id']} "
                              f"not delivered: {error}")
    return errors


def send_one(channel: Channel, message: dict, now: datetime) -> str | None:
    """Deliver one message outside the outbox (a test, the pipeline's staleness) as a run delivers:
    None when the receiver took it, else why not, redacted."""
    outcome = _next(iter(types()[channel.type].deliver(channel, [message], now)), config.notify_send_timeout_s())
    return None if outcome is None else redact(outbox.describe(outcome), channel.urls())


def _next(outcomes, timeout_s: float) -> BaseException | None:
    """The next outcome, or DeadlineExceeded if none comes within `timeout_s` (a receiver dripping
    its answer holds a read timeout for ever: the whole send is bounded here, in a thread left to
    finish or fail on its own)."""
    got: dict = {}

    def take():
        try:
            got["outcome"] = next(outcomes)
        except StopIteration:
            got["outcome"] = RuntimeError("the channel type gave fewer outcomes than messages")
        except BaseException as exc:  # noqa: BLE001 - a channel type's own bug is the delivery's failure
            got["outcome"] = exc

    worker = threading.Thread(target=take, name="fleethealth-notify-send", daemon=True)
    worker.start()
    worker.join(timeout_s)
    if "outcome" not in got:
        return DeadlineExceeded(f"no outcome within {timeout_s:g} s (FLEETHEALTH_NOTIFY_SEND_TIMEOUT_S)")
    return got["outcome"]


def _rows(path: str) -> list[dict] | None:
    """A gold table's rows with every timestamp aware UTC (delta-rs gives naive ones for a timestamp
    without a zone), or None when it does not exist yet."""
    rows = outbox.read_rows(path)
    if rows is None:
        return None
    return [{k: messages.utc(v) if isinstance(v, datetime) else v for k, v in r.items()} for r in rows]
