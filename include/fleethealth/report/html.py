"""The offline HTML health report: `index.html` (the fleet overview) and one page per cluster.

Gold is read without Spark (deltalake -> Arrow -> pandas, only the window's `hour` partitions). Charts
are Vega-Lite specs built with Altair; the Vega/Vega-Lite/vega-embed bundle of vl-convert is inlined
once per page, so a page needs no network at all (fleets are air-gapped; the pages' CSP forbids any
fetch). A table a lakehouse does not have yet is a note on the page, not a failure.
"""
from __future__ import annotations

import html
import json
import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import altair as alt
import pandas as pd

from fleethealth.fleet import mbeans
from fleethealth.gold import runbooks, thresholds as gold_thresholds
from fleethealth.gold.thresholds import SEVERITY_RANK
from fleethealth.lake import tables as lake
from fleethealth.lake.hours import HOUR, floor_hour, hours_between
from fleethealth.report.text import known_bugs_text

HOURLY = ("incident_findings", "consumer_offsets_partitions", "log_cleaner_status", "broker_health_hourly",
          "isr_churn", "leader_elections", "zk_sessions", "zk_quorum", "request_saturation", "metadata_divergence",
          "deadlocks")
WHOLE = ("incidents", "incident_history")
FD_TABLE = "silver.jmx_samples"
SEVERITY_COLORS = {"critical": "#c0392b", "major": "#e67e22", "minor": "#f1c40f", "info": "#5dade2",
                   "none": "#a9dfbf", "no data": "#d5d8dc"}
COMPLETENESS_COLORS = {"complete": "#a9dfbf", "partial": "#f0b27a", "sent nothing": "#c0392b", "no row": "#d5d8dc"}
CLEANER_COLORS = {"alive": "#a9dfbf", "dead": "#c0392b", "unknown": "#d5d8dc"}
UTC_AXIS = dict(format="%m-%d %H:%M", labelAngle=-30)
CSP = ("default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; "
       "img-src data:; font-src data:")


class ReportError(ValueError):
    """A lakehouse or an argument the report cannot be made from (the CLI prints it as one line)."""


@dataclass
class Gold:
    """The window's rows of each table read (pandas), and the tables the lakehouse does not have."""
    start: datetime
    end: datetime
    frames: dict[str, pd.DataFrame] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)

    def get(self, name: str, cluster: str | None = None) -> pd.DataFrame | None:
        df = self.frames.get(name)
        if df is None or cluster is None or "cluster" not in df:
            return df
        return df[df["cluster"] == cluster]

    @property
    def hours(self) -> list[datetime]:
        return hours_between(self.start, self.end)


# ------------------------------------------------------------------------------------------ reading
def _dataset(path: str):
    from deltalake import DeltaTable

    return DeltaTable(path).to_pyarrow_dataset() if DeltaTable.is_deltatable(path) else None


def _window_filter(start: datetime, end: datetime, cluster: str | None):
    import pyarrow as pa
    import pyarrow.dataset as ds

    ts = pa.timestamp("us", tz="UTC")
    cond = (ds.field("hour") >= pa.scalar(start, ts)) & (ds.field("hour") < pa.scalar(end, ts))
    return cond & (ds.field("cluster") == cluster) if cluster else cond


def read_gold(lakehouse, start: datetime, end: datetime, cluster: str | None = None) -> Gold:
    import pyarrow.dataset as ds

    gold = Gold(start, end)
    for name in HOURLY + WHOLE:
        data = _dataset(lake.table(f"gold.{name}").path(lakehouse))
        if data is None:
            gold.missing.append(f"gold.{name}")
            continue
        if name in HOURLY:
            rows = data.to_table(filter=_window_filter(start, end, cluster))
        else:
            rows = data.to_table(filter=(ds.field("cluster") == cluster) if cluster else None)
        gold.frames[name] = rows.to_pandas()
    incidents = gold.frames.get("incidents")
    if incidents is not None:
        gold.frames["incidents"] = incidents = _with_lifecycle(incidents)
    if incidents is not None and len(incidents):
        # every incident alive at some time of the window
        until = incidents["resolved_at"].fillna(pd.Timestamp(end))
        gold.frames["incidents"] = incidents[(incidents["first_seen"] < pd.Timestamp(end))
                                             & (until >= pd.Timestamp(start))]
    gold.frames["fd"] = _fd_samples(lakehouse, start, end, cluster, gold)
    return gold


def _with_lifecycle(incidents: pd.DataFrame) -> pd.DataFrame:
    """gold.incidents as written before incidents were resolved (no status, resolved_at, first_hour, ...):
    every incident open, its hours those of first_seen and last_seen."""
    defaults = {"status": lambda df: "open", "resolved_at": lambda df: pd.NaT,
                "first_evidence": lambda df: df["evidence"], "known_bug": lambda df: None,
                "first_hour": lambda df: df["first_seen"].dt.floor("h"),
                "last_hour": lambda df: df["last_seen"].dt.floor("h"),
                "hours": lambda df: None, "incident_id": lambda df: [f"{i}" for i in range(len(df))]}
    missing = {k: f(incidents) for k, f in defaults.items() if k not in incidents}
    if "resolved_at" in missing:
        missing["resolved_at"] = pd.Series(pd.NaT, index=incidents.index, dtype="datetime64[us, UTC]")
    return incidents.assign(**missing) if missing else incidents


