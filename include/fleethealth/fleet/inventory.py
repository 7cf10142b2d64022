"""The fleet inventory: one YAML file of clusters and hosts, validated with clear errors.

`load_inventory(path)` returns an `Inventory`; any mistake raises `InventoryError` whose lines each
name the file, the key path and what is wrong (the CLI prints them and exits 2).
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import yaml

from fleethealth.fleet.kafka import OFFSETS_TOPIC_PARTITIONS
from fleethealth.fleet.sources import EXPECTED
from fleethealth.fleet.sources import NAMES as SOURCES
from fleethealth.notify.config import DEFAULT_ENDS_AFTER_S, KEYS as CHANNEL_KEYS, SEVERITY_RANK, TARGETS, Channel

ROLES = ("kafka", "zookeeper")
CLUSTER_KEYS = ("name", "timezone", "offsets_topic_partitions", "transport", "root", "hosts", "ssh_conn_id",
                "paths", "expect", "max_file_bytes")
HOST_KEYS = ("host", "role", "broker_id", "zk_myid", "kafka_version", "transport", "root", "ssh_conn_id",
             "paths", "jolokia_url", "expect", "max_file_bytes")
TRANSPORTS = ("local", "sftp", "http")
# Sources expected every hour per role; thread dumps and log-dir snapshots are occasional.
_VERSION = re.compile(r"^\d+\.\d+(\.\d+)?([.-][\w.-]+)?$")


class InventoryError(ValueError):
    """One or more mistakes in an inventory file; str() gives one line per mistake."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("\n".join(problems))


@dataclass(frozen=True)
class Host:
    cluster: str
    host: str
    role: str
    transport: str
    root: str | None
    broker_id: int | None = None
    zk_myid: int | None = None
    kafka_version: str | None = None
    ssh_conn_id: str | None = None
    jolokia_url: str | None = None
    paths: dict[str, str] = field(default_factory=dict)
    expect: tuple[str, ...] = ()
    max_file_bytes: int | None = None   # pull's size cap for one file (None: fleethealth.pull.hour's default)

    @property
    def entity(self) -> str:
        """How incidents name this host's process: `broker-<id>` or `zk-<myid>`."""
        return f"broker-{self.broker_id}" if self.role == "kafka" else f"zk-{self.zk_myid}"

    def source_dir(self, source: str) -> str:
        """Where `source` lives for this host: explicit `paths`, else <root>/<cluster>/<host>/<source>."""
        if source in self.paths:
            return self.paths[source]
        return str(Path(self.root or ".") / self.cluster / self.host / source)


@dataclass(frozen=True)
class Cluster:
    name: str
    timezone: str
    offsets_topic_partitions: int
    hosts: tuple[Host, ...]


@dataclass(frozen=True)
class Inventory:
    path: str
    clusters: tuple[Cluster, ...]
    notifications: tuple[Channel, ...] = ()    # where incident transitions are sent (fleethealth.notify)

    @property
    def hosts(self) -> list[Host]:
        return [h for c in self.clusters for h in c.hosts]

    def cluster(self, name: str) -> Cluster:
        for c in self.clusters:
            if c.name == name:
                return c
        raise KeyError(name)

    def host(self, name: str) -> Host:
        for h in self.hosts:
            if h.host == name:
                return h
        raise KeyError(name)


MAX_NAME = 100            # a cluster or host name (both go into lock and landing file names)
MAX_ID = 2**31 - 1        # broker ids and myids are Java ints


MAX_VALUES = 100_000      # values of an inventory once its YAML aliases are expanded


def _expanded_size(doc: Any) -> int:
    """How many values `doc` holds with every alias expanded, counting up to MAX_VALUES + 1: a few
    hundred bytes of aliases nested in aliases stand for gigabytes (PyYAML shares them, but every
    walk over the inventory and every message quoting a part of it would expand them)."""
    count, stack = 0, [doc]
    while stack and count <= MAX_VALUES:
        value = stack.pop()
        count += 1
        if isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return count


def _credentials(url: Any) -> bool:
    """Whether a URL carries a user, password or query string (where tokens go)."""
    import urllib.parse

    parts = urllib.parse.urlsplit(str(url))
    return bool(parts.username or parts.password or parts.query or parts.fragment)


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def _unknown_keys(doc: dict, known: tuple[str, ...], key: str, bad, inherited: frozenset = frozenset()):
    """Report each unknown key of `doc` once (with the known key it is likely a typo of); return the
    `bad` to use for the rest of `doc`, quiet about a known key missing only because of such a typo
    (`kafka_versoin: 2.8.1` is one mistake, not two) here or (`inherited`) in the mapping `doc`
    inherits from, and the typo'd keys."""
    typos = {k for k in inherited if k not in doc}
    for name in sorted(set(doc) - set(known), key=str):
        match = difflib.get_close_matches(str(name), known, n=1, cutoff=0.75)
        if match and match[0] not in doc:
            typos.add(match[0])
            bad(f"{key}.{name}", f"unknown key (did you mean {match[0]}?)")
        else:
            bad(f"{key}.{name}", "unknown key")
    def quiet(where: str, what: str) -> None:
        if where.rsplit(".", 1)[-1] not in typos:
            bad(where, what)
    return quiet, frozenset(typos)


