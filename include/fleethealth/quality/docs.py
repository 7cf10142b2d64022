"""GX Data Docs fit for an air-gapped fleet: pages that need no network, pruned like the tables.

Offline. GX 1.x's page templates load Bootstrap, bootstrap-table, jQuery, popper, datepicker, vega
and Font Awesome from public CDNs, and its logo from S3; GX has no option to change that (the
custom views folder is searched after GX's own templates, and "support offline data docs" was
declined upstream: great_expectations#994, #2870, #8734). No installed Python package ships those
libraries (GX's ``render/view/static`` holds only its images, fonts and its own stylesheet, which
the pages already inline). So the site uses GX's supported extension point instead, the view class
of each section and of the index (``DOCS_PAGE_VIEW``, ``DOCS_INDEX_VIEW`` in the site config of
:func:`fleethealth.quality.context.get`), with views that render the same documents without them:

* every ``<script src>`` / ``<link href>`` to a network URL is dropped, and GX's inline scripts
  (they all need jQuery) with them; two small functions replace the "Show All / Failed Only"
  buttons' jQuery ones;
* bootstrap-table blocks (the index's list of validation results is filled in by JavaScript, an
  empty ``<table>`` without it) are rendered as plain HTML tables, newest first, each row linking
  to its page;
* the logo and the favicon point at GX's own copies in the site's ``static/images`` (copied there
  by GX at every build), at the right depth (GX's favicon path is one level short on result pages);
  ``url(https://...)`` in inline styles becomes ``none``; links to suite pages are dropped (the
  suites are expectations/*.json filled in per hour, never put in GX's expectation store: GX's
  links to their pages would lead nowhere);
* a short stylesheet (``OFFLINE_CSS``, inlined) lays out what Bootstrap would have and draws the
  Font Awesome status icons GX uses (check, cross, warning) as characters.

Left out for good: the table filters and sorting of bootstrap-table, and vega charts (drawn only for
distribution expectations, which no suite of the project uses; their block would stay empty).

Pruned. :func:`prune` removes from GX's validation-result store (``<data_docs_dir>/_gx``) the
results validated more than ``retain_hours`` ago, then rebuilds the index: GX's index builder
deletes the pages whose result is gone and lists only those that remain. The maintenance job runs it
with the tables' VACUUM retention (``fleethealth.lake.maintenance``).
"""
from __future__ import annotations

import heapq
import html
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

from fleethealth.lake.catalog import Lakehouse
from fleethealth.lake.maintenance import DEFAULT_RETAIN_HOURS

import great_expectations
from great_expectations.data_context.types.resource_identifiers import ValidationResultIdentifier
from great_expectations.render.components import RenderedContent
from great_expectations.render.renderer.site_builder import DefaultSiteIndexBuilder, DefaultSiteSectionBuilder
from great_expectations.render.view import DefaultJinjaIndexPageView, DefaultJinjaPageView

_NETWORK = r"""["']?(?:https?:)?//"""   # http://, https:// or protocol-relative //
_REMOTE_SCRIPT = re.compile(r"<script\b[^>]*\bsrc=" + _NETWORK + r"[^>]*>\s*</script>", re.I)
_REMOTE_LINK = re.compile(r"<link\b[^>]*\bhref=" + _NETWORK + r"[^>]*>", re.I)
_INLINE_SCRIPT = re.compile(r"<script\b(?![^>]*\bsrc=)[^>]*>.*?</script>", re.I | re.S)
_REMOTE_CSS_URL = re.compile(r"url\(\s*" + _NETWORK + r"[^)]*\)", re.I)
_REMOTE_IMPORT = re.compile(r"@import\s+(?:url\()?" + _NETWORK + r"[^;]*;", re.I)
_REMOTE_IMG = re.compile(r"<img\b[^>]*?\bsrc=([\"'])(?:https?:)?//[^\"']*?/([\w.-]+)(?:\?[^\"']*)?\1[^>]*>", re.I)
_GX_IMAGES = Path(great_expectations.__file__).parent / "render" / "view" / "static" / "images"
# fleethealth never stores its suites in GX's expectation store (they are expectations/*.json,
# filled in per hour): GX's links to suite pages would lead nowhere
_SUITE_LINK = re.compile(r"<a\b[^>]*\bhref=\"(?:\.\./)*expectations/[^\"]*\"[^>]*>(.*?)</a>", re.I | re.S)
_FAVICON = re.compile(r"(<link\b[^>]*rel=\"shortcut icon\"[^>]*\bhref=\")[^\"]*static/images/", re.I)

