"""fleethealth.notify: incident transitions sent at least once, with a key, per channel through gold.notifications.

Real receivers on loopback, started and stopped here: an HTTP server for the webhook and for the
Slack incoming webhook (SlackWebhookHook), and an aiosmtpd SMTP server (SmtpHook); the connections
come from AIRFLOW_CONN_* variables, as `fleethealth run` outside an Airflow task gets them. The gold
tables are written by hand with delta-rs between runs. No Spark.
"""
from __future__ import annotations

import os
import textwrap
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake

os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")

from realservers import Receiver, Smtpd  # noqa: E402

from fleethealth.lake.catalog import Lakehouse
from fleethealth.fleet.inventory import InventoryError  # noqa: E402
from fleethealth.notify.inventory import load_inventory  # noqa: E402
from fleethealth.lake import tables as lake  # noqa: E402
from fleethealth.notify import messages, outbox  # noqa: E402
from fleethealth.fleet.channels import Channel  # noqa: E402
from fleethealth.notify.run import HISTORY  # noqa: E402
from fleethealth.notify.run import notify as _notify  # noqa: E402

UTC = timezone.utc
H = datetime(2026, 11, 21, 6, tzinfo=UTC)
TS = pa.timestamp("us", tz="UTC")
INCIDENTS = pa.schema([(c, pa.string()) for c in ("incident_id", "cluster", "kind", "severity", "entity", "status")]
                      + [(c, TS) for c in ("first_seen", "last_seen", "resolved_at")]
                      + [("evidence", pa.string()), ("known_bug", pa.string()), ("first_hour", TS),
                         ("last_hour", TS), ("hours", pa.int32()), ("first_evidence", pa.string())])
HISTORY_SCHEMA = pa.schema([(c, pa.string()) for c in ("incident_id", "cluster", "kind", "entity", "transition",
                                                        "severity")]
                           + [("hour", TS), ("at", TS), ("evidence", pa.string())])
NOW = H + timedelta(hours=4)     # the wall clock of these runs: hours H.. are news
DEADLOCK = dict(incident_id="i1", cluster="prod-a", kind="broker_deadlock", entity="broker-219", known_bug="KAFKA-4399")


def notify(lakehouse, channels, **kw):
    return _notify(lakehouse, channels, now=kw.pop("now", NOW), **kw)


@pytest.fixture
def servers(monkeypatch):
    hook, slack, smtp = Receiver(), Receiver(), Smtpd()
    monkeypatch.setenv("AIRFLOW_CONN_SMTP_TEST", smtp.connection())
    monkeypatch.setenv("AIRFLOW_CONN_SLACK_TEST", slack.slack_connection())
    yield {"hook": hook, "slack": slack, "smtp": smtp}
    for s in (hook, slack, smtp):
        s.stop()


def channels(servers) -> list[Channel]:
    return [Channel("oncall-hook", "webhook", servers["hook"].url + "/hook"),
            Channel("oncall-mail", "smtp", "smtp_test", to=("oncall@example.com",)),
            Channel("oncall-slack", "slack", "slack_test")]


# ------------------------------------------------------------------------------------------ gold tables
def incident(status="open", severity="major", evidence="deadlock cycle", resolved_at=None, **over) -> dict:
    return {**DEADLOCK, "severity": severity, "status": status, "first_seen": H + timedelta(minutes=5),
            "last_seen": H + timedelta(hours=2, minutes=50), "resolved_at": resolved_at, "evidence": evidence,
            "first_hour": H, "last_hour": H + timedelta(hours=2), "hours": 3, "first_evidence": "first cycle", **over}


def transition(name: str, severity: str, hours: int = 0, evidence="first cycle", **over) -> dict:
    row = {k: DEADLOCK[k] for k in ("incident_id", "cluster", "kind", "entity")}
    return {**row, "transition": name, "severity": severity, "hour": H + timedelta(hours=hours),
            "at": H + timedelta(hours=hours, minutes=5), "evidence": evidence, **over}


