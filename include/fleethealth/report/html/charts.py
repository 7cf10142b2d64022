"""The charts: Vega-Lite specs built with Altair over named datasets, their times on UTC scales and in UTC
tooltips (a browser's own time zone never shows)."""
from __future__ import annotations

from dataclasses import dataclass

import altair as alt
import pandas as pd

from fleethealth.fleet import entities
from fleethealth.runtime.vocabulary import SEVERITY_RANK
from fleethealth.lake.hours import HOUR
from fleethealth.report.html.read import (Gold, as_list, cell_text, clusters_of, hour_label, json_value,
                                          open_severity_by_hour, page_name)

SEVERITY_COLORS = {"critical": "#c0392b", "major": "#e67e22", "minor": "#f1c40f", "info": "#5dade2",
                   "none": "#a9dfbf", "no data": "#d5d8dc"}
COMPLETENESS_COLORS = {"complete": "#a9dfbf", "partial": "#f0b27a", "sent nothing": "#c0392b", "no row": "#d5d8dc"}
CLEANER_COLORS = {"alive": "#a9dfbf", "dead": "#c0392b", "unknown": "#d5d8dc"}
# times are UTC everywhere (fleet logs are): on the axes (a utc scale) and in the tooltips (a utc time
# unit), which Vega would otherwise format in the browser's time zone
UTC_AXIS = dict(format="%m-%d %H:%M", labelAngle=-30)
TIME_TIP = "%Y-%m-%d %H:%MZ"


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
    """Tooltip channels; shorthand strings would each cost Altair a schema lookup (~10 ms). A time
    ("x:T") is shown in UTC, as the axes show it."""
    return [f if isinstance(f, alt.Tooltip) else _time_tip(f) if f.endswith(":T") else alt.Tooltip(f)
            for f in fields]


def _time_tip(shorthand: str) -> alt.Tooltip:
    name = shorthand.removesuffix(":T")
    return alt.Tooltip(name, type="temporal", timeUnit="utcyearmonthdatehoursminutes", title=f"{name} (UTC)",
                       format=TIME_TIP)


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
    return [hour_label(h) for h in gold.hours]


