"""Notifications after real gold runs: the lifecycle the gold job computes (hours pulled and run through
the gated jobs) sent to a webhook receiver, a real SMTP server and a real Alertmanager on loopback.

A healthy cluster for two hours: in the first broker 2 sends nothing (host_silent) and broker 3 no JMX
(data_missing); both are back in the second. One message per state change and channel, none
on a re-run, the resolved ones when the hosts are back, a message the webhook refused sent by the
next run; Alertmanager lists the open incidents and drops them once resolved.
"""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from realservers import Alertmanager, Receiver, Smtpd

from fleethealth.lake.catalog import Lakehouse
from fleethealth.pipeline import window as pipeline
from fleethealth.fleet.inventory import load_inventory
from fleethealth.lake import tables as lake
from fleethealth.notify import notify as _notify
from fleethealth.fleet.channels import Channel
from fleethealth.pull import hour as pull
from fleethealth.simulate import simulate

pytestmark = [pytest.mark.spark, pytest.mark.slow]

H10 = datetime(2026, 11, 20, 10, tzinfo=timezone.utc)
H11, H12 = H10 + timedelta(hours=1), H10 + timedelta(hours=2)
GONE = {("healthy", "host_silent", "broker-2"), ("healthy", "data_missing", "healthy-kafka-3:jmx")}


def notify(lakehouse, channels, **kw):
    """notify() with the hours of 2026-11-20 still news (a max_age of ten years): the first test is
    about the lifecycle's messages; the second about what is news, on the wall clock."""
    return _notify(lakehouse, channels, **{"max_age": timedelta(days=3650), **kw})


def run(spark, inventory, lakehouse, *hours):
    for hour in hours:
        pull.pull_hour(load_inventory(inventory), hour, Lakehouse.at(lakehouse))
    out = pipeline.run_window(spark, list(hours), str(inventory), Lakehouse.at(lakehouse))
    assert not [o for o in out.values() if isinstance(o, BaseException)], out


def silence(host, local: datetime, broker: str = "healthy-kafka-2") -> None:
    """`broker` sends nothing and broker 3 no JMX in the hour starting at `local` (file names are
    local time, Europe/Berlin)."""
    for f in {*(host / broker).rglob(f"*{local:%Y-%m-%d-%H}*"), *(host / broker).rglob(f"*T{local:%H}-*"),
              *(host / "healthy-kafka-3" / "jmx").glob(f"*{local:%Y-%m-%d-%H}")}:
        f.unlink()


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
    inventory = simulate(root, ["healthy"], H11, H12 + timedelta(hours=1), jmx_samples_per_broker_hour=0)
    host = root / "fleet" / "healthy"
    # file names are local time (Europe/Berlin): hour 11 UTC is the files of 12 local
    silence(host, H11.astimezone(ZoneInfo("Europe/Berlin")))
    lakehouse = Lakehouse.at(root / "lakehouse")
    monkeypatch.setenv("AIRFLOW_CONN_SMTP_ONCALL", json.dumps({
        "conn_type": "smtp", "host": "127.0.0.1", "port": servers["smtp"].port,
        "extra": {"disable_tls": True, "disable_ssl": True, "from_email": "fleethealth@example.com",
                  "retry_limit": 0, "timeout": 5}}))
    channels = [Channel("hook", "webhook", servers["hook"].url + "/hook"),
                Channel("mail", "smtp", "smtp_oncall", to=("oncall@example.com",), min_severity="minor"),
                Channel("am", "alertmanager", servers["am"].url)]

    run(spark, inventory, lakehouse, H11)
    first = notify(Lakehouse.at(lakehouse), channels)
    assert first.errors == [], first.summary()
    opened = {(c, k, e, "opened") for c, k, e in GONE}
    assert opened <= set(sent(servers["hook"])) and len(sent(servers["hook"])) == len(set(sent(servers["hook"])))
    silent = next(b for b in servers["hook"].bodies if b["kind"] == "host_silent")
    assert (silent["severity"], silent["status"], silent["first_seen"]) == ("major", "open", "2026-11-20T11:00:00Z")
    assert silent["runbook"]["check"] and silent["summary"].startswith("OPENED MAJOR healthy host_silent broker-2: ")
    mails = [m["Subject"].replace("\n", "") for _, m in servers["smtp"].messages]
    assert len(mails) == len(servers["hook"].bodies) and all(s.startswith("OPENED ") for s in mails)
    firing = {(a["labels"]["alertname"], a["labels"].get("entity")) for a in servers["am"].get("/api/v2/alerts")}
    assert {(k, e) for _, k, e in GONE} | {("Watchdog", None)} <= firing      # and the heartbeat
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
    firing = {(a["labels"]["alertname"], a["labels"].get("entity")) for a in servers["am"].get("/api/v2/alerts")}
    assert not firing & {(k, e) for _, k, e in GONE} and ("Watchdog", None) in firing

    servers["hook"].status = 200                                     # back: the refused message goes now
    back = notify(Lakehouse.at(lakehouse), channels)
    assert back.errors == [] and back.channels["hook"].sent == 2
    assert set(sent(servers["hook"])[before[0]:]) == resolved
    assert notify(Lakehouse.at(lakehouse), channels).channels["hook"].sent == 0
    incidents = {(r.kind, r.entity): (r.status, r.resolved_at) for r in
                 lake.read(spark, "gold.incidents", Lakehouse.at(lakehouse)).collect()}
    assert incidents[("host_silent", "broker-2")] == ("resolved", H12.replace(tzinfo=None))


