"""fleethealth.notify against real receivers on loopback (issue 45): what is news, retractions, one
Alertmanager alert per incident, delivery at least once with a key, deadlines, redaction, and a
channel type added from a module of its own.

Receivers: an HTTP server (webhook, Slack incoming webhook), aiosmtpd (SmtpHook) and a real
Alertmanager (tests/realservers.py). Hours are relative to the wall clock (Alertmanager keeps time by
it too); the gold tables are written by hand with delta-rs. No Spark.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake

os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")

from realservers import Alertmanager, Receiver, Smtpd, free_port  # noqa: E402
from test_notify import HISTORY_SCHEMA, INCIDENTS  # noqa: E402

from fleethealth.fleet.channels import Channel  # noqa: E402
from fleethealth.notify.channels import redact, redact_url  # noqa: E402
from fleethealth.fleet.inventory import InventoryError  # noqa: E402
from fleethealth.notify.inventory import load_inventory  # noqa: E402
from fleethealth.lake import tables as lake  # noqa: E402
from fleethealth.lake.catalog import Lakehouse  # noqa: E402
from fleethealth.notify import outbox  # noqa: E402
from fleethealth.notify.run import HISTORY, notify  # noqa: E402

UTC = timezone.utc
TS = pa.timestamp("us", tz="UTC")
HEALTH = pa.schema([("cluster", pa.string()), ("host", pa.string()), ("hour", TS)])
TOKEN = "tok3n-s3cret"
PROJECT = Path(__file__).resolve().parents[1]


def last_complete_hour() -> datetime:
    return datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=1)


# ------------------------------------------------------------------------------------------ gold by hand
def incident(iid: str, first_hour: datetime, last_hour: datetime, status: str = "open", severity: str = "major",
             kind: str = "broker_deadlock", entity: str = "broker-1", cluster: str = "prod-a") -> dict:
    return {"incident_id": iid, "cluster": cluster, "kind": kind, "severity": severity, "entity": entity,
            "status": status, "first_seen": first_hour + timedelta(minutes=5),
            "last_seen": last_hour + timedelta(minutes=50),
            "resolved_at": last_hour + timedelta(hours=1, minutes=1) if status == "resolved" else None,
            "evidence": "deadlock cycle", "known_bug": None, "first_hour": first_hour, "last_hour": last_hour,
            "hours": int((last_hour - first_hour).total_seconds() // 3600) + 1, "first_evidence": "first cycle"}


def history(inc: dict, transition: str, hour: datetime, severity: str | None = None) -> dict:
    return {**{k: inc[k] for k in ("incident_id", "cluster", "kind", "entity")}, "transition": transition,
            "severity": severity or inc["severity"], "hour": hour, "at": hour + timedelta(minutes=5),
            "evidence": "first cycle"}


def write_gold(lh: Lakehouse, incidents: list[dict], rows: list[dict], hours: list[datetime] = (),
               cluster: str = "prod-a") -> None:
    """gold.incidents and gold.incident_history whole; `hours`: gold hours published for `cluster`
    (gold.broker_health_hourly, partitioned by hour as the gold job writes it)."""
    write_deltalake(lake.table("gold.incidents").path(lh), pa.Table.from_pylist(incidents, INCIDENTS), mode="overwrite")
    write_deltalake(HISTORY.path(lh), pa.Table.from_pylist(rows, HISTORY_SCHEMA), mode="overwrite")
    if hours:
        write_deltalake(lake.table("gold.broker_health_hourly").path(lh),
                        pa.Table.from_pylist([{"cluster": cluster, "host": "k1", "hour": h} for h in hours], HEALTH),
                        mode="append", partition_by=["hour"])


def rows(lh: Lakehouse) -> dict:
    return outbox.read(lh)


def status_of(lh: Lakehouse) -> dict:
    return {k: r["status"] for k, r in rows(lh).items()}


# ------------------------------------------------------------------------------------------ receivers
@pytest.fixture(scope="module")
def am(tmp_path_factory):
    with Alertmanager(tmp_path_factory.mktemp("alertmanager")) as server:
        yield server


def active(am: Alertmanager, prefix: str) -> list[dict]:
    """Alertmanager's active alerts of this test's incidents (GET /api/v2/alerts lists no resolved one)."""
    return [a for a in am.get("/api/v2/alerts?active=true&silenced=false&inhibited=false&unprocessed=true")
            if a["labels"].get("incident_id", "").startswith(prefix) and a["status"]["state"] == "active"]


@pytest.fixture
def servers(monkeypatch, am):
    hook, slack, smtp = Receiver(), Receiver(), Smtpd()
    monkeypatch.setenv("AIRFLOW_CONN_SMTP_TEST", smtp.connection())
    monkeypatch.setenv("AIRFLOW_CONN_SLACK_TEST", slack.slack_connection())
    yield {"hook": hook, "slack": slack, "smtp": smtp, "am": am}
    for s in (hook, slack, smtp):
        s.stop()


def all_channels(servers) -> list[Channel]:
    return [Channel("hook", "webhook", servers["hook"].url + "/hook"),
            Channel("mail", "smtp", "smtp_test", to=("oncall@example.com",)),
            Channel("slack", "slack", "slack_test"),
            Channel("am", "alertmanager", servers["am"].url)]


def counts(servers) -> tuple[int, int, int]:
    return len(servers["hook"].bodies), len(servers["smtp"].messages), len(servers["slack"].bodies)


# ------------------------------------------------------------------------------------------ news
def test_a_backfill_of_last_week_pages_no_one_then_the_last_hour_pages_once(tmp_path, servers):
    """Acceptance: a backfill of hours 8 days old sends 0 messages to people, and Alertmanager holds
    the one incident still open (state, not news: issue 59); a run of the last complete hour then
    pages for what is open in it, once. A re-run that removes an
    announced incident sends one `retracted` per channel and ends its alert; an escalation leaves
    exactly one active alert, with the new severity."""
    lh, chans, p = Lakehouse.at(tmp_path / "lakehouse"), all_channels(servers), f"n{uuid.uuid4().hex[:6]}-"
    last = last_complete_hour()
    old = [last - timedelta(days=8) + timedelta(hours=i) for i in range(3)]
    still = incident(p + "still", old[0], old[2])                               # open since last week
    over = incident(p + "over", old[0], old[0], "resolved", severity="critical", kind="log_cleaner_dead")
    past = [history(still, "opened", old[0]), history(over, "opened", old[0]), history(over, "resolved", old[1])]
    write_gold(lh, [still, over], past, old)

    backfill = notify(lh, chans)
    assert counts(servers) == (0, 0, 0) and [a["labels"]["incident_id"] for a in active(servers["am"], p)] == [p + "still"]
    assert {k: s for k, s in status_of(lh).items() if k[3] == "am"} == {
        (p + "still", "opened", "major", "am"): "sent", (p + "over", "opened", "critical", "am"): "skipped",
        (p + "over", "resolved", "critical", "am"): "skipped"}        # never active there: nothing to end
    assert {s for k, s in status_of(lh).items() if k[3] != "am"} == {"skipped"} and len(status_of(lh)) == 4 * 3
    row = rows(lh)[(p + "still", "opened", "major", "hook")]
    assert row["reason"].startswith("not news: open last in ") and "more than 6 h ago" in row["reason"]
    assert "3 skipped (not news" in backfill.summary() and backfill.errors == []
    assert notify(lh, chans).summary().count("nothing new") == 4            # skipped again, not news

    # the run of the last complete hour: `still` is open in it (its cluster's gold reaches it)
    write_gold(lh, [{**still, "last_hour": last}, over], past, [last])
    live = notify(lh, chans)
    assert live.errors == [] and counts(servers) == (1, 1, 1)
    [body] = servers["hook"].bodies
    assert (body["incident_id"], body["transition"], body["idempotency_key"]) == (p + "still", "opened", p + "still:opened")
    [alert] = active(servers["am"], p)
    assert alert["labels"]["incident_id"] == p + "still" and alert["labels"]["severity"] == "major"
    assert status_of(lh)[(p + "over", "resolved", "critical", "hook")] == "skipped"    # resolved a week ago
    notify(lh, chans)
    assert counts(servers) == (1, 1, 1) and len(active(servers["am"], p)) == 1        # once

    # a re-run gives the episode another id (found earlier): the announced one is retracted
    again = {**still, "incident_id": p + "again", "first_hour": old[0] - timedelta(hours=1), "last_hour": last}
    rerun = [history(again, "opened", old[0] - timedelta(hours=1)), *past[1:]]
    write_gold(lh, [again, over], rerun)
    gone = notify(lh, chans)
    assert gone.errors == [] and "1 of them retracted" in gone.summary()
    retracted = [b for b in servers["hook"].bodies if b["transition"] == "retracted"]
    assert [(b["incident_id"], b["replaced_by"], b["idempotency_key"]) for b in retracted] == [
        (p + "still", p + "again", p + "still:retracted")]
    assert "re-identified" in retracted[0]["reason"]
    subjects = [m["Subject"].replace("\n", "") for _, m in servers["smtp"].messages]
    assert sum(s.startswith("RETRACTED MAJOR prod-a broker_deadlock broker-1") for s in subjects) == 1
    assert sum(b["text"].startswith("RETRACTED") for b in servers["slack"].bodies) == 1
    assert [a["labels"]["incident_id"] for a in active(servers["am"], p)] == [p + "again"]   # the old one ended
    assert status_of(lh)[(p + "still", "retracted", "major", "am")] == "sent"
    assert counts(servers) == (3, 3, 3)                 # the retraction and the replacement's opening
    notify(lh, chans)
    assert counts(servers) == (3, 3, 3)                 # a retraction goes once

    # escalation: the one alert of the incident carries the new severity; no second alert
    write_gold(lh, [{**again, "severity": "critical"}, over], [*rerun, history(again, "escalated", last, "critical")])
    notify(lh, chans)
    [alert] = active(servers["am"], p)
    assert alert["labels"]["incident_id"] == p + "again" and alert["labels"]["severity"] == "critical"
    assert servers["hook"].bodies[-1]["idempotency_key"] == p + "again:escalated:critical"

    # removed altogether by a re-run: retracted with no replacement, its alert ended
    write_gold(lh, [over], past[1:])
    notify(lh, chans)
    assert servers["hook"].bodies[-1]["transition"] == "retracted" and servers["hook"].bodies[-1]["replaced_by"] is None
    assert active(servers["am"], p) == []


def test_no_notify_suppresses_the_runs_own_hours_and_sends_nothing(tmp_path, servers):
    """A quiet backfill leaves a live incident of the current hour to be sent; --no-notify of a
    recent hour records that hour's transitions suppressed and sends nothing (issue 59): the others
    that are news wait for the next run that notifies."""
    lh, hook, p = Lakehouse.at(tmp_path / "lakehouse"), [Channel("hook", "webhook", servers["hook"].url)], "q-"
    last = last_complete_hour()
    old = last - timedelta(days=3)
    week = incident(p + "old", old, old, "resolved")
    write_gold(lh, [week], [history(week, "opened", old), history(week, "resolved", old + timedelta(hours=1))], [old])
    quiet = notify(lh, hook, quiet_hours=[old, old + timedelta(hours=1)])       # fleethealth backfill --no-notify
    assert quiet.channels["hook"].suppressed == 2 and servers["hook"].bodies == []

    cleaner = incident(p + "cleaner", last, last, severity="critical", kind="log_cleaner_dead")
    earlier = incident(p + "earlier", last - timedelta(hours=2), last, entity="broker-2")
    write_gold(lh, [week, cleaner, earlier],
               [history(week, "opened", old), history(week, "resolved", old + timedelta(hours=1)),
                history(earlier, "opened", last - timedelta(hours=2)), history(cleaner, "opened", last)], [last])
    result = notify(lh, hook, quiet_hours=[last])                                # run --no-notify of the last hour
    assert servers["hook"].bodies == []                                          # quiet: nothing at all
    assert status_of(lh)[(p + "cleaner", "opened", "critical", "hook")] == "suppressed"
    assert status_of(lh)[(p + "earlier", "opened", "major", "hook")] == "pending"
    assert (result.channels["hook"].suppressed, result.channels["hook"].pending) == (1, 1)
    notify(lh, hook)                                                             # the next run: the news
    assert [b["incident_id"] for b in servers["hook"].bodies] == [p + "earlier"]
    write_gold(lh, [week, cleaner, earlier], [history(cleaner, "opened", last)], [last])
    notify(lh, hook)                                                             # suppressed: never sent
    assert [b["incident_id"] for b in servers["hook"].bodies] == [p + "earlier"]


# ------------------------------------------------------------------------------------------ delivery
class Dripping:
    """An HTTP server that reads a request and answers one byte a second, for ever (or 301 at once)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/hook"
        self.stopped = False
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while not self.stopped:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._drip, args=(conn,), daemon=True).start()

    def _drip(self, conn):
        try:
            conn.recv(65536)
            for byte in b"HTTP/1.1 200 OK\r\nX-Padding: " + b"x" * 10_000:
                if self.stopped:
                    break
                conn.sendall(bytes([byte]))
                time.sleep(1)
        except OSError:
            pass
        finally:
            conn.close()

    def stop(self):
        self.stopped = True
        self.sock.close()