_NAME = re.compile(r"[A-Za-z0-9][\w.-]*")


def _is_name(value: Any) -> bool:
    """A cluster, host or channel name: letters, digits, . _ -, at most MAX_NAME characters."""
    return isinstance(value, str) and bool(_NAME.fullmatch(value)) and len(value) <= MAX_NAME


def _unique_name(name: Any, i: int, key: str, what: str, seen: set[str], bad) -> str:
    """The name of the i-th cluster or channel (`#i` when it is not a name), added to `seen`; one line
    for a bad or duplicate name."""
    if not _is_name(name):
        bad(key, f"expected a {what} name (letters, digits, . _ -; at most {MAX_NAME}), "
                 f"got {name if not isinstance(name, str) else name[:MAX_NAME + 1]!r}")
        name = f"#{i}"
    elif name in seen:
        bad(key, f"duplicate {what} name {name!r}")
    seen.add(name)
    return name


def _mappings(items: list, key: str, bad):
    """(index, key path, entry) of each mapping of a list; one line for each entry that is not one."""
    for i, item in enumerate(items):
        if isinstance(item, dict):
            yield i, f"{key}[{i}]", item
        else:
            bad(f"{key}[{i}]", "expected a mapping")


def load_inventory(path: str | Path) -> Inventory:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise InventoryError([f"{path}: cannot read inventory: {exc.strerror or exc}"]) from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise InventoryError([f"{path}:{where} not valid YAML: {getattr(exc, 'problem', exc)}"]) from None
    if _expanded_size(doc) > MAX_VALUES:
        raise InventoryError([f"{path}: its YAML expands to more than {MAX_VALUES} values (aliases nested in "
                              "aliases); an inventory needs far fewer"])
    return parse_inventory(doc, str(path), base_dir=path.parent)


