"""The MBean catalogue (fleethealth/fleet/mbeans.yaml) against the code that reads it, both ways.

- every bean gold code selects from silver.jmx_samples is catalogued, and its `read_by` names a fact
  table or detector that runs that code;
- every catalogued bean is read: each `read_by` entry is a gold table or detector kind whose code
  (its builder or module, and the gold functions they call) selects the bean;
- each host's live Jolokia read asks exactly the beans of the processes it runs (ZooKeeper-mode brokers
  exactly what they were asked before KRaft), and silver turns the answer back into those beans;
- each bean's jmx_exporter series is jmx_exporter's default naming and silver's Prometheus mapping
  turns it back into exactly that bean and attribute;
- a malformed entry is an error naming it.
"""
from __future__ import annotations

import ast
import copy
import json
import os
import re
import subprocess
import sys
from datetime import datetime
from functools import cache
from importlib import resources
from pathlib import Path

import pytest
import yaml

import fleethealth
from fleethealth.fleet import mbeans
from fleethealth.fleet.inventory import parse_inventory
from fleethealth.fleet.kafka import OFFSETS_TOPIC
from fleethealth.gold.detectors import DETECTORS
from fleethealth.lake.tables import TABLES
from fleethealth.silver.parsers import prometheus
from fleethealth.runtime.frames import local_frame

ROOT = Path(fleethealth.__file__).parent.parent
MBEANS = mbeans.__name__
REGISTRY = "fleethealth.gold.facts.registry"
# the fact tables fleethealth.gold.job.gold_tables builds from fleethealth.gold.facts.core itself
CORE_FACTS = {"gold.consumer_offsets_partitions": "offsets_partitions", "gold.log_cleaner_status": "cleaner_status",
              "gold.broker_health_hourly": "broker_health"}
CORE = "fleethealth.gold.facts.core"
FIXTURES = Path(__file__).parent / "fixtures"
HOUR = datetime(2026, 11, 20, 11)

Code = tuple[str, "str | None"]   # (module, top-level function; None: the module's other statements)


