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
])
def test_a_malformed_runbook_file_names_the_kind_and_the_mistake(text, message):
    with pytest.raises(runbooks.RunbookError) as err:
        runbooks.parse(text, "rb.yaml")
    assert str(err.value) == f"rb.yaml: {message}"