def _table(lakehouse: Lakehouse, name: str) -> list[dict]:
    from deltalake import DeltaTable

    return DeltaTable(lake.table(name).path(lakehouse)).to_pyarrow_table().to_pylist()


def test_fleethealth_backfill_and_run_follow_the_same_rule(tmp_path, servers):
    """Issue 45's acceptance on the command line's path (`fleethealth backfill`, `run --no-notify`, `run`;
    each its own process and Spark session): a backfill of hours 8 days old pages no one, and Alertmanager
    holds what gold says is open (issue 59: state, not news); --no-notify records its own hour's changes
    suppressed; a run of the last complete hour pages for what opened in it, once, on the wall clock, and
    Alertmanager then holds one alert per open incident."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    import yaml

    fleethealth = str(Path(sys.executable).with_name("fleethealth"))
    env = dict(os.environ, FLEETHEALTH_DATA_DOCS="0")
    berlin = ZoneInfo("Europe/Berlin")
    last = datetime.now(timezone.utc).replace(minute=0, second=0, microsecond=0) - timedelta(hours=1)
    old = last - timedelta(days=8)
    hook = Receiver()
    lakehouse = Lakehouse.at(tmp_path / "lakehouse")

    def fleet(name: str, start: datetime, hours: int, silent: list[tuple[datetime, str]]) -> Path:
        inventory = simulate(tmp_path / name, ["healthy"], start, start + timedelta(hours=hours),
                             jmx_samples_per_broker_hour=0)
        for hour, broker in silent:
            silence(tmp_path / name / "fleet" / "healthy", hour.astimezone(berlin), broker)
        doc = yaml.safe_load(inventory.read_text())
        doc["notifications"] = [{"name": "hook", "webhook": hook.url}, {"name": "am", "alertmanager": servers["am"].url}]
        inventory.write_text(yaml.safe_dump(doc))
        return inventory

    def cli(*args: str) -> str:
        proc = subprocess.run([fleethealth, *args, "--lakehouse", str(tmp_path / "lakehouse")], capture_output=True,
                              text=True, timeout=900, env=env)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return proc.stdout

    def firing() -> set:
        """The incident ids of this lakehouse with an active alert (the Alertmanager is the module's)."""
        mine = {r["incident_id"] for r in _table(lakehouse, "gold.incidents")}
        return {a["labels"]["incident_id"] for a in servers["am"].get("/api/v2/alerts")
                if a["labels"].get("incident_id") in mine and a["status"]["state"] == "active"}

    def open_now() -> set:
        return {r["incident_id"] for r in _table(lakehouse, "gold.incidents") if r["status"] == "open"}

    def statuses(hour: datetime) -> set[str]:
        """The webhook's (people's) notification statuses of the hour: Alertmanager is sent state always."""
        return {r["status"] for r in _table(lakehouse, "gold.notifications")
                if r["hour"].replace(tzinfo=timezone.utc) == hour and r["channel"] == "hook"}

    try:
        # broker 2 silent, then back: resolved; broker 3 silent in the last hour: left open
        past = fleet("past", old, 2, [(old, "healthy-kafka-2"), (old + timedelta(hours=1), "healthy-kafka-3")])
        out = cli("backfill", "--inventory", str(past), "--from", old.isoformat(),
                  "--to", (old + timedelta(hours=2)).isoformat())
        assert hook.bodies == [] and "skipped (not news" in out, out
        assert statuses(old) == {"skipped"} == statuses(old + timedelta(hours=1))
        left = {r["incident_id"] for r in _table(lakehouse, "gold.incidents")
                if (r["kind"], r["entity"], r["status"]) == ("host_silent", "broker-3", "open")}
        assert left and firing() == open_now()                 # left open in an old hour: no page, its alert

        now = fleet("now", last - timedelta(hours=1), 2, [(last - timedelta(hours=1), "healthy-kafka-2"),
                                                          (last, "healthy-kafka-1")])
        quiet = cli("run", "--inventory", str(now), "--from", (last - timedelta(hours=1)).isoformat(),
                    "--to", last.isoformat(), "--no-notify")
        assert statuses(last - timedelta(hours=1)) == {"suppressed"}, quiet      # the window's own hour
        silent = [b for b in hook.bodies if (b["kind"], b["entity"]) == ("host_silent", "broker-2")]
        assert silent == []

        live = cli("run", "--inventory", str(now), "--from", last.isoformat(),
                   "--to", (last + timedelta(hours=1)).isoformat())
        assert statuses(last - timedelta(hours=1)) == {"suppressed"}              # still never sent
        assert "sent" in statuses(last), live
        pages = [(b["kind"], b["entity"], b["transition"]) for b in hook.bodies]
        assert pages.count(("host_silent", "broker-1", "opened")) == 1, pages
        assert ("host_silent", "broker-2", "opened") not in pages
        keys = [b["idempotency_key"] for b in hook.bodies]
        assert len(keys) == len(set(keys))                                    # once each
        assert firing() == open_now() and open_now()                          # one alert per open incident
    finally:
        hook.stop()
