"""fleethealth.quality.docs: the GX Data Docs site works offline and is pruned with the tables'
retention (lake.maintenance.DEFAULT_RETAIN_HOURS, the VACUUM one).

The site is built for real by GX through the project's functions (suites._store, context.build_docs,
the calls validate_tables makes): from GX validation results made here (no Spark), and in the test
marked `spark` from validate_tables on a DataFrame. Optional: a page opened in headless Chromium with
every non-file:// request aborted.
"""
from __future__ import annotations

import os
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")

from fleethealth.lake.catalog import Lakehouse
from fleethealth.lake import maintenance  # noqa: E402
from fleethealth.quality import docs  # noqa: E402
from fleethealth.quality import context  # noqa: E402
from fleethealth.quality import suites as quality  # noqa: E402

UTC = timezone.utc
HOUR = datetime(2024, 3, 5, 10, tzinfo=UTC)
TABLE = "gold.incident_findings"
CHROMIUM = "/usr/bin/chromium"

# an asset a page loads: <script src>, <link href> (stylesheets, icons), <img src>, CSS url()/@import
ASSET = re.compile(r"<script\b[^>]*\bsrc=[\"']([^\"']+)|<link\b[^>]*\bhref=[\"']([^\"']+)"
                   r"|<img\b[^>]*\bsrc=[\"']([^\"']+)|url\(\s*[\"']?([^\"')]+)|@import\s+[\"']([^\"']+)", re.I)
NETWORK = re.compile(r"^(?:[a-z][a-z0-9+.-]*:)?//", re.I)   # http://, https://, //host
LINK = re.compile(r"<a\b[^>]*\bhref=[\"']([^\"'#]+)[\"']", re.I)


# ------------------------------------------------------------------------------------- helpers
def _outcome(ok: bool):
    """A GX validation result of the incident suite's shape: one passing and one (maybe) failing
    expectation, the failing one with its offending value."""
    from great_expectations.core import ExpectationSuiteValidationResult, ExpectationValidationResult
    from great_expectations.expectations.expectation_configuration import ExpectationConfiguration

    def result(success, type_, kwargs, **res):
        return ExpectationValidationResult(success=success, result=res, expectation_config=ExpectationConfiguration(
            type=type_, kwargs=kwargs, meta={"severity": "critical"}))
    results = [
        result(True, "expect_column_values_to_not_be_null", {"column": "entity"}, element_count=3,
               unexpected_count=0, unexpected_percent=0.0, partial_unexpected_list=[]),
        result(ok, "expect_column_values_to_be_in_set", {"column": "kind", "value_set": ["data_missing"]},
               element_count=3, unexpected_count=0 if ok else 1, unexpected_percent=0.0 if ok else 33.3,
               partial_unexpected_list=[] if ok else ["broker_on_fire"]),
    ]
    return ExpectationSuiteValidationResult(
        success=ok, results=results, suite_name=TABLE,
        statistics={"evaluated_expectations": 2, "successful_expectations": 1 + ok,
                    "unsuccessful_expectations": 1 - ok, "success_percent": 100.0 if ok else 50.0})


def _validated(docs_dir: Path, hour: datetime, ok: bool = True):
    """What validate_tables does with data_docs_dir for one table, with a result made here."""
    with context.docs_lock(docs_dir):
        stored = [quality._store(context.get(docs_dir), {"name": TABLE}, TABLE, hour, _outcome(ok))]
        context.build_docs(docs_dir, stored)
    return stored[0]


def _new_process(docs_dir: Path) -> None:
    """The next job (or the maintenance job) is another process with its own GX context."""
    context.contexts.pop(str(Path(docs_dir).resolve()), None)


def _pages(docs_dir: Path) -> list[Path]:
    return sorted(docs_dir.rglob("*.html"))


def _run_pages(docs_dir: Path, hour: datetime) -> list[Path]:
    return sorted((docs_dir / "validations").rglob(f"*-{hour:%Y%m%dT%H%M}Z/*/*.html"))


def _run_results(docs_dir: Path, hour: datetime) -> list[Path]:
    return sorted((docs_dir / context.DOCS_STORES).rglob(f"*-{hour:%Y%m%dT%H%M}Z/*/*.json"))