def _fd_samples(lakehouse, start, end, cluster, gold: Gold) -> pd.DataFrame | None:
    """Brokers' OpenFileDescriptorCount and MaxFileDescriptorCount per minute (the largest of the minute):
    gold keeps no fd table (fd_exhaustion reads silver.jmx_samples), so neither does this."""
    import pyarrow.dataset as ds

    data = _dataset(lake.table(FD_TABLE).path(lakehouse))
    if data is None:
        gold.missing.append(FD_TABLE)
        return None
    wanted = {mbeans.OPEN_FDS.attribute: "open_fds", mbeans.MAX_FDS.attribute: "max_fds"}
    cond = (_window_filter(start, end, cluster) & (ds.field("domain") == mbeans.OPEN_FDS.domain)
            & ds.field("attribute").isin(list(wanted)) & ds.field("broker_id").is_valid())
    df = data.to_table(columns=["cluster", "broker_id", "ts", "props", "attribute", "value"], filter=cond).to_pandas()
    if df.empty:
        return pd.DataFrame(columns=["cluster", "broker_id", "minute", "open_fds", "max_fds"])
    keys = dict(mbeans.OPEN_FDS.keys)
    df = df[df["props"].map(lambda p: all(dict(p or ()).get(k) == v for k, v in keys.items()))]
    df = df.assign(minute=df["ts"].dt.floor("min"), what=df["attribute"].map(wanted))
    return (df.pivot_table(index=["cluster", "broker_id", "minute"], columns="what", values="value", aggfunc="max")
            .reset_index().rename_axis(columns=None))


# --------------------------------------------------------------------------------------- shaping
def _records(df: pd.DataFrame, columns: list[str] | None = None) -> list[dict]:
    """JSON-safe rows: times as ISO-8601 UTC text, arrays as lists, NaN/NaT as null."""
    df = df if columns is None else df[[c for c in columns if c in df]]
    out = []
    for row in df.to_dict("records"):
        out.append({k: _json_value(v) for k, v in row.items()})
    return out


def _json_value(v):
    if isinstance(v, (pd.Timestamp, datetime)):
        return None if pd.isna(v) else pd.Timestamp(v).tz_convert("UTC").strftime("%Y-%m-%dT%H:%M:%SZ")
    if hasattr(v, "tolist"):
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        return [_json_value(x) for x in v]
    if isinstance(v, float) and v != v:
        return None
    if v is pd.NaT or v is None:
        return None
    try:
        if pd.isna(v):
            return None
    except (TypeError, ValueError):
        pass
    return v


def _list(v) -> list:
    """An array column's value (numpy array, list or null) as a list."""
    return [] if v is None or (isinstance(v, float) and v != v) else list(v)


def _hour_label(h) -> str:
    return pd.Timestamp(h).tz_convert("UTC").strftime("%m-%d %H:00")


def _text(v) -> str:
    v = _json_value(v)
    if v is None:
        return ""
    if isinstance(v, list):
        return ", ".join(map(str, v))
    return str(v).replace("T", " ").replace(":00Z", "Z") if isinstance(v, str) and re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", v) else str(v)


def open_severity_by_hour(gold: Gold, cluster: str | None = None) -> dict[tuple[str, datetime], str]:
    """The worst severity of the incidents open in each (cluster, hour) of the window. An incident is open
    from the hour of first_seen until resolved_at (the first healthy hour), or to the window's end; its
    severity at an hour is that of its last opened/escalated transition by then (gold.incident_history),
    else the incident's. Without gold.incidents: the findings of each hour."""
    worst: dict[tuple[str, datetime], str] = {}

    def mark(c, h, sev):
        if SEVERITY_RANK.get(sev, 0) > SEVERITY_RANK.get(worst.get((c, h)), 0):
            worst[(c, h)] = sev

    incidents = gold.get("incidents", cluster)
    if incidents is not None:
        history = _history_by_id(gold.get("incident_history", cluster))
        for r in incidents.itertuples(index=False):
            until = r.resolved_at if not pd.isna(r.resolved_at) else pd.Timestamp(gold.end)
            steps = history.get(r.incident_id, [])
            for h in gold.hours:
                ts = pd.Timestamp(h)
                if floor_hour(r.first_seen.to_pydatetime()) <= h and ts < until:
                    done = [sev for at, sev in steps if at < ts + pd.Timedelta(HOUR)]
                    mark(r.cluster, h, done[-1] if done else r.severity)
        return worst
    findings = gold.get("incident_findings", cluster)
    for r in (findings.itertuples(index=False) if findings is not None else ()):
        mark(r.cluster, r.hour.to_pydatetime(), r.severity)
    return worst


def _history_by_id(history: pd.DataFrame | None) -> dict[str, list]:
    out: dict[str, list] = {}
    if history is None:
        return out
    for r in history.sort_values("at").itertuples(index=False):
        if r.transition in ("opened", "escalated"):
            out.setdefault(r.incident_id, []).append((r.at, r.severity))
    return out


def clusters_of(gold: Gold) -> list[str]:
    names = set()
    for name in ("broker_health_hourly", "incidents", "incident_findings"):
        df = gold.get(name)
        if df is not None:
            names |= set(df["cluster"].dropna())
    return sorted(names)


