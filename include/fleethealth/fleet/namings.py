"""jmx_exporter's namings of the catalogue beans: `exporter_namings.yaml` (see there), loaded and checked.

A naming gives each bean of the catalogue with a jmx_exporter series (fleet/mbeans.py) the series its rules
write, or why they write none. `Naming.bean_of` turns a series read back into its bean, and
`Series.default_labels` labels a sample as jmx_exporter's default naming would, which silver reads.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import yaml

from fleethealth.fleet import mbeans

NAMINGS_FILE = "exporter_namings.yaml"
DEFAULT = "default"
TOTAL = "_total"
# node_exporter's filesystem series, read from Prometheus beside jmx_exporter's for the hosts with log dirs (Kafka
# has no disk-free MBean), whatever the jmx_exporter naming: silver keeps them as node:type=Filesystem with the
# mount point as its key property (silver/jmx_prometheus_mapping.yaml), gold.cluster_availability_hourly reads them
DISK_SERIES = ("node_filesystem_avail_bytes", "node_filesystem_size_bytes")
DISK_LABEL = "mountpoint"
DISK_PROCESSES = ("zk_broker", "kraft_broker")
_SERIES = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


@dataclass(frozen=True)
class Series:
    bean: mbeans.MBean
    name: str                                   # without a trailing _total (read with and without it)
    matchers: tuple[tuple[str, str], ...]       # label -> fixed value: the bean's fixed keys and `match`
    labels: tuple[tuple[str, str], ...]         # label -> key property, for the keys instances vary in

    def default_labels(self, labels: dict[str, str]) -> tuple[tuple[str, str], ...] | None:
        """The labels jmx_exporter's default naming gives the bean's sample whose labels here are `labels`
        (None when they do not say a key the default naming has)."""
        keys = dict(self.bean.keys)
        keys.update((key, labels[label]) for label, key in self.labels if label in labels)
        if not set(self.bean.exporter_labels) <= set(keys):
            return None
        return tuple(sorted((k, keys[k]) for k in self.bean.exporter_labels))


@dataclass
class Naming:
    name: str
    source: str
    series: dict[str, Series]                   # bean id -> its series
    absent: dict[str, str]                      # bean id -> why the rules give it no series

    def __post_init__(self):
        self._by_name: dict[str, tuple[Series, ...]] = {}
        for s in self.series.values():
            self._by_name[s.name] = self._by_name.get(s.name, ()) + (s,)

    def for_beans(self, beans: tuple[mbeans.MBean, ...]) -> tuple[Series, ...]:
        return tuple(self.series[b.id] for b in beans if b.id in self.series)

    def bean_of(self, name: str, labels: dict[str, str]) -> Series | None:
        """The series of the bean a sample named `name` with `labels` stands for (None: no bean of ours)."""
        found = [s for s in self._by_name.get(_base(name), ()) if all(labels.get(k) == v for k, v in s.matchers)]
        return found[0] if found else None


def _default() -> Naming:
    series = {}
    for b in mbeans.ALL:
        if b.exporter_series is None:
            continue
        keys = dict(b.keys)
        series[b.id] = Series(b, _base(b.exporter_series),
                              tuple((k, keys[k]) for k in b.exporter_labels if k in keys),
                              tuple((k, k) for k in b.exporter_labels if k not in keys))
    return Naming(DEFAULT, "jmx_exporter's default naming (no rules, or `pattern: \".*\"`): mbeans.yaml", series, {})


def _base(name: str) -> str:
    return name[:-len(TOTAL)] if name.endswith(TOTAL) else name


def build(doc, origin: str = NAMINGS_FILE) -> dict[str, Naming]:
    """The namings of a document, by name, `default` first; a mistake is an error naming its entry."""
    if not isinstance(doc, dict):
        raise ValueError(f"{origin}: expected a map of naming -> its entries")
    exported = {b.id: b for b in mbeans.ALL if b.exporter_series is not None}
    out = {DEFAULT: _default()}
    raw: dict[str, dict] = {}
    for name, entry in doc.items():
        def fail(problem: str, where: str = ""):
            raise ValueError(f"{origin}: {name}{': ' + where if where else ''}: {problem}")

        if name in out:
            fail("is built in (mbeans.yaml's own jmx_exporter entries)")
        if not isinstance(entry, dict) or not set(entry) <= {"source", "like", "beans"} or "beans" not in entry:
            fail("expected a map with source, beans and perhaps like")
        if not isinstance(entry.get("source"), str) or not entry["source"].strip():
            fail("source must say which rules file it was derived from")
        beans = dict(raw[entry["like"]]) if entry.get("like") in raw else None
        if "like" in entry and beans is None:
            fail(f"like: {entry['like']!r} is no naming above it")
        beans = beans or {}
        if not isinstance(entry["beans"], dict):
            fail("beans must map catalogue beans to their series")
        beans.update(entry["beans"])
        raw[name] = beans
        series, absent = {}, {}
        for bean_id, spec in beans.items():
            where = f"beans: {bean_id}"
            if bean_id not in exported:
                fail("no bean of mbeans.yaml with a jmx_exporter series", where)
            bean = exported[bean_id]
            if isinstance(spec, dict) and set(spec) == {"absent"}:
                if not isinstance(spec["absent"], str) or not spec["absent"].strip():
                    fail("absent must say why", where)
                absent[bean_id] = " ".join(spec["absent"].split())
                continue
            if not isinstance(spec, dict) or "series" not in spec or not set(spec) <= {"series", "labels", "match"}:
                fail("expected {series, labels, match} or {absent: why}", where)
            if not isinstance(spec["series"], str) or not _SERIES.fullmatch(spec["series"]):
                fail(f"series must be a Prometheus metric name, got {spec['series']!r}", where)
            labels, match = spec.get("labels") or {}, spec.get("match") or {}
            keys = dict(bean.keys)
            for what, m in (("labels", labels), ("match", match)):
                if not isinstance(m, dict) or not all(isinstance(k, str) and _LABEL.fullmatch(k)
                                                       and isinstance(v, str) for k, v in m.items()):
                    fail(f"{what} must map label names to strings", where)
            missing = set(bean.exporter_labels) - set(keys) - set(labels.values())
            if missing:
                fail(f"no label carries its key(s) {', '.join(sorted(missing))}", where)
            matchers = [(label, keys[key]) for label, key in labels.items() if key in keys] + list(match.items())
            series[bean_id] = Series(bean, _base(spec["series"]), tuple(sorted(matchers)),
                                     tuple(sorted((label, key) for label, key in labels.items() if key not in keys)))
        unsaid = sorted(set(exported) - set(series) - set(absent))
        if unsaid:
            fail(f"says nothing of {', '.join(unsaid)} (give its series or why it has none)")
        naming = Naming(str(name), " ".join(entry["source"].split()), series, absent)
        _unambiguous(naming, fail)
        out[str(name)] = naming
    return out


def _unambiguous(naming: Naming, fail) -> None:
    """Two beans on one series must differ in a fixed label's value, or a sample could be either."""
    for name, group in naming._by_name.items():
        for i, a in enumerate(group):
            for b in group[i + 1:]:
                if not any(k in dict(b.matchers) and dict(b.matchers)[k] != v for k, v in a.matchers):
                    fail(f"{a.bean.id} and {b.bean.id} are both {name} with nothing telling them apart")


@lru_cache(maxsize=1)
def namings() -> dict[str, Naming]:
    text = resources.files("fleethealth.fleet").joinpath(NAMINGS_FILE).read_text()
    return build(yaml.safe_load(text))


def naming(name: str) -> Naming:
    try:
        return namings()[name]
    except KeyError:
        raise KeyError(f"no jmx_exporter naming {name!r} (known: {', '.join(namings())})") from None


NAMES = tuple(namings())