def test_a_redirect_and_a_dripping_receiver_fail_within_the_deadline_and_are_retried(tmp_path, servers):
    lh, p = Lakehouse.at(tmp_path / "lakehouse"), "d-"
    last = last_complete_hour()
    inc = incident(p + "i", last, last)
    write_gold(lh, [inc], [history(inc, "opened", last)], [last])
    moved, drip = Receiver(), Dripping()
    moved.status = 301
    chans = [Channel("moved", "webhook", moved.url), Channel("drip", "webhook", drip.url),
             Channel("ok", "webhook", servers["hook"].url)]
    try:
        started = time.monotonic()
        first = notify(lh, chans, send_timeout_s=3)
        took = time.monotonic() - started
        assert took < 10, took                                # the deadline is the whole send, not per read
        assert "Refused: 301" in first.channels["moved"].errors[0]
        assert "DeadlineExceeded: no outcome within 3 s" in first.channels["drip"].errors[0]
        assert first.channels["ok"].sent == 1
        state = status_of(lh)
        assert state[(p + "i", "opened", "major", "moved")] == "failed" == state[(p + "i", "opened", "major", "drip")]
        assert moved.bodies == []                             # 301: nothing arrived, and it is not counted

        moved.status = 200                                    # fixed: the next run sends them
        chans[1] = Channel("drip", "webhook", servers["hook"].url)
        second = notify(lh, chans, send_timeout_s=3)
        assert (second.channels["moved"].sent, second.channels["drip"].sent, second.channels["ok"].sent) == (1, 1, 0)
        assert set(status_of(lh).values()) == {"sent"}
        assert rows(lh)[(p + "i", "opened", "major", "drip")]["attempts"] == 2
    finally:
        moved.stop()
        drip.stop()


