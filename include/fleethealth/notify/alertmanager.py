"""The Prometheus Alertmanager channel type (`alertmanager: <base URL>`): incidents as alerts (API v2:
POST <url>/api/v2/alerts), one alert per incident.

An alert's labels are alertname (the kind), cluster, entity, incident_id, source and severity, the
label routes match on (a critical to the pager, a minor to a chat). Alertmanager tells alerts apart
by their labels' fingerprint, so an escalation would start a second alert beside the first: the
post that carries an escalation also ends (endsAt = now) the incident's label sets of every lower
severity, so exactly one alert per open incident is active at any moment.

An open incident that is news is posted with endsAt = now + ends_after at every hourly run (REFRESH):
without endsAt, Alertmanager resolves it by itself after resolve_timeout (5 min by default) and it
would flap every hour; ends_after must outlast a failed run, as Prometheus sends 4x its resend
interval. A resolved incident is posted once more with endsAt = resolved_at, a retracted one with
endsAt = now: either ends it at once.

Each notify run also posts the Watchdog (kube-prometheus's convention, `heartbeat`): an alert always
active while fleethealth runs, ending WATCHDOG_FOR after the last run that sent it. A dead man's switch
receiver routed to it pages when it stops arriving: the pipeline stopped. Nothing else posts it (not
`check --notify`, not `check --stale`): it says the runs run.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta, timezone
from typing import Annotated

from pydantic import Field

from fleethealth.fleet import entities
from fleethealth.fleet.channels import DEFAULT_ENDS_AFTER_S, Channel
from fleethealth.notify.channels import Url
from fleethealth.notify.messages import TEST
from fleethealth.runtime.validation import Int, Schema, holds, required, says
from fleethealth.runtime.vocabulary import SEVERITY_RANK

TYPE = "alertmanager"
MAX_ENDS_AFTER_S = 7 * 86_400
KEY = "alertmanager"
REFRESH = True


class Settings(Schema):
    alertmanager: Url = required()
    # at most a week: an alert of a fleethealth that stopped sending ends within it (and endsAt stays a date)
    ends_after_seconds: Annotated[Int, Field(ge=3600),
                                  says("expected an integer >= 3600 (one hourly run), got {got}"),
                                  holds(lambda v: v <= MAX_ENDS_AFTER_S,
                                        f"expected at most {MAX_ENDS_AFTER_S} (a week), got {{got}}")
                                  ] = DEFAULT_ENDS_AFTER_S


API = "api/v2/alerts"
SOURCE = "fleethealth"
TEST_ALERT_FOR = timedelta(minutes=5)     # how long a test alert stays active (it then ends by itself)
WATCHDOG = "Watchdog"
WATCHDOG_FOR = timedelta(hours=2)         # one hourly run missed is tolerated; two end it


def _utc(t: datetime) -> str:
    if t.tzinfo is None:
        raise ValueError(f"now must be timezone-aware (UTC), got {t.isoformat()}")
    return f"{t.astimezone(timezone.utc):%Y-%m-%dT%H:%M:%S}Z"


def runbook_text(runbook: dict | None) -> str | None:
    """What it means, then the numbered steps to check and to do."""
    if not runbook:
        return None
    lines = [runbook.get("means") or ""]
    for title, key in (("Check", "check"), ("Do", "do")):
        steps = runbook.get(key) or []
        if steps:
            lines += [f"{title}:"] + [f"{n}. {step}" for n, step in enumerate(steps, 1)]
    return "\n".join(line for line in lines if line) or None


def labels(incident: dict, severity: str | None = None) -> dict:
    """An incident's alert labels, in its severity (or in `severity`), with what its entity is about: `broker`
    (a broker or one of its replicas: an inhibit rule can match a broker's bloated partition to its dead
    cleaner) or `node` (a KRaft controller or a ZooKeeper server), its `host` (the message's, from the
    inventory, or a host's source's), and `maintenance` (the reason of the inventory's maintenance window
    it began in: a team's silence on it applies; kept for the incident's life, so its alert stays one)."""
    return {k: str(v) for k, v in {"alertname": incident["kind"], "cluster": incident["cluster"],
                                   "entity": incident["entity"], "incident_id": incident["incident_id"],
                                   "source": SOURCE, "severity": severity or incident["severity"],
                                   **entity_labels(str(incident["entity"])),
                                   **({"host": incident["host"]} if incident.get("host") else {}),
                                   **({"maintenance": incident["maintenance"]} if incident.get("maintenance") else {}),
                                   }.items()}


def entity_labels(entity: str) -> dict:
    """broker-2, __consumer_offsets-38@broker-2 -> {broker: 2}; controller-3000, zk-1 -> {node: ...};
    kafka-1:jmx -> {host: kafka-1}; anything else (quorum, timezone) -> {}."""
    keys = entities.parse(entity)
    if entities.BROKER in keys:
        return {"broker": keys[entities.BROKER]}
    node = keys.get(entities.CONTROLLER, keys.get(entities.ZOOKEEPER))
    if node is not None:
        return {"node": node}
    return {"host": keys["host"]} if ":" in entity else {}


def ended_below(incident: dict, now: datetime) -> list[dict]:
    """The incident's label sets of every severity below its own, ended now: what an escalation leaves."""
    rank = SEVERITY_RANK.get(incident["severity"], 0)
    return [{"labels": labels(incident, lower), "annotations": {}, "startsAt": _utc(now - timedelta(seconds=1)),
             "endsAt": _utc(now)} for lower, r in SEVERITY_RANK.items() if r < rank]