# ----------------------------------------------------------------------------------------- charts
@dataclass
class Chart:
    id: str                      # the chart container's element id (anchors link to it)
    title: str
    spec: dict | None            # Vega-Lite; None: `note` says why there is no chart
    note: str = ""
    facts: str = ""              # the table(s) it shows


def _spec(chart: alt.TopLevelMixin, **datasets: list[dict]) -> dict:
    """The Vega-Lite dict of `chart` (built over named data) with its rows as top-level datasets: Altair
    validates the small spec, not every row."""
    spec = chart.to_dict()
    spec["datasets"] = datasets
    return spec


def _tips(*fields) -> list[alt.Tooltip]:
    """Tooltip channels; shorthand strings would each cost Altair a schema lookup (~10 ms)."""
    return [f if isinstance(f, alt.Tooltip) else alt.Tooltip(f) for f in fields]


def _severity_scale(domain=None) -> alt.Scale:
    domain = domain or list(SEVERITY_COLORS)
    return alt.Scale(domain=domain, range=[SEVERITY_COLORS[d] for d in domain])


def _unavailable(gold: Gold, table: str, df) -> str | None:
    if df is None:
        return f"{table} is not in this lakehouse (an older lakehouse): no chart."
    if df.empty:
        return f"no rows of {table} in this window."
    return None


def _cluster_hours(gold: Gold) -> list[str]:
    return [_hour_label(h) for h in gold.hours]


def fleet_heatmap(gold: Gold) -> Chart:
    health = gold.get("broker_health_hourly")
    had_data = set() if health is None else {(c, h.to_pydatetime()) for c, h in zip(health["cluster"], health["hour"])}
    worst = open_severity_by_hour(gold)
    rows = []
    for c in clusters_of(gold):
        for h in gold.hours:
            sev = worst.get((c, h)) or ("none" if (c, h) in had_data or health is None else "no data")
            rows.append({"cluster": c, "hour": _hour_label(h), "severity": sev,
                         "page": f"{page_name(c)}#incidents"})
    if not rows:
        return Chart("chart-fleet", "Worst open incident, cluster × hour", None, "no cluster in this window.")
    chart = alt.Chart(alt.NamedData("cells")).mark_rect(stroke="white").encode(
        x=alt.X("hour:O", sort=_cluster_hours(gold), title="hour (UTC)"),
        y=alt.Y("cluster:N", title=None),
        color=alt.Color("severity:N", scale=_severity_scale(), title="worst open incident"),
        href=alt.Href("page:N"),
        tooltip=_tips("cluster:N", "hour:O", "severity:N"),
    ).properties(width={"step": 28}, height={"step": 22}, name="fleet")
    note = "" if "gold.incidents" not in gold.missing else "gold.incidents missing: the findings of each hour instead."
    return Chart("chart-fleet", "Worst open incident, cluster × hour", _spec(chart, cells=rows), note,
                 "gold.incidents, gold.incident_history, gold.broker_health_hourly")


def completeness_heatmap(gold: Gold, cluster: str | None = None) -> Chart:
    cid = "chart-completeness"
    title = "Data completeness, host × hour (sources arrived of those expected)"
    health = gold.get("broker_health_hourly", cluster)
    why = _unavailable(gold, "gold.broker_health_hourly", health)
    if why:
        return Chart(cid, title, None, why)
    rows, seen = [], set()
    for r in health.itertuples(index=False):
        expected, arrived = _list(r.sources_expected), _list(r.sources_arrived)
        status = ("sent nothing" if not arrived else "complete" if set(expected) <= set(arrived) else "partial")
        host = r.host if cluster else f"{r.cluster}/{r.host}"
        seen.add((host, _hour_label(r.hour)))
        rows.append({"host": host, "hour": _hour_label(r.hour), "status": status,
                     "arrived": f"{len(arrived)} of {len(expected)}",
                     "missing": ", ".join(_list(r.sources_missing)) or "-"})
    for host in sorted({x["host"] for x in rows}):
        rows += [{"host": host, "hour": h, "status": "no row", "arrived": "-", "missing": "-"}
                 for h in _cluster_hours(gold) if (host, h) not in seen]
    chart = alt.Chart(alt.NamedData("cells")).mark_rect(stroke="white").encode(
        x=alt.X("hour:O", sort=_cluster_hours(gold), title="hour (UTC)"),
        y=alt.Y("host:N", title=None, axis=alt.Axis(labelLimit=360)),
        color=alt.Color("status:N", scale=alt.Scale(domain=list(COMPLETENESS_COLORS),
                                                    range=list(COMPLETENESS_COLORS.values())), title="sources"),
        tooltip=_tips("host:N", "hour:O", "status:N", "arrived:N", "missing:N"),
    ).properties(width={"step": 28}, height={"step": 16}, name="completeness")
    return Chart(cid, title, _spec(chart, cells=rows), facts="gold.broker_health_hourly")


def _x_time(fieldname: str, gold: Gold, title="time (UTC)") -> alt.X:
    return alt.X(f"{fieldname}:T", title=title, axis=alt.Axis(**UTC_AXIS),
                 # domainMin/Max, not domain: Vega-Lite warns of a conflict when x2 or a layer shares the scale
                 scale=alt.Scale(type="utc", domainMin=int(gold.start.timestamp() * 1000),
                                 domainMax=int(gold.end.timestamp() * 1000)))