def test_the_notify_run_has_a_budget(tmp_path):
    """A receiver that holds every send: the run stops at its budget, the rest stays pending."""
    lh, drip, p = Lakehouse.at(tmp_path / "lakehouse"), Dripping(), "b-"
    last = last_complete_hour()
    incs = [incident(f"{p}{i}", last, last, entity=f"broker-{i}") for i in range(3)]
    write_gold(lh, incs, [history(i, "opened", last) for i in incs], [last])
    try:
        started = time.monotonic()
        result = notify(lh, [Channel("a", "webhook", drip.url), Channel("b", "webhook", drip.url)],
                        send_timeout_s=2, budget_s=3)
        assert time.monotonic() - started < 8
        assert result.channels["a"].failed == 1 and result.channels["a"].pending == 2
        assert result.channels["b"].failed + result.channels["b"].pending == 3 and result.channels["b"].sent == 0
    finally:
        drip.stop()


KILLER = """
import os, sys
from datetime import datetime, timezone
from fleethealth.fleet.channels import Channel
from fleethealth.lake.catalog import Lakehouse
from fleethealth.notify import notify
notify(Lakehouse.at(sys.argv[1]), [Channel("hook", "webhook", sys.argv[2])])
print("not killed")
"""


def test_kill_9_after_the_third_of_six_deliveries_resends_at_most_one_with_the_same_key(tmp_path):
    lh, p = Lakehouse.at(tmp_path / "lakehouse"), "k-"
    last = last_complete_hour()
    incs = [incident(f"{p}{i}", last, last, entity=f"broker-{i}") for i in range(6)]
    write_gold(lh, incs, [history(i, "opened", last) for i in incs], [last])
    receiver, victim = Receiver(), {}
    handler = receiver.server.RequestHandlerClass
    original = handler.do_POST

    # the 3rd message arrives; the notifying process dies before it gets the answer
    def do_post_kill_first(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        receiver.bodies.append(json.loads(body))
        if len(receiver.bodies) == 3 and "proc" in victim:
            os.kill(victim["proc"].pid, signal.SIGKILL)
            victim["proc"].wait()
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    handler.do_POST = do_post_kill_first
    try:
        victim["proc"] = subprocess.Popen([sys.executable, "-c", KILLER, str(lh), receiver.url],
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=os.environ.copy())
        out, err = victim["proc"].communicate(timeout=120)
        assert victim["proc"].returncode == -signal.SIGKILL, err.decode()[-2000:]
        assert len(receiver.bodies) == 3
        state = status_of(lh)
        assert sorted(state.values()) == ["pending"] * 4 + ["sent"] * 2       # 2 committed, the 3rd in flight

        del victim["proc"]
        assert notify(lh, [Channel("hook", "webhook", receiver.url)]).channels["hook"].sent == 4
        keys = [b["idempotency_key"] for b in receiver.bodies]
        assert len(keys) == 7 and len(set(keys)) == 6                        # one re-sent ...
        assert keys[2] == keys[3]                                            # ... the one in flight, same key
        assert set(status_of(lh).values()) == {"sent"}
    finally:
        handler.do_POST = original
        receiver.stop()


def test_each_message_carries_its_idempotency_key(tmp_path, servers):
    lh, p = Lakehouse.at(tmp_path / "lakehouse"), "key-"
    last = last_complete_hour()
    inc = incident(p + "i", last, last)
    write_gold(lh, [inc], [history(inc, "opened", last)], [last])
    headers = []
    handler = servers["hook"].server.RequestHandlerClass
    original = handler.do_POST

    def do_post(self):
        headers.append(self.headers.get("Idempotency-Key"))
        original(self)

    handler.do_POST = do_post
    try:
        notify(lh, all_channels(servers)[:3])
    finally:
        handler.do_POST = original
    assert servers["hook"].bodies[0]["idempotency_key"] == headers[0] == p + "i:opened"
    [(_, mail)] = servers["smtp"].messages
    assert mail["Message-ID"] == f"<{p}i.opened@fleethealth>"
    assert servers["slack"].bodies[0]["text"].endswith(f"key: {p}i:opened")


# ------------------------------------------------------------------------------------------ redaction
def test_redact_url_and_text():
    assert redact_url(f"https://h.example.com:8443/hooks/{TOKEN}?k={TOKEN}") == "https://h.example.com:8443/…"
    assert redact_url("http://127.0.0.1:9093") == "http://127.0.0.1:9093"
    assert redact_url(f"smtp://user:{TOKEN}@mail") == "smtp://mail/…"
    text = f"HTTPConnectionPool(host='h', port=1): Max retries exceeded with url: /hooks/{TOKEN}?k={TOKEN}"
    assert TOKEN not in redact(text, [f"https://h/hooks/{TOKEN}?k={TOKEN}"])
    assert redact(f"see https://x.example/{TOKEN} now") == "see https://x.example/… now"


INVENTORY = """\
clusters:
  - name: prod-a
    root: /archive
    hosts:
      - {{host: k1, role: kafka, broker_id: 1, kafka_version: 2.8.1}}
notifications:
  - {{name: hook, webhook: "http://127.0.0.1:{dead}/hooks/{token}?token={token}"}}
  - {{name: refusing, webhook: "{refusing}/hooks/{token}?token={token}"}}
  - {{name: mail, smtp_conn_id: smtp_secret, to: [oncall@example.com]}}
  - {{name: slack, slack_conn_id: slack_secret}}
  - {{name: am, alertmanager: "http://127.0.0.1:{dead}/{token}"}}
  - {{name: am-path, alertmanager: "{am}/{token}"}}
"""


def test_a_token_in_every_channels_url_appears_in_no_table_log_xcom_or_report(tmp_path, servers, monkeypatch,
                                                                                 caplog, capsys):
    import logging

    caplog.set_level(logging.INFO)
    dead = free_port()
    refusing = Receiver()
    refusing.status = 500
    monkeypatch.setenv("AIRFLOW_CONN_SMTP_SECRET", json.dumps({
        "conn_type": "smtp", "host": "127.0.0.1", "port": dead, "login": "fleethealth", "password": TOKEN,
        "extra": {"disable_tls": True, "disable_ssl": True, "retry_limit": 0, "timeout": 2}}))
    monkeypatch.setenv("AIRFLOW_CONN_SLACK_SECRET", json.dumps({
        "conn_type": "slackwebhook", "host": f"http://127.0.0.1:{dead}", "password": f"services/{TOKEN}"}))
    path = tmp_path / "inventory.yaml"
    path.write_text(INVENTORY.format(dead=dead, token=TOKEN, refusing=refusing.url, am=servers["am"].url))
    lh = Lakehouse.at(tmp_path / "lakehouse")
    last = last_complete_hour()
    inc = incident("r-i", last, last)
    write_gold(lh, [inc], [history(inc, "opened", last)])     # news by its last_hour (no health table: the report)
    try:
        channels = load_inventory(path).notifications
        result = notify(lh, channels)
        assert len(result.errors) == 6, result.summary()          # every channel failed, each with its error
        # the DAG's notify task: what it prints (the task log) and returns (XCom)
        from airflow.dag_processing.dagbag import DagBag

        task = DagBag(dag_folder=str(PROJECT / "dags")).dags["fleet_health_hourly"].get_task("notify")
        xcom = task.python_callable(params={"inventory": str(path), "lakehouse": str(tmp_path / "lakehouse")})
        assert "failed" in xcom
        from fleethealth.report import html

        index = html.write_report(lh, last - timedelta(hours=23), last + timedelta(hours=1))
    finally:
        refusing.stop()
    stored = json.dumps([{k: str(v) for k, v in r.items()} for r in rows(lh).values()])
    assert "last_error" in stored and "127.0.0.1" in stored                 # the host stays, for diagnosis
    printed = capsys.readouterr()
    report = "".join(p.read_text(errors="replace") for p in Path(index).parent.rglob("*") if p.is_file())
    for where, text in (("gold.notifications", stored), ("summary", result.summary()), ("log", caplog.text),
                        ("stdout", printed.out + printed.err), ("XCom", xcom), ("report", report)):
        assert TOKEN not in text, f"{where}: {text}"
    assert "ConnectionError" in result.channels["hook"].errors[0] and "Refused: 500" in result.channels["refusing"].errors[0]


# ------------------------------------------------------------------------------------------ the seam
PAGER = '''
"""A deployment's channel type: a pager that takes JSON with a routing key."""
from fleethealth.notify.channels import Url
from fleethealth.notify.webhook import post_json
from fleethealth.runtime.validation import Schema, required

TYPE = "pager"
KEY = "pager"


class Settings(Schema):
    pager: Url = required()
    routing_key: str = required()


def deliver(channel, messages, now):
    for msg in messages:
        try:
            post_json(channel.target, {"routing_key": channel.option("routing_key"),
                                       "dedup_key": msg["idempotency_key"], "payload": msg})
        except Exception as exc:
            yield exc
        else:
            yield None
'''


def test_a_channel_type_from_a_module_of_its_own(tmp_path, servers, monkeypatch):
    (tmp_path / "pager_channel.py").write_text(PAGER)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("FLEETHEALTH_NOTIFY_CHANNEL_MODULES", "pager_channel")
    inv = tmp_path / "inventory.yaml"
    head = INVENTORY.split("notifications:")[0].replace("{{", "{").replace("}}", "}")
    inv.write_text(head + f"notifications:\n  - {{name: p, pager: '{servers['hook'].url}', routing_key: R1}}\n")
    [channel] = load_inventory(inv).notifications
    assert (channel.type, channel.target, channel.option("routing_key")) == ("pager", servers["hook"].url, "R1")

    inv.write_text(head + "notifications:\n  - {name: p, pager: 'ftp://x', routing_key: R1, to: [a@b]}\n")
    with pytest.raises(InventoryError) as err:              # its own validation, and the others' keys
        load_inventory(inv)
    assert sorted(line.split(": ", 1)[1] for line in err.value.problems) == [
        "notifications[p].pager: expected an http:// or https:// URL with a host",
        "notifications[p].to: only with smtp_conn_id"]
    inv.write_text(head + "notifications:\n  - {name: p}\n")
    with pytest.raises(InventoryError, match="smtp_conn_id, slack_conn_id, alertmanager, pager"):
        load_inventory(inv)

    lh, last = Lakehouse.at(tmp_path / "lakehouse"), last_complete_hour()
    inc = incident("pg-i", last, last)
    write_gold(lh, [inc], [history(inc, "opened", last)], [last])
    assert notify(lh, [channel]).channels["p"].sent == 1
    [body] = servers["hook"].bodies
    assert (body["routing_key"], body["dedup_key"], body["payload"]["transition"]) == ("R1", "pg-i:opened", "opened")
