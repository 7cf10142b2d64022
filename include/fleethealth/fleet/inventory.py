"""The fleet inventory: one YAML file of clusters and hosts, validated with clear errors.

`load_inventory(path)` returns an `Inventory`; any mistake raises `InventoryError` whose lines each
name the file, the key path and what is wrong (the CLI prints them and exits 2). What each mapping
accepts is its model below (pydantic); the checks across entries (unique names and ids) are here.
"""
from __future__ import annotations

import dataclasses
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, BeforeValidator, Field, Strict, StringConstraints, ValidationInfo, field_validator

from fleethealth.fleet import conversion_pattern, entities, maintenance, namings
from fleethealth.fleet.channels import MAX_NAME, Channel, is_name, name_of
from fleethealth.fleet.kafka import OFFSETS_TOPIC_PARTITIONS
from fleethealth.fleet.sources import EXPECTED
from fleethealth.fleet.sources import NAMES as SOURCES
from fleethealth.runtime import yamlfile
from fleethealth.runtime.validation import Int, Schema, check, fail, holds, required, says

ROLES = ("kafka", "zookeeper", "controller")   # controller: a dedicated KRaft controller (process.roles=controller)
ALIASES = {"broker": "kafka"}   # a role as KRaft's process.roles names it -> ours
MODES = ("zookeeper", "kraft")    # a cluster's: its metadata in ZooKeeper, or in a KRaft controller quorum
TRANSPORTS = ("local", "sftp", "http")
VERSION = r"^\d+\.\d+(\.\d+)?([.-][\w.-]+)?$"
MAX_ID = 2**31 - 1        # broker ids and myids are Java ints
# the labels that name a host in the Prometheus series of Kubernetes fleets and others (the first is the default)
HOST_LABELS = ("instance", "pod", "kubernetes_pod_name", "strimzi_io_name")


@dataclass(frozen=True)
class Prometheus:
    """A cluster's Prometheus (its `prometheus:`): where its hosts' JMX is read from
    (fleethealth.pull.transports.prometheus)."""
    url: str                            # the HTTP API's base, e.g. http://prometheus:9090 (Mimir: .../prometheus)
    conn_id: str | None = None          # an Airflow connection: credentials, headers, CA bundle, client certificate
    host_label: str = HOST_LABELS[0]    # the label whose value is the inventory host name (or host:port)
    naming: str = namings.DEFAULT       # the jmx_exporter rules' naming of its series (fleet/exporter_namings.yaml)


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
    broker_id: int | None = None        # a Kafka process's node id: broker.id, or a controller's node.id
    controller: bool = False            # runs a KRaft controller: role controller, or a combined broker
    mode: str = "zookeeper"             # its cluster's
    mode_from_logs: bool = False        # its cluster's (Cluster.mode_from_logs)
    zk_myid: int | None = None
    kafka_version: str | None = None
    ssh_conn_id: str | None = None
    jolokia_url: str | None = None
    prometheus: Prometheus | None = None   # its cluster's, unless it has a jolokia_url (its JMX: one source)
    paths: dict[str, str] = field(default_factory=dict)
    expect: tuple[str, ...] = ()
    max_file_bytes: int | None = None   # pull's size cap for one file (None: fleethealth.pull.hour's default)
    log_pattern: str | None = None      # its Kafka logs' log4j ConversionPattern, when no built-in layout reads them

    @property
    def entity(self) -> str:
        """How incidents name this host's process (fleet.entities.process); silver's hosts frame carries it."""
        return entities.process(self.role, self.broker_id, self.zk_myid)

    @property
    def processes(self) -> tuple[str, ...]:
        """The Kafka/ZooKeeper processes this host runs, as mbeans.yaml's and known_bugs.yaml's `processes`
        name them; silver's hosts frame carries them."""
        if self.role == "zookeeper":
            return ("zookeeper",)
        # a broker whose mode its logs tell may run either (gold.facts.kraft.with_found_modes keeps one)
        broker = (() if self.role == "controller" else ("zk_broker", "kraft_broker") if self.mode_from_logs
                  else ("zk_broker",) if self.mode == "zookeeper" else ("kraft_broker",))
        return broker + (("controller",) if self.controller else ())

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
    mode: str = "zookeeper"     # kraft when a host runs a controller (validated against the versions)
    timezone_given: bool = True  # False: no `timezone:` in the inventory, its logs are read as UTC
    # listed with brokers only, of versions that run either mode, without `mode:`: its logs tell the mode,
    # `mode` is the fallback when they say nothing (gold.facts.kraft.with_found_modes)
    mode_from_logs: bool = False


