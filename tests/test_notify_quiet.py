"""Quiet means quiet, and Alertmanager stays true (issue 59, item 4): `--no-notify` sends nothing to
people (webhook, e-mail, Slack), retractions included; a retraction to people follows the news rule;
Alertmanager is kept equal to the open incidents at every run, quiet or not, old hours or not; each
channel is delivered in its own thread with the run's budget of its own, so a slow but working
receiver listed first does not starve the channels after it.

Receivers: HTTP servers (webhook, Slack incoming webhook), aiosmtpd and a real Alertmanager
(tests/realservers.py). The gold tables are written by hand with delta-rs, hours relative to the
wall clock (test_notify_delivery's helpers). No Spark.
"""
from __future__ import annotations

import os
import threading
import time
import uuid
from datetime import timedelta

import pytest

os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")

from realservers import Alertmanager, Receiver, Smtpd  # noqa: E402
from test_notify_delivery import history, incident, last_complete_hour, rows, status_of, write_gold  # noqa: E402

from fleethealth.fleet.channels import Channel  # noqa: E402
from fleethealth.lake import locks  # noqa: E402
from fleethealth.lake.catalog import Lakehouse  # noqa: E402
from fleethealth.notify import outbox  # noqa: E402
from fleethealth.notify.run import notify  # noqa: E402

PEOPLE = ("hook", "mail", "slack")
WEEK = timedelta(days=9)          # a max_age that makes the 8-day-old hour news: how it was announced then


@pytest.fixture(scope="module")
def am(tmp_path_factory):
    with Alertmanager(tmp_path_factory.mktemp("alertmanager")) as server:
        yield server


class People:
    """Fresh receivers to people (webhook, Slack, SMTP), and the channels naming them."""

    def __init__(self, monkeypatch):
        self.hook, self.slack, self.smtp = Receiver(), Receiver(), Smtpd()
        monkeypatch.setenv("AIRFLOW_CONN_SMTP_QUIET", self.smtp.connection())
        monkeypatch.setenv("AIRFLOW_CONN_SLACK_QUIET", self.slack.slack_connection())

    def channels(self, am: Alertmanager) -> list[Channel]:
        return [Channel("hook", "webhook", self.hook.url + "/hook"),
                Channel("mail", "smtp", "smtp_quiet", to=("oncall@example.com",)),
                Channel("slack", "slack", "slack_quiet"), Channel("am", "alertmanager", am.url)]

    def requests(self) -> tuple[int, int, int]:
        return self.hook.requests, len(self.smtp.messages), self.slack.requests

    def stop(self):
        for s in (self.hook, self.slack, self.smtp):
            s.stop()


@pytest.fixture
def people(monkeypatch):
    made = []

    def make() -> People:
        made.append(People(monkeypatch))
        return made[-1]

    yield make
    for p in made:
        p.stop()


def active_ids(am: Alertmanager, prefix: str) -> list[str]:
    """Alertmanager's active alerts of this test's incidents, by incident_id (one each: a second alert
    of an incident would show twice)."""
    return sorted(a["labels"]["incident_id"]
                  for a in am.get("/api/v2/alerts?active=true&silenced=true&inhibited=true&unprocessed=true")
                  if a["labels"].get("incident_id", "").startswith(prefix) and a["status"]["state"] == "active")


def open_ids(lh: Lakehouse, prefix: str) -> list[str]:
    from deltalake import DeltaTable

    from fleethealth.lake import tables as lake

    table = DeltaTable(lake.table("gold.incidents").path(lh)).to_pyarrow_table().to_pylist()
    return sorted(i["incident_id"] for i in table if i["status"] == "open" and i["incident_id"].startswith(prefix))


def announced_last_week(lh: Lakehouse, p: str, people: People, am: Alertmanager):
    """gold of a cluster whose latest gold hour is 8 days old: `gone` and `kept` opened in that hour,
    announced to every channel (then news: max_age of 9 days stands for the run of that day)."""
    old = last_complete_hour() - timedelta(days=8)
    gone = incident(p + "gone", old, old)
    kept = incident(p + "kept", old, old, kind="log_cleaner_dead", entity="broker-2")
    write_gold(lh, [gone, kept], [history(gone, "opened", old), history(kept, "opened", old)], [old])
    first = notify(lh, people.channels(am), max_age=WEEK)
    assert first.errors == [] and people.requests() == (2, 2, 2), first.summary()
    assert active_ids(am, p) == [p + "gone", p + "kept"] == open_ids(lh, p)
    return old, gone, kept