def fleet_heatmap(gold: Gold) -> Chart:
    processed = gold.processed
    worst = open_severity_by_hour(gold)
    rows = []
    for c in clusters_of(gold):
        for h in gold.hours:
            # an hour nothing processed is "no data", never the state an open incident had before it
            sev = "no data" if processed is not None and (c, h) not in processed else worst.get((c, h), "none")
            rows.append({"cluster": c, "hour": hour_label(h), "severity": sev,
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
        expected, arrived = as_list(r.sources_expected), as_list(r.sources_arrived)
        status = ("sent nothing" if not arrived else "complete" if set(expected) <= set(arrived) else "partial")
        host = r.host if cluster else f"{r.cluster}/{r.host}"
        seen.add((host, hour_label(r.hour)))
        rows.append({"host": host, "hour": hour_label(r.hour), "status": status,
                     "arrived": f"{len(arrived)} of {len(expected)}",
                     "missing": ", ".join(as_list(r.sources_missing)) or "-"})
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
                     "start": json_value(max(r.first_seen, pd.Timestamp(gold.start))),
                     "end": json_value(min(end, pd.Timestamp(gold.end))),
                     "first_seen": cell_text(r.first_seen), "last_seen": cell_text(r.last_seen),
                     "resolved_at": cell_text(r.resolved_at) or "open", "evidence": r.evidence,
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
    rows = [{"series": entities.at_broker(f"p{r.partition}", r.broker_id), "at": json_value(r.last_ts if not pd.isna(r.last_ts)
             else r.hour + pd.Timedelta(HOUR)), "size_gib": r.size_bytes / 2**30 if not pd.isna(r.size_bytes) else None,
             "size_bytes": json_value(r.size_bytes), "growth_gib": (r.growth_bytes or 0) / 2**30,
             "compaction_seen": bool(r.compaction_seen), "source": r.size_source, "hour": hour_label(r.hour)}
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
    rows = [{"broker": entities.broker(r.broker_id), "hour": hour_label(r.hour), "status": r.status or "unknown",
             "time_since_last_run_ms": json_value(r.time_since_last_run_ms), "dead_since": cell_text(r.dead_since),
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
    rows = [{"hour": hour_label(r.hour), "broker": entities.broker(r.broker), "changes": int(r.changes),
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
    rows = [{"minute": json_value(r.trigger_ts.floor("min")), "partitions": int(r.partitions or 0),
             "storm": "storm" if r.storm else "no storm", "lost_broker": cell_text(r.lost_broker) or "-",
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
        rows.append({"hour": hour_label(r.hour), "who": entities.broker(r.broker_id), "what": "session expiries",
                     "count": int(r.expiries or 0)})
    for r in (quorum.itertuples(index=False) if quorum is not None else ()):
        rows += [{"hour": hour_label(r.hour), "who": entities.zookeeper(cell_text(r.zk_myid)), "what": what, "count": int(n or 0)}
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


def quorum_rows(df: pd.DataFrame) -> list[dict]:
    """gold.kraft_quorum's rows as the chart and the cluster page's table show them, by hour."""
    def whole(v):   # pandas reads an int column with NULLs as floats
        return None if pd.isna(v) else int(v)

    return [{"hour": hour_label(r.hour), "leader": whole(r.leader), "epoch": whole(r.epoch),
             "elections": int(r.elections), "leaders": cell_text(as_list(r.leaders)), "fences": int(r.fences),
             "fenced_brokers": [int(b) for b in as_list(r.fenced_brokers)],
             "fenced_at_end": [int(b) for b in as_list(r.fenced_at_end)], "log_lines": int(r.log_lines)}
            for r in df.sort_values("hour").itertuples(index=False)]


def quorum_chart(gold: Gold, cluster: str) -> Chart:
    """The KRaft quorum per hour: the last Raft epoch (its leader in the tooltip) over the elections, and
    the brokers fenced, one bar each."""
    cid, title = "chart-quorum", "KRaft quorum: Raft epoch and elections, fenced brokers per hour"
    df = gold.get("kraft_quorum", cluster)
    if df is None:
        return Chart(cid, title, None, "gold.kraft_quorum is not in this lakehouse (an older lakehouse): no chart.")
    if df.empty:
        return Chart(cid, title, None, "no rows of gold.kraft_quorum in this window: the cluster is in ZooKeeper "
                                       "mode (the table holds KRaft-mode clusters only) or none of its hours is processed.")
    rows = quorum_rows(df)
    quorum = [{**r, "leader": cell_text(r["leader"]) or "unknown", "fenced_at_end": cell_text(r["fenced_at_end"])}
              for r in rows]
    fenced = [{"hour": r["hour"], "broker": entities.broker(b), "fenced_at_end": b in r["fenced_at_end"]}
              for r in rows for b in r["fenced_brokers"]]
    x = alt.X("hour:O", sort=_cluster_hours(gold), title="hour (UTC)")
    tips = _tips("hour:O", "epoch:Q", "leader:N", "elections:Q", "leaders:N", "fences:Q", "fenced_at_end:N",
                 "log_lines:Q")
    elections = alt.Chart(alt.NamedData("quorum")).mark_bar(color="#f0b27a", opacity=0.7).encode(
        x=x, y=alt.Y("elections:Q", title="elections"), tooltip=tips)
    epoch = alt.Chart(alt.NamedData("quorum")).mark_line(point=True, color="#2e86c1").encode(
        x=x, y=alt.Y("epoch:Q", title="Raft epoch (last)", scale=alt.Scale(zero=False)), tooltip=tips)
    bars = alt.Chart(alt.NamedData("fenced")).mark_bar().encode(
        x=x, y=alt.Y("count():Q", title="brokers fenced"), color=alt.Color("broker:N", title="fenced broker"),
        tooltip=_tips("hour:O", "broker:N", "fenced_at_end:N"),
    ).properties(width=760, height=120, name="fenced")
    top = alt.layer(elections, epoch).resolve_scale(y="independent").properties(width=760, height=180, name="quorum")
    chart = alt.vconcat(top, bars)
    return Chart(cid, title, _spec(chart, quorum=quorum, fenced=fenced), facts="gold.kraft_quorum")


def requests_chart(gold: Gold, cluster: str, limits: dict) -> Chart:
    cid, title = "chart-requests", "Request queue: largest RequestQueueSize / queued.max.requests per hour"
    df = gold.get("request_saturation", cluster)
    why = _unavailable(gold, "gold.request_saturation", df)
    if why:
        return Chart(cid, title, None, why)
    ratio = limits["request_queue_saturation.queue_full_ratio"]
    rows = [{"hour": hour_label(r.hour), "broker": entities.broker(r.broker_id),
             "fill": (r.max_queue / r.queue_limit) if r.queue_limit and not pd.isna(r.max_queue) else None,
             "max_queue": json_value(r.max_queue), "queue_limit": json_value(r.queue_limit),
             "saturated_samples": int(r.saturated_samples or 0), "samples": int(r.samples or 0),
             "min_handler_idle": json_value(r.min_handler_idle), "min_network_idle": json_value(r.min_network_idle)}
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
    rows = [{"minute": json_value(r.minute), "broker": entities.broker(r.broker_id), "open_fds": json_value(r.open_fds),
             "limit": r.max_fds * ratio if "max_fds" in df and not pd.isna(r.max_fds) else None}
            for r in df.sort_values("minute").itertuples(index=False)]
    base = alt.Chart(alt.NamedData("fds")).encode(x=_x_time("minute", gold), color=alt.Color("broker:N"))
    chart = alt.layer(
        base.mark_line().encode(y=alt.Y("open_fds:Q", title="open file descriptors"),
                                tooltip=_tips("broker:N", "minute:T", "open_fds:Q", "limit:Q")),
        base.mark_line(strokeDash=[6, 4]).encode(y=alt.Y("limit:Q")),
    ).properties(width=760, height=220)
    return Chart(cid, title, _spec(chart, fds=rows), facts="silver.jmx_samples (gold keeps no fd table)")

