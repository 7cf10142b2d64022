"""Every incident kind has a runbook (runbooks.yaml) and the runbooks hold nothing else."""
from __future__ import annotations

import pytest

from fleethealth.gold import runbooks


def test_every_detector_kind_has_a_runbook_and_no_other_kind_does():
    from fleethealth.gold.detectors import DETECTORS

    books = runbooks.load()
    assert sorted(books) == sorted(DETECTORS)
    for kind, book in books.items():
        assert len(book.means) > 40 and book.check and book.do, kind
        assert book.first_step == book.check[0]


@pytest.mark.parametrize("text, message", [
    ("kinds: [a]", "expected a mapping with a `kinds` mapping"),
    ("kinds: {k: {means: m, check: [c]}}", "k: expected exactly the keys means, check, do"),
    ("kinds: {k: {means: m, check: [], do: [d]}}", "k: `means` is text, `check` and `do` non-empty lists of steps"),
    ("kinds: {k: {means: m, check: c, do: [d]}}", "k: `means` is text, `check` and `do` non-empty lists of steps"),
    ("kinds: {k: {means: m, check: [c], do: [d], kraft: {}}}", "k.kraft: expected some of the keys means, check, do"),
    ("kinds: {k: {means: m, check: [c], do: [d], kraft: {check: []}}}",
     "k.kraft: `means` is text, `check` and `do` non-empty lists of steps"),
])
def test_a_malformed_runbook_file_names_the_kind_and_the_mistake(text, message):
    with pytest.raises(runbooks.RunbookError) as err:
        runbooks.parse(text, "rb.yaml")
    assert str(err.value) == f"rb.yaml: {message}"


def test_a_kinds_runbook_may_differ_by_the_clusters_mode():
    """The storm's first check names the loss's own incident: a ZooKeeper session's expiry, a KRaft fence."""
    storm = runbooks.load()["leader_election_storm"]
    assert "zk_session_expired" in storm.first_step and "broker_fenced" not in storm.first_step
    kraft = runbooks.of("leader_election_storm", "kraft")
    assert "broker_fenced" in kraft.first_step and "zk_session_expired" not in kraft.first_step
    assert (kraft.means, kraft.do) == (storm.means, storm.do)          # what it leaves out is the general one's
    assert runbooks.of("leader_election_storm", "zookeeper") == runbooks.of("leader_election_storm") == storm
    assert runbooks.of("no_such_kind", "kraft") is None


def test_the_page_of_a_kraft_clusters_storm_says_its_own_first_check():
    """The one-line summary and a notification of a KRaft cluster's storm (the mode: gold.kraft_quorum's
    clusters, report.text.kraft_clusters) check its broker_fenced incident first."""
    from fleethealth.notify import messages
    from fleethealth.report.text import incident_notes

    kraft = runbooks.of("leader_election_storm", "kraft")
    assert incident_notes("leader_election_storm", None, "", "kraft") == f" | check first: {kraft.first_step}"
    storm = {"incident_id": "i1", "cluster": "kr", "kind": "leader_election_storm", "entity": "broker-2",
             "status": "open", "severity": "critical", "evidence": "33 partitions changed leader", "mode": "kraft"}
    msg = messages.incident_message(storm, "opened")
    assert msg["runbook"]["check"][0] == kraft.first_step and msg["summary"].endswith(kraft.first_step)
    assert messages.incident_message(dict(storm, mode=None), "opened")["runbook"]["check"][0] == (
        runbooks.load()["leader_election_storm"].first_step)