def test_no_notify_backfill_of_an_8_day_old_hour_retracts_to_no_one_and_alertmanager_holds_the_open_incidents(
        tmp_path, people, am):
    """Issue 59's case: `backfill --no-notify` of an 8-day-old hour whose announced incident the
    re-run removes (and which finds a new one in that hour): the webhook, SMTP and Slack receivers get
    0 requests; the retraction and the new opening are recorded suppressed; Alertmanager's active
    alerts are the open incidents (the gone one ended, the new one active), and a later ordinary run
    sends nothing to people either."""
    lh, p = Lakehouse.at(tmp_path / "lakehouse"), f"q{uuid.uuid4().hex[:6]}-"
    old, gone, kept = announced_last_week(lh, p, people(), am)

    # the backfill of that hour: `gone` is no more, `fresh` opens in it
    fresh = incident(p + "fresh", old, old, kind="under_replicated", entity="topic-a")
    write_gold(lh, [kept, fresh], [history(kept, "opened", old), history(fresh, "opened", old)])
    quiet_people = people()                              # every request from now on lands here
    quiet = notify(lh, quiet_people.channels(am), quiet_hours=[old])
    assert quiet.errors == [], quiet.summary()
    assert quiet_people.requests() == (0, 0, 0)
    state, box = status_of(lh), rows(lh)
    for channel in PEOPLE:
        assert state[(p + "gone", "retracted", "major", channel)] == "suppressed"
        assert box[(p + "gone", "retracted", "major", channel)]["reason"].startswith("--no-notify: ")
        assert state[(p + "fresh", "opened", "major", channel)] == "suppressed"
        assert quiet.channels[channel].suppressed == 2 and quiet.channels[channel].sent == 0
    assert active_ids(am, p) == [p + "fresh", p + "kept"] == open_ids(lh, p)       # state, not news
    assert state[(p + "gone", "retracted", "major", "am")] == "sent"
    assert state[(p + "fresh", "opened", "major", "am")] == "sent"

    again = notify(lh, quiet_people.channels(am))                                   # the next hourly run
    assert again.errors == [] and quiet_people.requests() == (0, 0, 0)              # suppressed stays unsent
    assert active_ids(am, p) == [p + "fresh", p + "kept"] == open_ids(lh, p)


def test_a_retraction_to_people_follows_the_news_rule(tmp_path, people, am):
    """Without --no-notify: the retraction of an incident announced for an 8-day-old hour of a
    cluster whose gold stops there is not news (skipped, with the reason; Alertmanager's alert ends
    all the same), while that of an incident announced for the last hour, removed by the same
    re-run, is sent; the old one is sent once its cluster's gold reaches a recent hour (the channel
    was never told it ended: as far as it knows it is open through then)."""
    lh, p = Lakehouse.at(tmp_path / "lakehouse"), f"r{uuid.uuid4().hex[:6]}-"
    receivers = people()
    old, gone, kept = announced_last_week(lh, p, receivers, am)
    last = last_complete_hour()
    recent = incident(p + "recent", last, last, cluster="prod-b")
    write_gold(lh, [gone, kept, recent], [history(gone, "opened", old), history(kept, "opened", old),
                                          history(recent, "opened", last)], [last], cluster="prod-b")
    assert notify(lh, receivers.channels(am)).errors == [] and receivers.requests() == (3, 3, 3)

    write_gold(lh, [kept], [history(kept, "opened", old)])      # a re-run removes both
    rerun = notify(lh, receivers.channels(am))
    assert rerun.errors == [] and receivers.requests() == (4, 4, 4), rerun.summary()
    assert [(b["incident_id"], b["transition"]) for b in receivers.hook.bodies[-1:]] == [(p + "recent", "retracted")]
    state, box = status_of(lh), rows(lh)
    for channel in PEOPLE:
        assert state[(p + "recent", "retracted", "major", channel)] == "sent"
        assert state[(p + "gone", "retracted", "major", channel)] == "skipped"
        reason = box[(p + "gone", "retracted", "major", channel)]["reason"]
        assert reason.startswith("not news: open last in ") and "more than 6 h ago" in reason
        assert rerun.channels[channel].skipped == 1 and rerun.channels[channel].retracted == 1
    assert active_ids(am, p) == [p + "kept"] == open_ids(lh, p)                     # both alerts ended
    assert notify(lh, receivers.channels(am)).errors == [] and receivers.requests() == (4, 4, 4)   # still not news

    write_gold(lh, [kept], [history(kept, "opened", old)], [last])                  # prod-a's gold is live again
    live = notify(lh, receivers.channels(am))
    assert live.errors == [] and receivers.requests() == (5, 5, 5), live.summary()
    assert [(b["incident_id"], b["transition"]) for b in receivers.hook.bodies[-1:]] == [(p + "gone", "retracted")]
    assert status_of(lh)[(p + "gone", "retracted", "major", "hook")] == "sent"
    assert "no longer an incident" in receivers.hook.bodies[-1]["reason"]