def parse_inventory(doc: Any, name: str = "<inventory>", base_dir: Path | None = None) -> Inventory:
    problems: list[str] = []

    def bad(key: str, what: str) -> None:
        problems.append(f"{name}: {key}: {what}")

    def _size(value: Any, key: str, bad) -> int | None:
        if value is not None and (_int(value) is None or _int(value) < 1):
            bad(key, f"expected a size in bytes (an integer >= 1), got {value!r}")
            return None
        return None if value is None else _int(value)

    if not isinstance(doc, dict) or not isinstance(doc.get("clusters"), list) or not doc["clusters"]:
        raise InventoryError([f"{name}: clusters: expected a non-empty list of clusters"])
    clusters: list[Cluster] = []
    seen_hosts: set[str] = set()
    seen_clusters: set[str] = set()
    for ci, ckey, c in _mappings(doc["clusters"], "clusters", bad):
        cname = _unique_name(c.get("name"), ci, f"{ckey}.name", "cluster", seen_clusters, bad)
        ckey = f"clusters[{cname}]"
        cbad, cluster_typos = _unknown_keys(c, CLUSTER_KEYS, ckey, bad)
        tz = c.get("timezone", "UTC")
        try:
            ZoneInfo(str(tz))
        except (ZoneInfoNotFoundError, ValueError):
            cbad(f"{ckey}.timezone", f"unknown IANA timezone {tz!r}")
        parts = c.get("offsets_topic_partitions", OFFSETS_TOPIC_PARTITIONS)
        if _int(parts) is None or not 1 <= _int(parts) <= 10000:
            cbad(f"{ckey}.offsets_topic_partitions", f"expected an integer 1..10000, got {parts!r}")
            parts = OFFSETS_TOPIC_PARTITIONS
        transport = c.get("transport", "local")
        if transport not in TRANSPORTS:
            cbad(f"{ckey}.transport", f"unknown transport {transport!r} (one of {', '.join(TRANSPORTS)})")
        root = c.get("root")
        if root is not None and base_dir is not None and not Path(str(root)).is_absolute():
            root = str((base_dir / str(root)).resolve())
        cluster_cap = _size(c.get("max_file_bytes"), f"{ckey}.max_file_bytes", cbad)
        # what hosts inherit is checked here, once (a host reports only what it sets itself)
        cluster_paths = c.get("paths") or {}
        if not isinstance(cluster_paths, dict) or any(k not in SOURCES for k in cluster_paths):
            cbad(f"{ckey}.paths", f"expected a mapping of sources ({', '.join(SOURCES)}) to folders")
            cluster_paths = {}
        cluster_expect = c.get("expect")
        if cluster_expect is not None and (not isinstance(cluster_expect, list)
                                           or any(x not in SOURCES for x in cluster_expect)):
            cbad(f"{ckey}.expect", f"expected a list of sources ({', '.join(SOURCES)})")
            cluster_expect = None
        hosts_doc = c.get("hosts")
        if not isinstance(hosts_doc, list) or not hosts_doc:
            cbad(f"{ckey}.hosts", "expected a non-empty list of hosts")
            hosts_doc = []
        hosts: list[Host] = []
        broker_ids: set[int] = set()
        myids: set[int] = set()
        for _, hkey, h in _mappings(hosts_doc, f"{ckey}.hosts", bad):
            hname = h.get("host")
            if not _is_name(hname):
                bad(f"{hkey}.host", f"expected a host name (at most {MAX_NAME} characters), "
                                    f"got {hname if not isinstance(hname, str) else hname[:MAX_NAME + 1]!r}")
                continue
            hkey = f"{ckey}.hosts[{hname}]"
            if hname in seen_hosts:
                bad(f"{hkey}.host", f"duplicate host {hname!r}")
            seen_hosts.add(hname)
            hbad, _ = _unknown_keys(h, HOST_KEYS, hkey, bad, cluster_typos)
            role = h.get("role")
            if role not in ROLES:
                hbad(f"{hkey}.role", f"unknown role {role!r} (one of {', '.join(ROLES)})")
            broker_id = zk_myid = None
            version = h.get("kafka_version")
            if role == "kafka":
                broker_id = _int(h.get("broker_id"))
                if broker_id is None or not 0 <= broker_id <= MAX_ID:
                    hbad(f"{hkey}.broker_id", f"expected an integer broker id 0..{MAX_ID}, got {h.get('broker_id')!r}")
                elif broker_id in broker_ids:
                    hbad(f"{hkey}.broker_id", f"duplicate broker id {broker_id} in cluster {cname}")
                else:
                    broker_ids.add(broker_id)
                if version is None or not _VERSION.match(str(version)):
                    hbad(f"{hkey}.kafka_version", f"expected a Kafka version such as 2.8.1, got {version!r}")
            elif role == "zookeeper":
                zk_myid = _int(h.get("zk_myid"))
                if zk_myid is None or not 0 <= zk_myid <= MAX_ID:
                    hbad(f"{hkey}.zk_myid", f"expected an integer myid 0..{MAX_ID}, got {h.get('zk_myid')!r}")
                elif zk_myid in myids:
                    hbad(f"{hkey}.zk_myid", f"duplicate ZooKeeper myid {zk_myid} in cluster {cname}")
                else:
                    myids.add(zk_myid)
            htransport = h.get("transport", transport)
            if "transport" in h and htransport not in TRANSPORTS:
                hbad(f"{hkey}.transport", f"unknown transport {htransport!r} (one of {', '.join(TRANSPORTS)})")
            hroot = h.get("root", root)
            if hroot is not None and base_dir is not None and not Path(str(hroot)).is_absolute():
                hroot = str((base_dir / str(hroot)).resolve())
            paths = h.get("paths", cluster_paths) or {}
            if not isinstance(paths, dict) or any(k not in SOURCES for k in paths):
                hbad(f"{hkey}.paths", f"expected a mapping of sources ({', '.join(SOURCES)}) to folders")
                paths = {}
            ssh_conn_id = h.get("ssh_conn_id", c.get("ssh_conn_id"))
            if htransport == "local" and hroot is None and not paths:
                hbad(f"{hkey}.root", "local transport needs a root (on the cluster or host) or paths")
            if htransport == "sftp" and not ssh_conn_id:
                hbad(f"{hkey}.ssh_conn_id", "sftp transport needs an Airflow SSH connection id")
            jolokia_url = h.get("jolokia_url")
            if htransport == "http" and not jolokia_url:
                hbad(f"{hkey}.jolokia_url", "http transport needs a jolokia_url")
            if jolokia_url and _credentials(jolokia_url):   # the URL itself is not repeated: it holds a secret
                hbad(f"{hkey}.jolokia_url", "must not carry credentials (user:password@, a query or fragment): "
                                            "keep secrets in Airflow connections")
                jolokia_url = None
            expect = h.get("expect", cluster_expect)
            if expect is None:
                expect = EXPECTED.get(role, ())
            elif not isinstance(expect, list) or any(s not in SOURCES for s in expect):
                hbad(f"{hkey}.expect", f"expected a list of sources ({', '.join(SOURCES)})")
                expect = ()
            cap = _size(h.get("max_file_bytes"), f"{hkey}.max_file_bytes", hbad) if "max_file_bytes" in h else cluster_cap
            hosts.append(Host(
                cluster=cname, host=hname, role=str(role), transport=str(htransport),
                root=None if hroot is None else str(hroot), broker_id=broker_id, zk_myid=zk_myid,
                kafka_version=None if version is None else str(version), ssh_conn_id=ssh_conn_id,
                jolokia_url=jolokia_url, paths={k: str(v) for k, v in paths.items()},
                expect=tuple(expect), max_file_bytes=cap,
            ))
        clusters.append(Cluster(cname, str(tz), _int(parts) or 50, tuple(hosts)))
    channels = _channels(doc.get("notifications"), seen_clusters, bad)
    if problems:
        raise InventoryError(problems)
    return Inventory(name, tuple(clusters), channels)