@dataclass(frozen=True)
class Inventory:
    path: str
    clusters: tuple[Cluster, ...]
    notifications: tuple[Channel, ...] = ()    # where incident transitions are sent (fleethealth.notify)
    maintenance: tuple[maintenance.Window, ...] = ()   # when people get nothing of a cluster or host

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

    def with_modes(self, shown: dict[str, str]) -> Inventory:
        """This inventory with each cluster whose logs tell its mode (Cluster.mode_from_logs) in the mode
        they show (`shown`: cluster -> mode, gold.facts.kraft.modes_shown), else in its fallback (`mode`):
        every cluster's mode then known, its brokers running that mode's processes."""
        def found(c: Cluster) -> Cluster:
            if not c.mode_from_logs:
                return c
            mode = shown.get(c.name, c.mode)
            return dataclasses.replace(c, mode=mode, mode_from_logs=False, hosts=tuple(
                dataclasses.replace(h, mode=mode, mode_from_logs=False) for h in c.hosts))
        return dataclasses.replace(self, clusters=tuple(map(found, self.clusters)))


def _http_url(example: str) -> Callable[[Any], Any]:
    """The check of an http(s) URL without credentials (a user:password@, a query or fragment: where
    tokens go). A mistake never quotes it: a URL that is wrong may still hold a secret."""
    def checked(url: Any) -> Any:
        if not url:
            return url
        try:
            parts = urllib.parse.urlsplit(url)
            parts.port                      # noqa: B018  (a port that is no number raises here)
        except (ValueError, TypeError):
            raise fail(f"expected an http(s) URL such as {example} (not shown: it may hold a secret)") from None
        if parts.username or parts.password or parts.query or parts.fragment:
            raise fail("must not carry credentials (user:password@, a query or fragment): keep secrets in "
                       "Airflow connections")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise fail(f"expected an http(s) URL such as {example} (not shown: it may hold a secret)")
        return url
    return checked


_jolokia_url = _http_url("http://host:8778/jolokia")


def _is_zone(name: str) -> bool:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


Role = Annotated[Literal[ROLES], says(f"unknown role {{got}} (one of {', '.join(ROLES)})")]
Mode = Annotated[Literal[MODES], says(f"unknown mode {{got}} (one of {', '.join(MODES)}; without it, the hosts' roles "
                                      "and logs tell)")]
Transport = Annotated[Literal[TRANSPORTS], says(f"unknown transport {{got}} (one of {', '.join(TRANSPORTS)})")]
# a folder, an id, a URL: a number as written
Text = Annotated[str | None, BeforeValidator(lambda v: str(v) if isinstance(v, (int, float)) else v)]
Source = Literal[SOURCES]
Paths = Annotated[dict[Source, Any] | None, BeforeValidator(lambda v: v or None),
                  says(f"expected a mapping of sources ({', '.join(SOURCES)}) to folders")]
Sources = Annotated[tuple[Source, ...], says(f"expected a list of sources ({', '.join(SOURCES)})")]
Size = Annotated[Int, Field(ge=1), says("expected a size in bytes (an integer >= 1), got {got}")]
# what a cluster says for its hosts (a host may say otherwise)
INHERITED = ("transport", "root", "ssh_conn_id", "paths", "expect", "max_file_bytes", "log_pattern")
# what each transport needs of a host: (transport, key) -> the mistake without it
NEEDS = {("local", "root"): "local transport needs a root (on the cluster or host) or paths",
         ("sftp", "ssh_conn_id"): "sftp transport needs an Airflow SSH connection id",
         ("http", "jolokia_url"): "http transport needs a jolokia_url"}


def _log_pattern(pattern: Any) -> Any:
    """A ConversionPattern silver can read (compiled here once to tell a mistake; silver compiles it again)."""
    if pattern is not None:
        try:
            conversion_pattern.compile_pattern(pattern)
        except conversion_pattern.PatternError as exc:
            raise fail(f"{exc} in {{got}}", pattern) from None
    return pattern


LogPattern = Annotated[str | None, says("expected a log4j ConversionPattern in quotes, e.g. "
                                        "\"%d{ISO8601} %p %m (%c)%n\", got {got}"), AfterValidator(_log_pattern)]


class PrometheusSpec(Schema):
    url: Annotated[str, Strict(), says("expected an http(s) URL such as http://prometheus:9090"),
                   AfterValidator(_http_url("http://prometheus:9090"))] = required()
    conn_id: Text = None
    host_label: Annotated[str, Strict(), StringConstraints(pattern=r"^[a-zA-Z_][a-zA-Z0-9_]*$"),
                          says(f"expected a Prometheus label name (e.g. {', '.join(HOST_LABELS)}), got {{got}}")
                          ] = HOST_LABELS[0]
    naming: Annotated[str, Strict(), holds(lambda v: v in namings.NAMES, ""),
                      says(f"expected a jmx_exporter naming ({', '.join(namings.NAMES)}), got {{got}}")] = namings.DEFAULT


