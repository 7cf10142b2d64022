"""`fleethealth report`: the offline HTML report, made by the real command from a hand-written lakehouse
(tests/report_lakehouse.py: the dead log cleaner and a healthy cluster) and loaded from disk in headless
Chromium (Debian's /usr/bin/chromium driven by playwright) with every network request refused, in New York's
time zone (the report's times must stay UTC)."""
from __future__ import annotations

import html
import json
import os
import shutil
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
import report_lakehouse as lh

from fleethealth.cli import main as cli
from fleethealth.gold import thresholds
from fleethealth.runtime import config

PROJECT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
BROWSER_TZ = "America/New_York"   # UTC-5 in November: a local time would show 06:12 for 11:12Z
WINDOW = ["--from", "2026-11-20T10:00Z", "--to", "2026-11-20T13:00Z"]


def fleethealth(*args: str) -> subprocess.CompletedProcess:
    """The command line as a user runs it, importing this checkout's library."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(PROJECT / "include"), os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-m", "fleethealth.cli.main", *args], capture_output=True, text=True,
                          timeout=120, env=env)


@pytest.fixture(scope="module")
def lakehouse(tmp_path_factory):
    return lh.build(tmp_path_factory.mktemp("report") / "lakehouse")


@pytest.fixture(scope="module")
def report(lakehouse, tmp_path_factory):
    out = tmp_path_factory.mktemp("report-out") / "html"
    t0 = time.monotonic()
    proc = fleethealth("report", "--lakehouse", str(lakehouse), *WINDOW, "--out", str(out))
    took = time.monotonic() - t0
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"HTML report: {out / 'index.html'} (2 cluster page(s), "), proc.stdout
    print(f"fleethealth report: {took:.1f} s")
    return out


@pytest.fixture(scope="module")
def browser():
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"{CHROMIUM} missing (scripts/setup.sh installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


class Loaded:
    def __init__(self, page, errors, failed, refused):
        self.page, self.errors, self.failed, self.refused = page, errors, failed, refused


@pytest.fixture
def load(browser, tmp_path):
    """Open a report page from disk in a fresh context (its own profile, offline, every request that is not
    file:// refused) and wait until vega-embed has rendered each chart."""
    contexts = []

    def open_page(path: Path) -> Loaded:
        context = browser.new_context(offline=True, viewport={"width": 1200, "height": 900},
                                      timezone_id=BROWSER_TZ, service_workers="block")
        contexts.append(context)
        refused: list[str] = []

        def route(r):
            if r.request.url.startswith("file://"):
                r.continue_()
            else:
                refused.append(r.request.url)
                r.abort()
        context.route("**/*", route)
        page = context.new_page()
        errors, failed = [], []
        page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("requestfailed", lambda r: failed.append(r.url))
        page.goto(path.as_uri())
        page.evaluate("window.fleethealthRendered")
        return Loaded(page, errors, failed, refused)

    yield open_page
    for c in contexts:
        c.close()


def test_every_page_renders_every_chart_offline(report, load, tmp_path_factory):
    pages = sorted(report.glob("*.html"))
    assert [p.name for p in pages] == ["cluster-healthy.html", "cluster-pm3-dead-cleaner.html", "index.html"]
    shots = tmp_path_factory.mktemp("screenshots")
    # the bundle written once beside the pages, a copy of this user's cached one; the folder of 2 clusters
    # x 3 hours under 1.5 MB (each page inlined it: 0.9 MB each)
    [bundle] = report.glob("vega-bundle-*.js")
    assert bundle.read_bytes() == (config.cache_dir() / bundle.name).read_bytes()
    assert sum(p.stat().st_size for p in report.iterdir()) < 1.5e6
    for path in pages:
        text = path.read_text()
        assert "window.vegaEmbed=" not in text and text.count(f'<script src="{bundle.name}"></script>') == 1
        assert "https://" not in text.split("</head>", 1)[0] and "<link" not in text
        loaded = load(path)
        assert loaded.errors == [] and loaded.failed == [] and loaded.refused == [], path.name
        charts = loaded.page.evaluate("""() => Array.from(document.querySelectorAll('div.chart')).map(d =>
            [d.id, d.querySelectorAll('svg .role-mark').length, (window.fleethealthViews[d.id] || {}).width
             ? 1 : 0])""")
        assert charts, path.name
        assert ("chart-quorum" in [c[0] for c in charts]) == (path.name == "cluster-healthy.html"), path.name
        assert [c for c in charts if c[1] == 0] == [], f"{path.name}: charts drawn without marks: {charts}"
        shot = shots / f"{path.stem}.png"
        loaded.page.screenshot(path=str(shot), full_page=True)
        print(f"screenshot: {shot}")
    dead = (report / "cluster-pm3-dead-cleaner.html").read_text()
    assert {"chart-timeline", "chart-offsets", "chart-cleaner", "chart-isr", "chart-leaders", "chart-zk",
            "chart-requests", "chart-fd", "chart-completeness"} <= set(load(report / "cluster-pm3-dead-cleaner.html")
                                                                       .page.evaluate("Object.keys(window.fleethealthViews)"))
    # an older lakehouse: the tables it lacks are a note, not a crash
    assert "Not in this lakehouse (an older one): gold.metadata_divergence, gold.deadlocks" in dead


def test_the_dead_cleaner_chart_draws_the_bloated_partition_above_its_threshold(report, load):
    page = load(report / "cluster-pm3-dead-cleaner.html").page
    limit = thresholds.load()["offsets_partition_bloat.max_size_bytes"]
    drawn = page.evaluate("""gib => {
        const view = window.fleethealthViews['chart-offsets'], marks = {};
        const walk = node => {
            if (node.marktype && node.name) (marks[node.name] = marks[node.name] || []).push(
                ...node.items.map(i => i.datum || {}).map((d, k) => ({y: node.items[k].y, series: d.series, gib: d.size_gib, hour: d.hour,
                                         threshold: d.bytes})));
            (node.items || []).forEach(i => (i.items || []).forEach(walk));
        };
        walk(view.scenegraph().root);
        const svg = document.querySelector('#chart-offsets svg');
        return {marks, yOfThreshold: view.scale('y')(gib),
                ruleInSvg: svg.querySelectorAll('.mark-rule.threshold_marks line, .mark-rule.threshold_marks path').length};
    }""", limit / 2**30)
    [rule] = drawn["marks"]["threshold_marks"]
    assert rule["threshold"] == limit and drawn["ruleInSvg"] == 1
    assert rule["y"] == pytest.approx(drawn["yOfThreshold"])
    p38 = [m for m in drawn["marks"]["sizes_marks"] if m["series"] == "p38@broker-2"]
    assert [m["hour"] for m in p38] == ["11-20 10:00", "11-20 11:00", "11-20 12:00"]
    # pixels grow downwards: above the rule is a smaller y
    assert [m["y"] < rule["y"] for m in p38] == [False, True, True]
    assert [m["gib"] * 2**30 > limit for m in p38] == [False, True, True]
    assert p38[2]["y"] < p38[1]["y"]                                   # still growing
    others = [m for m in drawn["marks"]["sizes_marks"] if m["series"] != "p38@broker-2"]
    assert others and all(m["y"] > rule["y"] for m in others)
    # each incident links to the chart of its facts and lists the rows that fired it
    bloat = page.locator("#incident-a1b2c3d4e5f60002")
    assert bloat.locator("a[href='#chart-offsets']").count() == 1
    assert "size 4.20 GiB > 1.00 GiB (jmx)" in bloat.inner_text()
    # sizes in GiB, as the evidence says them
    assert bloat.locator("table tr").all_inner_texts() == [
        "hour\tbroker_id\tpartition\tsize_bytes\tgrowth_bytes\tcompaction_seen\tsize_source",
        "2026-11-20 11:00Z\t2\t38\t1.79 GiB\t1.24 GiB\tFalse\tjmx",
        "2026-11-20 12:00Z\t2\t38\t4.20 GiB\t2.41 GiB\tFalse\tjmx"]
    cleaner = page.locator("#incident-a1b2c3d4e5f60001")
    assert cleaner.locator("a[href='#chart-cleaner']").count() == 1
    assert "check first:" in cleaner.inner_text() and cleaner.inner_text().count("dead") >= 3


def test_the_kraft_cluster_page_charts_its_quorum_and_tables_it_per_hour(report, load):
    """gold.kraft_quorum on the KRaft cluster's page: the epoch (its leader in the tooltip) over the elections
    of each hour, a bar per fenced broker, and the table under the chart; a ZooKeeper-mode cluster's page
    says why it has none."""
    loaded = load(report / "cluster-healthy.html")
    page = loaded.page
    assert loaded.errors == [] and loaded.failed == [] and loaded.refused == []
    quorum = page.evaluate("() => window.fleethealthViews['chart-quorum'].data('quorum')")
    assert [(q["hour"], q["epoch"], q["leader"], q["elections"], q["leaders"], q["fenced_at_end"])
            for q in quorum] == [("11-20 10:00", 7, "3000", 1, "3000", ""),
                                 ("11-20 11:00", 9, "3001", 2, "3000, 3001", "2"),
                                 ("11-20 12:00", None, "unknown", 0, "", "")]
    fenced = page.evaluate("() => window.fleethealthViews['chart-quorum'].data('fenced')")
    assert [(f["hour"], f["broker"], f["fenced_at_end"]) for f in fenced] == [("11-20 11:00", "broker-2", True)]
    tips = page.evaluate("""() => { const out = [];
        const walk = node => (node.items || []).forEach(i => { if (i.tooltip) out.push(i.tooltip); (i.items || []).forEach(walk); });
        walk(window.fleethealthViews['chart-quorum'].scenegraph().root);
        return out; }""")
    assert {(t["hour"], t["leader"]) for t in tips if "leader" in t} == {
        ("11-20 10:00", "3000"), ("11-20 11:00", "3001"), ("11-20 12:00", "unknown")}
    assert [t["broker"] for t in tips if "broker" in t] == ["broker-2"]
    table = page.locator("#chart-quorum + table tr").all_inner_texts()
    assert table == ["hour\tleader\tepoch\telections\tfenced brokers\tfenced at end",
                     "11-20 10:00\t3000\t7\t1\t\t", "11-20 11:00\t3001\t9\t2\t2\t2", "11-20 12:00\t\t\t0\t\t"]
    dead = load(report / "cluster-pm3-dead-cleaner.html").page
    assert dead.locator("#chart-quorum").count() == 1 and dead.locator("#chart-quorum + table").count() == 0
    [note] = dead.locator("p.note", has_text="gold.kraft_quorum").all_inner_texts()
    assert note.startswith("no rows of gold.kraft_quorum in this window: the cluster is in ZooKeeper mode"), note


def test_the_overview_colours_each_cluster_hour_by_its_worst_open_incident(report, load):
    page = load(report / "index.html").page
    cells = page.evaluate("() => window.fleethealthViews['chart-fleet'].data('cells')")
    worst = {(c["cluster"], c["hour"]): c["severity"] for c in cells}
    assert worst == {**{(lh.HEALTHY, h): "none" for h in ("11-20 10:00", "11-20 11:00", "11-20 12:00")},
                     **{(lh.DEAD, h): "critical" for h in ("11-20 10:00", "11-20 11:00", "11-20 12:00")}}
    colours = page.evaluate("""() => Array.from(document.querySelectorAll('#chart-fleet svg .mark-rect path'))
                               .map(p => p.getAttribute('fill'))""")
    assert colours.count("#c0392b") == 3 and colours.count("#a9dfbf") == 3


def test_the_overview_tells_post_mortem_3_at_a_glance_and_links_to_each_card_and_chart(report, load):
    """Above the heatmaps: the open incidents, most severe first, each with its one line of evidence; its
    links lead to the incident's card and the chart of its facts on its cluster's page."""
    loaded = load(report / "index.html")
    page = loaded.page
    items = page.locator("ul.open li")
    texts = [items.nth(i).inner_text() for i in range(items.count())]
    assert len(texts) == 2, texts
    heads, what = zip(*(t.split("\n") for t in texts))
    assert heads == (f"critical {lh.DEAD}: log_cleaner_dead broker-2 first seen 2026-11-20 10:20Z · chart",
                     f"major {lh.DEAD}: offsets_partition_bloat __consumer_offsets-38@broker-2 first seen "
                     "2026-11-20 11:59:30Z · chart")
    assert what[0].startswith("time-since-last-run-ms=2101588 > 900000 (last run 2026-11-20 10:20:00Z); cleaner "
                              "'Error due to' at 10:20:00Z; now: time-since-last-run-ms=9301588 > 900000")
    # which explains which (issue 62 item 4), then the known bug
    assert what[0].endswith("now: time-since-last-run-ms=9301588 > 900000 (last run 2026-11-20 10:20:00Z) — explains "
                            "offsets_partition_bloat __consumer_offsets-38@broker-2 (since 11:59Z) — matches "
                            "KAFKA-7215 (One bad partition kills the cleaner thread; KIP-346 marks the partition "
                            "uncleanable instead), fixed in 2.1.0")
    assert what[1] == ("size 1.79 GiB > 1.00 GiB (jmx); now: size 4.20 GiB > 1.00 GiB (jmx) — caused by "
                       "log_cleaner_dead broker-2 (since 10:20Z)")
    assert page.locator("h2#open-incidents").inner_text() == "Open incidents (2)"
    # the fleet's versions' bugs: a table at the end, not incidents (issue 62)
    rows = page.locator("h2#known-bugs + p + table tr").all_inner_texts()
    assert [r.split("\t")[:3] + r.split("\t")[4:6] for r in rows] == [
        ["cluster", "Kafka", "bug", "affected", "fixed in"],
        *[[lh.HEALTHY, "3.9.0", bug, "[3.3.0, 4.0.0)" if bug == "KAFKA-17076" else "[3.3.0, *)", fix]
          for bug, fix in (("KAFKA-17076", "4.0.0"), ("KAFKA-19895", "no fix yet"))],
        *[[lh.DEAD, "1.1.0", bug, affected, fix] for bug, affected, fix in (
            ("KAFKA-6834", "[*, 2.0.0)", "2.0.0"), ("KAFKA-6854", "[0.11.0.0, 1.1.1)", "1.1.1 / 2.0.0"),
            ("KAFKA-7215", "[*, 2.1.0)", "2.1.0"), ("KAFKA-8335", "[0.11.0.0, 2.0.2)", "2.0.2 / 2.1.2 / 2.2.1 / 2.3.0"))]]
    assert rows[1].split("\t")[-1] == f"{lh.HEALTHY}-kafka-1, {lh.HEALTHY}-kafka-2, {lh.HEALTHY}-kafka-3"
    assert page.locator("ul.open").bounding_box()["y"] < page.locator("#chart-fleet").bounding_box()["y"]

    links = page.evaluate("""() => Array.from(document.querySelectorAll('ul.open li')).map(li =>
        [li.querySelector('a.card').href, li.querySelector('a.chart-link').href])""")
    assert [(card.rsplit("/", 1)[1], chart.rsplit("/", 1)[1]) for card, chart in links] == [
        ("cluster-pm3-dead-cleaner.html#incident-a1b2c3d4e5f60001", "cluster-pm3-dead-cleaner.html#chart-cleaner"),
        ("cluster-pm3-dead-cleaner.html#incident-a1b2c3d4e5f60002", "cluster-pm3-dead-cleaner.html#chart-offsets")]
    for i, (card, chart) in enumerate(links):
        with page.expect_navigation():
            page.locator("ul.open li a.card").nth(i).click()
        page.evaluate("window.fleethealthRendered")
        # the card is the page's :target, and the chart it links to is drawn on the same page
        target = page.evaluate("""() => { const t = document.querySelector(':target');
            const a = t && t.querySelector("a[href^='#chart-']"), c = a && document.querySelector(a.getAttribute('href'));
            return t && [t.id, t.className, location.hash, c && c.id, c ? c.querySelectorAll('svg .role-mark').length : 0]; }""")
        assert target[:4] == [card.split("#")[1], "incident", "#" + card.split("#")[1], chart.split("#")[1]], target
        assert target[4] > 0
        page.go_back()
        page.evaluate("window.fleethealthRendered")
        with page.expect_navigation():
            page.locator("ul.open li a.chart-link").nth(i).click()
        page.evaluate("window.fleethealthRendered")
        drawn = page.evaluate("""() => { const t = document.querySelector(':target');
            return t && [t.id, t.classList.contains('chart'), t.querySelectorAll('svg .role-mark').length]; }""")
        assert drawn[:2] == [chart.split("#")[1], True] and drawn[2] > 0, drawn
        page.go_back()
        page.evaluate("window.fleethealthRendered")
    assert loaded.errors == [] and loaded.failed == [] and loaded.refused == []


def test_times_are_utc_on_axes_and_in_tooltips_in_a_new_york_browser(report, load):
    page = load(report / "cluster-pm3-dead-cleaner.html").page
    # the browser is not in UTC: a time formatted in local time would read 06:12, not 11:12
    assert page.evaluate("new Date('2026-11-20T11:12:00Z').getHours()") == 6
    ticks = page.evaluate("""() => Array.from(document.querySelectorAll('#chart-leaders svg .role-axis-label text'))
                             .map(t => t.textContent)""")
    assert "11-20 11:00" in ticks and "11-20 10:00" in ticks and not any(" 05:" in t or " 06:" in t for t in ticks), ticks
    # what the tooltip of each leader-change bar shows (Vega computes it into the scenegraph item)
    tips = page.evaluate("""() => { const out = [];
        const walk = node => (node.items || []).forEach(i => { if (i.tooltip) out.push(i.tooltip); (i.items || []).forEach(walk); });
        walk(window.fleethealthViews['chart-leaders'].scenegraph().root);
        return out; }""")
    assert [t["minute (UTC)"] for t in tips] == ["2026-11-20 11:12Z"], tips
    fd_tips = page.evaluate("""() => { const out = [];
        const walk = node => (node.items || []).forEach(i => { if (i.tooltip) out.push(i.tooltip); (i.items || []).forEach(walk); });
        walk(window.fleethealthViews['chart-fd'].scenegraph().root);
        return out.map(t => t['minute (UTC)']); }""")
    assert fd_tips and all(t.startswith("2026-11-20 1") and t.endswith("Z") for t in fd_tips), fd_tips[:5]


def test_usage_errors_are_one_line(lakehouse, tmp_path, capsys):
    out = str(tmp_path / "out")
    assert cli.main(["report", "--lakehouse", str(lakehouse), "--from", "2026-11-20T13:00Z", "--to",
                     "2026-11-20T10:00Z", "--out", out]) == 2
    assert "is not before --to" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert cli.main(["report", "--lakehouse", str(tmp_path / "empty"), *WINDOW, "--out", out]) == 2
    assert capsys.readouterr().err == (f"fleethealth: {tmp_path / 'empty'}: no gold tables (run `fleethealth run` "
                                       "or the DAG first)\n")
    assert cli.main(["report", "--lakehouse", str(lakehouse), *WINDOW, "--cluster", "nope", "--out", out]) == 2
    assert capsys.readouterr().err == ("fleethealth: --cluster nope: no data of it in this window (clusters: "
                                       f"{lh.HEALTHY}, {lh.DEAD})\n")
    assert cli.main(["report", "--lakehouse", str(lakehouse), *WINDOW,
                     "--out", str(lakehouse / "gold" / "incidents" / "x")]) == 2
    assert "inside the lakehouse's tables" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_refresh_of_one_cluster_from_an_older_lakehouse(tmp_path, capsys):
    """No silver.jmx_samples nor gold.incident_history, gold.incidents without its lifecycle columns
    (status, resolved_at, first_hour, ...): notes, every incident open; the page of a cluster the new
    window does not show is removed."""
    from deltalake import DeltaTable, write_deltalake

    root, out = lh.build(tmp_path / "lakehouse", with_jmx=False), tmp_path / "o"
    assert cli.main(["report", "--lakehouse", str(root), *WINDOW, "--out", str(out)]) == 0
    assert len(list(out.glob("*.html"))) == 3
    shutil.rmtree(root / "gold" / "incident_history")
    incidents = root / "gold" / "incidents"
    old = DeltaTable(str(incidents)).to_pyarrow_table().select(
        ["cluster", "kind", "severity", "entity", "first_seen", "last_seen", "evidence", "known_bug"])
    shutil.rmtree(incidents)
    write_deltalake(str(incidents), old)
    assert cli.main(["report", "--lakehouse", str(root), *WINDOW, "--cluster", lh.DEAD, "--out", str(out)]) == 0
    assert sorted(p.name for p in out.glob("*.html")) == ["cluster-pm3-dead-cleaner.html", "index.html"]
    page = (out / "cluster-pm3-dead-cleaner.html").read_text()
    assert "silver.jmx_samples is not in this lakehouse (an older lakehouse): no chart." in page
    assert ("Not in this lakehouse (an older one): gold.metadata_divergence, gold.deadlocks, "
            "gold.cluster_availability_hourly, gold.incident_history") in page
    assert page.count("class=\"incident\"") == 2 and "log_cleaner_dead</b> broker-2 — open" in page


# -- issue 47: hostile input, round four ------------------------------------------------------------------------------

def _listing(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


def test_a_log_string_in_a_chart_and_a_planted_bundle_reach_no_page_as_script(load, tmp_path):
    """`<!--<script` in an incident's evidence (the timeline's tooltip; a group name from a log line)
    opened a comment that swallowed the render script: every chart is still drawn, the string shown as
    it is. A bundle planted in the report folder under the name it was once cached by is never inlined
    (the cache is this user's, outside the published folder)."""
    from importlib.metadata import version

    import altair as alt
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake

    from fleethealth.runtime import config

    root = lh.build(tmp_path / "lakehouse")
    incidents = root / "gold" / "incidents"
    table = DeltaTable(str(incidents)).to_pyarrow_table()
    hostile = "group '<!--<script' loading for 600 s"
    evidence = [hostile if kind == "log_cleaner_dead" else e
                for kind, e in zip(table.column("kind").to_pylist(), table.column("evidence").to_pylist())]
    write_deltalake(str(incidents), table.set_column(table.schema.get_field_index("evidence"), "evidence",
                                                     pa.array(evidence)), mode="overwrite")
    out = root / "report"
    out.mkdir()
    major_minor = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    planted = out / f".vega-bundle-{version('vl-convert-python')}-vl{major_minor}.js"
    planted.write_text("window.planted = 1;")
    shared = out / planted.name.removeprefix(".")       # the name of the bundle the pages share
    shared.write_text("window.planted = 2;")
    tables = {p: _listing(p) for p in (root / "gold", root / "silver")}
    proc = fleethealth("report", "--lakehouse", str(root), *WINDOW, "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert {p: _listing(p) for p in tables} == tables                  # no commit, no file among the tables
    assert sorted(p.name for p in config.cache_dir().glob("vega-bundle-*.js"))
    page = out / "cluster-pm3-dead-cleaner.html"
    text = page.read_text()
    assert "window.planted" not in text and "<!--<script" not in text and "\\u003c!--\\u003cscript" in text
    loaded = load(page)
    assert loaded.errors == [] and loaded.failed == [] and loaded.refused == []
    assert loaded.page.evaluate("typeof window.planted") == "undefined"
    drawn = loaded.page.evaluate("""() => Array.from(document.querySelectorAll('div.chart')).map(d =>
        [d.id, d.querySelectorAll('svg .role-mark').length])""")
    assert len(drawn) == 9 and [d for d in drawn if d[1] == 0] == [], drawn
    shown = loaded.page.evaluate("window.fleethealthViews['chart-timeline'].data('incidents').map(r => r.evidence)")
    assert hostile in shown
    assert planted.read_text() == "window.planted = 1;"                # not its file: left alone
    assert shared.read_bytes() == (config.cache_dir() / shared.name).read_bytes()   # written anew from the cache


def test_report_out_refuses_the_tables_and_deletes_only_its_own_pages(tmp_path, monkeypatch, capsys):
    """`report --out <lakehouse>/gold` (the tables in the lakehouse folder) and --out in a tables root of
    its own are refused before anything is written; a refresh removes the pages of clusters it no
    longer shows that a report wrote, never another file named cluster-*.html nor a link's target."""
    root = lh.build(tmp_path / "lakehouse")
    lakehouse = _listing(root)
    gold = root / "gold"
    assert cli.main(["report", "--lakehouse", str(root), *WINDOW, "--out", str(gold)]) == 2
    assert capsys.readouterr().err == f"fleethealth: --out {gold}: inside the lakehouse's tables; give a folder of its own\n"
    assert _listing(root) == lakehouse                                 # no commit, no page among the tables

    tables = lh.build(tmp_path / "tables")
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("FLEETHEALTH_LAKEHOUSE", str(tmp_path / "home"))
    monkeypatch.setenv("FLEETHEALTH_TABLES", str(tables))
    before = _listing(tmp_path)
    for out in (tables, tables / "report"):
        assert cli.main(["report", *WINDOW, "--out", str(out)]) == 2
        assert capsys.readouterr().err == (f"fleethealth: --out {out}: inside the lakehouse's tables; give a "
                                           "folder of its own\n")
    assert _listing(tmp_path) == before
    monkeypatch.delenv("FLEETHEALTH_TABLES")

    out = tmp_path / "site"
    assert cli.main(["report", "--lakehouse", str(root), *WINDOW, "--out", str(out)]) == 0
    ours = (out / "cluster-healthy.html").read_text()
    (out / "cluster-notes.html").write_text("<p>a page of someone else's</p>")
    (tmp_path / "kept.html").write_text(ours)
    (out / "cluster-link.html").symlink_to(tmp_path / "kept.html")
    assert cli.main(["report", "--lakehouse", str(root), *WINDOW, "--cluster", lh.DEAD, "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith("vega-bundle-")) == [
        "cluster-link.html", "cluster-notes.html", "cluster-pm3-dead-cleaner.html", "index.html"]
    assert (tmp_path / "kept.html").read_text() == ours
    assert _listing(root) == lakehouse


# -- issue 48: a report that never shows stale as current --------------------------------------------------------------

def _cells(page) -> dict:
    return {(c["cluster"], c["hour"]): c["severity"]
            for c in page.evaluate("() => window.fleethealthViews['chart-fleet'].data('cells')")}


def test_a_window_after_the_last_processed_hour_is_no_data_for_every_cluster(lakehouse, load, tmp_path):
    """The lakehouse's last processed hour is 12:00: a report of 13:00-16:00 says so at the top of every
    page, colours every cluster hour "no data" (the healthy cluster too: every cluster of the last
    processed hour appears) and shows no incident as open, though two were open at 12:00."""
    out = tmp_path / "html"
    proc = fleethealth("report", "--lakehouse", str(lakehouse), "--from", "2026-11-20T13:00Z",
                       "--to", "2026-11-20T16:00Z", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    flag = ('Not processed: no hour of this window is processed yet (the last processed hour is 2026-11-20 '
            '12:00Z): every hour is "no data" and no incident is shown as open.')
    loaded = load(out / "index.html")
    page = loaded.page
    assert loaded.errors == [] and loaded.failed == [] and loaded.refused == []
    assert page.locator("#not-processed").inner_text() == flag
    assert page.locator("p.note").first.inner_text() == flag            # at the top
    hours = ("11-20 13:00", "11-20 14:00", "11-20 15:00")
    assert _cells(page) == {(c, h): "no data" for c in (lh.HEALTHY, lh.DEAD) for h in hours}
    colours = page.evaluate("""() => Array.from(document.querySelectorAll('#chart-fleet svg .mark-rect path'))
                               .map(p => p.getAttribute('fill'))""")
    assert colours == ["#d5d8dc"] * 6
    assert page.locator("h2#open-incidents").inner_text() == "Open incidents (0)"
    assert page.locator("ul.open").count() == 0
    assert page.locator("h2:text('Clusters') + ul li").all_inner_texts() == [
        f"{lh.HEALTHY}: 0 open incident(s); no data for 3 of 3 hours",
        f"{lh.DEAD}: 0 open incident(s); no data for 3 of 3 hours"]
    dead = load(out / "cluster-pm3-dead-cleaner.html").page
    assert dead.locator("#not-processed").inner_text() == flag
    assert dead.locator("h2#incidents").inner_text() == "Incidents (0)"


def test_hours_after_the_last_processed_one_are_no_data_the_others_as_processed(lakehouse, load, tmp_path):
    out = tmp_path / "html"
    assert cli.main(["report", "--lakehouse", str(lakehouse), "--from", "2026-11-20T11:00Z",
                     "--to", "2026-11-20T14:00Z", "--out", str(out)]) == 0
    page = load(out / "index.html").page
    assert page.locator("#not-processed").inner_text() == (
        'Not processed: the hours after 2026-11-20 12:00Z (the last processed hour) have no data yet: they show '
        '"no data", not the state before them.')
    assert _cells(page) == {(lh.HEALTHY, "11-20 11:00"): "none", (lh.HEALTHY, "11-20 12:00"): "none",
                            (lh.HEALTHY, "11-20 13:00"): "no data", (lh.DEAD, "11-20 11:00"): "critical",
                            (lh.DEAD, "11-20 12:00"): "critical", (lh.DEAD, "11-20 13:00"): "no data"}
    assert page.locator("h2#open-incidents").inner_text() == "Open incidents (2)"
    assert page.locator("h2:text('Clusters') + ul li").all_inner_texts() == [
        f"{lh.HEALTHY}: 0 open incident(s); no data for 1 of 3 hours",
        f"{lh.DEAD}: 2 open incident(s) critical; no data for 1 of 3 hours"]


def test_a_cluster_page_names_its_own_hours_without_data(tmp_path):
    """An hour processed for one cluster and not the other (the healthy cluster's 11:00 rows gone): its
    page says which hours; the overview's heatmap says "no data" for that one cluster hour."""
    from deltalake import DeltaTable

    root = lh.build(tmp_path / "lakehouse")
    DeltaTable(str(root / "gold" / "broker_health_hourly")).delete(
        f"cluster = '{lh.HEALTHY}' AND hour = '2026-11-20T11:00:00Z'")
    out = tmp_path / "html"
    assert cli.main(["report", "--lakehouse", str(root), *WINDOW, "--out", str(out)]) == 0
    page = (out / "cluster-healthy.html").read_text()
    assert ('<p class="note" id="not-processed">No data of healthy for 1 of the window&#x27;s 3 hours: '
            '11-20 11:00.</p>') in page
    assert 'id="not-processed"' not in (out / "cluster-pm3-dead-cleaner.html").read_text()
    assert f"{lh.HEALTHY}</a>: 0 open incident(s); no data for 1 of 3 hours</li>" in (out / "index.html").read_text()


def test_repeated_known_bug_exposure_lines_are_one_item_naming_each_broker(tmp_path, load):
    """Three brokers of one version exposed to one bug (incidents of a lakehouse from before that became
    gold.known_bug_exposure): one line in the overview that names the three hosts, each broker linking to its card."""
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake

    root = lh.build(tmp_path / "lakehouse")
    incidents = root / "gold" / "incidents"
    table = DeltaTable(str(incidents)).to_pyarrow_table()
    seen = lh.START
    rows = [dict(incident_id=f"kb00000000000{b}", cluster=lh.HEALTHY, kind="known_bug_exposure", severity="minor",
                 entity=f"broker-{b}", status="open", first_seen=seen, last_seen=lh.END - timedelta(seconds=1),
                 resolved_at=None, known_bug="KAFKA-3994", first_hour=lh.START, last_hour=lh.HOURS[-1], hours=3,
                 evidence=(f"inventory kafka_version 0.10.1.0 of {lh.HEALTHY}-kafka-{b} is in the affected range of "
                           "1 catalogued bug(s): a deadlock in the purgatory affected [0.10.0.0, 0.10.1.1)"),
                 first_evidence=None) for b in (1, 2, 3)]
    for r in rows:
        r["first_evidence"] = r["evidence"]
    write_deltalake(str(incidents), pa.Table.from_pylist(rows, schema=table.schema), mode="append")
    out = tmp_path / "html"
    assert cli.main(["report", "--lakehouse", str(root), *WINDOW, "--out", str(out)]) == 0
    page = load(out / "index.html").page
    assert page.locator("h2#open-incidents").inner_text() == "Open incidents (5)"
    items = page.locator("ul.open li").all_inner_texts()
    assert len(items) == 3
    assert items[2] == (
        f"minor {lh.HEALTHY}: known_bug_exposure broker-1, broker-2, broker-3 first seen 2026-11-20 10:00Z\n"
        f"inventory kafka_version 0.10.1.0 of {lh.HEALTHY}-kafka-1, {lh.HEALTHY}-kafka-2, {lh.HEALTHY}-kafka-3 is in "
        "the affected range of 1 catalogued bug(s): a deadlock in the purgatory affected [0.10.0.0, 0.10.1.1) — "
        "matches KAFKA-3994 (Deadlock between the group coordinator's group lock and DelayedOperationPurgatory "
        "Watchers), fixed in 0.10.1.1 / 0.10.2.0")
    assert [a.rsplit("/", 1)[1] for a in page.evaluate(
        "() => Array.from(document.querySelectorAll('ul.open li:last-child a.card')).map(a => a.href)")] == [
        f"cluster-healthy.html#incident-kb00000000000{b}" for b in (1, 2, 3)]


# -- issue 59: small ones ---------------------------------------------------------------------------------------------

def _rewritten(root: Path, change) -> None:
    """Every table of the lakehouse rewritten with `change(arrow table)`."""
    from deltalake import DeltaTable, write_deltalake

    from fleethealth.lake import tables as lake

    for path in sorted(p.parent for p in root.glob("*/*/_delta_log")):
        table = DeltaTable(str(path))
        write_deltalake(str(path), change(lake.arrow_rows(table)), mode="overwrite",
                        partition_by=table.metadata().partition_columns or None)


def test_two_clusters_differing_in_a_non_ascii_letter_get_a_page_each(tmp_path):
    """"köln" and "kóln" shared one page (cluster-k_ln.html: the second overwrote the first): each gets its
    own (page_name: the ASCII slug, `~` and a hash of the exact name), and every link goes to its own."""
    import re

    import pyarrow as pa
    import pyarrow.compute as pc

    from fleethealth.report.html.read import page_name

    names = {lh.DEAD: "köln", lh.HEALTHY: "kóln"}

    def renamed(table: pa.Table) -> pa.Table:
        if "cluster" not in table.column_names:
            return table
        i = table.schema.get_field_index("cluster")
        column = pc.replace_substring_regex(table.column(i), f"^{lh.DEAD}$", names[lh.DEAD])
        return table.set_column(i, "cluster", pc.replace_substring_regex(column, f"^{lh.HEALTHY}$", names[lh.HEALTHY]))

    root, out = lh.build(tmp_path / "lakehouse"), tmp_path / "out"
    _rewritten(root, renamed)
    assert cli.main(["report", "--lakehouse", str(root), *WINDOW, "--out", str(out)]) == 0
    dead, healthy = page_name("köln"), page_name("kóln")
    assert dead != healthy and dead.startswith("cluster-k_ln~") and page_name(lh.DEAD) == f"cluster-{lh.DEAD}.html"
    assert sorted(p.name for p in out.glob("*.html")) == sorted([dead, healthy, "index.html"])
    assert "<title>fleethealth: köln</title>" in (out / dead).read_text()
    assert "<title>fleethealth: kóln</title>" in (out / healthy).read_text()
    assert "log_cleaner_dead</b> broker-2 — open" in (out / dead).read_text()
    assert "No incident in this window." in (out / healthy).read_text()
    index = (out / "index.html").read_text()
    assert f'<a href="{dead}">köln</a>' in index and f'<a href="{healthy}">kóln</a>' in index
    assert set(re.findall(r'class="card" href="([^"#]+)#', index)) == {dead}
    assert {f"{dead}#incidents", f"{healthy}#incidents"} <= set(re.findall(r'"page":"([^"]+)"', index))


def test_bidi_and_control_characters_of_a_log_line_are_shown_escaped_on_every_page(tmp_path):
    """A U+202E (right-to-left override) in a log line reorders what follows it on the page ("…gnp.exe"
    shows as "exe.png…"): in an incident's evidence (its card, the overview's list), in a fact table's
    text (its cell, the chart's data) and in a list of names from the logs (a consumer group, in the rows
    every page is built from: read.shown), it is shown as `\\u202e`, as are an ESC and a C1 control; a
    tab stays. No page holds the raw characters."""
    import pyarrow as pa

    from fleethealth.report.html.read import page_name, shown as shown_rows

    hostile = "cleaner 'Error due to' \u202egnp.exe\x1b[31m\x85 at\t10:20"

    def planted(table: pa.Table) -> pa.Table:
        names = table.column_names
        if "incident_id" in names and "evidence" in names and "first_evidence" in names:   # gold.incidents
            for column in ("evidence", "first_evidence"):
                values = [hostile if kind == "log_cleaner_dead" else e
                          for kind, e in zip(table.column("kind").to_pylist(), table.column(column).to_pylist())]
                table = table.set_column(names.index(column), column, pa.array(values, pa.string()))
        if "status" in names and "dead_since" in names:                                   # gold.log_cleaner_status
            values = [hostile if e else e for e in table.column("evidence").to_pylist()]
            table = table.set_column(names.index("evidence"), "evidence", pa.array(values, pa.string()))
        return table

    root, out = lh.build(tmp_path / "lakehouse"), tmp_path / "out"
    _rewritten(root, planted)
    assert cli.main(["report", "--lakehouse", str(root), *WINDOW, "--out", str(out)]) == 0
    shown = "cleaner 'Error due to' \\u202egnp.exe\\x1b[31m\\x85 at\t10:20"
    pages = {p.name: p.read_text(encoding="utf-8") for p in out.glob("*.html")}
    for name, text in pages.items():
        assert not set(text) & {"\u202e", "\x1b", "\x85"}, name
    dead, index = pages[page_name(lh.DEAD)], pages["index.html"]
    assert f"<br>evidence: {html.escape(shown)}" in dead                                   # the card
    assert f'<div class="what">{html.escape(shown)}' in index                              # the overview's list
    assert json.dumps(shown)[1:-1] in dead                                                  # a chart's data (tooltip)
    assert f"<td>{html.escape(shown)}</td>" in dead                                         # the fact table
    assert shown_rows(pa.table({"groups": [["g-\u202e1", None], None], "n": [1, 2]})).to_pylist() == [
        {"groups": ["g-\\u202e1", None], "n": 1}, {"groups": None, "n": 2}]              # a list's names


def test_a_stale_lakehouse_says_so_at_the_top(report, monkeypatch):
    """Its newest processed hour (12:00Z of the test fleet) ended more than FLEETHEALTH_STALE_AFTER_HOURS (3)
    before the report: the banner says what is shown open was open then (issue 62)."""
    from fleethealth.report.html import pages
    from fleethealth.report.html.read import Gold

    gold = Gold(lh.START, lh.END, last_processed=lh.HOURS[-1])
    assert pages._stale_note(gold, now=lh.END + timedelta(hours=3)) == ""
    note = pages._stale_note(gold, now=lh.END + timedelta(hours=3, minutes=1))
    assert note.startswith('<p class="note" id="stale">Stale: the newest processed hour is 2026-11-20 12:00Z, which '
                           "ended 3 h before this report (more than FLEETHEALTH_STALE_AFTER_HOURS=3)")
    assert pages._stale_note(Gold(lh.START, lh.END), now=lh.END + timedelta(days=9)) == ""   # nothing processed: not-processed says it
    monkeypatch.setenv("FLEETHEALTH_STALE_AFTER_HOURS", "48")
    assert pages._stale_note(gold, now=lh.END + timedelta(hours=47)) == ""
    assert "FLEETHEALTH_STALE_AFTER_HOURS=48" in pages._stale_note(gold, now=lh.END + timedelta(hours=49))
    monkeypatch.delenv("FLEETHEALTH_STALE_AFTER_HOURS")
    # the test fleet's report, written days after its last hour, carries the banner on each page
    for page in ("index.html", "cluster-healthy.html"):
        assert 'id="stale">Stale: the newest processed hour is 2026-11-20 12:00Z' in (report / page).read_text()


def test_a_cluster_page_draws_its_own_threshold(lakehouse, tmp_path, monkeypatch):
    """Issue 62 item 6: a cluster with thresholds of its own (the file's `clusters:`) has them drawn on its page."""
    from fleethealth.lake.catalog import Lakehouse
    from fleethealth.report import html as report_html

    own = tmp_path / "thresholds.yaml"
    own.write_text(f"clusters:\n  {lh.DEAD}: {{offsets_partition_bloat.max_size_bytes: 2147483648}}\n")
    monkeypatch.setenv(config.ENV_THRESHOLDS, str(own))
    index = report_html.write_report(Lakehouse.at(lakehouse), lh.START, lh.END, tmp_path / "html")
    dead = (index.parent / f"cluster-{lh.DEAD}.html").read_text()
    assert "offsets_partition_bloat.max_size_bytes = 2.00 GiB" in dead
    assert "offsets_partition_bloat.max_size_bytes = 1.00 GiB" not in dead