def incident_timeline(gold: Gold, cluster: str) -> Chart:
    cid, title = "chart-timeline", "Incidents: first seen → last seen / resolved"
    incidents = gold.get("incidents", cluster)
    why = _unavailable(gold, "gold.incidents", incidents)
    if why:
        return Chart(cid, title, None, why)
    rows = []
    for r in incidents.itertuples(index=False):
        end = r.resolved_at if not pd.isna(r.resolved_at) else r.last_seen
        if end <= r.first_seen:   # one instant: still a visible bar
            end = r.first_seen + pd.Timedelta(minutes=2)
        rows.append({"incident": f"{r.kind} {r.entity}", "severity": r.severity, "status": r.status,
                     "start": _json_value(max(r.first_seen, pd.Timestamp(gold.start))),
                     "end": _json_value(min(end, pd.Timestamp(gold.end))),
                     "first_seen": _text(r.first_seen), "last_seen": _text(r.last_seen),
                     "resolved_at": _text(r.resolved_at) or "open", "evidence": r.evidence,
                     "link": f"#incident-{r.incident_id}"})
    chart = alt.Chart(alt.NamedData("incidents")).mark_bar(height=14).encode(
        x=_x_time("start", gold), x2=alt.X2("end:T"),
        y=alt.Y("incident:N", title=None, sort=alt.EncodingSortField("start"), axis=alt.Axis(labelLimit=360)),
        color=alt.Color("severity:N", scale=_severity_scale(list(SEVERITY_RANK))),
        opacity=alt.Opacity("status:O", scale=alt.Scale(domain=["open", "resolved"], range=[1.0, 0.45])),
        href=alt.Href("link:N"),
        tooltip=_tips("incident:N", "severity:N", "status:N", "first_seen:N", "last_seen:N", "resolved_at:N",
                 "evidence:N"),
    ).properties(width=760, height={"step": 22}, name="timeline")
    return Chart(cid, title, _spec(chart, incidents=rows), facts="gold.incidents")


def offsets_chart(gold: Gold, cluster: str, limits: dict, focus: set[tuple[int, int]]) -> Chart:
    """Sizes of the largest `__consumer_offsets` partitions (and every one an incident names) per hour,
    with the bloat threshold as a rule."""
    cid, title = "chart-offsets", "__consumer_offsets partition size per hour, with the bloat threshold"
    df = gold.get("consumer_offsets_partitions", cluster)
    why = _unavailable(gold, "gold.consumer_offsets_partitions", df)
    if why:
        return Chart(cid, title, None, why)
    threshold = limits["offsets_partition_bloat.max_size_bytes"]
    peak = df.groupby(["broker_id", "partition"])["max_size_bytes"].max().sort_values(ascending=False)
    keep = set(peak.index[:8]) | focus
    df = df[[(b, p) in keep for b, p in zip(df["broker_id"], df["partition"])]]
    rows = [{"series": f"p{r.partition}@broker-{r.broker_id}", "at": _json_value(r.last_ts if not pd.isna(r.last_ts)
             else r.hour + pd.Timedelta(HOUR)), "size_gib": r.size_bytes / 2**30 if not pd.isna(r.size_bytes) else None,
             "size_bytes": _json_value(r.size_bytes), "growth_gib": (r.growth_bytes or 0) / 2**30,
             "compaction_seen": bool(r.compaction_seen), "source": r.size_source, "hour": _hour_label(r.hour)}
            for r in df.sort_values("hour").itertuples(index=False)]
    lines = alt.Chart(alt.NamedData("sizes")).mark_line(point=True).encode(
        x=_x_time("at", gold),
        y=alt.Y("size_gib:Q", title="size (GiB)"),
        color=alt.Color("series:N", title="partition@broker"),
        tooltip=_tips("series:N", "hour:O", alt.Tooltip("size_gib:Q", format=".2f"),
                      alt.Tooltip("growth_gib:Q", format=".2f"),
                 "compaction_seen:N", "source:N"),
    ).properties(name="sizes")
    rule = alt.Chart(alt.NamedData("threshold")).mark_rule(color="#c0392b", strokeDash=[6, 4], size=2).encode(
        y=alt.Y("gib:Q")).properties(name="threshold")
    label = alt.Chart(alt.NamedData("threshold")).mark_text(align="left", dx=4, dy=-6, color="#c0392b").encode(
        y=alt.Y("gib:Q"), x=alt.value(0), text=alt.Text("label:N"))
    chart = alt.layer(lines, rule, label).properties(width=760, height=260)
    limit = [{"gib": threshold / 2**30, "bytes": threshold,
              "label": f"offsets_partition_bloat.max_size_bytes = {threshold / 2**30:.2f} GiB"}]
    return Chart(cid, title, _spec(chart, sizes=rows, threshold=limit), facts="gold.consumer_offsets_partitions")