def test_a_slow_receiver_listed_first_does_not_starve_the_next(tmp_path):
    """Issue 59's case: a slow but working webhook (answers after 3 s) listed before the pager, 7
    messages due to each, a run's budget of 5 s: the pager gets all 7 in the first second; the slow
    one gets 1, its second send is cut at the run's deadline (failed, the rest pending), and the run
    ends within the deadline and a margin."""
    lh, p = Lakehouse.at(tmp_path / "lakehouse"), "s-"
    last = last_complete_hour()
    incs = [incident(f"{p}{i}", last, last, entity=f"broker-{i}") for i in range(7)]
    write_gold(lh, incs, [history(i, "opened", last) for i in incs], [last])
    slow, pager = Receiver(delay=3.0), Receiver()
    try:
        started = time.monotonic()
        result = notify(lh, [Channel("slow", "webhook", slow.url), Channel("pager", "webhook", pager.url)],
                        send_timeout_s=10, budget_s=5)
        took = time.monotonic() - started
        assert 5 <= took < 5 + 2, took                      # held by the slow one to its deadline, no more
        assert len(pager.bodies) == 7 and result.channels["pager"].sent == 7, result.summary()
        assert pager.answered[-1] - started < 1.5           # not after the slow channel: beside it
        s = result.channels["slow"]
        assert (s.sent, s.failed, s.pending) == (1, 1, 5), result.summary()
        assert "DeadlineExceeded: the run's budget ran out" in s.errors[0]
        state = status_of(lh)
        assert sorted(v for k, v in state.items() if k[3] == "slow") == ["failed"] + ["pending"] * 5 + ["sent"]
        assert {v for k, v in state.items() if k[3] == "pager"} == {"sent"}
    finally:
        slow.stop()
        pager.stop()


def test_the_wait_for_another_runs_notify_is_inside_the_budget_and_the_dags_task_outlasts_it(tmp_path):
    """Another run holds gold.notifications: this one gives up within its budget (nothing sent, each
    channel told why, no exception), so the DAGs' notify task, whose execution_timeout is the budget
    and a minute, never times out."""
    from airflow.dag_processing.dagbag import DagBag

    from fleethealth.runtime import config
    from test_notify_delivery import PROJECT

    lh, p = Lakehouse.at(tmp_path / "lakehouse"), "w-"
    last = last_complete_hour()
    inc = incident(p + "i", last, last)
    write_gold(lh, [inc], [history(inc, "opened", last)], [last])
    hook, held, release = Receiver(), threading.Event(), threading.Event()

    def other_run():
        with locks.table_lock(outbox.TABLE, lh, "another notify"):
            held.set()
            release.wait(30)

    holder = threading.Thread(target=other_run, daemon=True)
    holder.start()
    try:
        assert held.wait(10)
        started = time.monotonic()
        result = notify(lh, [Channel("hook", "webhook", hook.url)], budget_s=2)
        took = time.monotonic() - started
        assert took < 2 + 1.5, took
        assert hook.requests == 0 and "gold.notifications is being written by another run" in result.errors[0]
        assert status_of(lh) == {}                          # nothing recorded: all of it due next run
        release.set()
        holder.join()
        assert notify(lh, [Channel("hook", "webhook", hook.url)]).channels["hook"].sent == 1
    finally:
        release.set()
        hook.stop()
    dags = DagBag(dag_folder=str(PROJECT / "dags")).dags
    for dag_id in ("fleet_health_hourly", "fleet_health_backfill"):
        timeout = dags[dag_id].get_task("notify").execution_timeout
        assert timeout.total_seconds() >= config.notify_timeout_s() + 60, (dag_id, timeout)


def test_an_alert_held_under_a_suppressed_row_is_ended_when_its_incident_resolves(tmp_path, am):
    """Before issue 59 a quiet run recorded Alertmanager's rows suppressed while later runs still
    refreshed the open incident: such an alert is ended when its incident resolves (or goes)."""
    lh, p = Lakehouse.at(tmp_path / "lakehouse"), f"l{uuid.uuid4().hex[:6]}-"
    last = last_complete_hour()
    inc, gone = incident(p + "i", last, last), incident(p + "gone", last, last, entity="broker-2")
    write_gold(lh, [inc, gone], [history(inc, "opened", last), history(gone, "opened", last)], [last])
    chans = [Channel("am", "alertmanager", am.url)]
    assert notify(lh, chans).channels["am"].sent == 2 and active_ids(am, p) == [p + "gone", p + "i"]
    box = outbox.read(lh)
    for row in box.values():
        row.update(status="suppressed", reason="--no-notify: the run's own hour")
    outbox.write(box, lh)

    resolved = {**inc, "status": "resolved", "resolved_at": last + timedelta(minutes=50)}
    write_gold(lh, [resolved], [history(inc, "opened", last), history(inc, "resolved", last)])
    result = notify(lh, chans)
    assert result.errors == [], result.summary()
    assert active_ids(am, p) == [] == open_ids(lh, p)
    assert status_of(lh)[(p + "i", "resolved", "major", "am")] == "sent"
    assert status_of(lh)[(p + "gone", "retracted", "major", "am")] == "sent"
