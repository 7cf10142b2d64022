"""Gold of a window, read without Spark: deltalake -> Arrow -> pandas, only the window's `hour` partitions;
its rows as JSON-safe values for the charts and the pages; the worst open incident of each cluster hour."""
from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from datetime import datetime

import pandas as pd

from fleethealth.fleet import mbeans
from fleethealth.runtime.vocabulary import SEVERITY_RANK
from fleethealth.lake import tables as lake
from fleethealth.lake.catalog import Lakehouse
from fleethealth.lake.hours import HOUR, floor_hour, hours_between
from fleethealth.report.text import explained, explains_of

HOURLY = ("incident_findings", "consumer_offsets_partitions", "log_cleaner_status", "broker_health_hourly",
          "isr_churn", "leader_elections", "zk_sessions", "zk_quorum", "kraft_quorum", "request_saturation",
          "metadata_divergence", "deadlocks", "known_bug_exposure", "cluster_availability_hourly")
WHOLE = ("incidents", "incident_history")
FD_TABLE = "silver.jmx_samples"
# the longest slug of a cluster name in its page's file name (page_name): well inside a file name's 255 bytes
PAGE_SLUG_MAX = 100


@dataclass
class Gold:
    """The window's rows of each table read (pandas), and the tables the lakehouse does not have."""
    start: datetime
    end: datetime
    frames: dict[str, pd.DataFrame] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    last_processed: datetime | None = None    # the latest hour gold has, of any cluster
    inventory: list[str] = field(default_factory=list)   # the clusters of that hour

    def get(self, name: str, cluster: str | None = None) -> pd.DataFrame | None:
        df = self.frames.get(name)
        if df is None or cluster is None or "cluster" not in df:
            return df
        return df[df["cluster"] == cluster]

    @property
    def hours(self) -> list[datetime]:
        return hours_between(self.start, self.end)

    @property
    def processed(self) -> set[tuple[str, datetime]] | None:
        """The (cluster, hour) of the window that were processed: an hour publishes a row of
        gold.broker_health_hourly per inventory host, whatever arrived. None without that table."""
        health = self.get("broker_health_hourly")
        if health is None:
            return None
        return {(c, h.to_pydatetime()) for c, h in zip(health["cluster"], health["hour"])}

    def unprocessed(self, cluster: str) -> list[datetime]:
        """The hours of the window with no data of `cluster`: nothing processed them (yet)."""
        done = self.processed
        return [] if done is None else [h for h in self.hours if (cluster, h) not in done]



# ------------------------------------------------------------------------------------------ reading
def _dataset(path: str):
    from deltalake import DeltaTable

    return DeltaTable(path) if DeltaTable.is_deltatable(path) else None