def cleaner_chart(gold: Gold, cluster: str) -> Chart:
    cid, title = "chart-cleaner", "Log cleaner status per broker and hour"
    df = gold.get("log_cleaner_status", cluster)
    why = _unavailable(gold, "gold.log_cleaner_status", df)
    if why:
        return Chart(cid, title, None, why)
    rows = [{"broker": f"broker-{r.broker_id}", "hour": _hour_label(r.hour), "status": r.status or "unknown",
             "time_since_last_run_ms": _json_value(r.time_since_last_run_ms), "dead_since": _text(r.dead_since),
             "evidence": r.evidence or ""} for r in df.itertuples(index=False)]
    chart = alt.Chart(alt.NamedData("cells")).mark_rect(stroke="white").encode(
        x=alt.X("hour:O", sort=_cluster_hours(gold), title="hour (UTC)"), y=alt.Y("broker:N", title=None),
        color=alt.Color("status:N", scale=alt.Scale(domain=list(CLEANER_COLORS), range=list(CLEANER_COLORS.values()))),
        tooltip=_tips("broker:N", "hour:O", "status:N", "time_since_last_run_ms:Q", "dead_since:N", "evidence:N"),
    ).properties(width={"step": 28}, height={"step": 22}, name="cleaner")
    return Chart(cid, title, _spec(chart, cells=rows), facts="gold.log_cleaner_status")


def isr_chart(gold: Gold, cluster: str) -> Chart:
    cid, title = "chart-isr", "ISR churn per hour (shrinks + expands + updates, by leader broker)"
    df = gold.get("isr_churn", cluster)
    why = _unavailable(gold, "gold.isr_churn", df)
    if why:
        return Chart(cid, title, None, why)
    agg = df.assign(changes=df["shrinks"] + df["expands"] + df["updates"]).groupby(["hour", "broker"]).agg(
        changes=("changes", "sum"), shrinks=("shrinks", "sum"), partitions=("partition", "count")).reset_index()
    rows = [{"hour": _hour_label(r.hour), "broker": f"broker-{r.broker}", "changes": int(r.changes),
             "shrinks": int(r.shrinks), "partitions": int(r.partitions)} for r in agg.itertuples(index=False)]
    chart = alt.Chart(alt.NamedData("churn")).mark_bar().encode(
        x=alt.X("hour:O", sort=_cluster_hours(gold), title="hour (UTC)"), y=alt.Y("changes:Q", title="ISR changes"),
        color=alt.Color("broker:N", title="leader"),
        tooltip=_tips("hour:O", "broker:N", "changes:Q", "shrinks:Q", "partitions:Q"),
    ).properties(width=760, height=200, name="isr")
    return Chart(cid, title, _spec(chart, churn=rows), facts="gold.isr_churn")


def leaders_chart(gold: Gold, cluster: str) -> Chart:
    cid, title = "chart-leaders", "Leader changes per minute (leader-change windows, storms marked)"
    df = gold.get("leader_elections", cluster)
    why = _unavailable(gold, "gold.leader_elections", df)
    if why:
        return Chart(cid, title, None, why)
    rows = [{"minute": _json_value(r.trigger_ts.floor("min")), "partitions": int(r.partitions or 0),
             "storm": "storm" if r.storm else "no storm", "lost_broker": _text(r.lost_broker) or "-",
             "offsets_partitions": int(r.offsets_partitions or 0), "trigger": r.trigger}
            for r in df.itertuples(index=False)]
    chart = alt.Chart(alt.NamedData("windows")).mark_bar(width=4).encode(
        x=_x_time("minute", gold), y=alt.Y("sum(partitions):Q", title="partitions changing leader"),
        color=alt.Color("storm:N", scale=alt.Scale(domain=["storm", "no storm"], range=["#c0392b", "#5dade2"])),
        tooltip=_tips("minute:T", "trigger:N", "lost_broker:N", "partitions:Q", "offsets_partitions:Q", "storm:N"),
    ).properties(width=760, height=200, name="leaders")
    return Chart(cid, title, _spec(chart, windows=rows), facts="gold.leader_elections")


def zk_chart(gold: Gold, cluster: str) -> Chart:
    cid, title = "chart-zk", "ZooKeeper: broker session expiries and quorum elections / follower disconnects per hour"
    sessions, quorum = gold.get("zk_sessions", cluster), gold.get("zk_quorum", cluster)
    rows = []
    for r in (sessions.itertuples(index=False) if sessions is not None else ()):
        rows.append({"hour": _hour_label(r.hour), "who": f"broker-{r.broker_id}", "what": "session expiries",
                     "count": int(r.expiries or 0)})
    for r in (quorum.itertuples(index=False) if quorum is not None else ()):
        rows += [{"hour": _hour_label(r.hour), "who": f"zk-{_text(r.zk_myid)}", "what": what, "count": int(n or 0)}
                 for what, n in (("quorum elections", r.elections), ("follower disconnects", r.follower_disconnects))]
    missing = [t for t, df in (("gold.zk_sessions", sessions), ("gold.zk_quorum", quorum)) if df is None]
    note = f"{', '.join(missing)} not in this lakehouse." if missing else ""
    if not rows:
        return Chart(cid, title, None, note or "no rows of gold.zk_sessions or gold.zk_quorum in this window.")
    chart = alt.Chart(alt.NamedData("zk")).mark_bar().encode(
        x=alt.X("hour:O", sort=_cluster_hours(gold), title="hour (UTC)"), y=alt.Y("count:Q", title=None),
        color=alt.Color("who:N", title="broker / server"), column=alt.Column("what:N", title=None),
        tooltip=_tips("hour:O", "who:N", "what:N", "count:Q"),
    ).properties(width=230, height=180, name="zk")
    return Chart(cid, title, _spec(chart, zk=rows), note, "gold.zk_sessions, gold.zk_quorum")