def _url_problem(url: Any) -> str | None:
    """What is wrong with a webhook or Alertmanager URL, if anything (not repeating it: a webhook's
    path may hold its token)."""
    import urllib.parse

    if not isinstance(url, str):
        return f"expected an http:// or https:// URL, got {type(url).__name__}"
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port
    except ValueError:
        return "not a valid URL"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "expected an http:// or https:// URL with a host"
    if parts.username or parts.password:
        return "must not carry credentials (user:password@): keep secrets in Airflow connections"
    return None


def _names(value: Any, known, what: str, key: str, bad) -> tuple[str, ...]:
    """A channel filter: a list of `known` names (empty when it is wrong, after one line about it)."""
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        bad(key, f"expected a non-empty list of {what}s")
        return ()
    for v in value:
        if v not in known:
            bad(key, f"unknown {what} {v!r} (known: {', '.join(sorted(known))})")
    return tuple(value)


def _channels(doc: Any, clusters: set[str], bad) -> tuple[Channel, ...]:
    """The `notifications:` list: one Channel per entry (fleethealth.notify.config)."""
    from fleethealth.gold import runbooks

    if doc is None:
        return ()
    if not isinstance(doc, list):
        bad("notifications", "expected a list of channels")
        return ()
    out, seen = [], set()
    for i, key, n in _mappings(doc, "notifications", bad):
        name = _unique_name(n.get("name"), i, f"{key}.name", "channel", seen, bad)
        key = f"notifications[{name}]"
        nbad, typos = _unknown_keys(n, CHANNEL_KEYS, key, bad)
        given = [k for k in TARGETS if k in n]
        if len(given) != 1:
            if given or not typos & set(TARGETS):     # `webhok:` is one mistake, already reported
                bad(key, f"expected exactly one of {', '.join(TARGETS)}"
                         + (f", got {' and '.join(given)}" if given else ""))
            continue
        [how] = given
        kind, target = TARGETS[how], n[how]
        if how in ("webhook", "alertmanager"):
            problem = _url_problem(target)
        else:
            problem = None if isinstance(target, str) and _NAME.fullmatch(target) else \
                "expected an Airflow connection id"
        if problem:
            nbad(f"{key}.{how}", problem)
        to = n.get("to")
        if kind == "smtp":
            if not isinstance(to, list) or not to or not all(isinstance(a, str) and "@" in a for a in to):
                nbad(f"{key}.to", "expected a non-empty list of e-mail addresses (required with smtp_conn_id)")
                to = []
        elif to is not None:
            nbad(f"{key}.to", "only with smtp_conn_id")
        ends = n.get("ends_after_seconds", DEFAULT_ENDS_AFTER_S)
        if "ends_after_seconds" in n and kind != "alertmanager":
            nbad(f"{key}.ends_after_seconds", "only with alertmanager")
        elif _int(ends) is None or _int(ends) < 3600:
            nbad(f"{key}.ends_after_seconds", f"expected an integer >= 3600 (one hourly run), got {ends!r}")
            ends = DEFAULT_ENDS_AFTER_S
        severity = n.get("min_severity")
        if severity is not None and severity not in SEVERITY_RANK:
            nbad(f"{key}.min_severity", f"unknown severity {severity!r} (one of {', '.join(SEVERITY_RANK)})")
            severity = None
        only_clusters = _names(n["clusters"], clusters, "cluster", f"{key}.clusters", nbad) if "clusters" in n else ()
        kinds = _names(n["kinds"], set(runbooks.load()), "kind", f"{key}.kinds", nbad) if "kinds" in n else ()
        out.append(Channel(name, kind, str(target), tuple(to or ()), _int(ends) or DEFAULT_ENDS_AFTER_S,
                           only_clusters, kinds, severity))
    return tuple(out)
