"""What a notification says: one message per incident transition (the webhook's JSON body), and its
renderings for e-mail and Slack. Built from plain rows (gold.incident_history, gold.incidents as
dicts), so no Spark is needed to notify.

Every text field has its control characters escaped (fleethealth.report.text.printable): evidence
quotes log lines, and a newline in one must not forge a line of a mail or a chat message.
"""
from __future__ import annotations

import html
import re
from datetime import datetime, timedelta, timezone

from fleethealth.fleet import entities
from fleethealth.report.text import causal_text, incident_notes, known_bugs_text, printable
from fleethealth.runtime.vocabulary import SEVERITY_RANK

FIELDS = ("idempotency_key", "incident_id", "cluster", "kind", "severity", "severity_rank", "entity", "host", "status",
          "transition",
          "first_seen", "last_seen", "resolved_at", "evidence", "known_bug", "runbook", "summary", "reason",
          "replaced_by", "caused_by", "explains", "maintenance")
TRANSITIONS = ("opened", "escalated", "resolved")   # their order within one hour
RETRACTED = "retracted"     # an announced incident a re-run or late data removed or re-identified
TEST = "test"               # `fleethealth check --notify`'s message (test_message): no incident
SUBJECT_MAX = 200


def utc(value: datetime | None) -> datetime | None:
    """A timestamp as an aware UTC datetime (delta-rs gives naive ones for timestamps without a zone)."""
    if value is None:
        return None
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


def iso(value: datetime | None) -> str | None:
    return None if value is None else utc(value).strftime("%Y-%m-%dT%H:%M:%SZ")


def idempotency_key(incident_id: str, transition: str, severity: str) -> str:
    """What a receiver de-duplicates on: the same for every delivery of one transition (a re-send
    after a crash or a lost answer), different for each transition (two escalations differ by severity)."""
    return f"{incident_id}:{transition}" + (f":{severity}" if transition == "escalated" else "")


def host_of(cluster: str, entity: str, hosts: dict) -> str | None:
    """The host an incident's entity is on: a host's source names it, a Kafka or ZooKeeper process is looked
    up in `hosts` ((cluster, process name) -> host: notify.inventory.host_names); None for the rest."""
    entity = str(entity)
    if ":" in entity:
        return entity.split(":", 1)[0]
    process = re.search(entities.PROCESS_PATTERN, entity)
    return hosts.get((cluster, process.group(1))) if process else None


def message(history: dict, incident: dict | None) -> dict:
    """The message of one gold.incident_history row: the transition, with the incident's current
    state (gold.incidents; None if it is gone: the history row stands in for it)."""
    current = incident or {**history, "status": "resolved" if history["transition"] == "resolved" else "open",
                           "first_seen": history["at"], "last_seen": history["at"],
                           "resolved_at": history["at"] if history["transition"] == "resolved" else None}
    evidence = history["evidence"] if history["transition"] == "opened" or incident is None else incident["evidence"]
    return _message(current, history["transition"], history["severity"], evidence)


def incident_message(incident: dict, transition: str) -> dict:
    """The message of an incident's current state (what Alertmanager is told every run), with the
    incident's latest `transition`."""
    return _message(incident, transition, incident["severity"], incident["evidence"])


def _message(incident: dict, transition: str, severity: str, evidence: str | None) -> dict:
    from fleethealth.gold import runbooks

    kind = incident["kind"]
    book = runbooks.of(kind, incident.get("mode"))
    text = {k: printable(incident[k]) for k in ("incident_id", "cluster", "kind", "entity", "status")}
    evidence, known_bug = printable(evidence or ""), incident.get("known_bug")
    head = "ESCALATED to " if transition == "escalated" else f"{transition.upper()} "
    caused_by, explains = _related(incident.get("caused_by")), _related(incident.get("explains"))
    summary = (f"{head}{severity.upper()} {text['cluster']} {kind} {text['entity']}: {evidence}"
               + causal_text(caused_by, explains) + incident_notes(kind, known_bug, evidence, incident.get("mode")))
    out = {**text, "host": incident.get("host"),
           "idempotency_key": idempotency_key(incident["incident_id"], transition, severity),
           "severity": severity, "severity_rank": SEVERITY_RANK.get(severity), "transition": transition, "reason": None,
           "replaced_by": None,
            "first_seen": iso(incident.get("first_seen")), "last_seen": iso(incident.get("last_seen")),
            "resolved_at": iso(incident.get("resolved_at")), "evidence": evidence,
            "known_bug": known_bugs_text(known_bug),
            "runbook": {"means": book.means, "check": list(book.check), "do": list(book.do)} if book else None,
            "summary": printable(summary), "caused_by": caused_by, "explains": explains,
            "maintenance": incident.get("maintenance")}
    return {k: out[k] for k in FIELDS}