class ClusterSpec(Schema):
    name: name_of("cluster") = required()
    timezone: Annotated[str, holds(_is_zone, ""), says("unknown IANA timezone {got}")] = "UTC"
    offsets_topic_partitions: Annotated[Int, Field(ge=1, le=10000),
                                        says("expected an integer 1..10000, got {got}")] = OFFSETS_TOPIC_PARTITIONS
    transport: Transport = "local"
    root: Text = None
    max_file_bytes: Size | None = None
    paths: Paths = None
    expect: Sources | None = None
    ssh_conn_id: Text = None
    log_pattern: LogPattern = None
    mode: Mode | None = None
    prometheus: PrometheusSpec | None = None
    hosts: Annotated[list[Any], Field(min_length=1), says("expected a non-empty list of hosts")] = required()


class HostSpec(Schema):
    """A host as written, with what its cluster says for it added; a host of an unknown role."""
    host: Annotated[str, holds(is_name, ""),
                    says(f"expected a host name (at most {MAX_NAME} characters), got {{got}}")] = required()
    role: Role = required()
    broker_id: Any = None           # each role's ids and keys: KafkaHost, ZookeeperHost, ControllerHost
    zk_myid: Any = None
    node_id: Any = None
    kafka_version: Any = None
    controller: Any = None
    transport: Transport = "local"
    paths: Paths = None
    # these three are validated when absent too: what the transport needs
    root: Text = Field(None, validate_default=True)
    ssh_conn_id: Text = Field(None, validate_default=True)
    jolokia_url: Annotated[Text, says("expected an http(s) URL such as http://host:8778/jolokia"),
                           AfterValidator(_jolokia_url)] = Field(None, validate_default=True)
    expect: Sources | None = None
    max_file_bytes: Size | None = None
    log_pattern: LogPattern = None

    @field_validator("root", "ssh_conn_id", "jolokia_url")
    @classmethod
    def _what_the_transport_needs(cls, value: Any, info: ValidationInfo) -> Any:
        # context {"wrong": keys}: what the host inherits from them is one mistake, the cluster's
        inherits_a_mistake = info.context and {"transport", info.field_name} & info.context["wrong"]
        need = not inherits_a_mistake and NEEDS.get((info.data.get("transport"), info.field_name))
        if need and not value and not (info.field_name == "root" and info.data.get("paths")):
            raise fail(need)
        return value


def _id(what: str) -> Any:
    return Annotated[Int, Field(ge=0, le=MAX_ID), says(f"expected an integer {what} 0..{MAX_ID}, got {{got}}")]


def _version_text(value: Any) -> Any:
    # YAML reads an unquoted 0.10 as the number 0.1 and 3.10 as 3.1: a number is never a version
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise fail("expected a Kafka version in quotes, e.g. \"0.10\" (YAML reads an unquoted 0.10 as the "
                   "number 0.1), got {got}", value)
    return value


KafkaVersion = Annotated[str, Strict(), StringConstraints(pattern=VERSION),
                         says("expected a Kafka version such as 2.8.1, got {got}"), BeforeValidator(_version_text)]
KRAFT_SINCE = (3, 3)      # the first Kafka whose KRaft mode is production-ready (KIP-833)
# what a KRaft cluster listed without its controllers leaves unwatched (`fleethealth check`, the report)
NO_CONTROLLERS = ("broker fencing is not watched (a fence is logged by the active controller only: the leader-election "
                  "storm it starts is seen in the partitions the brokers take over), and the controller quorum only "
                  "as its brokers see it, until its controllers are listed (role: controller, node_id: <its node.id>, "
                  "kafka_version)")
KRAFT_PREVIEW = (2, 8)    # the first Kafka with a KRaft mode (KIP-500's early access): before it, ZooKeeper only


def version_tuple(version: str) -> tuple[int, int]:
    """(major, minor) of a version VERSION accepts."""
    major, minor = version.split(".")[:2]
    return int(major), int("".join(c for c in minor if c.isdigit()) or 0)


class KafkaHost(HostSpec):
    broker_id: _id("broker id") = required()
    kafka_version: KafkaVersion = required()
    # a combined KRaft node (process.roles=broker,controller): its node id is broker_id
    controller: Annotated[bool, Strict(), says("expected true or false, got {got}")] = False