def requests_chart(gold: Gold, cluster: str, limits: dict) -> Chart:
    cid, title = "chart-requests", "Request queue: largest RequestQueueSize / queued.max.requests per hour"
    df = gold.get("request_saturation", cluster)
    why = _unavailable(gold, "gold.request_saturation", df)
    if why:
        return Chart(cid, title, None, why)
    ratio = limits["request_queue_saturation.queue_full_ratio"]
    rows = [{"hour": _hour_label(r.hour), "broker": f"broker-{r.broker_id}",
             "fill": (r.max_queue / r.queue_limit) if r.queue_limit and not pd.isna(r.max_queue) else None,
             "max_queue": _json_value(r.max_queue), "queue_limit": _json_value(r.queue_limit),
             "saturated_samples": int(r.saturated_samples or 0), "samples": int(r.samples or 0),
             "min_handler_idle": _json_value(r.min_handler_idle), "min_network_idle": _json_value(r.min_network_idle)}
            for r in df.itertuples(index=False)]
    bars = alt.Chart(alt.NamedData("saturation")).mark_line(point=True).encode(
        x=alt.X("hour:O", sort=_cluster_hours(gold), title="hour (UTC)"),
        y=alt.Y("fill:Q", title="queue fill", axis=alt.Axis(format="%")), color=alt.Color("broker:N"),
        tooltip=_tips("hour:O", "broker:N", "max_queue:Q", "queue_limit:Q", "saturated_samples:Q", "samples:Q",
                 "min_handler_idle:Q", "min_network_idle:Q"))
    rule = alt.Chart(alt.NamedData("threshold")).mark_rule(color="#c0392b", strokeDash=[6, 4]).encode(y=alt.Y("fill:Q"))
    chart = alt.layer(bars, rule).properties(width=760, height=200)
    return Chart(cid, title, _spec(chart, saturation=rows, threshold=[{"fill": ratio}]),
                 facts="gold.request_saturation")


def fd_chart(gold: Gold, cluster: str, limits: dict) -> Chart:
    cid = "chart-fd"
    title = "Open file descriptors per broker (largest per minute), with max × fd_exhaustion.max_fd_ratio"
    df = gold.get("fd", cluster)
    why = _unavailable(gold, "silver.jmx_samples", df)
    if why:
        return Chart(cid, title, None, why)
    ratio = limits["fd_exhaustion.max_fd_ratio"]
    rows = [{"minute": _json_value(r.minute), "broker": f"broker-{r.broker_id}", "open_fds": _json_value(r.open_fds),
             "limit": r.max_fds * ratio if "max_fds" in df and not pd.isna(r.max_fds) else None}
            for r in df.sort_values("minute").itertuples(index=False)]
    base = alt.Chart(alt.NamedData("fds")).encode(x=_x_time("minute", gold), color=alt.Color("broker:N"))
    chart = alt.layer(
        base.mark_line().encode(y=alt.Y("open_fds:Q", title="open file descriptors"),
                                tooltip=_tips("broker:N", "minute:T", "open_fds:Q", "limit:Q")),
        base.mark_line(strokeDash=[6, 4]).encode(y=alt.Y("limit:Q")),
    ).properties(width=760, height=220)
    return Chart(cid, title, _spec(chart, fds=rows), facts="silver.jmx_samples (gold keeps no fd table)")


# ------------------------------------------------------------------------------- incident evidence
def _entity(entity: str) -> dict:
    """broker-2 -> {broker: 2}; __consumer_offsets-38@broker-2 -> {topic, partition, broker}; zk-3 -> {zk: 3};
    host:source -> {host}."""
    m = re.fullmatch(r"(?:(.+)-(\d+)@)?broker-(\d+)", entity)
    if m:
        partition = {"topic": m.group(1), "partition": int(m.group(2))} if m.group(1) else {}
        return {"broker": int(m.group(3)), **partition}
    m = re.fullmatch(r"zk-(\d+)", entity)
    if m:
        return {"zk": int(m.group(1))}
    return {"host": entity.split(":", 1)[0]}


