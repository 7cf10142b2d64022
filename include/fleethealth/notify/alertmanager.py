"""Incidents as Prometheus Alertmanager alerts (API v2: POST <url>/api/v2/alerts).

An open incident is posted with endsAt = now + ends_after at every hourly run. Without endsAt,
Alertmanager resolves it by itself after resolve_timeout (5 min by default) and it would flap every
hour; ends_after must outlast a failed run, as Prometheus sends 4x its resend interval. A resolved
incident is posted once more with endsAt = resolved_at, which resolves it at once.
"""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

API = "api/v2/alerts"
SOURCE = "fleethealth"


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


def alert(incident: dict, now: datetime, ends_after: timedelta) -> dict:
    """One postable alert for one incident message."""
    labels = {"alertname": incident["kind"], "cluster": incident["cluster"], "severity": incident["severity"],
              "entity": incident["entity"], "incident_id": incident["incident_id"], "source": SOURCE}
    annotations = {"summary": incident.get("summary"), "evidence": incident.get("evidence"),
                   "runbook": runbook_text(incident.get("runbook")), "known_bug": incident.get("known_bug")}
    if incident["status"] == "resolved":
        ends_at = incident["resolved_at"]
    elif incident["status"] == "open":
        ends_at = _utc(now + ends_after)
    else:
        raise ValueError(f"incident {incident['incident_id']}: unknown status {incident['status']!r}")
    return {"labels": {k: str(v) for k, v in labels.items()},
            "annotations": {k: str(v) for k, v in annotations.items() if v is not None},
            "startsAt": incident["first_seen"], "endsAt": ends_at}


def alerts(incidents: list[dict], now: datetime, ends_after: timedelta) -> list[dict]:
    """The Alertmanager API v2 postable alerts of these incident messages, in their order."""
    return [alert(incident, now, ends_after) for incident in incidents]


def post(url: str, payload: list[dict], timeout: float = 10.0) -> None:
    """POST the alerts to the Alertmanager at base `url` (e.g. http://127.0.0.1:9093).

    Raises on any failure: requests' ConnectionError / Timeout, AirflowException on a non-2xx answer.
    """
    from airflow.providers.http.hooks.http import HttpHook
    from airflow.sdk import Connection

    class _Hook(HttpHook):
        # the base URL is given, not an Airflow connection id
        def get_connection(self, conn_id):
            return Connection(conn_id="alertmanager", conn_type="http", host=url.rstrip("/"))

    _Hook(method="POST", http_conn_id="alertmanager").run(
        API, data=json.dumps(payload), headers={"Content-Type": "application/json"},
        extra_options={"timeout": timeout})