class ZookeeperHost(HostSpec):
    zk_myid: _id("myid") = required()


class ControllerHost(HostSpec):
    node_id: _id("node id") = required()
    kafka_version: KafkaVersion = required()


HOSTS = {"kafka": KafkaHost, "zookeeper": ZookeeperHost, "controller": ControllerHost}
# each role's id key and what a mistake calls it; brokers and controllers share KRaft's node ids
IDS = {"kafka": ("broker_id", "broker id", "kafka"), "controller": ("node_id", "node id", "kafka"),
       "zookeeper": ("zk_myid", "ZooKeeper myid", "zookeeper")}


def _aliased(h: dict, hkey: str) -> tuple[dict, list[str]]:
    """A host as KRaft's names may write it, in ours: `role: broker` is `role: kafka`, a broker's
    `node_id` its `broker_id` (the mistake when both are given and differ)."""
    role = h.get("role")
    h = dict(h, role=ALIASES[role]) if isinstance(role, str) and role in ALIASES else h
    if h.get("role") != "kafka" or "node_id" not in h:
        return h, []
    node_id = h["node_id"]
    h = {k: v for k, v in h.items() if k != "node_id"}
    if "broker_id" not in h:
        return dict(h, broker_id=node_id), []
    if h["broker_id"] == node_id:
        return h, []
    return h, [f"{hkey}.node_id: a broker's node id is its broker_id: write broker_id: {node_id!r} or "
               f"broker_id: {h['broker_id']!r}, not both differing"]


def _mode_problems(hosts: list[tuple[str, Host]], said: str | None = None) -> tuple[str, bool, list[str]]:
    """A cluster's mode, whether its logs are to tell it (Cluster.mode_from_logs), and the hosts that
    contradict it: a ZooKeeper server in a KRaft cluster, a Kafka 4+ broker in a ZooKeeper-mode one.
    The mode is the cluster's `mode:` (`said`), else kraft when a host runs a controller, or when no
    ZooKeeper server is listed and a broker is of Kafka 4+ (no ZooKeeper mode: its controllers are not
    listed, and `fleethealth check` says what that leaves unwatched); else zookeeper, which the logs
    of a cluster listed with brokers only of 2.8+ may turn into kraft."""
    controllers = [h.host for _, h in hosts if h.controller]
    zookeepers = any(h.role == "zookeeper" for _, h in hosts)
    versions = [version_tuple(h.kafka_version) for _, h in hosts if h.kafka_version]
    if said == "kraft" or (said is None and (controllers or (not zookeepers and any(v[0] >= 4 for v in versions)))):
        since = ".".join(map(str, KRAFT_SINCE))
        return "kraft", False, [
            f"{key}.role: a ZooKeeper server in a KRaft cluster (controllers: {', '.join(controllers) or 'none listed'})"
            for key, h in hosts if h.role == "zookeeper"] + [
            f"{key}.kafka_version: a KRaft controller of Kafka {h.kafka_version}; KRaft needs Kafka {since} or later"
            for key, h in hosts if h.controller and h.kafka_version and version_tuple(h.kafka_version) < KRAFT_SINCE]
    from_logs = said is None and not zookeepers and any(v >= KRAFT_PREVIEW for v in versions)
    return "zookeeper", from_logs, [
        f"{key}.kafka_version: Kafka {h.kafka_version} has no ZooKeeper mode: list the cluster's KRaft controllers "
        "(role: controller, or controller: true on a combined broker)"
        for key, h in hosts if h.kafka_version and version_tuple(h.kafka_version)[0] >= 4] + [
        f"{key}.controller: a KRaft controller in a cluster of mode: zookeeper" for key, h in hosts if h.controller]


# the reader of `notifications:` (fleethealth.notify.inventory.parse_channels): (its entries, the
# inventory's cluster names) -> (the channels, one line per mistake)
Notifications = Callable[[Any, set[str]], tuple[tuple[Channel, ...], list[str]]]


def load_inventory(path: str | Path, notifications: Notifications | None = None) -> Inventory:
    """The inventory of `path`. `notifications`: the reader of its `notifications:` (the channel types
    are fleethealth.notify's: notify.inventory.load_inventory passes it); without one it is not read
    (no channels: a job that only reads the fleet)."""
    try:
        doc = yamlfile.load(path, "inventory")
    except yamlfile.YamlFileError as exc:
        raise InventoryError([str(exc)]) from None
    return parse_inventory(doc, str(path), base_dir=Path(path).parent, notifications=notifications)


