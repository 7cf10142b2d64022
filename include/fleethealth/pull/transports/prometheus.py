"""`prometheus`: a host's JMX for an hour from the Prometheus HTTP API (jmx_exporter's series, as Prometheus,
Thanos, Mimir or VictoriaMetrics keep them): the way Kubernetes fleets (Strimzi, Confluent's operator,
Bitnami's chart) expose JMX, and the way to backfill it.

For each series the host's processes register under the cluster's jmx_exporter naming (the rules file its
deployment uses: fleet/exporter_namings.yaml; `default` is mbeans.yaml's own) one instant query of
`{__name__=~"series|series_total", matchers}[1h]` a millisecond before the hour's end: the raw samples of
the hour with their own times (not `query_range` steps: absence stays absence). The matchers are the
host, whose `host_label` (default `instance`) is the inventory host name, with or without `:port`, and the
labels that pick the bean (`name="Size"`, `topic="__consumer_offsets"`, `quantile="0.99"`). Each sample is
written as jmx_exporter's default naming writes its bean (series, and the bean's key properties as labels;
none Prometheus added: job, instance, pod...), so one `jmx/prometheus.<hour>.prom` (text exposition, a
millisecond timestamp on each line) is read by silver as any jmx_exporter scrape, whatever the naming. An
hour with no sample lands an empty file: the read happened and found nothing; its reason says so, and when
the hour is older than Prometheus keeps (its `storageRetention`), since when it holds samples. For a host with
log dirs, node_exporter's filesystem series of the same host (`namings.DISK_SERIES`, its `host_label` too) are
read beside them: Kafka has no disk-free MBean.

Credentials come from an Airflow connection (`conn_id`), never the inventory: a login and password are
basic auth, a password alone a bearer token; its extra may give `headers` (e.g. `X-Scope-OrgID` for
Mimir), `ca_bundle`, `client_cert` and `client_key`. Prometheus is not trusted: one deadline for all of the
host's queries, no redirect followed, each answer capped in size, an error answer one error naming it.
"""
from __future__ import annotations

import json
import math
import re
import ssl
import time
import urllib.parse
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from fleethealth.fleet import mbeans, namings
from fleethealth.fleet.inventory import HOST_LABELS, Prometheus
from fleethealth.pull.transports import web
from fleethealth.pull.transports.base import TransportError

TIMEOUT_S = 10                  # connect, and each read of the socket
DEADLINE_S = 60                 # all of a host's queries of an hour
MAX_RESPONSE_BYTES = 256 * 1024**2
PREFIX = "prometheus."
# in the reason of each host's JMX that did not come from Prometheus (gold.detectors.prometheus_unreadable)
MARK = "the cluster's Prometheus"
QUERY_PATH = "api/v1/query"
RUNTIME_PATH = "api/v1/status/runtimeinfo"
_RETENTION = re.compile(r"^(\d+)(ms|s|m|h|d|w|y)$")
_UNIT_S = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "y": 365 * 86400}
_LABEL_VALUE = re.compile(r'(["\\\n])')


@dataclass(frozen=True)
class Sample:
    series: str
    labels: tuple[tuple[str, str], ...]
    ms: int
    value: str                      # as Prometheus gave it: "NaN" and "+Inf" stay what they are


def file_name(hour: datetime) -> str:
    return f"{PREFIX}{hour.astimezone(timezone.utc):%Y-%m-%dT%H-%M-%SZ}.prom"


def selectors(processes: tuple[str, ...], host: str, host_label: str = HOST_LABELS[0],
              naming: str = namings.DEFAULT) -> dict[str, tuple[namings.Series, ...]]:
    """selector -> the series (of beans `processes` register, under `naming`) it reads: one per metric name
    and set of fixed labels, matching the name with and without `_total`, the host, and each fixed label
    (one regex when beans share the series)."""
    groups: dict[tuple[str, tuple[str, ...]], list[namings.Series]] = {}
    for series in namings.naming(naming).for_beans(mbeans.for_processes(processes)):
        groups.setdefault((series.name, tuple(k for k, _ in series.matchers)), []).append(series)
    out = {}
    for (name, fixed), group in sorted(groups.items()):
        matchers = [f'__name__=~"{name}|{name}{namings.TOTAL}"', f'{host_label}=~"{_quote(re.escape(host))}(:[0-9]+)?"']
        for label in fixed:
            values = sorted({dict(s.matchers)[label] for s in group})
            matchers.append(f'{label}=~"{_quote("|".join(re.escape(v) for v in values))}"')
        out[f"{{{','.join(matchers)}}}"] = tuple(group)
    return out