def shown(rows):
    """`rows` (Arrow) as the pages may show them: in every text column (and list of texts) a control or
    bidirectional character a log line brought (a U+202E reordering what follows it, an ESC) escaped,
    visible as `\\u202e` (runtime.text.printable, as the terminal and the notifications show it).
    Every page, chart and table is built from these rows. Arrow finds the few values that need it."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from fleethealth.runtime.text import CONTROL_RE2, printable

    for i, column in enumerate(rows.columns):
        typ = column.type
        nested = pa.types.is_list(typ) or pa.types.is_large_list(typ)
        text = typ.value_type if nested else typ
        if not (pa.types.is_string(text) or pa.types.is_large_string(text)):
            continue
        values = pc.list_flatten(column) if nested else column
        if not len(values) or not pc.any(pc.match_substring_regex(values, CONTROL_RE2)).as_py():
            continue
        cleaned = [None if v is None else [printable(x) for x in v] if nested else printable(v)
                   for v in column.to_pylist()]
        rows = rows.set_column(i, rows.field(i), pa.array(cleaned, typ))
    return rows


def _window_filter(start: datetime, end: datetime, cluster: str | None):
    import pyarrow as pa
    import pyarrow.dataset as ds

    ts = pa.timestamp("us", tz="UTC")
    cond = (ds.field("hour") >= pa.scalar(start, ts)) & (ds.field("hour") < pa.scalar(end, ts))
    return cond & (ds.field("cluster") == cluster) if cluster else cond


def read_gold(lakehouse: Lakehouse, start: datetime, end: datetime, cluster: str | None = None) -> Gold:
    import pyarrow.dataset as ds

    gold = Gold(start, end)
    for name in HOURLY + WHOLE:
        data = _dataset(lake.table(f"gold.{name}").path(lakehouse))
        if data is None:
            gold.missing.append(f"gold.{name}")
            continue
        rows = lake.arrow_rows(data, filter=_window_filter(start, end, cluster) if name in HOURLY
                               else (ds.field("cluster") == cluster) if cluster else None)
        gold.frames[name] = shown(rows).to_pandas()
    known_end = end
    if "broker_health_hourly" in gold.frames:
        gold.last_processed, gold.inventory = _last_processed(lakehouse, cluster)
        # what is known ends with the last processed hour: an incident open then is not open after it
        known_end = min(end, gold.last_processed + HOUR) if gold.last_processed else start
    incidents = gold.frames.get("incidents")
    if incidents is not None:
        gold.frames["incidents"] = incidents = _with_lifecycle(incidents)
    if incidents is not None and len(incidents):
        # every incident alive at some known time of the window
        until = incidents["resolved_at"].fillna(pd.Timestamp(end))
        gold.frames["incidents"] = incidents[(incidents["first_seen"] < pd.Timestamp(known_end))
                                             & (until >= pd.Timestamp(start)) & (known_end > start)]
    gold.frames["fd"] = _fd_samples(lakehouse, start, end, cluster, gold)
    return gold


def last_processed_hour(lakehouse: Lakehouse) -> datetime | None:
    """The latest hour of gold.broker_health_hourly (its file list's partition values, not its rows);
    None before the first processed hour."""
    import pyarrow as pa
    from deltalake import DeltaTable

    path = lake.table("gold.broker_health_hourly").path(lakehouse)
    if not DeltaTable.is_deltatable(path):
        return None
    actions = pa.table(DeltaTable(path).get_add_actions(flatten=True))
    hours = [h for h in actions.column("partition.hour").to_pylist() if h is not None] if actions.num_rows else []
    return max(hours) if hours else None


def _last_processed(lakehouse: Lakehouse, cluster: str | None) -> tuple[datetime | None, list[str]]:
    """The last processed hour and the clusters of that hour: the inventory as last processed."""
    last = last_processed_hour(lakehouse)
    if last is None:
        return None, []
    return last, sorted(c for c in lake.latest_hours(lakehouse, last) if cluster in (None, c))


def _with_lifecycle(incidents: pd.DataFrame) -> pd.DataFrame:
    """gold.incidents with what each explains (`explains`: report.text.explains_of); as written before
    incidents were resolved (no status, resolved_at, first_hour, ...): every incident open, its hours those
    of first_seen and last_seen."""
    defaults = {"status": lambda df: "open", "resolved_at": lambda df: pd.NaT,
                "first_evidence": lambda df: df["evidence"], "known_bug": lambda df: None,
                "first_hour": lambda df: df["first_seen"].dt.floor("h"),
                "last_hour": lambda df: df["last_seen"].dt.floor("h"),
                "hours": lambda df: None, "incident_id": lambda df: [f"{i}" for i in range(len(df))],
                "caused_by": lambda df: None}
    missing = {k: f(incidents) for k, f in defaults.items() if k not in incidents}
    if "resolved_at" in missing:
        missing["resolved_at"] = pd.Series(pd.NaT, index=incidents.index, dtype="datetime64[us, UTC]")
    incidents = incidents.assign(**missing) if missing else incidents
    # what each explains (gold.causes), among the incidents of the table read
    rows = incidents.to_dict("records")
    by_cause = explained(rows)
    return incidents.assign(explains=[explains_of(r, by_cause) for r in rows])


def _fd_samples(lakehouse: Lakehouse, start, end, cluster, gold: Gold) -> pd.DataFrame | None:
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
    df = lake.arrow_rows(data, columns=["cluster", "broker_id", "ts", "props", "attribute", "value"], filter=cond).to_pandas()
    if df.empty:
        return pd.DataFrame(columns=["cluster", "broker_id", "minute", "open_fds", "max_fds"])
    keys = dict(mbeans.OPEN_FDS.keys)
    df = df[df["props"].map(lambda p: all(dict(p or ()).get(k) == v for k, v in keys.items()))]
    df = df.assign(minute=df["ts"].dt.floor("min"), what=df["attribute"].map(wanted))
    return (df.pivot_table(index=["cluster", "broker_id", "minute"], columns="what", values="value", aggfunc="max")
            .reset_index().rename_axis(columns=None))


# --------------------------------------------------------------------------------------- shaping
def records(df: pd.DataFrame, columns: list[str] | None = None) -> list[dict]:
    """JSON-safe rows: times as ISO-8601 UTC text, arrays as lists, NaN/NaT as null."""
    df = df if columns is None else df[[c for c in columns if c in df]]
    out = []
    for row in df.to_dict("records"):
        out.append({k: json_value(v) for k, v in row.items()})
    return out


def json_value(v):
    if isinstance(v, (pd.Timestamp, datetime)):
        return None if pd.isna(v) else pd.Timestamp(v).tz_convert("UTC").strftime("%Y-%m-%dT%H:%M:%SZ")
    if hasattr(v, "tolist"):
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        return [json_value(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):    # NaN; an infinity of a table written before silver set them aside
        return None
    if v is pd.NaT or v is None:
        return None
    try:
        if pd.isna(v):
            return None
    except (TypeError, ValueError):
        pass
    return v


def as_list(v) -> list:
    """An array column's value (numpy array, list or null) as a list."""
    return [] if v is None or (isinstance(v, float) and v != v) else list(v)


def hour_label(h) -> str:
    return pd.Timestamp(h).tz_convert("UTC").strftime("%m-%d %H:00")


def cell_text(v) -> str:
    v = json_value(v)
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


def page_name(cluster: str) -> str:
    """The file of a cluster's page, the one name every link to it is built from (index.html's lists,
    the fleet heatmap): `cluster-<name>.html` when the name is all ASCII letters, digits, `.`, `_`, `-`
    (and not too long for a file name); otherwise its readable ASCII slug, `~` and a hash of the exact
    name, so two names differing in one non-ASCII letter or symbol ("köln", "kóln") get two pages (an
    unchanged name has no `~`, so it never meets a hashed one)."""
    slug = re.sub(r"[^A-Za-z0-9._-]", "_", cluster)
    if slug != cluster or len(slug) > PAGE_SLUG_MAX:
        slug = f"{slug[:PAGE_SLUG_MAX]}~{hashlib.sha256(cluster.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"
    return f"cluster-{slug}.html"


def clusters_of(gold: Gold) -> list[str]:
    """The clusters of the window's rows and every cluster of the inventory as last processed (a
    cluster with nothing in the window shows, its hours "no data")."""
    names = set(gold.inventory)
    for name in ("broker_health_hourly", "incidents", "incident_findings"):
        df = gold.get(name)
        if df is not None:
            names |= set(df["cluster"].dropna())
    return sorted(names)