def parse_inventory(doc: Any, name: str = "<inventory>", base_dir: Path | None = None,
                    notifications: Notifications | None = None) -> Inventory:
    if not isinstance(doc, dict) or not isinstance(doc.get("clusters"), list) or not doc["clusters"]:
        raise InventoryError([f"{name}: clusters: expected a non-empty list of clusters"])

    def resolved(root: str | None) -> str | None:
        if root is None or base_dir is None or Path(root).is_absolute():
            return root
        return str((base_dir / root).resolve())

    problems: list[str] = []
    clusters: list[Cluster] = []
    cluster_names: set[str] = set()
    host_names: set[str] = set()
    for ci, c in enumerate(doc["clusters"]):
        ckey = f"clusters[{ci}]"
        if not isinstance(c, dict):
            problems.append(f"{ckey}: expected a mapping")
            continue
        if is_name(c.get("name")):
            if c["name"] in cluster_names:
                problems.append(f"{ckey}.name: duplicate cluster name {c['name']!r}")
            cluster_names.add(c["name"])
            ckey = f"clusters[{c['name']}]"
        spec, lines, typos, wrong, _ = check(ClusterSpec, c, ckey)
        problems += lines
        # what hosts inherit is checked here, once (a host reports only what it sets itself)
        inherited = {k: c[k] for k in INHERITED if k in c and k not in wrong}
        hosts: list[tuple[str, Host]] = []   # (key path, host)
        prometheus = (Prometheus(**spec.prometheus.model_dump())
                      if spec is not None and spec.prometheus is not None else None)
        ids: set[tuple[str, int]] = set()
        for hi, h in enumerate(c["hosts"] if isinstance(c.get("hosts"), list) else []):
            hkey = f"{ckey}.hosts[{hi}]"
            if not isinstance(h, dict):
                problems.append(f"{hkey}: expected a mapping")
                continue
            if is_name(h.get("host")):
                hkey = f"{ckey}.hosts[{h['host']}]"
                if h["host"] in host_names:
                    problems.append(f"{hkey}.host: duplicate host {h['host']!r}")
                host_names.add(h["host"])
            h, lines = _aliased(h, hkey)
            problems += lines
            role = h.get("role")
            hspec, lines, *_ = check(HOSTS.get(role, HostSpec) if isinstance(role, str) else HostSpec, inherited | h,
                                     hkey, inherited=typos,
                                     context={"wrong": wrong - set(h)})
            problems += lines
            if hspec is None:
                continue
            id_key, what, space = IDS[hspec.role]
            the_id = getattr(hspec, id_key)
            if (space, the_id) in ids:
                problems.append(f"{hkey}.{id_key}: duplicate {what} {the_id} in cluster {c.get('name')}")
            ids.add((space, the_id))
            hosts.append((hkey, Host(
                cluster=str(c.get("name")), host=hspec.host, role=hspec.role, transport=hspec.transport,
                root=resolved(hspec.root), broker_id=None if hspec.role == "zookeeper" else the_id,
                controller=hspec.role == "controller" or (hspec.role == "kafka" and hspec.controller),
                zk_myid=hspec.zk_myid if hspec.role == "zookeeper" else None,
                kafka_version=None if hspec.kafka_version is None else str(hspec.kafka_version),
                ssh_conn_id=hspec.ssh_conn_id, jolokia_url=hspec.jolokia_url,
                prometheus=None if hspec.jolokia_url else prometheus,
                paths={k: str(v) for k, v in (hspec.paths or {}).items()},
                expect=EXPECTED[hspec.role] if hspec.expect is None else hspec.expect,
                max_file_bytes=hspec.max_file_bytes, 
                # a cluster's is its Kafka processes' (a ZooKeeper server writes its own layout unless told)
                log_pattern=hspec.log_pattern if hspec.role != "zookeeper" or "log_pattern" in h else None,
            )))
        mode, from_logs, lines = _mode_problems(hosts, spec.mode if spec is not None else None)
        problems += lines
        if spec is not None:
            clusters.append(Cluster(spec.name, spec.timezone, spec.offsets_topic_partitions,
                                    tuple(dataclasses.replace(h, mode=mode, mode_from_logs=from_logs) for _, h in hosts),
                                    mode, timezone_given="timezone" in c, mode_from_logs=from_logs))
    channels: tuple[Channel, ...] = ()
    if notifications is not None:
        channels, lines = notifications(doc.get("notifications"), cluster_names)
        problems += lines
    windows, lines = maintenance.parse(doc.get("maintenance"), {
        **{n: set() for n in cluster_names}, **{c.name: {h.host for h in c.hosts} for c in clusters}})
    problems += lines
    if problems:
        raise InventoryError([f"{name}: {p}" for p in problems])
    return Inventory(name, tuple(clusters), channels, windows)