def alert(incident: dict, now: datetime, ends_after: timedelta) -> dict:
    """One postable alert for one incident message."""
    annotations = {"summary": incident.get("summary"),
                   "evidence": incident.get("evidence"), "runbook": runbook_text(incident.get("runbook")),
                   "known_bug": incident.get("known_bug"), "replaced_by": incident.get("replaced_by")}
    starts_at = incident.get("first_seen")
    if incident["status"] == "resolved":
        ends_at = incident["resolved_at"] or _utc(now)
    elif incident["status"] == "open":
        ends_at = _utc(now + ends_after)
    elif incident["status"] == "retracted":       # ended now: it never was (or is another incident now)
        ends_at = _utc(now)
        starts_at = _utc(now - timedelta(seconds=1))
    elif incident["status"] == TEST:               # `fleethealth check --notify`: active a few minutes
        ends_at = _utc(now + TEST_ALERT_FOR)
    else:
        raise ValueError(f"incident {incident['incident_id']}: unknown status {incident['status']!r}")
    return {"labels": labels(incident),
            "annotations": {k: str(v) for k, v in annotations.items() if v is not None},
            "startsAt": starts_at or _utc(now), "endsAt": ends_at}


def alerts(incidents: list[dict], now: datetime, ends_after: timedelta) -> list[dict]:
    """The Alertmanager API v2 postable alerts of these incident messages, in their order (an
    escalation's with the lower severities' alerts of its incident ended)."""
    out = []
    for incident in incidents:
        out.append(alert(incident, now, ends_after))
        if incident.get("transition") == "escalated":
            out += ended_below(incident, now)
    return out


def watchdog(now: datetime) -> dict:
    """The heartbeat alert: active while fleethealth runs (each run posts it again)."""
    return {"labels": {"alertname": WATCHDOG, "source": SOURCE, "severity": "none"},
            "annotations": {"summary": f"fleethealth ran at {_utc(now)}: this alert is active as long as it runs; "
                                       "route it to a dead man's switch that pages when it stops (docs/notifications.md)"},
            "startsAt": _utc(now), "endsAt": _utc(now + WATCHDOG_FOR)}


def post(url: str, payload: list[dict], timeout: float | None = None) -> None:
    """POST the alerts to the Alertmanager at base `url` (e.g. http://127.0.0.1:9093).

    Raises on any failure: requests' ConnectionError / Timeout, webhook.Refused on a non-2xx answer.
    """
    from fleethealth.notify.webhook import post_json

    post_json(url.rstrip("/") + "/" + API, payload, timeout=timeout)


def deliver(channel: Channel, messages: Sequence[dict], now: datetime) -> Iterable[BaseException | None]:
    """One post of every message's incident, in its last message's state; the same outcome for each."""
    latest = {m["incident_id"]: m for m in messages}
    try:
        post(channel.target, alerts(list(latest.values()), now, timedelta(seconds=channel.ends_after_seconds)))
    except Exception as exc:  # noqa: BLE001 - the outcome: recorded by notify.run
        outcome = exc
    else:
        outcome = None
    for _ in messages:
        yield outcome


def heartbeat(channel: Channel, now: datetime) -> Iterable[BaseException | None]:
    """The Watchdog posted: one outcome (notify.run calls it once per run, whatever else it sends)."""
    try:
        post(channel.target, [watchdog(now)])
    except Exception as exc:  # noqa: BLE001 - the outcome: reported by notify.run
        yield exc
    else:
        yield None