def disk_selector(processes: tuple[str, ...], host: str, host_label: str = HOST_LABELS[0]) -> str | None:
    """The selector of node_exporter's filesystem series (namings.DISK_SERIES) of a host with log dirs (None
    for one without: a ZooKeeper server, a dedicated controller)."""
    if not set(processes) & set(namings.DISK_PROCESSES):
        return None
    return (f'{{__name__=~"{"|".join(namings.DISK_SERIES)}",'
            f'{host_label}=~"{_quote(re.escape(host))}(:[0-9]+)?"}}')


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _connection(conn_id: str | None) -> tuple[dict[str, str], ssl.SSLContext | None]:
    """(headers, TLS context) of an Airflow connection (none: no credentials, the system's CAs)."""
    if not conn_id:
        return {}, None
    from airflow.sdk import BaseHook

    try:
        conn = BaseHook.get_connection(conn_id)
    except Exception as exc:  # noqa: BLE001 - Airflow raises several kinds for a missing connection
        raise TransportError(f"Airflow connection {conn_id!r} not found: {type(exc).__name__}") from None
    extra = conn.extra_dejson or {}
    headers = extra.get("headers") or {}
    if not isinstance(headers, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items()):
        raise TransportError(f"connection {conn_id!r}: extra headers must map header names to strings")
    headers = dict(headers)
    if conn.login:
        import base64

        token = base64.b64encode(f"{conn.login}:{conn.password or ''}".encode()).decode()
        headers["Authorization"] = f"Basic {token}"
    elif conn.password:
        headers["Authorization"] = f"Bearer {conn.password}"
    context = None
    if any(extra.get(k) for k in ("ca_bundle", "client_cert")):
        try:
            context = ssl.create_default_context(cafile=extra.get("ca_bundle") or None)
            if extra.get("client_cert"):
                context.load_cert_chain(extra["client_cert"], extra.get("client_key") or None)
        except (OSError, ssl.SSLError) as exc:
            raise TransportError(f"connection {conn_id!r}: cannot load its CA bundle or client certificate: "
                                 f"{exc.strerror or exc}") from None
    return headers, context


def query(source: Prometheus, expr: str, at: datetime, deadline: float, headers: dict[str, str] | None = None,
          context: ssl.SSLContext | None = None, whole: float | None = None) -> list[dict]:
    """The `result` of an instant query of the range vector `expr` at `at` (a matrix: metric, values)."""
    url = source.url.rstrip("/") + "/" + QUERY_PATH
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TransportError(f"{source.url}: not an http(s) Prometheus URL")
    if parts.username or parts.password:
        raise TransportError(f"{parts.hostname}: the Prometheus URL must not carry credentials (use conn_id)")
    where = parts.netloc
    body = urllib.parse.urlencode({"query": expr, "time": f"{at.timestamp():.3f}"}).encode()
    status, raw = web.request(url, body, {"Content-Type": "application/x-www-form-urlencoded", **(headers or {})},
                           what="Prometheus", timeout=TIMEOUT_S, deadline=deadline, max_bytes=MAX_RESPONSE_BYTES,
                           context=context, ok=(200, 400, 422, 503), whole=whole)
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError):
        raise TransportError(f"{where}: Prometheus answered HTTP {status} with something that is not JSON") from None
    if not isinstance(doc, dict) or doc.get("status") != "success":
        error = doc.get("error") if isinstance(doc, dict) else None
        kind = doc.get("errorType") if isinstance(doc, dict) else None
        said = f": {kind}: {str(error)[:300]}" if error else ""
        raise TransportError(f"{where}: Prometheus answered HTTP {status}, not a success{said}")
    data = doc.get("data")
    if not isinstance(data, dict) or data.get("resultType") != "matrix" or not isinstance(data.get("result"), list):
        raise TransportError(f"{where}: Prometheus answered a {type(data).__name__} that is not a matrix "
                             "to a range-vector query")
    return data["result"]


