"""The HTML pages: `index.html` (the fleet overview, its open incidents first) and one page per cluster,
sharing the Vega bundle (a file beside them); `write_report` writes them whole."""
from __future__ import annotations

import html
import json
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import altair as alt
import pandas as pd

from fleethealth.gold import runbooks, thresholds as gold_thresholds
from fleethealth.fleet import entities
from fleethealth.fleet.inventory import NO_CONTROLLERS
from fleethealth.runtime.vocabulary import SEVERITY_RANK
from fleethealth.lake import tables as lake
from fleethealth.lake.catalog import Lakehouse
from fleethealth.lake.hours import HOUR, floor_hour
from fleethealth.report.html.charts import (Chart, cleaner_chart, completeness_heatmap, fd_chart, fleet_heatmap,
                                            incident_timeline, isr_chart, leaders_chart, offsets_chart, quorum_chart,
                                            quorum_rows, requests_chart, zk_chart)
from fleethealth.report.html.incidents import chart_of, fact_rows, open_then_most_severe
from fleethealth.report.html.read import (HOURLY, WHOLE, Gold, cell_text, clusters_of, hour_label, page_name,
                                         read_gold)
from fleethealth.report.text import causal_text, evidence_text, known_bugs_text
from fleethealth.runtime import config

# in the head of every page written here: what a refresh may delete (never a file it did not write)
GENERATOR = '<meta name="generator" content="fleethealth report">'
# 'self': the Vega bundle, a file of the report's folder that its pages share (script-src="vega-bundle-….js")
CSP = ("default-src 'none'; script-src 'self' 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; "
       "img-src data:; font-src data:")


class ReportError(ValueError):
    """A lakehouse or an argument the report cannot be made from (the CLI prints it as one line)."""