# kind -> (chart id, table, columns shown); the rows are those of the incident's entity and hours
FACTS = {
    "offsets_partition_bloat": ("chart-offsets", "consumer_offsets_partitions",
                                ["hour", "broker_id", "partition", "size_bytes", "growth_bytes", "compaction_seen",
                                 "size_source"]),
    "slow_group_load": ("chart-offsets", "consumer_offsets_partitions",
                        ["hour", "broker_id", "partition", "size_bytes", "growth_bytes", "groups"]),
    "log_cleaner_dead": ("chart-cleaner", "log_cleaner_status",
                         ["hour", "broker_id", "status", "dead_since", "time_since_last_run_ms", "cleaner_error_ts",
                          "evidence"]),
    "zk_session_expired": ("chart-zk", "zk_sessions",
                           ["hour", "broker_id", "expiries", "sessions", "log_expired_ts", "server_expired_ts",
                            "jmx_expiries"]),
    "broker_flapping": ("chart-zk", "zk_sessions",
                        ["hour", "broker_id", "expiries", "registrations", "log_expired_ts"]),
    "zk_follower_disconnect": ("chart-zk", "zk_quorum",
                               ["hour", "host", "zk_myid", "state", "elections", "follower_disconnects",
                                "transaction_timeouts"]),
    "leader_election_storm": ("chart-leaders", "leader_elections",
                              ["hour", "trigger_ts", "trigger", "controller", "lost_broker", "partitions", "offsets_partitions", "storm"]),
    "broker_isolated": ("chart-isr", "isr_churn",
                        ["hour", "topic", "partition", "broker", "shrinks", "isr_first", "isr_last", "dropped_brokers"]),
    "metadata_divergence": ("chart-isr", "metadata_divergence",
                            ["hour", "topic", "partition", "broker", "stuck_epoch", "epochs_not_taken", "lag_ms"]),
    "request_queue_saturation": ("chart-requests", "request_saturation",
                                 ["hour", "broker_id", "saturated_samples", "samples", "max_queue", "queue_limit",
                                  "min_handler_idle", "min_network_idle"]),
    "fd_exhaustion": ("chart-fd", "fd", ["minute", "broker_id", "open_fds", "max_fds"]),
    "broker_deadlock": (None, "deadlocks", ["hour", "broker_id", "cycle_threads", "lock_classes", "first_seen"]),
    "host_silent": ("chart-completeness", "broker_health_hourly", ["hour", "host", "sources_expected", "sources_missing"]),
    "data_missing": ("chart-completeness", "broker_health_hourly", ["hour", "host", "sources_expected", "sources_missing"]),
}


def fact_rows(gold: Gold, incident) -> tuple[str | None, str | None, list[dict]]:
    """(chart id, table, rows) of the facts behind an incident: its entity's rows in its hours."""
    chart, table, columns = FACTS.get(incident.kind, (None, None, []))
    df = gold.get(table, incident.cluster) if table else None
    if df is None or df.empty:
        return chart, table, []
    e = _entity(incident.entity)
    keep = pd.Series(True, index=df.index)
    for key, columns_of_key in (("broker", ("broker_id", "broker", "lost_broker")), ("partition", ("partition",)),
                                ("topic", ("topic",)), ("zk", ("zk_myid",)), ("host", ("host",))):
        col = next((c for c in columns_of_key if c in df), None)
        if key in e and col:
            keep &= df[col] == e[key]
    when = "minute" if "minute" in df else "hour"
    first = pd.Timestamp(floor_hour(incident.first_hour.to_pydatetime() if not pd.isna(incident.first_hour)
                                    else incident.first_seen.to_pydatetime()))
    last = incident.last_hour if not pd.isna(incident.last_hour) else incident.last_seen
    keep &= (df[when] >= first) & (df[when] < pd.Timestamp(last) + pd.Timedelta(HOUR))
    return chart, table, _records(df[keep].sort_values(when).head(48), columns)


# ----------------------------------------------------------------------------------------- pages
def page_name(cluster: str) -> str:
    return "cluster-" + re.sub(r"[^A-Za-z0-9._-]", "_", cluster) + ".html"


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
nav a{margin-right:12px}
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
    return html.escape(_text(v))