def read_hour(source: Prometheus, host: str, processes: tuple[str, ...], hour: datetime,
              deadline: float = DEADLINE_S, auth: tuple[dict[str, str], ssl.SSLContext | None] | None = None,
              ) -> list[Sample]:
    """The samples of `hour` [start, end) of the catalogue's series of `host` (running `processes`), all of
    it within `deadline` seconds (`auth`: the connection's headers and TLS context, when already read)."""
    headers, context = auth or _connection(source.conn_id)
    start = hour.astimezone(timezone.utc)
    end = start + timedelta(hours=1)
    at = end - timedelta(milliseconds=1)     # the range's end is inclusive: the next hour's first ms is its
    lo, hi = int(start.timestamp() * 1000), int(end.timestamp() * 1000)
    stop = time.monotonic() + deadline
    out = []
    naming = namings.naming(source.naming)
    disk = disk_selector(processes, host, source.host_label)
    for selector in [*selectors(processes, host, source.host_label, source.naming), *([disk] if disk else [])]:
        left = stop - time.monotonic()
        if left <= 0:
            raise TransportError(f"{urllib.parse.urlsplit(source.url).netloc}: no complete answer from Prometheus "
                                 f"within {deadline:g} s")
        for series in query(source, f"{selector}[1h]", at, left, headers, context, whole=deadline):
            metric = series.get("metric") if isinstance(series, dict) else None
            values = series.get("values") if isinstance(series, dict) else None
            if not isinstance(metric, dict) or not isinstance(values, list):
                raise TransportError(f"{urllib.parse.urlsplit(source.url).netloc}: a series of Prometheus' answer "
                                     "has no metric or values")
            metric = {str(k): str(v) for k, v in metric.items()}
            name = metric.get("__name__", "")
            if selector == disk:
                if name not in namings.DISK_SERIES or namings.DISK_LABEL not in metric:
                    continue
                written, labels = name, ((namings.DISK_LABEL, metric[namings.DISK_LABEL]),)
            else:
                mine = naming.bean_of(name, metric)
                labels = mine.default_labels(metric) if mine else None
                if labels is None:      # a regex of shared series matched a label set no bean of ours has
                    continue
                written = mine.bean.exporter_series
            for pair in values:
                ms = _ms(pair)
                if ms is not None and lo <= ms < hi:
                    out.append(Sample(written, labels, ms, str(pair[1])))
    return out


def _ms(pair) -> int | None:
    """A sample's time in ms, or None for a pair that is not [time, "value"]."""
    if not isinstance(pair, list) or len(pair) != 2 or not isinstance(pair[1], str):
        return None
    t = pair[0]
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
        return None
    return round(t * 1000)


def exposition(samples: list[Sample]) -> str:
    """Text exposition of `samples`, one line each with its millisecond timestamp, in time order."""
    lines = []
    for s in sorted(samples, key=lambda s: (s.ms, s.series, s.labels)):
        labels = ",".join(f'{k}="{_LABEL_VALUE.sub(_escape, v)}"' for k, v in s.labels)
        lines.append(f"{s.series}{{{labels}}} {s.value} {s.ms}" if labels else f"{s.series} {s.value} {s.ms}")
    return "".join(line + "\n" for line in lines)


def _escape(match: re.Match) -> str:
    return {"\n": "\\n", '"': '\\"', "\\": "\\\\"}[match.group(1)]


def kept_since(source: Prometheus, now: datetime, deadline: float,
               auth: tuple[dict[str, str], ssl.SSLContext | None] | None = None) -> tuple[str, datetime] | None:
    """(its retention as it says it, the oldest time it keeps) of a Prometheus that tells its time-based
    retention (runtimeinfo's storageRetention, e.g. "15d" or "15d or 512MiB"); None for one that does not
    (Mimir, Thanos) or cannot be asked."""
    headers, context = auth or _connection(source.conn_id)
    try:
        _, raw = web.request(source.url.rstrip("/") + "/" + RUNTIME_PATH, None, headers, what="Prometheus",
                          timeout=TIMEOUT_S, deadline=deadline, max_bytes=1 << 20, context=context, method="GET")
        said = str(json.loads(raw)["data"]["storageRetention"])
    except (TransportError, ValueError, KeyError, TypeError):
        return None
    times = [m for part in said.split(" or ") if (m := _RETENTION.match(part.strip()))]
    if not times:
        return None
    seconds = min(int(m.group(1)) * _UNIT_S[m.group(2)] for m in times)
    try:
        return said, now - timedelta(seconds=seconds)
    except OverflowError:
        return None


def land(source: Prometheus, host: str, processes: tuple[str, ...], hour: datetime, folder: Path,
         deadline: float = DEADLINE_S, now: datetime | None = None) -> tuple[Path, str]:
    """Read the hour and write it as one scrape file into `folder`; returns (the file, why it is empty: ""
    when it is not)."""
    stop = time.monotonic() + deadline
    auth = _connection(source.conn_id)       # read once: Airflow's connection lookup is not free
    samples = read_hour(source, host, processes, hour, deadline, auth)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / file_name(hour)
    target.write_text(exposition(samples))
    if samples:
        return target, ""
    why = f"{MARK} has no sample of {host} in this hour"
    kept = kept_since(source, now or datetime.now(timezone.utc), max(0.5, stop - time.monotonic()), auth)
    if kept and hour + timedelta(hours=1) <= kept[1]:
        why += f": it keeps {kept[0]}, nothing before {kept[1]:%Y-%m-%d %H:%M} UTC"
    return target, why