def _source(module: str) -> Path:
    path = ROOT.joinpath(*module.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


@cache
def _parsed(module: str) -> tuple[ast.Module, dict[str, ast.FunctionDef], dict[str, tuple[str, str | None]]]:
    """A module's syntax tree, top-level functions, and what it imports from gold and fleet.mbeans:
    local name -> (module, None) for a module, (module, name) for a name in it."""
    tree = ast.parse(_source(module).read_text())
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    imports = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.module and (n.module.startswith("fleethealth.gold")
                                                           or n.module in (MBEANS, "fleethealth.fleet")):
            for a in n.names:
                full = f"{n.module}.{a.name}"
                imports[a.asname or a.name] = (full, None) if _source(full).exists() else (n.module, a.name)
    return tree, functions, imports


def _beans_in(module: str, node: ast.AST) -> set[str]:
    """The catalogued beans `node` names: mbeans.CONSTANT, an imported constant, or bean("name")."""
    imports = _parsed(module)[2]

    def mbeans_name(n: ast.AST) -> str | None:
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and imports.get(n.value.id) == (MBEANS, None):
            return n.attr
        if isinstance(n, ast.Name) and imports.get(n.id, ("", None))[0] == MBEANS:
            return imports[n.id][1]
        return None

    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and mbeans_name(n.func) == "bean":
            assert isinstance(n.args[0], ast.Constant), f"{module}:{n.lineno}: bean() of a computed name"
            out.add(n.args[0].value)
        elif (name := mbeans_name(n)) and name != "bean":
            value = getattr(mbeans, name, None)
            assert isinstance(value, mbeans.MBean), f"{module}:{n.lineno}: gold code uses mbeans.{name}, not one bean"
            out.add(value.id)
    return out


@cache
def _uses() -> dict[Code, frozenset[str]]:
    """The beans each piece of gold code names itself."""
    out = {}
    for path in sorted((ROOT / "fleethealth" / "gold").rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        tree, functions, _ = _parsed(module)
        for name, fn in functions.items():
            out[(module, name)] = frozenset(_beans_in(module, fn))
        rest = ast.Module([s for s in tree.body if not isinstance(s, ast.FunctionDef)], [])
        out[(module, None)] = frozenset(_beans_in(module, rest))
    return {code: beans for code, beans in out.items() if beans}


def _reach(module: str, node: ast.AST, reached: set[Code]) -> set[Code]:
    """`reached` plus the gold functions `node` (of `module`) calls, and the ones they call."""
    functions, imports = _parsed(module)[1:]
    for n in ast.walk(node):
        target = None
        if isinstance(n, ast.Name):
            target = (module, n.id) if n.id in functions else imports.get(n.id)
        elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
            imported = imports.get(n.value.id)
            target = (imported[0], n.attr) if imported and imported[1] is None else None
        if (target and target[0].startswith("fleethealth.gold.") and target not in reached
                and target[1] in _parsed(target[0])[1]):
            reached.add(target)
            _reach(target[0], _parsed(target[0])[1][target[1]], reached)
    return reached


@cache
def _code_of(reader: str) -> frozenset[Code]:
    """The gold code behind a read_by entry: a detector's whole module, a fact table's builder; with
    the gold functions they call."""
    if reader in DETECTORS:
        module = DETECTORS[reader].__name__
        tree, functions, _ = _parsed(module)
        return frozenset(_reach(module, tree, {(module, None), *((module, f) for f in functions)}))
    if reader in CORE_FACTS:
        return frozenset(_reach(CORE, _parsed(CORE)[1][CORE_FACTS[reader]], {(CORE, CORE_FACTS[reader])}))
    tree = _parsed(REGISTRY)[0]
    builders = next(n.value for n in tree.body if isinstance(n, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == "BUILDERS" for t in n.targets))
    values = {k.value: v for k, v in zip(builders.keys, builders.values, strict=True)}
    assert reader in values, f"{reader} is neither a detector kind, a core fact nor a registry fact table"
    return frozenset(_reach(REGISTRY, values[reader], set()))


def _reads(reader: str) -> set[str]:
    return set().union(*(_uses().get(code, ()) for code in _code_of(reader)))


def test_the_module_constants_are_the_catalogue_entries():
    constants = {name: value for name, value in vars(mbeans).items() if isinstance(value, mbeans.MBean)}
    assert {name: value.id.upper() for name, value in constants.items()} == {name: name for name in constants}
    assert mbeans.ALL == tuple(mbeans.catalogue().values())
    assert len(mbeans.ALL) == 32


def test_every_bean_gold_reads_is_catalogued_with_a_reader_that_runs_that_code():
    uses = _uses()
    assert len(uses) >= 6, f"found only {sorted(uses)}: is the scan of gold code broken?"
    catalogue = mbeans.catalogue()
    for code, beans in uses.items():
        for name in beans:
            assert name in catalogue, f"{code} reads MBean {name!r}, which is not in {mbeans.CATALOGUE_FILE}"
            readers = [r for r in catalogue[name].read_by if code in _code_of(r)]
            assert readers, (f"{code} reads {name}, but none of its read_by {list(catalogue[name].read_by)} "
                             "is a fact table or detector that runs it")


@pytest.mark.parametrize("bean", mbeans.ALL, ids=lambda b: b.id)
def test_every_catalogued_bean_is_read_by_each_reader_it_names(bean):
    assert bean.read_by
    for reader in bean.read_by:
        assert (reader.startswith("gold.") and reader in TABLES) or reader in DETECTORS, \
            f"{bean.id}: read_by {reader!r} is neither a gold table nor a detector kind"
        assert bean.id in _reads(reader), f"{bean.id}: the code of {reader} does not read it"


def test_the_kraft_beans_are_read_by_the_kraft_detectors():
    """Every KRaft bean is read by one of the KRaft kinds (the test above checks that its code reads it)."""
    kinds = {"broker_fenced", "controller_quorum_unstable", "metadata_lag"}
    assert kinds <= set(DETECTORS)
    assert {b.id for b in mbeans.ALL if set(b.read_by) & kinds} == set(KRAFT) - {"offline_partitions"}


# the ZooKeeper-mode broker's beans, in the order the pull has always asked them
ZK_BROKER = ["offsets_log_size", "cleaner_dead_threads", "cleaner_time_since_last_run", "open_fds", "max_fds",
             "zk_expires", "under_replicated", "under_min_isr", "offline_partitions", "request_queue_size",
             "request_handler_idle", "network_processor_idle", "active_controller_count"]
BROKER = [b for b in ZK_BROKER if b not in ("zk_expires", "offline_partitions", "active_controller_count")]
RAFT = ["raft_current_leader", "raft_current_epoch", "raft_current_state", "raft_high_watermark",
        "raft_election_latency_avg", "raft_election_latency_max"]
CONTROLLER = ["offline_partitions", "active_controller_count", "new_active_controllers", "fenced_broker_count", "active_broker_count",
              "timed_out_heartbeats", "controller_event_queue_time", "controller_last_applied_offset",
              "controller_last_committed_offset", "controller_last_applied_lag", "controller_metadata_errors"]
BROKER_METADATA = ["broker_metadata_applied_offset", "broker_metadata_applied_lag", "broker_metadata_load_errors",
                   "broker_metadata_apply_errors"]
KRAFT = CONTROLLER + RAFT + BROKER_METADATA


def _in_order(ids: list[str]) -> list[str]:
    return [b.id for b in mbeans.ALL if b.id in ids]


@pytest.mark.parametrize("host, beans", [
    # listed with its brokers only, a 3.6 cluster's mode is told by its logs (both broker kinds read until
    # then): `mode: zookeeper` says it outright
    ({"role": "kafka", "broker_id": 1, "kafka_version": "3.6.1", "mode": "zookeeper"}, ZK_BROKER),
    ({"role": "zookeeper", "zk_myid": 1}, ["open_fds", "max_fds"]),
    ({"role": "kafka", "broker_id": 1, "kafka_version": "4.1.0", "controller": False, "kraft": True},
     _in_order(BROKER + RAFT + BROKER_METADATA)),
    ({"role": "controller", "node_id": 3000, "kafka_version": "3.9.0"},
     _in_order(["open_fds", "max_fds"] + CONTROLLER + RAFT)),
    ({"role": "kafka", "broker_id": 1, "kafka_version": "3.9.0", "controller": True}, _in_order(BROKER + KRAFT)),
], ids=["zookeeper-mode broker", "zookeeper server", "kraft broker", "controller", "combined node"])
def test_each_host_reads_the_beans_of_the_processes_it_runs(host, beans):
    """ActiveControllerCount and the other controller beans only on controllers, the metadata of a
    broker only on KRaft brokers, the ZooKeeper session only on ZooKeeper-mode brokers."""
    kraft = host.pop("kraft", False)
    mode = {"mode": host.pop("mode")} if "mode" in host else {}
    hosts = [{"host": "h", **host}]
    if kraft:
        hosts.append({"host": "q", "role": "controller", "node_id": 3000, "kafka_version": "4.1.0"})
    processes = parse_inventory({"clusters": [{"name": "c", "root": "/r", **mode, "hosts": hosts}]}).host("h").processes
    assert set(processes) <= set(mbeans.PROCESSES)
    requests = mbeans.jolokia_requests(processes)
    by_pattern = {b.pattern + "|" + b.attribute: b.id for b in mbeans.ALL}
    assert [by_pattern[r["mbean"] + "|" + r["attribute"]] for r in requests] == beans
    assert all(r["type"] == "read" for r in requests)


def test_the_scan_follows_gold_functions_into_other_modules():
    # offsets_partition_bloat reads the offsets Log Size through gold.facts.core.offsets_size_samples
    assert (CORE, "offsets_size_samples") in _code_of("offsets_partition_bloat")
    assert _reads("gold.log_cleaner_status") == {"cleaner_dead_threads", "cleaner_time_since_last_run"}
    assert _reads("gold.group_coordinators") == set()


def test_the_catalogue_names_the_offsets_topic_as_fleet_kafka_does():
    topics = {dict(b.keys)["topic"] for b in mbeans.ALL if "topic" in dict(b.keys)}
    assert topics == {OFFSETS_TOPIC}


@pytest.mark.parametrize("bean", mbeans.ALL, ids=lambda b: b.id)
def test_jmx_exporter_series_is_the_default_naming_that_silver_maps_back(bean):
    type_ = dict(bean.keys)["type"]
    if bean.unit == mbeans.TEXT:   # jmx_exporter exports numbers only: a text attribute has no series
        assert (bean.exporter_series, bean.exporter_labels) == (None, ())
        return
    assert bean.exporter_series == prometheus.metric_name(f"{bean.domain}_{type_}_{bean.attribute}")
    assert prometheus.mapping().resolve(bean.exporter_series) == (bean.domain, type_, bean.attribute)
    # the key properties but type are the first labels, in order; the rest are the instances' keys
    assert list(bean.exporter_labels[:len(bean.keys) - 1]) == [k for k, _ in bean.keys[1:]]


def _exporter_line(bean: mbeans.MBean) -> tuple[str, str]:
    """A series of `bean` as jmx_exporter writes it (an instance key gets the value "0"), and its ObjectName."""
    keys = dict(bean.keys)
    labels = [(label, keys.get(label, "0")) for label in bean.exporter_labels]
    text = ",".join(f'{k}="{v}"' for k, v in labels)
    name = ",".join(f"{k}={v}" for k, v in [("type", keys["type"]), *labels])
    return f"{bean.exporter_series}{{{text}}} 1.0" if text else f"{bean.exporter_series} 1.0", f"{bean.domain}:{name}"


def test_a_mapping_that_misplaces_a_catalogued_bean_refuses_to_load():
    doc = yaml.safe_load(resources.files("fleethealth.silver").joinpath(prometheus.MAPPING_FILE).read_text())
    doc["beans"]["kafka.log"] = [t for t in doc["beans"]["kafka.log"] if t != "LogCleaner"]
    with pytest.raises(ValueError, match=r"kafka_log_logcleaner_value \(the jmx_exporter series of cleaner_dead_threads"):
        prometheus.check_catalogue(prometheus.build_mapping(doc))


EXPORTED = [b for b in mbeans.ALL if b.exporter_series]


def test_jmx_exporter_series_parse_into_exactly_the_catalogued_bean(spark):
    lines = [(b.id, *_exporter_line(b)) for b in EXPORTED]
    assert len(lines) == 31
    df = prometheus.series(local_frame(spark, lines, "id string, text string, expected string"))
    rows = df.select("id", "expected", "mbean", *[b.matches().alias(b.id) for b in mbeans.ALL]).collect()
    assert len(rows) == len(EXPORTED)
    for r in rows:
        assert r["mbean"] == r["expected"]
        assert [b.id for b in mbeans.ALL if r[b.id]] == [r["id"]], f"{r['id']}: matched by other beans too"


def test_the_live_jolokia_read_of_a_combined_node_parses_into_exactly_the_catalogued_beans(spark):
    """The pull's bulk read, answered as a Jolokia agent answers pattern reads (ObjectName -> {attribute:
    value}), through silver's Jolokia parser: one sample per bean, matched by that bean only; the Raft
    state is text (value_text), every other a number."""
    from fleethealth.silver.parsers import jolokia

    processes = ("kraft_broker", "controller")
    beans = mbeans.for_processes(processes)
    value = {b.id: "leader" if b.unit == mbeans.TEXT else float(i) for i, b in enumerate(beans)}
    instance = {b.id: b.object_name + (",partition=7" if b is mbeans.OFFSETS_LOG_SIZE else "") for b in beans}
    responses = [{"request": r, "value": {instance[b.id]: {b.attribute: value[b.id]}}, "timestamp": 1795172400,
                  "status": 200} for r, b in zip(mbeans.jolokia_requests(processes), beans, strict=True)]
    bronze = local_frame(spark, 
        [("c", "h", "jmx", "jolokia-live.2026-11-20T11-00-00Z.jsonl", "sha", 1, json.dumps(responses), HOUR)],
        "cluster string, host string, source string, file string, file_sha256 string, line_number int, "
        "record string, hour timestamp")
    samples, quarantine = jolokia.parse(bronze)
    assert quarantine.count() == 0
    rows = samples.select("mbean", "value", "value_text", *[b.matches().alias(b.id) for b in mbeans.ALL]).collect()
    assert len(rows) == len(beans) == 31
    got = {}
    for r in rows:
        [bean] = [b.id for b in mbeans.ALL if r[b.id]]
        got[bean] = (r["mbean"], r["value_text"] if r["value"] is None else r["value"])
    assert got == {b.id: (instance[b.id], value[b.id]) for b in beans}
    assert got["raft_current_state"] == ("kafka.server:type=raft-metrics", "leader")


def test_real_scrapes_label_the_catalogued_series_as_catalogued():
    seen = set()
    for path in sorted(FIXTURES.glob("**/*.prom")):
        for line in path.read_text().splitlines():
            name, _, rest = line.partition("{")
            bean = next((b for b in mbeans.ALL if b.exporter_series == name.split(" ")[0]), None)
            if bean is None or line.startswith("#"):
                continue
            labels = dict(re.findall(prometheus.LABEL, rest.rpartition("}")[0]))
            if all(labels.get(k) == v for k, v in bean.keys[1:]):
                assert list(labels) == list(bean.exporter_labels), f"{path.name}: {line}"
                seen.add(bean.id)
    # the scrapes under tests/fixtures hold most of them
    assert {"offsets_log_size", "open_fds", "max_fds", "request_handler_idle", "network_processor_idle"} <= seen


GOOD = yaml.safe_load((ROOT / "fleethealth" / "fleet" / mbeans.CATALOGUE_FILE).read_text())["offsets_log_size"]
DROP = object()


@pytest.mark.parametrize("change,message", [
    ({"unit": "furlongs"}, "unit must be one of bytes, count, ms, ratio, offset, id, epoch, text, got 'furlongs'"),
    ({"since": 2.4}, 'since must be a quoted Kafka version like "2.4.0", got 2.4'),
    ({"keys": {"name": "Size", "type": "Log"}}, "keys must be a map of key property -> value starting with type"),
    ({"read_by": []}, "read_by is empty"),
    ({"read_by": "fd_exhaustion"}, "read_by must be a list of names"),
    ({"attribute": None}, "attribute must be a non-empty string, got None"),
    ({"jmx_exporter": {"series": "kafka log value", "labels": []}}, "jmx_exporter series must be a Prometheus metric"),
    ({"jmx_exporter": "kafka_log_log_value"}, "jmx_exporter must be a map with series and labels"),
    ({"domain": DROP, "colour": "red"}, "missing domain; unknown field(s) colour"),
    ({"processes": ["broker"]}, "processes must be a list of zookeeper, zk_broker, kraft_broker, controller, "
                                "got ['broker']"),
    ({"processes": []}, "processes must be a list of zookeeper, zk_broker, kraft_broker, controller, got []"),
    ({"jmx_exporter": None}, "jmx_exporter is null for a text attribute only (it exports numbers), got None"),
    ({"unit": "text"}, "jmx_exporter is null for a text attribute only (it exports numbers), got {'series'"),
])
def test_a_malformed_entry_is_an_error_naming_it(change, message):
    entry = {k: v for k, v in {**copy.deepcopy(GOOD), **change}.items() if v is not DROP}
    with pytest.raises(ValueError, match="^" + re.escape(f"mbeans.yaml: entry 'broken': {message}")):
        mbeans.build_catalogue({"fine": GOOD, "broken": entry})
    with pytest.raises(ValueError, match="entry 'broken': expected a map"):
        mbeans.build_catalogue({"broken": "kafka.log:type=Log,name=Size"})


def test_the_catalogue_and_the_jolokia_pull_need_no_spark():
    code = ("import sys; sys.modules['pyspark'] = None\n"
            "from fleethealth.pull.transports import jolokia\n"
            "from fleethealth.fleet import mbeans\n"
            "print(*(len(mbeans.jolokia_requests((p,))) for p in mbeans.PROCESSES))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ, check=True)
    assert out.stdout.split() == ["2", "13", "20", "19"]