def _table(rows: list[dict]) -> str:
    if not rows:
        return ""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in rows[0])
    body = "".join("<tr>" + "".join(f"<td>{_esc(v)}</td>" for v in r.values()) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _page(title: str, subtitle: str, body: str, charts: list[Chart], bundle: str) -> str:
    specs = {c.id: c.spec for c in charts if c.spec is not None}
    # a JSON text inside <script> must not close it
    data = json.dumps(specs, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">"
            f"<title>{html.escape(title)}</title><style>{STYLE}</style>\n<script>{bundle}</script></head>\n"
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


def _window_text(gold: Gold) -> str:
    return (f"window {gold.start:%Y-%m-%d %H:%M}Z – {gold.end:%Y-%m-%d %H:%M}Z ({len(gold.hours)} h), "
            f"generated {datetime.now(tz=gold.start.tzinfo):%Y-%m-%d %H:%M}Z; works offline")


def overview_page(gold: Gold, clusters: list[str], bundle: str) -> str:
    charts = [fleet_heatmap(gold), completeness_heatmap(gold)]
    incidents = gold.get("incidents")
    links = []
    for c in clusters:
        open_ = 0 if incidents is None else int(((incidents["cluster"] == c) & (incidents["status"] == "open")).sum())
        worst = "" if incidents is None or not open_ else max(
            incidents[(incidents["cluster"] == c) & (incidents["status"] == "open")]["severity"],
            key=lambda s: SEVERITY_RANK.get(s, 0))
        badge = f" <span class=\"sev sev-{html.escape(worst)}\">{html.escape(worst)}</span>" if worst else ""
        links.append(f"<li><a href=\"{html.escape(page_name(c))}\">{html.escape(c)}</a>: {open_} open incident(s){badge}</li>")
    body = (_missing_note(gold) + "<h2>Clusters</h2><ul>" + "".join(links) + "</ul>"
            + "<h2>Fleet</h2>" + "".join(_chart_html(c) for c in charts))
    return _page("fleethealth: fleet health report", _window_text(gold), body, charts, bundle)


def cluster_page(gold: Gold, cluster: str, bundle: str, limits: dict) -> str:
    incidents = gold.get("incidents", cluster)
    if incidents is None:
        incidents = pd.DataFrame(columns=["incident_id", "kind", "entity", "severity"])
    incidents = incidents.assign(rank=incidents["severity"].map(lambda s: -SEVERITY_RANK.get(s, 0))).sort_values(
        ["rank", "first_seen", "kind", "entity"])
    focus = set()
    for e in map(_entity, incidents["entity"]):
        if "partition" in e and e.get("topic") == "__consumer_offsets":
            focus.add((e["broker"], e["partition"]))
    charts = [incident_timeline(gold, cluster), offsets_chart(gold, cluster, limits, focus),
              cleaner_chart(gold, cluster), isr_chart(gold, cluster), leaders_chart(gold, cluster),
              zk_chart(gold, cluster), requests_chart(gold, cluster, limits), fd_chart(gold, cluster, limits),
              completeness_heatmap(gold, cluster)]
    steps = runbooks.load()
    items = []
    for r in incidents.itertuples(index=False):
        chart, table, rows = fact_rows(gold, r)
        first, now = (r.first_evidence or r.evidence), r.evidence
        state = f"resolved {_text(r.resolved_at)}" if r.status == "resolved" else "open"
        bugs = known_bugs_text(r.known_bug, now or "")
        items.append(
            f"<div class=\"incident\" id=\"incident-{html.escape(r.incident_id)}\">"
            f"<span class=\"sev sev-{html.escape(r.severity)}\">{html.escape(r.severity)}</span> "
            f"<b>{html.escape(r.kind)}</b> {html.escape(r.entity)} — {html.escape(state)}, "
            f"first seen {_esc(r.first_seen)}, last seen {_esc(r.last_seen)}, {_esc(r.hours)} h with findings"
            + (f" — <a href=\"#{chart}\">chart</a>" if chart else "")
            + f"<br>evidence: {html.escape(first or '')}"
            + (f"<br>now: {html.escape(now)}" if now and now != first else "")
            + (f"<br>known bug: {html.escape(bugs)}" if bugs else "")
            + (f"<br>check first: {html.escape(steps[r.kind].first_step)}" if r.kind in steps else "")
            + (f"<br><span class=\"meta\">gold.{html.escape(table)} rows of {html.escape(r.entity)} in its hours:</span>"
               f"{_table(rows)}" if rows else "")
            + "</div>")
    body = (_missing_note(gold) + "<nav><a href=\"index.html\">← fleet overview</a>"
            + "".join(f"<a href=\"#{c.id}\">{html.escape(c.id.removeprefix('chart-'))}</a>" for c in charts) + "</nav>"
            + f"<h2 id=\"incidents\">Incidents ({len(incidents)})</h2>" + _chart_html(charts[0])
            + ("".join(items) or "<p>No incident in this window.</p>")
            + "<h2>Facts</h2>" + "".join(_chart_html(c) for c in charts[1:]))
    return _page(f"fleethealth: {cluster}", _window_text(gold), body, charts, bundle)


def javascript_bundle(cache_dir: Path | None = None) -> str:
    """Vega, Vega-Lite (the version Altair writes) and vega-embed as one script (vl-convert's bundle).
    Building it takes ~3 s, so it is kept in `cache_dir` under a name holding both versions."""
    from importlib.metadata import version

    major_minor = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    cached = cache_dir / f".vega-bundle-{version('vl-convert-python')}-vl{major_minor}.js" if cache_dir else None
    if cached is not None and cached.is_file():
        return cached.read_text(encoding="utf-8")
    import vl_convert

    bundle = vl_convert.javascript_bundle(vl_version=major_minor).replace("</script", "<\\/script")
    if cached is not None:
        _write(cached, bundle)
    return bundle


def _write(path: Path, text: str) -> None:
    """Replace `path` whole: a reader (a browser, the DAG's next run) never sees half a page."""
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_report(lakehouse, start: datetime, end: datetime, out, cluster: str | None = None,
                 limits: dict | None = None) -> Path:
    """Write `out`/index.html and one page per cluster of the window [start, end); returns index.html."""
    root = Path(lakehouse)
    if not (root / "gold").is_dir() or not any((root / "gold" / t / "_delta_log").is_dir() for t in HOURLY + WHOLE):
        raise ReportError(f"{root}: no gold tables (run `fleethealth run` or the DAG first)")
    gold = read_gold(root, start, end, cluster)
    clusters = clusters_of(gold)
    if cluster and cluster not in clusters:
        known = clusters_of(read_gold(root, start, end))
        raise ReportError(f"--cluster {cluster}: no data of it in this window (clusters: {', '.join(known) or 'none'})")
    limits = limits or gold_thresholds.load()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    bundle = javascript_bundle(out)
    pages = {page_name(c) for c in clusters}
    for c in clusters:
        _write(out / page_name(c), cluster_page(gold, c, bundle, limits))
    index = out / "index.html"
    _write(index, overview_page(gold, clusters, bundle))
    for stale in out.glob("cluster-*.html"):   # a cluster of an earlier window, no longer linked
        if stale.name not in pages:
            stale.unlink()
    return index


def last_hours(end_hour: datetime, hours: int = 24) -> tuple[datetime, datetime]:
    """[end_hour + 1 h - hours, end_hour + 1 h): the window the DAG's report task refreshes."""
    end = floor_hour(end_hour) + HOUR
    return end - timedelta(hours=hours), end
