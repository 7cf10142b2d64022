"""The MBeans fleethealth reads, by role: the catalogue `mbeans.yaml` (see there), loaded and checked.

Importing this module needs no Spark (the Jolokia pull uses it): `MBean.matches` imports it when called.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING

import yaml

if TYPE_CHECKING:
    from pyspark.sql import Column

CATALOGUE_FILE = "mbeans.yaml"
FIELDS = ("domain", "keys", "attribute", "unit", "since", "processes", "read_by", "jmx_exporter")
UNITS = ("bytes", "count", "ms", "ratio", "offset", "id", "epoch", "text")
TEXT = "text"   # a string attribute: no jmx_exporter series
# the numbers a unit allows: Kafka's node ids and epochs are Java ints; counts, sizes, offsets and
# times Java longs; a ratio any number (Kafka's idle averages may pass 1). Silver sets aside a sample
# beyond its bean's range, and any sample beyond a long or infinite (fleethealth.silver.parsers.jmx_values)
JAVA_INT, JAVA_LONG = (-2**31, 2**31 - 1), (-2**63, 2**63 - 1)
UNIT_RANGE = {"id": JAVA_INT, "epoch": JAVA_INT}
# the processes a bean is registered by (fleethealth.fleet.inventory.Host.processes)
PROCESSES = ("zookeeper", "zk_broker", "kraft_broker", "controller")
_VERSION = re.compile(r"\d+(\.\d+)+")
_SERIES = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")


@dataclass(frozen=True)
class MBean:
    id: str                                   # the catalogue's short name
    domain: str
    keys: tuple[tuple[str, str], ...]
    attribute: str
    unit: str
    since: str                                # first Kafka version exposing it
    processes: tuple[str, ...]                # the processes registering it (PROCESSES)
    read_by: tuple[str, ...]                  # gold tables and detector kinds
    exporter_series: str | None               # jmx_exporter's series name (None: a text attribute)
    exporter_labels: tuple[str, ...]

    @property
    def object_name(self) -> str:
        """The ObjectName as spelled in the catalogue (without the keys instances add)."""
        return f"{self.domain}:{','.join(f'{k}={v}' for k, v in self.keys)}"

    @property
    def pattern(self) -> str:
        """ObjectName pattern of every instance (e.g. each partition of a topic's Log Size)."""
        return f"{self.object_name},*"

    def matches(self) -> Column:
        from pyspark.sql import functions as F

        cond = (F.col("domain") == self.domain) & (F.col("attribute") == self.attribute)
        for key, value in self.keys:
            cond = cond & (F.col("props")[key] == value)
        return cond


def _strings(value, what: str, fail) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(x, str) and x for x in value):
        fail(f"{what} must be a list of names, got {value!r}")
    return tuple(value)


def build_catalogue(doc, origin: str = CATALOGUE_FILE) -> dict[str, MBean]:
    """The MBeans of a catalogue document, by short name; a malformed entry is an error naming it."""
    if not isinstance(doc, dict) or not doc:
        raise ValueError(f"{origin}: expected a map of short name -> MBean entry")
    out = {}
    for name, entry in doc.items():
        def fail(problem: str):
            raise ValueError(f"{origin}: entry {name!r}: {problem}")

        if not isinstance(entry, dict):
            fail(f"expected a map with {', '.join(FIELDS)}")
        missing, unknown = [f for f in FIELDS if f not in entry], sorted(set(entry) - set(FIELDS))
        if missing or unknown:
            fail("; ".join(filter(None, [missing and f"missing {', '.join(missing)}",
                                         unknown and f"unknown field(s) {', '.join(unknown)}"])))
        for field in ("domain", "attribute"):
            if not isinstance(entry[field], str) or not entry[field]:
                fail(f"{field} must be a non-empty string, got {entry[field]!r}")
        keys = entry["keys"]
        if (not isinstance(keys, dict) or next(iter(keys), None) != "type"
                or not all(isinstance(v, str) and v for v in keys.values())):
            fail(f"keys must be a map of key property -> value starting with type, got {keys!r}")
        if entry["unit"] not in UNITS:
            fail(f"unit must be one of {', '.join(UNITS)}, got {entry['unit']!r}")
        if not isinstance(entry["since"], str) or not _VERSION.fullmatch(entry["since"]):
            fail(f"since must be a quoted Kafka version like \"2.4.0\", got {entry['since']!r}")
        processes = _strings(entry["processes"], "processes", fail)
        if not processes or not set(processes) <= set(PROCESSES):
            fail(f"processes must be a list of {', '.join(PROCESSES)}, got {entry['processes']!r}")
        read_by = _strings(entry["read_by"], "read_by", fail)
        if not read_by:
            fail("read_by is empty: a bean nothing reads does not belong here")
        exporter = entry["jmx_exporter"]
        if (exporter is None) != (entry["unit"] == TEXT):
            fail(f"jmx_exporter is null for a text attribute only (it exports numbers), got {exporter!r}")
        if exporter is None:
            exporter = {"series": None, "labels": []}
        elif not isinstance(exporter, dict) or set(exporter) != {"series", "labels"}:
            fail(f"jmx_exporter must be a map with series and labels, got {exporter!r}")
        elif not isinstance(exporter["series"], str) or not _SERIES.fullmatch(exporter["series"]):
            fail(f"jmx_exporter series must be a Prometheus metric name, got {exporter['series']!r}")
        out[str(name)] = MBean(
            id=str(name), domain=entry["domain"], keys=tuple(keys.items()), attribute=entry["attribute"],
            unit=entry["unit"], since=entry["since"], processes=processes, read_by=read_by,
            exporter_series=exporter["series"],
            exporter_labels=_strings(exporter["labels"], "jmx_exporter labels", fail))
    return out


@lru_cache(maxsize=1)
def catalogue() -> dict[str, MBean]:
    text = resources.files("fleethealth.fleet").joinpath(CATALOGUE_FILE).read_text()
    return build_catalogue(yaml.safe_load(text))


def bean(name: str) -> MBean:
    try:
        return catalogue()[name]
    except KeyError:
        raise KeyError(f"no MBean {name!r} in {CATALOGUE_FILE} (known: {', '.join(catalogue())})") from None


OFFSETS_LOG_SIZE = bean("offsets_log_size")
CLEANER_DEAD_THREADS = bean("cleaner_dead_threads")
CLEANER_TIME_SINCE_LAST_RUN = bean("cleaner_time_since_last_run")
OPEN_FDS = bean("open_fds")
MAX_FDS = bean("max_fds")
ZK_EXPIRES = bean("zk_expires")
UNDER_REPLICATED = bean("under_replicated")
UNDER_MIN_ISR = bean("under_min_isr")
OFFLINE_PARTITIONS = bean("offline_partitions")
ACTIVE_CONTROLLER_COUNT = bean("active_controller_count")
REQUEST_QUEUE_SIZE = bean("request_queue_size")
REQUEST_HANDLER_IDLE = bean("request_handler_idle")
NETWORK_PROCESSOR_IDLE = bean("network_processor_idle")

ALL = tuple(catalogue().values())


def for_processes(processes: tuple[str, ...]) -> tuple[MBean, ...]:
    """The MBeans to read live from a host running `processes` (Host.processes): those they register."""
    return tuple(m for m in ALL if set(m.processes) & set(processes))


def jolokia_requests(processes: tuple[str, ...]) -> list[dict]:
    """The Jolokia bulk read of a host's MBeans: one pattern read per MBean attribute."""
    return [{"type": "read", "mbean": m.pattern, "attribute": m.attribute} for m in for_processes(processes)]