def _related(incidents) -> list[dict]:
    """Incidents named by key (gold.incidents.caused_by, notify's `explains`) as JSON: [{kind, entity, first_seen}]."""
    return [{"kind": printable(c["kind"]), "entity": printable(c["entity"]), "first_seen": iso(c["first_seen"])}
            for c in incidents or ()]


def retraction(row: dict, reason: str, replaced_by: str | None, now: datetime) -> dict:
    """The message withdrawing an announced incident (`row`: its latest outbox row sent): it is no
    longer in gold.incidents; `replaced_by` the incident that now stands for it, if any."""
    text = {k: printable(row[k]) for k in ("incident_id", "cluster", "kind", "entity")}
    severity, reason = row["severity"], printable(reason)
    summary = (f"RETRACTED {severity.upper()} {text['cluster']} {row['kind']} {text['entity']}: {reason}"
               + (f" (replaced by {printable(replaced_by)})" if replaced_by else ""))
    out = {**text, "idempotency_key": idempotency_key(row["incident_id"], RETRACTED, severity),
           "severity": severity, "severity_rank": SEVERITY_RANK.get(severity), "status": RETRACTED,
           "transition": RETRACTED, "first_seen": None, "host": row.get("host"),
           "last_seen": None, "resolved_at": iso(now), "evidence": reason, "known_bug": None, "runbook": None,
           "summary": summary, "reason": reason, "replaced_by": replaced_by,
           "caused_by": [], "explains": [], "maintenance": None}
    return {k: out[k] for k in FIELDS}


def test_message(channel: str, now: datetime) -> dict:
    """The message `fleethealth check --notify` sends: of no incident, its status, transition and kind
    TEST, its summary starting "TEST", its key unique to the channel and second (never de-duplicated
    with a real one)."""
    at = iso(now)
    summary = (f"TEST message from fleethealth check to channel {printable(channel)} at {at}: "
               "notifications reach you; no incident")
    out = {"idempotency_key": f"{TEST}:{channel}:{at}", "incident_id": f"{TEST}-{utc(now):%Y%m%dT%H%M%SZ}",
           "cluster": "-", "kind": TEST, "severity": "info", "severity_rank": SEVERITY_RANK["info"], "entity": "-",
           "host": None,
           "status": TEST, "transition": TEST,
           "first_seen": at, "last_seen": at, "resolved_at": None, "evidence": summary, "known_bug": None,
           "runbook": None, "summary": summary, "reason": None, "replaced_by": None, "caused_by": [], "explains": [], "maintenance": None}
    return {k: out[k] for k in FIELDS}


PIPELINE_STALE = "pipeline_stale"


def stale_message(last_hour: datetime, now: datetime, limit_hours: int, resolved: bool = False) -> dict:
    """The message `fleethealth check --stale` sends when the newest processed hour (`last_hour`) ended more
    than `limit_hours` before `now` (of no cluster: the pipeline's own), and `resolved` once hours are
    processed again. One per stale spell: its key is the newest hour it found."""
    age = (utc(now) - (utc(last_hour) + timedelta(hours=1))).total_seconds() / 3600
    at, last = iso(now), f"{utc(last_hour):%Y-%m-%d %H:%M}Z"
    if resolved:
        summary = f"RESOLVED CRITICAL fleethealth {PIPELINE_STALE}: hours after {last} are processed again"
    else:
        summary = (f"OPENED CRITICAL fleethealth {PIPELINE_STALE}: the newest processed hour is {last}, which ended "
                   f"{age:,.0f} h ago (more than FLEETHEALTH_STALE_AFTER_HOURS={limit_hours}): nothing has been "
                   "processed since; check the scheduler, the DAG's last runs and `fleethealth run`'s cron")
    status, transition = ("resolved", "resolved") if resolved else ("open", "opened")
    incident_id = f"{PIPELINE_STALE}-{utc(last_hour):%Y%m%dT%H}"
    out = {"idempotency_key": idempotency_key(incident_id, transition, "critical"), "incident_id": incident_id,
           "cluster": "-", "kind": PIPELINE_STALE, "severity": "critical", "severity_rank": SEVERITY_RANK["critical"],
           "entity": "-", "host": None, "status": status, "transition": transition,
           "first_seen": iso(utc(last_hour) + timedelta(hours=1)),
           "last_seen": at, "resolved_at": at if resolved else None, "evidence": summary, "known_bug": None,
           "runbook": None, "summary": summary, "reason": None, "replaced_by": None, "caused_by": [], "explains": [], "maintenance": None}
    return {k: out[k] for k in FIELDS}


