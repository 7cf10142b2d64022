"""fleethealth.notify.alertmanager against a real Alertmanager 0.25 on loopback (no Spark).

Server: tests/realservers.py (started here, stopped at the end of the module)."""
from __future__ import annotations

import os
import time
from datetime import datetime, timedelta, timezone

import pytest

os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")

from fleethealth.notify.alertmanager import alerts, post  # noqa: E402
from realservers import Alertmanager, free_port  # noqa: E402

RUNBOOK = {"means": "The broker lost its ZooKeeper session and is out of the cluster.",
           "check": ["Is the broker process up?", "Does it reach ZooKeeper?"],
           "do": ["Restart the broker."]}


def iso(t: datetime) -> str:
    return f"{t:%Y-%m-%dT%H:%M:%S}Z"


def parse(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def incident(incident_id: str, status: str = "open", **fields) -> dict:
    now = datetime.now(timezone.utc)
    return {"incident_id": incident_id, "cluster": "prod-eu", "kind": "broker_isolated", "severity": "critical",
            "entity": "broker-3", "status": status, "transition": "opened" if status == "open" else "resolved",
            "first_seen": iso(now - timedelta(hours=2)), "last_seen": iso(now - timedelta(minutes=5)),
            "resolved_at": None, "evidence": "no heartbeat from broker-3 for 12 min; 41 partitions lost it",
            "known_bug": "KAFKA-4399 (fixed in 0.10.1.1)", "runbook": RUNBOOK,
            "summary": "broker-3 of prod-eu is isolated", **fields}


@pytest.fixture(scope="module")
def alertmanager(tmp_path_factory):
    with Alertmanager(tmp_path_factory.mktemp("alertmanager")) as server:
        yield server


def listed(server: Alertmanager, incident_id: str, query: str = "") -> list[dict]:
    return [a for a in server.get("/api/v2/alerts" + query) if a["labels"].get("incident_id") == incident_id]


def test_alerts_shape_open_and_resolved():
    now = datetime(2026, 11, 27, 3, 0, 5, tzinfo=timezone.utc)
    opened = {"incident_id": "inc-1", "cluster": "prod-eu", "kind": "broker_isolated", "severity": "critical",
              "entity": "broker-3", "status": "open", "transition": "opened",
              "first_seen": "2026-11-27T01:12:00Z", "last_seen": "2026-11-27T02:58:00Z", "resolved_at": None,
              "evidence": "no heartbeat for 12 min", "known_bug": "KAFKA-4399 (fixed in 0.10.1.1)",
              "runbook": RUNBOOK, "summary": "broker-3 of prod-eu is isolated"}
    resolved = dict(opened, incident_id="inc-2", kind="zk_session_expired", severity="warning", entity=7,
                    status="resolved", transition="resolved", resolved_at="2026-11-27T02:40:00Z", known_bug=None,
                    evidence=None)
    runbook = ("The broker lost its ZooKeeper session and is out of the cluster.\n"
               "Check:\n1. Is the broker process up?\n2. Does it reach ZooKeeper?\n"
               "Do:\n1. Restart the broker.")
    assert alerts([opened, resolved], now, timedelta(hours=4)) == [
        {"labels": {"alertname": "broker_isolated", "cluster": "prod-eu", "entity": "broker-3",
                    "incident_id": "inc-1", "source": "fleethealth", "severity": "critical", "broker": "3"},
         "annotations": {"summary": "broker-3 of prod-eu is isolated",
                         "evidence": "no heartbeat for 12 min",
                         "runbook": runbook, "known_bug": "KAFKA-4399 (fixed in 0.10.1.1)"},
         "startsAt": "2026-11-27T01:12:00Z", "endsAt": "2026-11-27T07:00:05Z"},
        {"labels": {"alertname": "zk_session_expired", "cluster": "prod-eu", "entity": "7",
                    "incident_id": "inc-2", "source": "fleethealth", "severity": "warning"},
         "annotations": {"summary": "broker-3 of prod-eu is isolated", "runbook": runbook},
         "startsAt": "2026-11-27T01:12:00Z", "endsAt": "2026-11-27T02:40:00Z"},
    ]


def test_open_incident_is_active_until_ends_after(alertmanager):
    now = datetime.now(timezone.utc)
    post(alertmanager.url, alerts([incident("inc-open")], now, timedelta(seconds=30)))
    [got] = listed(alertmanager, "inc-open")
    assert got["status"]["state"] == "active"
    assert got["labels"] == {"alertname": "broker_isolated", "cluster": "prod-eu", "entity": "broker-3",
                             "incident_id": "inc-open", "source": "fleethealth", "severity": "critical", "broker": "3"}
    assert set(got["annotations"]) == {"summary", "evidence", "runbook", "known_bug"}
    assert abs((parse(got["endsAt"]) - (now + timedelta(seconds=30))).total_seconds()) <= 2


def test_still_listed_after_one_missed_run(alertmanager):
    interval = 3.0                                      # the hourly run, scaled down
    now = datetime.now(timezone.utc)
    post(alertmanager.url, alerts([incident("inc-kept")], now, timedelta(seconds=4 * interval)) +
         alerts([incident("inc-lost")], now, timedelta(seconds=interval)))   # too short: gone at a missed run
    time.sleep(1.5 * interval)                          # the next run fails: no post for more than an interval
    [kept] = listed(alertmanager, "inc-kept")
    assert kept["status"]["state"] == "active"
    assert listed(alertmanager, "inc-lost") == []


def test_resolved_post_ends_the_alert(alertmanager):
    now = datetime.now(timezone.utc)
    opened = incident("inc-resolved")
    post(alertmanager.url, alerts([opened], now, timedelta(hours=4)))
    assert [a["status"]["state"] for a in listed(alertmanager, "inc-resolved")] == ["active"]
    resolved = dict(opened, status="resolved", transition="resolved", resolved_at=iso(now - timedelta(seconds=2)))
    post(alertmanager.url, alerts([resolved], now, timedelta(hours=4)))
    # Alertmanager 0.25's GET /api/v2/alerts leaves out resolved alerts altogether, whatever the filters
    assert listed(alertmanager, "inc-resolved") == []
    assert listed(alertmanager, "inc-resolved", "?active=false&silenced=true&inhibited=true&unprocessed=true") == []


def test_post_raises_when_nothing_listens():
    import requests

    with pytest.raises(requests.exceptions.ConnectionError):
        post(f"http://127.0.0.1:{free_port()}", alerts([incident("inc-x")], datetime.now(timezone.utc),
                                                        timedelta(seconds=30)), timeout=2)


def test_post_raises_on_a_4xx(alertmanager):
    from fleethealth.notify.webhook import Refused as AirflowException

    with pytest.raises(AirflowException, match="400"):
        post(alertmanager.url + "/", [{"labels": {}, "annotations": {}}])      # no label: invalid
    opened = incident("inc-bad")
    with pytest.raises(AirflowException, match="400"):                      # ends before it starts
        post(alertmanager.url, [dict(alerts([opened], datetime.now(timezone.utc), timedelta(0))[0],
                                     endsAt=iso(datetime.now(timezone.utc) - timedelta(days=1)))])


@pytest.mark.parametrize("entity, extra", [
    ("broker-2", {"broker": "2"}), ("__consumer_offsets-38@broker-2", {"broker": "2"}),
    ("controller-3000", {"node": "3000"}), ("zk-1", {"node": "1"}), ("c1-kafka-1:jmx", {"host": "c1-kafka-1"}),
    ("quorum", {}), ("timezone", {})])
def test_labels_say_the_broker_node_or_host_of_the_entity(entity, extra):
    from fleethealth.notify.alertmanager import labels
    from fleethealth.notify.messages import host_of

    assert labels(incident("i", entity=entity)) == {
        "alertname": "broker_isolated", "cluster": "prod-eu", "entity": entity, "incident_id": "i",
        "source": "fleethealth", "severity": "critical", **extra}
    # the message's host (notify: the inventory's host of the entity's process)
    hosts = {("prod-eu", "broker-2"): "kafka-2.prod-eu", ("prod-eu", "controller-3000"): "ctl-1.prod-eu",
             ("prod-eu", "zk-1"): "zk-1.prod-eu"}
    host = host_of("prod-eu", entity, hosts)
    assert host == {"broker-2": "kafka-2.prod-eu", "__consumer_offsets-38@broker-2": "kafka-2.prod-eu",
                    "controller-3000": "ctl-1.prod-eu", "zk-1": "zk-1.prod-eu", "c1-kafka-1:jmx": "c1-kafka-1"}.get(entity)
    assert labels(incident("i", entity=entity, host=host)).get("host") == host


def test_an_inhibit_rule_by_broker_silences_the_bloat_while_the_dead_cleaner_is_active(tmp_path):
    """The rule docs/notifications.md shows: a bloated partition is explained by a dead cleaner on its broker."""
    from readme_blocks import block

    rule = block("alertmanager", "inhibit-bloat-by-dead-cleaner").text
    now = datetime.now(timezone.utc)
    dead = incident("inc-dead", kind="log_cleaner_dead", entity="broker-2")
    bloat = incident("inc-bloat", kind="offsets_partition_bloat", severity="major", entity="__consumer_offsets-38@broker-2")
    elsewhere = incident("inc-bloat-3", kind="offsets_partition_bloat", severity="major",
                         entity="__consumer_offsets-7@broker-3")
    with Alertmanager(tmp_path / "am", rule) as server:
        post(server.url, alerts([dead, bloat, elsewhere], now, timedelta(minutes=5)))
        [source] = [a["fingerprint"] for a in server.get("/api/v2/alerts") if a["labels"]["incident_id"] == "inc-dead"]
        want = {"inc-dead": ("active", []), "inc-bloat": ("suppressed", [source]), "inc-bloat-3": ("active", [])}
        assert settled(server, lambda a: (a["status"]["state"], a["status"]["inhibitedBy"]), want) == want
        # the dead cleaner resolved: the bloat pages again
        post(server.url, alerts([dict(dead, status="resolved", transition="resolved", resolved_at=iso(now))],
                                now, timedelta(minutes=5)))
        want = {"inc-bloat": "active", "inc-bloat-3": "active"}
        assert settled(server, lambda a: a["status"]["state"], want) == want


def settled(server: Alertmanager, view, want: dict, seconds: float = 10) -> dict:
    """The alerts' state by incident, once it is `want` or after `seconds`: Alertmanager's inhibitor learns
    of a posted alert from its alert stream after the POST has returned, so a GET at once can precede it
    (CI saw the bloat active beside its dead cleaner once)."""
    deadline = time.monotonic() + seconds
    while True:
        state = {a["labels"]["incident_id"]: view(a) for a in server.get("/api/v2/alerts")}
        if state == want or time.monotonic() > deadline:
            return state
        time.sleep(0.2)


def test_the_watchdog_is_active_while_runs_post_and_ends_after_two_missed_hours(tmp_path):
    """kube-prometheus's Watchdog: each notify run posts it (notify.run), whatever else it sends."""
    from fleethealth.fleet.channels import Channel
    from fleethealth.notify import alertmanager

    now = datetime.now(timezone.utc)
    with Alertmanager(tmp_path / "am") as server:
        channel = Channel("am", "alertmanager", server.url)
        assert list(alertmanager.heartbeat(channel, now)) == [None]
        [dog] = server.get("/api/v2/alerts")
        assert dog["labels"] == {"alertname": "Watchdog", "source": "fleethealth", "severity": "none"}
        assert dog["status"]["state"] == "active" and "dead man's switch" in dog["annotations"]["summary"]
        assert abs((parse(dog["endsAt"]) - (now + timedelta(hours=2))).total_seconds()) <= 2
        assert list(alertmanager.deliver(channel, [incident("inc-w")], now)) == [None]
        assert sorted(a["labels"]["alertname"] for a in server.get("/api/v2/alerts")) == ["Watchdog", "broker_isolated"]


def test_the_docs_watchdog_route_pings_the_dead_mans_switch(tmp_path):
    from readme_blocks import block

    from fleethealth.fleet.channels import Channel
    from fleethealth.notify import alertmanager
    from realservers import Receiver

    switch = Receiver()
    routes = block("alertmanager", "watchdog-route").text.replace("https://hc-ping.com/your-check-uuid", switch.url)
    try:
        with Alertmanager(tmp_path / "am", routes=routes) as server:
            assert list(alertmanager.heartbeat(Channel("am", "alertmanager", server.url), datetime.now(timezone.utc))) == [None]
            deadline = time.monotonic() + 30
            while not switch.bodies and time.monotonic() < deadline:
                time.sleep(0.2)
        [ping] = switch.bodies
        assert ping["receiver"] == "deadmans-switch" and ping["status"] == "firing"
        assert [a["labels"]["alertname"] for a in ping["alerts"]] == ["Watchdog"]
    finally:
        switch.stop()
