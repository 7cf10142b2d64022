"""The report's line on a KRaft cluster listed without its controllers (issue 61 item 5): gold.kraft_quorum's
controllers_listed 0 in an hour of the window puts a note on the cluster's page saying what is not watched;
a cluster whose controllers are listed, a ZooKeeper-mode one and a lakehouse older than the column get none."""
from __future__ import annotations

import html

import report_lakehouse as lh

from fleethealth.cli import main as cli
from fleethealth.fleet.inventory import NO_CONTROLLERS

WINDOW = ["--from", "2026-11-20T10:00Z", "--to", "2026-11-20T13:00Z"]
NOTE = 'id="no-controllers"'


def report(tmp_path, root) -> dict[str, str]:
    out = tmp_path / "html"
    assert cli.main(["report", "--lakehouse", str(root), *WINDOW, "--out", str(out)]) == 0
    return {c: (out / f"cluster-{c}.html").read_text() for c in (lh.HEALTHY, lh.DEAD)}


def test_a_kraft_cluster_without_listed_controllers_says_what_is_not_watched(tmp_path):
    from deltalake import DeltaTable, write_deltalake

    root = lh.build(tmp_path / "lakehouse")
    assert [NOTE in page for page in report(tmp_path / "listed", root).values()] == [False, False]
    quorum = DeltaTable(str(root / "gold" / "kraft_quorum"))
    quorum.update({"controllers_listed": "0"}, predicate="hour = '2026-11-20T12:00:00Z'")
    healthy, dead = report(tmp_path / "unlisted", root).values()
    assert (f'<p class="note" {NOTE}>{lh.HEALTHY} runs in KRaft mode and the inventory lists none of its '
            f'controllers: {html.escape(NO_CONTROLLERS)}.</p>') in healthy
    assert NOTE not in dead
    older = quorum.to_pyarrow_table()
    older = older.drop_columns(["controllers_listed"])
    write_deltalake(str(root / "gold" / "kraft_quorum"), older, mode="overwrite", schema_mode="overwrite",
                    partition_by=["hour"])
    assert [NOTE in page for page in report(tmp_path / "older", root).values()] == [False, False]