# ----------------------------------------------------------------------------------------- pages
STYLE = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;color:#1c2833;max-width:1100px}
h1{font-size:22px} h2{font-size:18px;margin-top:32px;border-bottom:1px solid #d5d8dc}
h3{font-size:15px;margin-bottom:4px} .meta,.note{color:#566573;font-size:13px}
.note{background:#fdf2e9;padding:6px 10px;border-left:3px solid #e67e22}
table{border-collapse:collapse;font-size:12px;margin:6px 0} td,th{border:1px solid #d5d8dc;padding:3px 6px;
text-align:left;vertical-align:top} th{background:#f4f6f6}
.sev{font-weight:600;padding:1px 6px;border-radius:3px;color:#fff}
.sev-critical{background:#c0392b}.sev-major{background:#e67e22}.sev-minor{background:#b7950b}.sev-info{background:#2e86c1}
.incident{border:1px solid #d5d8dc;border-radius:4px;padding:8px 12px;margin:10px 0}
.incident:target{outline:2px solid #2e86c1} .chart{margin:8px 0 4px} .chart:target{outline:2px solid #2e86c1}
nav a{margin-right:12px} ul.open{padding-left:18px} ul.open li{margin:8px 0} .what{margin:2px 0 0 4px}
"""

SCRIPT = """
(function () {
  const specs = JSON.parse(document.getElementById('fleethealth-specs').textContent);
  window.fleethealthViews = {};
  window.fleethealthRendered = Promise.all(Object.entries(specs).map(([id, spec]) =>
    vegaEmbed('#' + id, spec, {actions: false, renderer: 'svg'}).then(r => { window.fleethealthViews[id] = r.view; })));
})();
"""


def _esc(v) -> str:
    return html.escape(cell_text(v))


def _cell(column: str, v) -> str:
    if column.endswith("_bytes") and isinstance(v, (int, float)) and not isinstance(v, bool):
        return f"{v / 2**30:.2f} GiB"   # as the evidence says sizes
    return _esc(v)


def _table(rows: list[dict]) -> str:
    if not rows:
        return ""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in rows[0])
    body = "".join("<tr>" + "".join(f"<td>{_cell(c, v)}</td>" for c, v in r.items()) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _page(title: str, subtitle: str, body: str, charts: list[Chart], bundle: str) -> str:
    specs = {c.id: c.spec for c in charts if c.spec is not None}
    # a JSON text inside <script> must not close it, nor open a comment (`<!--<script` would swallow
    # the render script): no <, > or & at all (they stand only in its strings, as \u003c ...)
    data = json.dumps(specs, separators=(",", ":"), allow_nan=False)
    data = data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">{GENERATOR}"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">"
            f"<title>{html.escape(title)}</title><style>{STYLE}</style>\n"
            f"<script src=\"{html.escape(bundle)}\"></script></head>\n"
            f"<body><h1>{html.escape(title)}</h1><p class=\"meta\">{subtitle}</p>\n{body}\n"
            f"<script type=\"application/json\" id=\"fleethealth-specs\">{data}</script>\n<script>{SCRIPT}</script>"
            f"</body></html>\n")


def _chart_html(c: Chart) -> str:
    out = f"<h3>{html.escape(c.title)}</h3>"
    if c.facts:
        out += f"<p class=\"meta\">from {html.escape(c.facts)}</p>"
    if c.note:
        out += f"<p class=\"note\">{html.escape(c.note)}</p>"
    if c.spec is not None:
        out += f"<div class=\"chart\" id=\"{c.id}\"></div>"
    else:
        out += f"<div id=\"{c.id}\"></div>"
    return out


def _missing_note(gold: Gold) -> str:
    if not gold.missing:
        return ""
    return (f"<p class=\"note\">Not in this lakehouse (an older one): {html.escape(', '.join(gold.missing))}; "
            "what they show is left out.</p>")


def _not_processed_note(gold: Gold, cluster: str | None = None) -> str:
    """The flag at the top of a page: the window's hours nothing processed (yet) say "no data", never the
    state the fleet had before them; on a cluster's page also its own hours without data."""
    if gold.processed is None:
        return ""
    last = gold.last_processed
    if last is None:
        text = "Not processed: gold has no processed hour yet; every hour of this window is \"no data\"."
    elif last + HOUR <= gold.start:
        text = (f"Not processed: no hour of this window is processed yet (the last processed hour is "
                f"{last:%Y-%m-%d %H:%M}Z): every hour is \"no data\" and no incident is shown as open.")
    elif last + HOUR < gold.end:
        text = (f"Not processed: the hours after {last:%Y-%m-%d %H:%M}Z (the last processed hour) have no data "
                "yet: they show \"no data\", not the state before them.")
    else:
        text = ""
    gaps = gold.unprocessed(cluster) if cluster else []
    if gaps and (last is None or gaps != [h for h in gold.hours if h > last]):
        text += (f" No data of {cluster} for {len(gaps)} of the window's {len(gold.hours)} hours: "
                 f"{', '.join(hour_label(h) for h in gaps)}.")
    return f"<p class=\"note\" id=\"not-processed\">{html.escape(text.strip())}</p>" if text else ""


def _stale_note(gold: Gold, now: datetime | None = None) -> str:
    """The banner of a lakehouse nothing has processed an hour of for longer than FLEETHEALTH_STALE_AFTER_HOURS:
    what it shows open was open then, not necessarily now (the pipeline may have stopped)."""
    last = gold.last_processed
    now = now or datetime.now(timezone.utc)
    limit = config.stale_after_hours()
    if last is None or now - (last + HOUR) <= timedelta(hours=limit):
        return ""
    age = (now - (last + HOUR)).total_seconds() / 3600
    return (f"<p class=\"note\" id=\"stale\">Stale: the newest processed hour is {last:%Y-%m-%d %H:%M}Z, which "
            f"ended {age:,.0f} h before this report (more than FLEETHEALTH_STALE_AFTER_HOURS={limit}): nothing has "
            "been processed since, so what is shown open was open then and may have ended; check that the "
            "pipeline runs.</p>")


def _window_text(gold: Gold) -> str:
    return (f"window {gold.start:%Y-%m-%d %H:%M}Z – {gold.end:%Y-%m-%d %H:%M}Z ({len(gold.hours)} h), "
            f"generated {datetime.now(tz=gold.start.tzinfo):%Y-%m-%d %H:%M}Z; works offline")


def _badge(severity: str) -> str:
    return f"<span class=\"sev sev-{html.escape(severity)}\">{html.escape(severity)}</span>"


def _name(r) -> str:
    return f"<b>{html.escape(r.kind)}</b> {html.escape(r.entity)}"


def _what(r) -> str:
    """An incident's one line of facts, on its card and in the overview's list alike: what fired it (and
    what fires it now, when that changed), what explains it or what it explains, and the known bugs its
    evidence does not name already."""
    bugs = known_bugs_text(r.known_bug, r.evidence or "")
    causal = causal_text(r.caused_by, r.explains).replace(" | ", " — ")
    return evidence_text(r.first_evidence, r.evidence) + causal + (f" — {bugs}" if bugs else "")


def _folded(incidents: pd.DataFrame) -> list[tuple[list, str]]:
    """The overview's items: incidents in order, those next to each other of one cluster, kind, severity
    and first seen whose lines differ in one word only (e.g. data_missing of each broker of a cluster:
    its host) as one item, its line naming each word: "... of kafka-1, kafka-2, kafka-3 is ...".
    [(incidents, line)]."""
    groups: list[tuple[list, list[list[str]]]] = []
    for r in incidents.itertuples(index=False):
        words = _what(r).split(" ")
        if groups:
            rows, lines = groups[-1]
            head = rows[0]
            same = (head.cluster, head.kind, head.severity, head.first_seen) == (r.cluster, r.kind, r.severity,
                                                                                 r.first_seen)
            if same and len(words) == len(lines[0]) and len(_differing(lines + [words])) <= 1:
                rows.append(r)
                lines.append(words)
                continue
        groups.append(([r], [words]))
    out = []
    for rows, lines in groups:
        words = list(lines[0])
        for i in _differing(lines):
            words[i] = ", ".join(line[i] for line in lines)
        out.append((rows, " ".join(words)))
    return out


def _differing(lines: list[list[str]]) -> set[int]:
    return {i for line in lines[1:] for i, (a, b) in enumerate(zip(lines[0], line)) if a != b}


def open_incidents_html(gold: Gold) -> str:
    """The overview's first section: every open incident, most severe first, each linking to its card
    and to the chart of its facts on its cluster's page; repeated lines folded (`_folded`)."""
    incidents = gold.get("incidents")
    if incidents is None:
        return "<h2 id=\"open-incidents\">Open incidents</h2><p class=\"note\">gold.incidents is not in this lakehouse.</p>"
    opened = open_then_most_severe(incidents[incidents["status"] == "open"])
    resolved = len(incidents) - len(opened)
    items = []
    for rows, what in _folded(opened):
        r = rows[0]
        page, chart = html.escape(page_name(r.cluster)), chart_of(r.kind)
        cards = ", ".join(f"<a class=\"card\" href=\"{page}#incident-{html.escape(x.incident_id)}\">"
                          f"{html.escape(x.entity)}</a>" for x in rows)
        items.append(
            f"<li id=\"open-{html.escape(r.incident_id)}\">{_badge(r.severity)} "
            f"{html.escape(r.cluster)}: <b>{html.escape(r.kind)}</b> {cards}"
            f" <span class=\"meta\">first seen {_esc(r.first_seen)}"
            + (f" · <a class=\"chart-link\" href=\"{page}#{chart}\">chart</a>" if chart else "")
            + f"</span><div class=\"what\">{html.escape(what)}</div></li>")
    return (f"<h2 id=\"open-incidents\">Open incidents ({len(opened)})</h2>"
            + (f"<ul class=\"open\">{''.join(items)}</ul>" if items else "<p>No open incident in this window.</p>")
            + (f"<p class=\"meta\">{resolved} more resolved in this window: on the cluster pages.</p>" if resolved else ""))


def known_bugs_html(gold: Gold, cluster: str | None = None) -> str:
    """gold.known_bug_exposure of each cluster's newest hour in the window: the catalogued bugs its Kafka
    versions carry, the fix releases and the hosts (advice, not incidents)."""
    df = gold.get("known_bug_exposure", cluster)
    head = f"<h2 id=\"known-bugs\">Known bugs {'of this cluster' if cluster else 'in this fleet'}</h2>"
    if df is None:
        return ""
    if not len(df):
        return head + "<p>No catalogued bug affects the Kafka versions the inventory names.</p>"
    df = df[df["hour"] == df.groupby("cluster")["hour"].transform("max")]
    rows = [{"cluster": r.cluster, "Kafka": r.kafka_version, "bug": r.bug_id, "title": r.title,
             "affected": r.affected, "fixed in": " / ".join(r.fixed_in) or "no fix yet",
             "hosts": ", ".join(r.hosts)}
            for r in df.sort_values(["cluster", "kafka_version", "bug_id"]).itertuples(index=False)]
    return (head + "<p class=\"meta\">gold.known_bug_exposure, newest hour: the Kafka versions' catalogued bugs "
            "(include/fleethealth/gold/known_bugs.yaml), advice for the next upgrade, not incidents; a bug whose "
            "signature is seen is named on the incident of that event.</p>" + _table(rows))


def overview_page(gold: Gold, clusters: list[str], bundle: str) -> str:
    charts = [fleet_heatmap(gold), completeness_heatmap(gold)]
    incidents = gold.get("incidents")
    links = []
    for c in clusters:
        open_ = 0 if incidents is None else int(((incidents["cluster"] == c) & (incidents["status"] == "open")).sum())
        worst = "" if incidents is None or not open_ else max(
            incidents[(incidents["cluster"] == c) & (incidents["status"] == "open")]["severity"],
            key=lambda s: SEVERITY_RANK.get(s, 0))
        badge = f" {_badge(worst)}" if worst else ""
        gaps = gold.unprocessed(c)
        no_data = f"; no data for {len(gaps)} of {len(gold.hours)} hours" if gaps else ""
        links.append(f"<li><a href=\"{html.escape(page_name(c))}\">{html.escape(c)}</a>: {open_} open incident(s)"
                     f"{badge}{no_data}</li>")
    body = (_not_processed_note(gold) + _stale_note(gold) + _missing_note(gold) + open_incidents_html(gold) + "<h2>Clusters</h2><ul>" + "".join(links) + "</ul>"
            + "<h2>Fleet</h2>" + "".join(_chart_html(c) for c in charts) + known_bugs_html(gold))
    return _page("fleethealth: fleet health report", _window_text(gold), body, charts, bundle)


def cluster_page(gold: Gold, cluster: str, bundle: str, limits: dict) -> str:
    incidents = gold.get("incidents", cluster)
    if incidents is None:
        incidents = pd.DataFrame(columns=["incident_id", "kind", "entity", "severity"])
    incidents = open_then_most_severe(incidents)
    focus = set()
    for e in map(entities.parse, incidents["entity"]):
        if "partition" in e and e.get("topic") == "__consumer_offsets":
            focus.add((e["broker"], e["partition"]))
    charts = [incident_timeline(gold, cluster), offsets_chart(gold, cluster, limits, focus),
              cleaner_chart(gold, cluster), isr_chart(gold, cluster), leaders_chart(gold, cluster),
              zk_chart(gold, cluster), quorum_chart(gold, cluster), requests_chart(gold, cluster, limits),
              fd_chart(gold, cluster, limits), completeness_heatmap(gold, cluster)]
    below = {"chart-quorum": _quorum_table(gold, cluster)}
    steps = runbooks.load()
    quorum = gold.get("kraft_quorum", cluster)
    mode = "kraft" if quorum is not None and len(quorum) else None     # only KRaft clusters have its rows
    items = []
    for r in incidents.itertuples(index=False):
        chart, table, rows = fact_rows(gold, r)
        state = f"resolved {cell_text(r.resolved_at)}" if r.status == "resolved" else "open"
        items.append(
            f"<div class=\"incident\" id=\"incident-{html.escape(r.incident_id)}\">{_badge(r.severity)} "
            f"{_name(r)} — {html.escape(state)}, "
            f"first seen {_esc(r.first_seen)}, last seen {_esc(r.last_seen)}, {_esc(r.hours)} h with findings"
            + (f" — <a href=\"#{chart}\">chart</a>" if chart else "")
            + f"<br>evidence: {html.escape(_what(r))}"
            + (f"<br>check first: {html.escape(runbooks.of(r.kind, mode).first_step)}" if r.kind in steps else "")
            + (f"<br><span class=\"meta\">gold.{html.escape(table)} rows of {html.escape(r.entity)} in its hours:</span>"
               f"{_table(rows)}" if rows else "")
            + "</div>")
    body = (_not_processed_note(gold, cluster) + _stale_note(gold) + _missing_note(gold)
            + _no_controllers_note(gold, cluster)
            + "<nav><a href=\"index.html\">← fleet overview</a>"
            + "".join(f"<a href=\"#{c.id}\">{html.escape(c.id.removeprefix('chart-'))}</a>" for c in charts) + "</nav>"
            + f"<h2 id=\"incidents\">Incidents ({len(incidents)})</h2>" + _chart_html(charts[0])
            + ("".join(items) or "<p>No incident in this window.</p>")
            + "<h2>Facts</h2>" + "".join(_chart_html(c) + below.get(c.id, "") for c in charts[1:])
            + known_bugs_html(gold, cluster))
    return _page(f"fleethealth: {cluster}", _window_text(gold), body, charts, bundle)


def _no_controllers_note(gold: Gold, cluster: str) -> str:
    """A KRaft cluster whose inventory, in an hour of the window, listed no controller (gold.kraft_quorum's
    controllers_listed 0): what that leaves unwatched. None from a lakehouse older than the column."""
    df = gold.get("kraft_quorum", cluster)
    if df is None or "controllers_listed" not in df or not (df["controllers_listed"] == 0).any():
        return ""
    return (f"<p class=\"note\" id=\"no-controllers\">{html.escape(cluster)} runs in KRaft mode and the inventory "
            f"lists none of its controllers: {html.escape(NO_CONTROLLERS)}.</p>")


def _quorum_table(gold: Gold, cluster: str) -> str:
    """gold.kraft_quorum per hour, under its chart (empty for a ZooKeeper-mode cluster: no rows)."""
    df = gold.get("kraft_quorum", cluster)
    if df is None:
        return ""
    return _table([{"hour": r["hour"], "leader": r["leader"], "epoch": r["epoch"], "elections": r["elections"],
                    "fenced brokers": r["fenced_brokers"], "fenced at end": r["fenced_at_end"]}
                   for r in quorum_rows(df)])


def javascript_bundle() -> Path:
    """Vega, Vega-Lite (the version Altair writes) and vega-embed as one script (vl-convert's bundle).
    Building it takes ~3 s, so it is kept under a name holding both versions in this user's cache
    (config.cache_dir); the report copies it into its folder, never reads it from there: whoever may
    write there must not plant script in every page."""
    from importlib.metadata import version

    major_minor = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    cached = config.cache_dir() / f"vega-bundle-{version('vl-convert-python')}-vl{major_minor}.js"
    if cached.is_file():
        return cached
    import vl_convert

    bundle = vl_convert.javascript_bundle(vl_version=major_minor).replace("</script", "<\\/script")
    cached.parent.mkdir(parents=True, exist_ok=True)
    _write(cached, bundle)
    return cached


def _write(path: Path, text: str) -> None:
    """Replace `path` whole: a reader (a browser, the DAG's next run) never sees half a page."""
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_report(lakehouse: Lakehouse, start: datetime, end: datetime, out: Path | None = None,
                 cluster: str | None = None) -> Path:
    """Write `out` (default: the lakehouse's report folder)/index.html and one page per cluster of the
    window [start, end); returns index.html."""
    root = lakehouse
    if not any(lake.present(f"gold.{t}", root) for t in HOURLY + WHOLE):
        raise ReportError(f"{root}: no gold tables (run `fleethealth run` or the DAG first)")
    gold = read_gold(root, start, end, cluster)
    clusters = clusters_of(gold)
    if cluster and cluster not in clusters:
        known = clusters_of(read_gold(root, start, end))
        raise ReportError(f"--cluster {cluster}: no data of it in this window (clusters: {', '.join(known) or 'none'})")
    fleet, per_cluster = gold_thresholds.load_all()   # a cluster's page draws its own thresholds
    out = Path(out) if out is not None else lakehouse.report
    out.mkdir(parents=True, exist_ok=True)
    cached = javascript_bundle()
    bundle = cached.name
    _write(out / bundle, cached.read_text(encoding="utf-8"))   # the pages' shared script, written anew
    pages = {page_name(c) for c in clusters}
    for c in clusters:
        _write(out / page_name(c), cluster_page(gold, c, bundle, per_cluster.get(c, fleet)))
    index = out / "index.html"
    _write(index, overview_page(gold, clusters, bundle))
    for stale in out.glob("cluster-*.html"):   # a cluster of an earlier window, no longer linked
        if stale.name not in pages and _written_here(stale):
            stale.unlink()
    return index


def _written_here(path: Path) -> bool:
    """Whether `path` is a page a report wrote (GENERATOR in its head), not a file (or a link) of
    someone else's that happens to be named cluster-*.html."""
    if path.is_symlink() or not path.is_file():
        return False
    with open(path, "rb") as f:
        return GENERATOR.encode() in f.read(512)


def last_hours(end_hour: datetime, hours: int = 24) -> tuple[datetime, datetime]:
    """[end_hour + 1 h - hours, end_hour + 1 h): the window the DAG's report task refreshes."""
    end = floor_hour(end_hour) + HOUR
    return end - timedelta(hours=hours), end