def write_gold(lakehouse: Path, incidents: list[dict], history: list[dict]) -> None:
    write_deltalake(lake.table("gold.incidents").path(Lakehouse.at(lakehouse)), pa.Table.from_pylist(incidents, INCIDENTS),
                    mode="overwrite")
    write_deltalake(HISTORY.path(Lakehouse.at(lakehouse)), pa.Table.from_pylist(history, HISTORY_SCHEMA), mode="overwrite")


def delivered(servers) -> tuple[int, int, int]:
    return len(servers["hook"].bodies), len(servers["smtp"].messages), len(servers["slack"].bodies)


def statuses(lakehouse) -> dict:
    return {k: (r["status"], r["attempts"]) for k, r in outbox.read(Lakehouse.at(lakehouse)).items()}


# ------------------------------------------------------------------------------------------ the scenario
def test_each_transition_reaches_each_channel_once_and_a_refusal_is_retried(tmp_path, servers):
    lh, chans = tmp_path / "lakehouse", channels(servers)
    assert notify(Lakehouse.at(lh), chans).channels["oncall-hook"].sent == 0       # no gold yet: nothing to do
    opened = transition("opened", "major")
    write_gold(lh, [incident()], [opened])

    first = notify(Lakehouse.at(lh), chans, hosts={("prod-a", "broker-219"): "kafka-219.prod-a"})   # run 1
    assert delivered(servers) == (1, 1, 1)
    assert [r.sent for r in first.channels.values()] == [1, 1, 1] and first.errors == []
    body = servers["hook"].bodies[0]
    assert list(body) == list(messages.FIELDS)
    assert body["transition"] == "opened" and body["status"] == "open" and body["severity"] == "major"
    assert body["evidence"] == "first cycle"                          # 'opened': the history row's evidence
    assert (body["entity"], body["host"]) == ("broker-219", "kafka-219.prod-a")   # where to ssh to
    assert body["known_bug"] == "matches KAFKA-4399 (Deadlock between cleanupGroupMetadata and offset commit), fixed in 0.10.1.1"
    assert body["first_seen"] == "2026-11-21T06:05:00Z" and body["resolved_at"] is None
    assert body["runbook"]["check"][0].startswith("the cycle's threads") and body["runbook"]["do"]
    assert body["summary"] == ("OPENED MAJOR prod-a broker_deadlock broker-219: first cycle | matches KAFKA-4399 "
                               "(Deadlock between cleanupGroupMetadata and offset commit), fixed in 0.10.1.1 | "
                               f"check first: {body['runbook']['check'][0]}")
    [(to, mail)] = servers["smtp"].messages
    assert to == ["oncall@example.com"] and len(body["summary"]) > 200      # the subject: cut at 200
    assert mail["Subject"].replace("\n", "") == body["summary"][:197] + "..."
    text = mail.get_payload()[0].get_payload(decode=True).decode()
    assert "known_bug: matches KAFKA-4399 (Deadlock between cleanupGroupMetadata and offset commit), fixed in 0.10.1.1" in text and "  1. the cycle&#x27;s threads" in text
    assert servers["slack"].bodies[0]["text"].startswith("OPENED MAJOR prod-a broker_deadlock broker-219")

    again = notify(Lakehouse.at(lh), chans)                                        # run 2: same tables
    assert delivered(servers) == (1, 1, 1)
    assert [(r.sent, r.already) for r in again.channels.values()] == [(0, 1)] * 3
    assert "nothing new" in again.summary()

    escalated = transition("escalated", "critical", 1, evidence="second cycle")
    write_gold(lh, [incident(severity="critical", evidence="cycle now")], [opened, escalated])
    servers["hook"].status = 503                                      # run 3: the webhook refuses
    third = notify(Lakehouse.at(lh), chans)
    hook_key = ("i1", "escalated", "critical", "oncall-hook")
    row = outbox.read(Lakehouse.at(lh))[hook_key]
    assert (row["status"], row["attempts"]) == ("failed", 1) and "503" in row["last_error"]
    assert third.channels["oncall-hook"].failed == 1 and third.channels["oncall-mail"].sent == 1
    assert "oncall-hook 1 failed (Refused: 503" in third.summary() and "retried next run" in third.summary()

    servers["hook"].status = 200                                      # run 4: back
    fourth = notify(Lakehouse.at(lh), chans)
    assert fourth.channels["oncall-hook"].sent == 1 and fourth.channels["oncall-mail"].sent == 0
    assert delivered(servers) == (2, 2, 2)
    esc = servers["hook"].bodies[1]
    assert esc["transition"] == "escalated" and esc["severity"] == "critical" and esc["evidence"] == "cycle now"
    assert esc["summary"].startswith("ESCALATED to CRITICAL prod-a broker_deadlock broker-219: cycle now")
    assert statuses(lh)[hook_key] == ("sent", 2)

    resolved_at = H + timedelta(hours=3, minutes=1)                    # run 5: resolved
    resolved = transition("resolved", "critical", 3, evidence="cycle now", at=resolved_at)
    write_gold(lh, [incident("resolved", "critical", "cycle now", resolved_at)], [opened, escalated, resolved])
    notify(Lakehouse.at(lh), chans)
    assert delivered(servers) == (3, 3, 3)
    last = servers["hook"].bodies[2]
    assert last["status"] == "resolved" and last["resolved_at"] == "2026-11-21T09:01:00Z"
    assert last["summary"].startswith("RESOLVED CRITICAL")
    notify(Lakehouse.at(lh), chans)
    assert delivered(servers) == (3, 3, 3)