HOUR_FAILED = "hour_failed"


def hour_failed_message(hour: datetime, reason: str, now: datetime) -> dict:
    """The message a run sends every channel when an hour failed (a layer's error, or its quality gate
    rejected it): of no cluster, the pipeline's own; nothing of the hour past its last good layer is
    published, so its incidents may be missing until it is re-run. Its key is the hour and the time of
    the failure (a later failure of the same hour is told again)."""
    at, h = iso(now), f"{utc(hour):%Y-%m-%d %H:%M}Z"
    reason = printable(reason)
    summary = (f"OPENED CRITICAL fleethealth {HOUR_FAILED}: hour {h} failed, nothing of it published past its last "
               f"good layer (its incidents may be missing): {reason}; fix the cause and re-run the hour "
               "(`fleethealth run --from ... --to ...` or the DAG run's `Clear`)")
    incident_id = f"{HOUR_FAILED}-{utc(hour):%Y%m%dT%H}"
    out = {"idempotency_key": f"{incident_id}:{utc(now):%Y%m%dT%H%M%S}", "incident_id": incident_id,
           "cluster": "-", "kind": HOUR_FAILED, "severity": "critical", "severity_rank": SEVERITY_RANK["critical"],
           "entity": "-", "host": None, "status": "open", "transition": "opened", "first_seen": at,
           "last_seen": at, "resolved_at": None, "evidence": reason, "known_bug": None,
           "runbook": None, "summary": summary, "reason": reason, "replaced_by": None, "caused_by": [], "explains": [],
           "maintenance": None}
    return {k: out[k] for k in FIELDS}


def message_id(msg: dict) -> str:
    """The e-mail Message-ID of a message: its idempotency key (a repeat has the same one)."""
    return "<" + "".join(c if c.isalnum() or c in "-_." else "." for c in msg["idempotency_key"]) + "@fleethealth>"


def email(msg: dict) -> tuple[str, str]:
    """(subject, body): the summary as the subject; every field and the runbook's steps numbered, as
    plain text (in <pre>, escaped: SmtpHook sends HTML only)."""
    subject = msg["summary"] if len(msg["summary"]) <= SUBJECT_MAX else msg["summary"][:SUBJECT_MAX - 3] + "..."
    lines = [msg["summary"], ""]
    lines += [f"{k}: {msg[k] if msg[k] is not None else '-'}" for k in FIELDS if k not in ("runbook", "summary")]
    book = msg["runbook"]
    if book:
        lines += ["", f"What it means: {book['means']}", "", "Check:"]
        lines += [f"  {i}. {step}" for i, step in enumerate(book["check"], 1)]
        lines += ["", "Do:"] + [f"  {i}. {step}" for i, step in enumerate(book["do"], 1)]
    return subject, "<pre>" + html.escape("\n".join(lines)) + "</pre>"


def slack_text(msg: dict) -> str:
    """The summary, the runbook's first check step and the idempotency key, with the three characters
    Slack's mrkdwn reserves (& < >) escaped as Slack asks."""
    text = msg["summary"]
    if msg["runbook"] and msg["runbook"]["check"][0] not in text:
        text += f"\ncheck first: {msg['runbook']['check'][0]}"
    text += f"\nkey: {msg['idempotency_key']}"
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
