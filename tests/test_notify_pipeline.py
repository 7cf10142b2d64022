"""Notifications after real gold runs: the lifecycle the gold job computes (hours pulled and run through
the gated jobs) sent to a webhook receiver, a real SMTP server and a real Alertmanager on loopback.

A healthy cluster for three hours; in the second hour broker 2 sends nothing (host_silent) and broker
3 no JMX (data_missing); both are back in the third. One message per state change and channel, none
on a re-run, the resolved ones when the hosts are back, a message the webhook refused sent by the
next run; Alertmanager lists the open incidents and drops them once resolved.
"""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from realservers import Alertmanager, Receiver, Smtpd

from fleethealth.lake.catalog import Lakehouse
from fleethealth.pipeline import window as pipeline
from fleethealth.fleet.inventory import load_inventory
from fleethealth.lake import tables as lake
from fleethealth.notify import notify
from fleethealth.fleet.channels import Channel
from fleethealth.pull import hour as pull
from fleethealth.simulate import simulate

pytestmark = [pytest.mark.spark, pytest.mark.slow]

H10 = datetime(2026, 11, 20, 10, tzinfo=timezone.utc)
H11, H12 = H10 + timedelta(hours=1), H10 + timedelta(hours=2)
GONE = {("healthy", "host_silent", "broker-2"), ("healthy", "data_missing", "healthy-kafka-3:jmx")}


def run(spark, inventory, lakehouse, *hours):
    for hour in hours:
        pull.pull_hour(load_inventory(inventory), hour, Lakehouse.at(lakehouse))
    out = pipeline.run_window(spark, list(hours), str(inventory), Lakehouse.at(lakehouse))
    assert not [o for o in out.values() if isinstance(o, BaseException)], out


def sent(receiver: Receiver) -> list[tuple]:
    return [(b["cluster"], b["kind"], b["entity"], b["transition"]) for b in receiver.bodies]


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    hook, smtp = Receiver(), Smtpd()
    with Alertmanager(tmp_path_factory.mktemp("alertmanager")) as am:
        yield {"hook": hook, "smtp": smtp, "am": am}
    hook.stop()
    smtp.stop()


def test_state_changes_are_sent_once_and_resolutions_reach_every_channel(spark, tmp_path, servers, monkeypatch):
    root = tmp_path
    inventory = simulate(root, ["healthy"], H10, H12 + timedelta(hours=1), jmx_samples_per_broker_hour=0)
    host = root / "fleet" / "healthy"
    # file names are local time (Europe/Berlin): hour 11 UTC is the files of 12 local
    for f in [*(host / "healthy-kafka-2").rglob("*2026-11-20-12*"), *(host / "healthy-kafka-2").rglob("*T12-*"),
              *(host / "healthy-kafka-3" / "jmx").glob("*2026-11-20-12")]:
        f.unlink()
    lakehouse = Lakehouse.at(root / "lakehouse")
    monkeypatch.setenv("AIRFLOW_CONN_SMTP_ONCALL", json.dumps({
        "conn_type": "smtp", "host": "127.0.0.1", "port": servers["smtp"].port,
        "extra": {"disable_tls": True, "disable_ssl": True, "from_email": "fleethealth@example.com",
                  "retry_limit": 0, "timeout": 5}}))
    channels = [Channel("hook", "webhook", servers["hook"].url + "/hook"),
                Channel("mail", "smtp", "smtp_oncall", to=("oncall@example.com",), min_severity="minor"),
                Channel("am", "alertmanager", servers["am"].url)]

    run(spark, inventory, lakehouse, H10, H11)
    first = notify(Lakehouse.at(lakehouse), channels)
    assert first.errors == [], first.summary()
    opened = {(c, k, e, "opened") for c, k, e in GONE}
    assert opened <= set(sent(servers["hook"])) and len(sent(servers["hook"])) == len(set(sent(servers["hook"])))
    silent = next(b for b in servers["hook"].bodies if b["kind"] == "host_silent")
    assert (silent["severity"], silent["status"], silent["first_seen"]) == ("major", "open", "2026-11-20T11:00:00Z")
    assert silent["runbook"]["check"] and silent["summary"].startswith("OPENED MAJOR healthy host_silent broker-2: ")
    mails = [m["Subject"].replace("\n", "") for _, m in servers["smtp"].messages]
    assert len(mails) == len(servers["hook"].bodies) and all(s.startswith("OPENED ") for s in mails)
    firing = {(a["labels"]["alertname"], a["labels"]["entity"]) for a in servers["am"].get("/api/v2/alerts")}
    assert {(k, e) for _, k, e in GONE} <= firing
    assert all(a["status"]["state"] == "active" for a in servers["am"].get("/api/v2/alerts"))

    before = len(servers["hook"].bodies), len(servers["smtp"].messages)
    assert notify(Lakehouse.at(lakehouse), channels).errors == []                  # the same gold again: nothing new
    run(spark, inventory, lakehouse, H11)                            # a re-run of an hour: nothing new
    assert notify(Lakehouse.at(lakehouse), channels).errors == []
    assert (len(servers["hook"].bodies), len(servers["smtp"].messages)) == before

    servers["hook"].status = 503                                     # the webhook is down for one run
    run(spark, inventory, lakehouse, H12)                            # both hosts are back
    down = notify(Lakehouse.at(lakehouse), channels)
    assert down.channels["hook"].failed == 1 and "retried next run" in down.summary()
    resolved = {(c, k, e, "resolved") for c, k, e in GONE}
    mails = [m["Subject"].replace("\n", "") for _, m in servers["smtp"].messages[before[1]:]]
    assert {tuple(s.split(" ")[i] for i in (0, 2, 3, 4)) for s in mails} == {
        ("RESOLVED", c, k, e + ":") for c, k, e in GONE}
    firing = {(a["labels"]["alertname"], a["labels"]["entity"]) for a in servers["am"].get("/api/v2/alerts")}
    assert not firing & {(k, e) for _, k, e in GONE}

    servers["hook"].status = 200                                     # back: the refused message goes now
    back = notify(Lakehouse.at(lakehouse), channels)
    assert back.errors == [] and back.channels["hook"].sent == 2
    assert set(sent(servers["hook"])[before[0]:]) == resolved
    assert notify(Lakehouse.at(lakehouse), channels).channels["hook"].sent == 0
    incidents = {(r.kind, r.entity): (r.status, r.resolved_at) for r in
                 lake.read(spark, "gold.incidents", Lakehouse.at(lakehouse)).collect()}
    assert incidents[("host_silent", "broker-2")] == ("resolved", H12.replace(tzinfo=None))