def _local(page: Path, ref: str) -> Path:
    return (page.parent / unquote(urlsplit(ref).path)).resolve()


def assert_offline(docs_dir: Path) -> None:
    """No page loads anything from the network, and every local asset a page loads exists."""
    pages = _pages(docs_dir)
    assert pages
    for page in pages:
        text = page.read_text(encoding="utf-8")
        refs = [next(g for g in m.groups() if g) for m in ASSET.finditer(text)]
        remote = [ref for ref in refs if NETWORK.match(ref.strip())]
        assert remote == [], f"{page.relative_to(docs_dir)} loads {remote}"
        assert not re.search(r"https?://", " ".join(re.findall(r"@font-face[^}]*}", text))), page
        missing = [ref for ref in refs if not ref.startswith("data:") and not _local(page, ref).exists()]
        assert missing == [], f"{page.relative_to(docs_dir)} loads missing files {missing}"
        assert "bootstrapTable" not in text and "$(" not in text, f"{page} still needs jQuery"


def index_links(docs_dir: Path) -> list[str]:
    return [ref for ref in LINK.findall((docs_dir / "index.html").read_text(encoding="utf-8"))
            if not NETWORK.match(ref)]


# --------------------------------------------------------------------------------------- offline
def test_pages_load_nothing_from_the_network_and_the_index_is_a_plain_table(tmp_path):
    site = tmp_path / "data_docs"
    _validated(site, HOUR, ok=False)
    _new_process(site)                       # the next hour's job: earlier pages stay
    _validated(site, HOUR + timedelta(hours=1))
    assert len(_run_pages(site, HOUR)) == len(_run_pages(site, HOUR + timedelta(hours=1))) == 1
    assert_offline(site)

    index = (site / "index.html").read_text(encoding="utf-8")
    # the results are in the HTML (bootstrap-table filled them in with JavaScript), newest first
    assert index.index(f"{TABLE}-20240305T1100Z") < index.index(f"{TABLE}-20240305T1000Z")
    assert "fa-check-circle" in index and "fa-times" in index and "\\2714" in index
    links = index_links(site)
    assert {str(p.relative_to(site)) for p in _run_pages(site, HOUR) + _run_pages(site, HOUR + timedelta(hours=1))} \
        <= set(links)
    assert all((site / unquote(link)).is_file() for link in links), links

    [failed] = _run_pages(site, HOUR)
    page = failed.read_text(encoding="utf-8")
    assert "broker_on_fire" in page and "function hideSucceededValidations" in page


def test_offline_html_drops_network_assets_and_keeps_local_ones():
    page = ('<html><head><link rel="stylesheet" href="https://cdn.example/b.css"/>'
            '<link rel="shortcut icon" href="../static/images/favicon.ico" type="image/x-icon"/>'
            '<script src="//cdn.example/jq.js"></script><script>$(".x").modal();</script>'
            "<style>@import url('https://fonts.example/f.css'); a { background: url('https://s3.example/l.png') }</style>"
            '</head><body><img src="https://s3.example/assets/logo-long.png?d=1" alt="x"/>'
            '<img class="y" src="https://s3.example/nowhere-else.png" alt="y"/>'
            '<a href="../../expectations/gold/x.html">gold.x</a><a href="https://greatexpectations.io">GX</a></body></html>')
    out = docs.offline_html(page, "../../")
    assert "cdn.example" not in out and "fonts.example" not in out and "s3.example" not in out
    assert '<img src="../../static/images/logo-long.png"' in out       # GX's copy of its logo
    assert 'class="y"' not in out                                       # an image GX has no copy of
    assert 'href="../../static/images/favicon.ico"' in out
    assert "$(" not in out and "function showAllValidations" in out
    assert ">gold.x<" in out and "expectations/gold/x.html" not in out   # no page behind it
    assert 'href="https://greatexpectations.io"' in out                   # a link, not an asset