def test_receiver_down_and_a_quiet_backfill(tmp_path, servers):
    lh, chans = tmp_path / "lakehouse", channels(servers)
    write_gold(lh, [incident()], [transition("opened", "major")])
    quiet = notify(Lakehouse.at(lh), chans, quiet_hours=[H])      # --no-notify of hour H
    assert [r.suppressed for r in quiet.channels.values()] == [1, 1, 1]
    assert delivered(servers) == (0, 0, 0)
    assert notify(Lakehouse.at(lh), chans).channels["oncall-hook"].already == 1     # suppressed stays unsent
    assert delivered(servers) == (0, 0, 0)

    rows = [transition("opened", "major"), transition("escalated", "critical", 1),
            transition("resolved", "critical", 2)]
    write_gold(lh, [incident("resolved", "critical", resolved_at=H + timedelta(hours=2))], rows)
    servers["hook"].stop()                                            # receiver down
    servers["smtp"].stop()
    down = notify(Lakehouse.at(lh), chans)
    hook, mail = down.channels["oncall-hook"], down.channels["oncall-mail"]
    assert (hook.failed, hook.pending, mail.failed, mail.pending) == (1, 1, 1, 1)   # stops at the first
    assert "ConnectionError" in hook.errors[0] and "ConnectionRefusedError" in mail.errors[0]
    assert down.channels["oncall-slack"].sent == 2
    state = statuses(lh)
    assert state[("i1", "escalated", "critical", "oncall-hook")] == ("failed", 1)
    assert state[("i1", "resolved", "critical", "oncall-hook")] == ("pending", 0)
    assert state[("i1", "opened", "major", "oncall-hook")] == ("suppressed", 0)

    receiver = Receiver()                                             # back, elsewhere
    chans[0] = Channel("oncall-hook", "webhook", receiver.url)
    try:
        notify(Lakehouse.at(lh), chans)
        assert [b["transition"] for b in receiver.bodies] == ["escalated", "resolved"]   # in order
    finally:
        receiver.stop()