_MARK = 'id="fleethealth-offline"'   # on the stylesheet of a page made offline
OFFLINE_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; color: #212529; }
a { color: #0b5ed7; }
.navbar { display: flex; align-items: center; padding: 0 1rem; border-bottom: 1px solid #dee2e6; }
.breadcrumb { display: inline-flex; list-style: none; margin: 0 0 0 1rem; padding: 0; gap: .5rem; }
.row { display: flex; flex-wrap: wrap; }
.col-md-2 { flex: 0 0 16%; max-width: 16%; padding-right: 1rem; box-sizing: border-box; }
.col-md-10 { flex: 1 1 0; min-width: 0; }
.col-6 { flex: 0 0 50%; max-width: 50%; box-sizing: border-box; }
.col-12 { flex: 0 0 100%; max-width: 100%; }
.container-fluid { padding: 1rem 2rem; }
.card { border: 1px solid #dee2e6; border-radius: 4px; margin-bottom: 1rem; }
.card-header { background: #f7f7f9; padding: .4rem .6rem; }
.card-body { padding: .6rem; }
.alert-secondary { background: #e2e3e5; padding: .5rem .75rem; border-radius: 4px; margin: .5rem 0; }
.nav { list-style: none; padding: 0; }
.nav-tabs { display: flex; list-style: none; padding: 0; border-bottom: 1px solid #dee2e6; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { border: 1px solid #dee2e6; padding: .3rem .5rem; text-align: left; vertical-align: top; }
thead[hidden], [hidden], .d-none, .modal { display: none; }
@media (min-width: 768px) { .d-md-block { display: block; } }
.invisible { visibility: hidden; }
.text-success { color: #198754; } .text-danger { color: #dc3545; } .text-warning { color: #b58100; }
.fas::before { font-style: normal; }
.fa-check-circle::before { content: "\\2714"; }
.fa-times::before, .fa-times-circle::before { content: "\\2718"; }
.fa-exclamation-triangle::before { content: "\\26A0"; }
.fa-question-circle::before { content: "?"; }
.fa-comment::before { content: "\\1F4AC"; }
.btn { border: 1px solid #6c757d; border-radius: 4px; padding: .2rem .5rem; cursor: pointer; }
footer { margin: 1rem 2rem; color: #6c757d; }
"""

# GX's two "Validation Filter" buttons call these (its versions need jQuery)
OFFLINE_JS = """
function _fhShow(visible) {
  const display = visible ? "" : "none";
  document.querySelectorAll(".hide-succeeded-validation-target-child").forEach(el => { el.parentElement.style.display = display; });
  document.querySelectorAll(".hide-succeeded-validation-target").forEach(el => { el.style.display = display; });
  document.querySelectorAll(".hide-succeeded-validations-column-section-target-child").forEach(el => {
    const section = el.parentElement.parentElement;
    section.style.display = display;
    document.querySelectorAll('a[href$="' + section.id + '"]').forEach(a => { a.style.display = display; });
  });
}
function showAllValidations() { _fhShow(true); }
function hideSucceededValidations() { _fhShow(false); }
"""


# ------------------------------------------------------------------------------------- the views
def _site_root(document: dict) -> str:
    """The relative path from a page of `document` to the site's root (where index.html is)."""
    renderer = document.get("renderer_type") or ""
    dots = (document.get("expectation_suite_name") or "").count(".")
    if "ValidationResults" in renderer or "ProfilingResults" in renderer:
        return "../" * (dots + 4)   # validations/<suite parts>/<run name>/<run time>/<batch>.html
    if "ExpectationSuite" in renderer:
        return "../" * (dots + 1)   # expectations/<suite parts>.html
    return "./"


def _cell(value, link: str | None):
    if isinstance(value, str) and "<" not in value:   # plain text; GX's markup is kept as it is
        text = html.escape(value.strip())
        return f'<a href="{html.escape(link, quote=True)}">{text}</a>' if link else text
    return value


def static_tables(node):
    """`node` (a rendered document as JSON) with each bootstrap-table block (rows filled in by
    JavaScript) turned into a plain table block: the same columns and rows, newest first, each row's
    plain-text cells linking to its page."""
    if isinstance(node, list):
        return [static_tables(item) for item in node]
    if not isinstance(node, dict):
        return node
    if node.get("content_block_type") != "bootstrap_table":
        return {key: static_tables(value) for key, value in node.items()}
    columns = node.get("table_columns") or []
    rows = list(node.get("table_data") or [])
    if rows and all("_run_time_sort" in row for row in rows):
        rows.sort(key=lambda row: row["_run_time_sort"], reverse=True)
    block = {key: static_tables(value) for key, value in node.items()
             if key not in ("table_columns", "table_data", "table_options", "content_block_type")}
    block.update(content_block_type="table",
                 header_row=[column.get("title", column.get("field", "")) for column in columns],
                 table=[[_cell(row.get(column.get("field"), ""), row.get("_table_row_link_path"))
                         for column in columns] for row in rows])
    return block


def offline_html(page: str, root: str = "./") -> str:
    """A rendered page without network assets; `root` is the relative path to the site's root."""
    page = _REMOTE_SCRIPT.sub("", page)
    page = _REMOTE_LINK.sub("", page)
    page = _INLINE_SCRIPT.sub("", page)
    page = _REMOTE_IMPORT.sub("", page)
    page = _REMOTE_CSS_URL.sub("none", page)
    page = _REMOTE_IMG.sub(lambda m: _local_image(m, root), page)
    page = _SUITE_LINK.sub(r"\1", page)
    page = _FAVICON.sub(lambda m: f"{m[1]}{root}static/images/", page)
    extra = f"<style {_MARK}>{OFFLINE_CSS}</style>\n<script>{OFFLINE_JS}</script>\n"
    return page.replace("</head>", extra + "</head>", 1)


def _local_image(match: re.Match, root: str) -> str:
    """A network <img> (GX's logo, from S3) pointed at GX's copy in the site's static/images, or
    left out when GX has none of that name."""
    tag, quote, name = match[0], match[1], match[2]
    if not (_GX_IMAGES / name).is_file():
        return ""
    return re.sub(r"\bsrc=" + quote + r"[^" + quote + r"]*" + quote, lambda _: f"src={quote}{root}static/images/{name}{quote}", tag, count=1)


class OfflinePageView(DefaultJinjaPageView):
    """GX's page view, rendering pages that load nothing from the network (see the module doc)."""

    def render(self, document, template=None, **kwargs):
        self._validate_document(document)
        content = document.to_json_dict() if isinstance(document, RenderedContent) else document
        page = self._get_template(template or self._template).render(static_tables(content), **kwargs)
        return offline_html(page, _site_root(content))


class OfflineIndexPageView(OfflinePageView, DefaultJinjaIndexPageView):
    """GX's index page view, offline: the list of results is a plain table."""


# ---------------------------------------------------------------- a build that costs one hour
# GX's builders list every retained result before rendering the hour's pages and the index (three
# listings of the results store and one of the site, each key's run time parsed): a cost that grows
# with the retention (about 60 results an hour; 10,000 at a week). These two render the same pages and
# the same index from the hour's results and the site's newest pages only; prune uses GX's full
# build (_FULL), which also deletes the pages whose result is gone.
_FULL = False


class _Listing:
    """A store whose list_keys is `keys` (the hour's results); everything else is the store's."""

    def __init__(self, store, keys):
        self._store, self._keys = store, keys

    def list_keys(self):
        return list(self._keys)

    def __getattr__(self, name):
        return getattr(self._store, name)


class HourSectionBuilder(DefaultSiteSectionBuilder):
    """Renders the pages of the results it is given without listing the whole store."""

    def build(self, resource_identifiers=None) -> None:
        if _FULL or not resource_identifiers or self.name == "expectations":
            return super().build(resource_identifiers=resource_identifiers)
        store = self.source_store
        self.source_store = _Listing(store, [k for k in resource_identifiers
                                             if isinstance(k, ValidationResultIdentifier) and store.has_key(k)])
        try:
            return super().build(resource_identifiers=resource_identifiers)
        finally:
            self.source_store = store


class RecentIndexBuilder(DefaultSiteIndexBuilder):
    """The index of the site's newest `validation_results_limit` pages, found by their run time as
    written in their path (sortable text), with no identifier parsed for the others."""

    def _build_validation_and_profiling_result_site_keys(self, skip_and_clean_missing: bool):
        if _FULL or not self.validation_results_limit:
            return super()._build_validation_and_profiling_result_site_keys(skip_and_clean_missing)
        pages = self.target_store.store_backends[ValidationResultIdentifier].list_keys()
        newest = heapq.nlargest(self.validation_results_limit, pages, key=lambda key: key[-2])
        return [ValidationResultIdentifier.from_tuple(key) for key in newest]


# ------------------------------------------------------------------------------------- pruning
def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


def prune(data_docs_dir: Path, retain_hours: float, now: datetime | None = None) -> list:
    """Remove the validation results validated more than `retain_hours` before `now` from the Data
    Docs stores under `data_docs_dir`, then rebuild the index (GX deletes the pages whose result is
    gone, and links only the remaining ones). Returns the removed results' identifiers."""
    from fleethealth.quality import context

    if retain_hours < 0:
        raise ValueError(f"retain_hours must be >= 0, got {retain_hours}")
    if not (Path(data_docs_dir) / context.DOCS_STORES).is_dir():
        return []
    cutoff = _utc(now or datetime.now(timezone.utc)) - timedelta(hours=retain_hours)
    gx = context.get(data_docs_dir)
    with context.docs_lock(data_docs_dir), context.lock:
        store = gx.context.validation_results_store
        old = [key for key in store.list_keys() if _utc(key.run_id.run_time) < cutoff]
        for key in old:
            store.remove_key(key)
        if old:
            # only the removed results: no page is rendered again, the index is rebuilt and cleaned
            global _FULL
            _FULL = True
            try:
                gx.context.build_data_docs(site_names=[context.DOCS_SITE], resource_identifiers=old)
            finally:
                _FULL = False
            # GX leaves each removed file's folders behind (its rrmdir never finds them empty)
            for root in (Path(store.store_backend.full_base_directory), Path(data_docs_dir) / "validations"):
                _drop_empty_folders(root)
        offline_pages(data_docs_dir)
    return old


def prune_data_docs(lakehouse: Lakehouse, retain_hours: float = DEFAULT_RETAIN_HOURS) -> int:
    """Remove the lakehouse's Data Docs results validated more than `retain_hours` ago (the tables'
    retention, lake.maintenance) and their pages, and rebuild the index; returns how many results
    were removed. Every result stays in gold.quality_results. No Spark."""
    return len(prune(lakehouse.data_docs, retain_hours))


def offline_pages(data_docs_dir: Path) -> int:
    """Make the result pages written before the site had its offline views (their tables are plain
    HTML already) load nothing from the network either; returns how many were rewritten."""
    site = Path(data_docs_dir)
    done = 0
    for page in (site / "validations").rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        if _MARK not in text:
            root = "../" * (len(page.relative_to(site).parts) - 1)
            page.write_text(offline_html(text, root), encoding="utf-8")
            done += 1
    return done


def _drop_empty_folders(root: Path) -> None:
    """Remove the empty folders under `root` (not root itself), deepest first."""
    if not root.is_dir():
        return
    for folder in sorted((p for p in root.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
        if not any(folder.iterdir()):
            folder.rmdir()