def test_pages_written_before_the_offline_views_are_made_offline_by_the_maintenance(tmp_path):
    """A site upgraded in place: its earlier result pages (GX's own view: CDN assets) are rewritten
    when the maintenance job prunes (they have no bootstrap-table, their tables are HTML already)."""
    from great_expectations.render.renderer import ValidationResultsPageRenderer
    from great_expectations.render.view import DefaultJinjaPageView

    site = tmp_path / "data_docs"
    _validated(site, HOUR, ok=False)
    [page] = _run_pages(site, HOUR)
    page.write_text(DefaultJinjaPageView().render(ValidationResultsPageRenderer().render(_outcome(False))),
                    encoding="utf-8")
    assert "cdn.jsdelivr.net" in page.read_text(encoding="utf-8")
    _new_process(site)
    assert docs.prune(site, retain_hours=maintenance.DEFAULT_RETAIN_HOURS) == []
    assert_offline(site)
    assert "broker_on_fire" in page.read_text(encoding="utf-8")
    assert docs.offline_pages(site) == 0     # once


# --------------------------------------------------------------------------------------- pruning
def test_prune_removes_the_older_hour_and_the_index_links_only_what_remains(tmp_path):
    site = tmp_path / "data_docs"
    _validated(site, HOUR)
    between = datetime.now(UTC)
    _new_process(site)
    _validated(site, HOUR + timedelta(hours=1))
    assert _run_pages(site, HOUR) and _run_results(site, HOUR)

    _new_process(site)                       # the maintenance job
    # a retention of 1 h seen 1 h after `between`: the first result is older, the second is not
    removed = docs.prune(site, retain_hours=1, now=between + timedelta(hours=1))
    assert [key.run_id.run_name for key in removed] == [f"{TABLE}-20240305T1000Z"]
    assert _run_pages(site, HOUR) == [] and _run_results(site, HOUR) == []
    assert _run_pages(site, HOUR + timedelta(hours=1)) and _run_results(site, HOUR + timedelta(hours=1))
    index = (site / "index.html").read_text(encoding="utf-8")
    assert f"{TABLE}-20240305T1000Z" not in index and f"{TABLE}-20240305T1100Z" in index
    links = index_links(site)
    assert links and all((site / unquote(link)).is_file() for link in links), links
    assert not list(site.rglob("*-20240305T1000Z"))   # no empty folders left (pages nor results)
    assert_offline(site)
    # within the retention nothing goes
    assert docs.prune(site, retain_hours=1, now=between + timedelta(hours=1)) == []


def test_the_maintenance_prunes_the_lakehouse_data_docs_with_the_tables_retention(tmp_path):
    lakehouse = tmp_path / "lakehouse"
    site = Lakehouse.at(lakehouse).data_docs
    _validated(site, HOUR)
    _new_process(site)
    assert docs.prune_data_docs(Lakehouse.at(lakehouse)) == 0               # 7 days: the result is minutes old
    assert _run_pages(site, HOUR)
    _new_process(site)
    assert docs.prune_data_docs(Lakehouse.at(lakehouse), retain_hours=0) == 1
    assert _run_pages(site, HOUR) == [] and _run_results(site, HOUR) == []
    assert index_links(site) == []
    assert docs.prune_data_docs(Lakehouse.at(tmp_path / "no-lakehouse")) == 0   # no Data Docs yet: nothing to do


def test_prune_waits_for_a_job_writing_the_site(tmp_path):
    """GX's index build deletes pages whose result it did not list: the maintenance job and an
    hourly job never build the site at the same time."""
    import threading

    site = tmp_path / "data_docs"
    _validated(site, HOUR)
    _new_process(site)
    pruned = []
    with context.docs_lock(site):          # an hourly job storing results and building pages
        thread = threading.Thread(target=lambda: pruned.append(docs.prune(site, retain_hours=0)))
        thread.start()
        thread.join(1.0)
        assert thread.is_alive() and pruned == []
    thread.join(60)
    assert [[key.run_id.run_name for key in keys] for keys in pruned] == [[f"{TABLE}-20240305T1000Z"]]


def test_negative_retention_is_refused(tmp_path):
    with pytest.raises(ValueError, match="retain_hours"):
        docs.prune(tmp_path, retain_hours=-1)