def test_filters(tmp_path, servers):
    lh = tmp_path / "lakehouse"
    other = dict(incident_id="i2", cluster="prod-b", kind="log_cleaner_dead", entity="broker-3", known_bug=None)
    write_gold(lh, [incident(), incident(**other, severity="minor")],
               [transition("opened", "major"), transition("opened", "minor", **{k: other[k] for k in
                                                                                 ("incident_id", "cluster", "kind", "entity")})])
    url = servers["hook"].url
    result = notify(Lakehouse.at(lh), [Channel("major", "webhook", url, min_severity="major"),
                         Channel("prod-b", "webhook", url, clusters=("prod-b",)),
                         Channel("cleaner", "webhook", url, kinds=("log_cleaner_dead",)),
                         Channel("not-b", "webhook", url, exclude_clusters=("prod-b",)),
                         Channel("no-cleaner", "webhook", url, exclude_kinds=("log_cleaner_dead",)),
                         Channel("all", "webhook", url)])
    assert {n: r.sent for n, r in result.channels.items()} == {"major": 1, "prod-b": 1, "cleaner": 1, "not-b": 1,
                                                                "no-cleaner": 1, "all": 2}
    ids = [b["incident_id"] for b in servers["hook"].bodies]
    assert sorted(ids) == ["i1", "i1", "i1", "i1", "i2", "i2", "i2"]
    [cleaner] = [b for b in servers["hook"].bodies if b["kind"] == "log_cleaner_dead"][:1]
    assert cleaner["known_bug"] is None


CAUSED_BY = pa.list_(pa.struct([("kind", pa.string()), ("entity", pa.string()), ("first_seen", pa.timestamp("us"))]))


def test_roots_only_gets_the_roots_and_a_root_names_what_it_explains(tmp_path, servers):
    """Issue 62 item 4: a `roots_only` channel gets the dead cleaner, not the bloat it explains (recorded
    skipped, with why); every message says what explains it or what it explains; once nothing explains the
    bloat (a re-run dropped its cause), the roots_only channel gets it."""
    lh = tmp_path / "lakehouse"
    cleaner = dict(incident_id="c1", cluster="prod-a", kind="log_cleaner_dead", entity="broker-2", known_bug=None)
    bloat = dict(incident_id="b1", cluster="prod-a", kind="offsets_partition_bloat",
                 entity="__consumer_offsets-38@broker-2", known_bug=None)
    by_cleaner = [{"kind": "log_cleaner_dead", "entity": "broker-2", "first_seen": (H + timedelta(minutes=5)).replace(tzinfo=None)}]
    schema = INCIDENTS.append(pa.field("caused_by", CAUSED_BY))

    def write(bloat_caused_by):
        rows = [incident(**cleaner, severity="critical", caused_by=[]), incident(**bloat, caused_by=bloat_caused_by)]
        write_deltalake(lake.table("gold.incidents").path(Lakehouse.at(lh)), pa.Table.from_pylist(rows, schema),
                        mode="overwrite")
        write_deltalake(HISTORY.path(Lakehouse.at(lh)), pa.Table.from_pylist(
            [transition("opened", r["severity"], **{k: r[k] for k in ("incident_id", "cluster", "kind", "entity")})
             for r in rows], HISTORY_SCHEMA), mode="overwrite")

    write(by_cleaner)
    url = servers["hook"].url
    chans = [Channel("roots", "webhook", url, roots_only=True), Channel("all", "webhook", url)]
    result = notify(Lakehouse.at(lh), chans)
    assert {n: r.sent for n, r in result.channels.items()} == {"roots": 1, "all": 2}
    bodies = servers["hook"].bodies
    assert sorted(b["incident_id"] for b in bodies) == ["b1", "c1", "c1"]
    [root] = {b["incident_id"]: b for b in bodies if b["incident_id"] == "c1"}.values()
    assert root["caused_by"] == []
    assert root["explains"] == [{"kind": "offsets_partition_bloat", "entity": "__consumer_offsets-38@broker-2",
                                 "first_seen": "2026-11-21T06:05:00Z"}]
    assert " | explains offsets_partition_bloat __consumer_offsets-38@broker-2 (since 06:05Z)" in root["summary"]
    [effect] = [b for b in bodies if b["incident_id"] == "b1"]
    assert effect["caused_by"] == [{"kind": "log_cleaner_dead", "entity": "broker-2", "first_seen": "2026-11-21T06:05:00Z"}]
    assert " | caused by log_cleaner_dead broker-2 (since 06:05Z)" in effect["summary"]
    skipped = [r for r in outbox.read(Lakehouse.at(lh)).values() if r["channel"] == "roots" and r["incident_id"] == "b1"]
    assert [(r["status"], r["reason"]) for r in skipped] == [
        ("skipped", "roots_only: caused by log_cleaner_dead broker-2 (since 06:05Z)")]
    write([])
    result = notify(Lakehouse.at(lh), chans)
    assert {n: r.sent for n, r in result.channels.items()} == {"roots": 1, "all": 0}
    assert servers["hook"].bodies[-1]["incident_id"] == "b1"


