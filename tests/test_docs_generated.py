"""The docs made from the code are current (scripts/gen_docs.py regenerates them): docs/configuration.md
from runtime.config's Settings, docs/cli.md from the parser's help, docs/gold-reference.md from the
tables' definitions; and docs/gold-tables.md, written by hand, names every gold table and every column
of its definition. No Spark."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT / "scripts"))
import gen_docs  # noqa: E402

from fleethealth.cli import main  # noqa: E402
from fleethealth.lake.tables import TABLES  # noqa: E402
from fleethealth.runtime import config  # noqa: E402

REGENERATE = "run `.venv/bin/python scripts/gen_docs.py` and commit what it writes"


@pytest.mark.parametrize("name", sorted(gen_docs.GENERATED))
def test_the_generated_doc_is_current(name):
    assert (PROJECT / name).read_text() == gen_docs.GENERATED[name](), f"{name} is out of date: {REGENERATE}"


def test_configuration_lists_every_setting_with_its_description():
    text = (PROJECT / "docs/configuration.md").read_text()
    listed = re.findall(r"^\| `(FLEETHEALTH_\w+)` \|", text, re.M)
    assert listed == list(config.SETTINGS) and len(listed) >= 18
    for setting in config.SETTINGS.values():
        assert setting.doc and setting.doc[:40] in text, setting.env


def test_the_cli_reference_has_every_command_and_option():
    text = (PROJECT / "docs/cli.md").read_text()
    commands = next(a for a in main.build_parser()._actions if a.dest == "command").choices
    assert re.findall(r"^## fleethealth (\w+)$", text, re.M) == list(commands)
    for name, sub in commands.items():
        section = text.split(f"## fleethealth {name}\n", 1)[1].split("\n## ", 1)[0]
        options = {o for a in sub._actions for o in a.option_strings if o.startswith("--")}
        assert options and all(o in section for o in options), name


def test_the_table_reference_has_every_table_and_column():
    text = (PROJECT / "docs/gold-reference.md").read_text()
    assert re.findall(r"^## `([\w.]+)`$", text, re.M) == list(TABLES)
    for qualified in TABLES:
        section = text.split(f"## `{qualified}`\n", 1)[1].split("\n## ", 1)[0]
        assert all(f"`{c}`" in section for c in gen_docs.columns(qualified)), qualified
    assert "`lag_ms`" in text and "`idempotency_key`" not in text    # a column, and a webhook field that is none


def gold_tables_doc() -> dict[str, str]:
    """docs/gold-tables.md's text about each table: its row of the list and its own section, if any
    (a row that says "the columns of `gold.X`" has X's too)."""
    doc = (PROJECT / "docs/gold-tables.md").read_text()
    rows = {line.split("`")[1]: line for line in doc.splitlines() if line.startswith("| `")}
    about = {}
    for qualified, row in rows.items():
        section = doc.split(f"## `{qualified}`\n", 1)[1].split("\n## ", 1)[0] if f"## `{qualified}`\n" in doc else ""
        about[qualified] = row + section
    for qualified, text in list(about.items()):
        for other in re.findall(r"the columns of `(gold\.\w+)`", rows[qualified]):
            about[qualified] += about[other]
    return about


def missing_columns(text: str, names: list[str]) -> list[str]:
    return [c for c in names if not re.search(rf"(?<!\w){re.escape(c)}(?!\w)", text)]


def test_gold_tables_documents_every_gold_table_and_column():
    about = gold_tables_doc()
    gold = [q for q, t in TABLES.items() if t.layer == "gold"]
    assert sorted(q for q in about if q.startswith("gold.")) == sorted(gold)
    assert {q: missing_columns(about[q], gen_docs.columns(q)) for q in gold} == {q: [] for q in gold}


def test_a_column_named_only_inside_another_word_is_missing():
    assert missing_columns("max_size_bytes, first/last_change_ts", ["size_bytes", "first_change_ts", "max_size_bytes"]) == [
        "size_bytes", "first_change_ts"]


def test_readme_shows_the_report_as_a_small_png():
    readme = (PROJECT / "README.md").read_text()
    assert f"]({gen_docs.SCREENSHOT.relative_to(PROJECT)})" in readme
    data = gen_docs.SCREENSHOT.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) < 200_000
    assert int.from_bytes(data[16:20], "big") == 1200      # IHDR width: the viewport gen_docs.screenshot uses