def test_the_maintenance_job_prunes_the_data_docs_with_the_retention_it_vacuums_with():
    """spark/maintenance.py (the DAG's task; its retain_hours default is lake.maintenance's, see
    test_lake_maintenance) passes its one retention to both."""
    import ast

    source = (Path(__file__).resolve().parents[1] / "spark" / "maintenance.py").read_text()
    calls = {node.func.attr: ast.unparse(node.args[-1]) for node in ast.walk(ast.parse(source))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
             and node.func.attr in ("maintain", "prune_data_docs")}
    assert calls == {"maintain": "args.retain_hours", "prune_data_docs": "args.retain_hours"}


# ------------------------------------------------------------------------------------ in a browser
def _browse(path: Path) -> tuple[str, list[str]]:
    """The visible text of `path` in headless Chromium, and what went wrong: requests that left the
    machine (aborted) or failed, and script errors."""
    sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed")
    problems: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        try:
            page = browser.new_page()
            page.on("requestfailed", lambda r: problems.append(f"failed: {r.url}"))
            page.on("pageerror", lambda e: problems.append(f"error: {e}"))

            def route(r):
                if r.request.url.startswith("file://"):
                    r.continue_()
                else:
                    problems.append(f"network: {r.request.url}")
                    r.abort()
            page.route("**/*", route)
            page.goto(path.as_uri())
            text = page.inner_text("body")
            if page.locator("text=Failed Only").count():   # a result page: its filter button
                page.click("text=Failed Only")
                hidden = page.evaluate(
                    "() => [...document.querySelectorAll('.hide-succeeded-validation-target-child')]"
                    ".every(el => getComputedStyle(el.parentElement).display === 'none')")
                text += "\n<succeeded hidden>" if hidden else ""
            return text, problems
        finally:
            browser.close()


def test_a_browser_without_network_shows_the_index_and_a_result(tmp_path):
    site = tmp_path / "data_docs"
    _validated(site, HOUR, ok=False)
    _validated(site, HOUR + timedelta(hours=1))
    text, problems = _browse(site / "index.html")
    assert problems == []
    assert f"{TABLE}-20240305T1000Z" in text and f"{TABLE}-20240305T1100Z" in text and "Run Name" in text
    [failed] = _run_pages(site, HOUR)
    text, problems = _browse(failed)
    assert problems == []
    assert "broker_on_fire" in text and "Unsuccessful Expectations" in text
    assert "<succeeded hidden>" in text       # "Failed Only" works without jQuery


# -------------------------------------------------------------------------------- through Spark
@pytest.mark.spark
def test_validate_tables_writes_offline_pages_that_prune_removes(spark, tmp_path):
    """The real path: validate_tables on a DataFrame writes the pages; prune drops the older hour."""
    from test_quality_suites import _clean_incidents, _incident, _incidents_df

    site = tmp_path / "data_docs"
    rows = _clean_incidents() + [_incident(kind="broker_on_fire")]
    quality.validate_tables({TABLE: _incidents_df(spark, rows)}, hour=HOUR, data_docs_dir=site)
    between = datetime.now(UTC)
    _new_process(site)
    later = HOUR + timedelta(hours=1)
    quality.validate_tables({TABLE: _incidents_df(spark, [dict(r, hour=later, first_seen=r["first_seen"] + timedelta(hours=1),
                                                               last_seen=r["last_seen"] + timedelta(hours=1))
                                                        for r in _clean_incidents()])},
                            hour=later, data_docs_dir=site)
    assert_offline(site)
    [failed] = _run_pages(site, HOUR)
    assert "broker_on_fire" in failed.read_text(encoding="utf-8")

    _new_process(site)
    removed = docs.prune(site, retain_hours=0, now=between)
    assert [key.run_id.run_name for key in removed] == [f"{TABLE}-20240305T1000Z"]
    assert _run_pages(site, HOUR) == [] and _run_results(site, HOUR) == []
    assert _run_pages(site, later) and _run_results(site, later)
    links = index_links(site)
    assert links and all((site / unquote(link)).is_file() for link in links), links
    assert_offline(site)