def test_a_maintenance_window_holds_people_s_pages_and_sends_the_still_open_incident_once_after_it(tmp_path, servers):
    """Issue 62 item 6: in a window of prod-a nothing reaches people (held, with why); after it the incident
    still open is sent once (its latest transition), one opened and resolved within it never; Alertmanager
    has the alert all along, labelled `maintenance` so a silence on it applies."""
    from fleethealth.fleet.maintenance import Window

    lh = tmp_path / "lakehouse"
    window = Window("prod-a", H, H + timedelta(hours=3), "broker upgrade CHG-1234")
    brief = dict(incident_id="i2", cluster="prod-a", kind="log_cleaner_dead", entity="broker-3")
    write_gold(lh, [incident(), incident(**brief, known_bug=None, status="resolved", resolved_at=H + timedelta(hours=2))],
               [transition("opened", "major"), transition("escalated", "critical", 1),
                transition("opened", "major", 1, **brief), transition("resolved", "major", 2, **brief)])
    am = Receiver()
    try:
        chans = [Channel("oncall", "webhook", servers["hook"].url), Channel("am", "alertmanager", am.url)]
        during = notify(Lakehouse.at(lh), chans, now=H + timedelta(hours=2, minutes=30), maintenance=[window])
        assert servers["hook"].bodies == [] and during.channels["oncall"].held == 4
        assert "4 held" in during.summary()
        rows = {(r["incident_id"], r["transition"]): (r["status"], r["reason"])
                for r in outbox.read(Lakehouse.at(lh)).values() if r["channel"] == "oncall"}
        assert rows[("i1", "opened")] == ("pending", "held until the end of the maintenance of prod-a "
                                          "2026-11-21 06:00+0000 – 2026-11-21 09:00+0000: broker upgrade CHG-1234")
        alerts = [a for body in am.bodies for a in body if a["labels"]["alertname"] == "broker_deadlock"]
        assert alerts and {a["labels"].get("maintenance") for a in alerts} == {"broker upgrade CHG-1234"}

        after = notify(Lakehouse.at(lh), chans, now=H + timedelta(hours=3, minutes=10), maintenance=[window])
        assert [(b["incident_id"], b["transition"], b["maintenance"]) for b in servers["hook"].bodies] == [
            ("i1", "escalated", "broker upgrade CHG-1234")]
        assert after.channels["oncall"].sent == 1 and after.channels["oncall"].skipped == 3
        rows = {(r["incident_id"], r["transition"]): (r["status"], r["reason"])
                for r in outbox.read(Lakehouse.at(lh)).values() if r["channel"] == "oncall"}
        assert rows[("i2", "opened")][0] == rows[("i2", "resolved")][0] == rows[("i1", "opened")][0] == "skipped"
        assert rows[("i2", "opened")][1].startswith("resolved before the end of the maintenance of prod-a")
        again = notify(Lakehouse.at(lh), chans, now=H + timedelta(hours=3, minutes=20), maintenance=[window])
        assert again.channels["oncall"].sent == 0 and len(servers["hook"].bodies) == 1
    finally:
        am.stop()


def test_alertmanager_posts_open_incidents_every_run_and_a_resolution_once(tmp_path, monkeypatch):
    from fleethealth.notify import alertmanager

    posts, fail = [], []

    def alerts(incidents, now, ends_after):
        assert ends_after == timedelta(hours=4)
        return [{"id": i["incident_id"], "status": i["status"], "transition": i["transition"]} for i in incidents]

    def post(url, payload, timeout=None):
        if fail:
            raise ConnectionRefusedError(111, "Connection refused")
        posts.append((url, payload))

    monkeypatch.setattr(alertmanager, "alerts", alerts)
    monkeypatch.setattr(alertmanager, "post", post)
    lh, am = tmp_path / "lakehouse", [Channel("am", "alertmanager", "http://127.0.0.1:9093")]
    write_gold(lh, [incident()], [transition("opened", "major")])
    assert notify(Lakehouse.at(lh), am).channels["am"].sent == 1
    assert notify(Lakehouse.at(lh), am).channels["am"].sent == 0
    # re-posted, each run then its Watchdog (active as long as fleethealth runs)
    assert [[a.get("id") or a["labels"]["alertname"] for a in p] for _, p in posts] == [["i1"], ["Watchdog"]] * 2
    assert posts[0][1] == [{"id": "i1", "status": "open", "transition": "opened"}]

    write_gold(lh, [incident("resolved", resolved_at=H + timedelta(hours=3))],
               [transition("opened", "major"), transition("resolved", "major", 3)])
    fail.append(1)
    down = notify(Lakehouse.at(lh), am)
    assert down.channels["am"].failed == 1 and "ConnectionRefusedError" in down.summary()
    fail.clear()
    notify(Lakehouse.at(lh), am)
    assert posts[-2][1] == [{"id": "i1", "status": "resolved", "transition": "resolved"}]
    assert statuses(lh)[("i1", "resolved", "major", "am")] == ("sent", 2)
    count = len(posts)
    result = notify(Lakehouse.at(lh), am)
    assert [[a["labels"]["alertname"] for a in p] for _, p in posts[count:]] == [["Watchdog"]]   # resolved and told
    assert result.channels["am"].sent == 0 and result.errors == []
    fail.append(1)
    assert "ConnectionRefusedError" in " ".join(notify(Lakehouse.at(lh), am).errors)   # a lost heartbeat is said


def test_messages_escape_control_characters_and_naive_timestamps_are_utc():
    h = transition("opened", "critical", evidence="line one\nFORGED\x1b[31m <b>&")
    msg = messages.message({**h, "at": h["at"].replace(tzinfo=None)}, None)
    assert "\n" not in msg["summary"] and "\\n" in msg["evidence"] and "\\x1b" in msg["evidence"]
    assert msg["first_seen"] == "2026-11-21T06:05:00Z" and msg["status"] == "open"
    assert "&lt;b&gt;&amp;" in messages.slack_text(msg)
    subject, body = messages.email({**msg, "summary": "x" * 300})
    assert len(subject) == 200 and "&lt;b&gt;" in body


def test_the_outbox_is_catalogued_but_not_gated():
    assert lake.table("gold.notifications").hourly is False
    assert "gold.notifications" not in lake.layer_tables("gold")
    assert "gold.quality_results" not in lake.layer_tables("gold")


# ------------------------------------------------------------------------------------------ inventory
INVENTORY = """\
clusters:
  - name: prod-a
    root: /archive
    hosts:
      - {host: k1, role: kafka, broker_id: 1, kafka_version: 2.8.1}
"""


def write_inventory(tmp_path: Path, notifications: str) -> Path:
    path = tmp_path / "inventory.yaml"
    path.write_text(INVENTORY + "notifications:\n" + textwrap.indent(textwrap.dedent(notifications), "  "))
    return path


def test_a_valid_notifications_block(tmp_path):
    inv = load_inventory(write_inventory(tmp_path, """\
        - name: oncall-hook
          webhook: http://127.0.0.1:9000/hook
        - name: oncall-mail
          smtp_conn_id: smtp_oncall
          to: [oncall@example.com]
          min_severity: major
        - name: oncall-slack
          slack_conn_id: slack_oncall
          clusters: [prod-a]
          kinds: [log_cleaner_dead]
        - name: quiet-hook
          webhook: http://127.0.0.1:9000/quiet
          exclude_clusters: [prod-a]
          exclude_kinds: [data_missing, host_silent]
          roots_only: true
        - name: am
          alertmanager: https://am.example.com:9093
          ends_after_seconds: 7200
        """))
    assert inv.notifications == (
        Channel("oncall-hook", "webhook", "http://127.0.0.1:9000/hook"),
        Channel("oncall-mail", "smtp", "smtp_oncall", to=("oncall@example.com",), min_severity="major"),
        Channel("oncall-slack", "slack", "slack_oncall", clusters=("prod-a",), kinds=("log_cleaner_dead",)),
        Channel("quiet-hook", "webhook", "http://127.0.0.1:9000/quiet", exclude_clusters=("prod-a",),
                exclude_kinds=("data_missing", "host_silent"), roots_only=True),
        Channel("am", "alertmanager", "https://am.example.com:9093", ends_after_seconds=7200))
    assert load_inventory(tmp_path / "inventory.yaml").clusters[0].name == "prod-a"


@pytest.mark.parametrize("entry, expected", [
    ("{name: a, webhook: 'ftp://h/x'}", "notifications[a].webhook: expected an http:// or https:// URL with a host"),
    ("{name: a, webhook: 'http://u:pw1234@h/x'}", "notifications[a].webhook: must not carry credentials"),
    ("{name: a, alertmanager: 'not a url'}", "notifications[a].alertmanager: expected an http:// or https://"),
    ("{name: a}", "notifications[a]: expected exactly one of webhook, smtp_conn_id, slack_conn_id, alertmanager"),
    ("{name: a, webhook: 'http://h', slack_conn_id: s}", "got webhook and slack_conn_id"),
    ("{name: a, webhok: 'http://h'}", "notifications[a].webhok: unknown key (did you mean webhook?)"),
    ("{name: a, smtp_conn_id: m}", "notifications[a].to: expected a non-empty list of e-mail addresses"),
    ("{name: a, webhook: 'http://h', to: [x@y]}", "notifications[a].to: only with smtp_conn_id"),
    ("{name: a, webhook: 'http://h', ends_after_seconds: 7200}", "ends_after_seconds: only with alertmanager"),
    ("{name: a, alertmanager: 'http://h', ends_after_seconds: 60}", "expected an integer >= 3600"),
    ("{name: a, webhook: 'http://h', min_severity: urgent}", "notifications[a].min_severity: unknown severity 'urgent'"),
    ("{name: a, webhook: 'http://h', clusters: [prod-z]}", "notifications[a].clusters: unknown cluster 'prod-z'"),
    ("{name: a, webhook: 'http://h', kinds: [cleaner_dead]}", "notifications[a].kinds: unknown kind 'cleaner_dead'"),
    ("{name: a, webhook: 'http://h', exclude_kinds: [cleaner_dead]}",
     "notifications[a].exclude_kinds: unknown kind 'cleaner_dead'"),
    ("{name: a, webhook: 'http://h', exclude_clusters: [prod-z]}",
     "notifications[a].exclude_clusters: unknown cluster 'prod-z'"),
    ("{name: a, webhook: 'http://h', exclude_clusters: []}", "notifications[a].exclude_clusters: expected a non-empty list"),
    ("{name: 'a b', webhook: 'http://h'}", "notifications[0].name: expected a channel name"),
    ("{name: a, webhook: 'http://h', roots_only: 'yes'}", "notifications[a].roots_only: expected true or false, got 'yes'"),
    ("{name: a, slack_conn_id: 'x y'}", "notifications[a].slack_conn_id: expected an Airflow connection id"),
])
def test_each_mistake_is_one_line(tmp_path, entry, expected):
    path = write_inventory(tmp_path, f"- {entry}\n")
    with pytest.raises(InventoryError) as err:
        load_inventory(path)
    [line] = err.value.problems
    assert line.startswith(f"{path}: ") and expected in line, line
    assert "pw1234" not in line


def test_maintenance_windows_in_the_inventory(tmp_path):
    from fleethealth.fleet.maintenance import Window

    path = tmp_path / "inventory.yaml"
    path.write_text(INVENTORY + textwrap.dedent("""\
        maintenance:
          - {cluster: prod-a, from: 2026-11-21T06:00:00Z, to: "2026-11-21T09:00:00+01:00", reason: upgrade}
          - {cluster: prod-a, hosts: [k1], from: 2026-11-22T06:00:00Z, to: 2026-11-22T07:00:00Z, reason: disk swap}
        """))
    utc = timezone.utc
    assert load_inventory(path).maintenance == (
        Window("prod-a", datetime(2026, 11, 21, 6, tzinfo=utc), datetime(2026, 11, 21, 8, tzinfo=utc), "upgrade"),
        Window("prod-a", datetime(2026, 11, 22, 6, tzinfo=utc), datetime(2026, 11, 22, 7, tzinfo=utc), "disk swap",
               ("k1",)))
    path.write_text(INVENTORY + textwrap.dedent("""\
        maintenance:
          - {cluster: prod-z, from: 2026-11-21T06:00:00Z, to: 2026-11-21T09:00:00Z, reason: upgrade}
          - {cluster: prod-a, from: "2026-11-21 06:00", to: 2026-11-21T09:00:00Z, reason: upgrade}
          - {cluster: prod-a, from: 2026-11-21T09:00:00Z, to: 2026-11-21T06:00:00Z, reason: upgrade}
          - {cluster: prod-a, hosts: [k9], from: 2026-11-21T06:00:00Z, to: 2026-11-21T09:00:00Z, reason: x}
          - {cluster: prod-a, from: 2026-11-21T06:00:00Z, to: 2026-11-21T09:00:00Z}
          - {cluster: prod-a, form: 2026-11-21T06:00:00Z, to: 2026-11-21T09:00:00Z, reason: x}
        """))
    with pytest.raises(InventoryError) as err:
        load_inventory(path)
    assert [p.split(": ", 1)[1] for p in err.value.problems] == [
        "maintenance[0].cluster: unknown cluster 'prod-z' (known: prod-a)",
        "maintenance[1].from: expected a date and time with its offset, e.g. 2026-11-20T22:00:00Z or "
        "2026-11-20T23:00:00+01:00, got '2026-11-21 06:00'",
        "maintenance[2]: to: 2026-11-21T06:00:00+00:00 is not after from: 2026-11-21T09:00:00+00:00",
        "maintenance[3]: hosts: 'k9' is not a host of cluster prod-a",
        "maintenance[4].reason: expected a reason (a non-empty text), got None",
        "maintenance[5].form: unknown key (did you mean from?)"]


def test_duplicate_names_and_a_notifications_mapping(tmp_path):
    path = write_inventory(tmp_path, "- {name: a, webhook: 'http://h'}\n- {name: a, slack_conn_id: s}\n")
    with pytest.raises(InventoryError, match=r"notifications\[1\].name: duplicate channel name 'a'"):
        load_inventory(path)
    path.write_text(INVENTORY + "notifications: {name: a}\n")
    with pytest.raises(InventoryError, match="notifications: expected a list of channels"):
        load_inventory(path)
