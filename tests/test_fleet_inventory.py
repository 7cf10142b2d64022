"""Tests of the fleet inventory (fleethealth.fleet.inventory; docs/inventory.md).

Every mistake must give an InventoryError with one line per mistake naming the file and the key path.
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from fleethealth.fleet.inventory import InventoryError, load_inventory

MINIMAL = """\
clusters:
  - name: bigdata
    timezone: UTC
    offsets_topic_partitions: 50
    transport: local
    root: {root}
    hosts:
      - {{host: bd-kafka-1, role: kafka, broker_id: 1, kafka_version: 1.1.0}}
      - {{host: bd-zk-1, role: zookeeper, zk_myid: 1}}
      - {{host: bd-kafka-2, role: kafka, broker_id: 2, kafka_version: 1.1.0,
         transport: sftp, ssh_conn_id: fleet_ssh, paths: {{kafka: /opt/kafka/logs, jmx: /var/lib/jmx}}}}
"""


def write(tmp_path: Path, text: str, name: str = "inventory.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def problems_of(path: Path) -> list[str]:
    with pytest.raises(InventoryError) as err:
        load_inventory(path)
    lines = str(err.value).splitlines()
    assert lines == err.value.problems
    for line in lines:
        assert line.startswith(f"{path}:"), line
    return lines


def one_host_inventory(host_line: str, **cluster: str) -> str:
    """A one-cluster inventory with a good broker plus `host_line`; `cluster` adds/overrides cluster keys."""
    keys = {"name": "c1", "timezone": "UTC", "root": "/archive"} | cluster
    head = "\n".join(f"    {k}: {v}" if i else f"  - {k}: {v}" for i, (k, v) in enumerate(keys.items()))
    return (f"clusters:\n{head}\n    hosts:\n"
            f"      - {{host: k1, role: kafka, broker_id: 1, kafka_version: 2.8.1}}\n"
            f"      - {host_line}\n")


# --- the minimal shape (docs) --------------------------------------------------------------------

def test_spec_minimal_shape_loads(tmp_path):
    root = tmp_path / "archive"
    inv = load_inventory(write(tmp_path, MINIMAL.format(root=root)))

    assert [c.name for c in inv.clusters] == ["bigdata"]
    cluster = inv.cluster("bigdata")
    assert cluster.timezone == "UTC"
    assert cluster.offsets_topic_partitions == 50
    assert [(h.host, h.role, h.broker_id, h.zk_myid) for h in inv.hosts] == [
        ("bd-kafka-1", "kafka", 1, None),
        ("bd-zk-1", "zookeeper", None, 1),
        ("bd-kafka-2", "kafka", 2, None),
    ]
    assert inv.host("bd-kafka-1").kafka_version == "1.1.0"
    assert inv.host("bd-kafka-1").entity == "broker-1"
    assert inv.host("bd-zk-1").entity == "zk-1"


def test_transport_inherited_from_cluster_and_overridden_per_host(tmp_path):
    root = tmp_path / "archive"
    inv = load_inventory(write(tmp_path, MINIMAL.format(root=root)))

    k1, zk, k2 = inv.host("bd-kafka-1"), inv.host("bd-zk-1"), inv.host("bd-kafka-2")
    assert (k1.transport, k1.ssh_conn_id) == ("local", None)
    assert (zk.transport, zk.ssh_conn_id) == ("local", None)
    assert (k2.transport, k2.ssh_conn_id) == ("sftp", "fleet_ssh")
    assert k2.paths == {"kafka": "/opt/kafka/logs", "jmx": "/var/lib/jmx"}


def test_default_expect_per_role(tmp_path):
    """Expected every hour — Kafka logs and JMX for a broker, logs for a ZooKeeper server."""
    inv = load_inventory(write(tmp_path, MINIMAL.format(root=tmp_path / "archive")))
    assert inv.host("bd-kafka-1").expect == ("kafka", "jmx")
    assert inv.host("bd-zk-1").expect == ("zookeeper",)


def test_expect_override_per_host(tmp_path):
    path = write(tmp_path, one_host_inventory(
        "{host: k2, role: kafka, broker_id: 2, kafka_version: 2.8.1, expect: [kafka, threaddumps]}"))
    inv = load_inventory(path)
    assert inv.host("k1").expect == ("kafka", "jmx")
    assert inv.host("k2").expect == ("kafka", "threaddumps")


def test_source_dir_convention_and_explicit_paths(tmp_path):
    """Local files under <root>/<cluster>/<host>/<source>/ unless `paths` names the folder."""
    root = tmp_path / "archive"
    inv = load_inventory(write(tmp_path, MINIMAL.format(root=root)))

    assert inv.host("bd-kafka-1").source_dir("kafka") == str(root / "bigdata" / "bd-kafka-1" / "kafka")
    assert inv.host("bd-zk-1").source_dir("zookeeper") == str(root / "bigdata" / "bd-zk-1" / "zookeeper")
    k2 = inv.host("bd-kafka-2")
    assert k2.source_dir("kafka") == "/opt/kafka/logs"
    assert k2.source_dir("jmx") == "/var/lib/jmx"
    # a source without an explicit path falls back to the convention
    assert k2.source_dir("threaddumps") == str(root / "bigdata" / "bd-kafka-2" / "threaddumps")


def test_relative_root_resolved_against_inventory_folder(tmp_path, monkeypatch):
    conf = tmp_path / "conf"
    conf.mkdir()
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    inv = load_inventory(write(conf, MINIMAL.format(root="../archive")))

    k1 = inv.host("bd-kafka-1")
    assert k1.root == str((tmp_path / "archive").resolve())
    assert k1.source_dir("jmx") == str((tmp_path / "archive").resolve() / "bigdata" / "bd-kafka-1" / "jmx")


def test_relative_host_root_overrides_cluster_root(tmp_path):
    path = write(tmp_path, one_host_inventory("{host: zk1, role: zookeeper, zk_myid: 1, root: zk-archive}"))
    inv = load_inventory(path)
    assert inv.host("k1").root == "/archive"
    assert inv.host("zk1").source_dir("zookeeper") == str(tmp_path.resolve() / "zk-archive" / "c1" / "zk1" / "zookeeper")


def test_offsets_topic_partitions_defaults_to_50(tmp_path):
    inv = load_inventory(write(tmp_path, one_host_inventory("{host: zk1, role: zookeeper, zk_myid: 1}")))
    assert inv.cluster("c1").offsets_topic_partitions == 50


# --- mistakes: one clear line each, naming file and key path -----------------------------------

def test_unknown_role(tmp_path):
    path = write(tmp_path, one_host_inventory("{host: x1, role: brokers, broker_id: 2}"))
    assert problems_of(path) == [
        f"{path}: clusters[c1].hosts[x1].role: unknown role 'brokers' (one of kafka, zookeeper, controller)"]


def test_duplicate_broker_id(tmp_path):
    path = write(tmp_path, one_host_inventory("{host: k2, role: kafka, broker_id: 1, kafka_version: 2.8.1}"))
    [line] = problems_of(path)
    assert "clusters[c1].hosts[k2].broker_id" in line
    assert "duplicate broker id 1" in line


def test_same_broker_id_in_two_clusters_is_fine(tmp_path):
    path = write(tmp_path, """\
        clusters:
          - {name: a, root: /r, hosts: [{host: a1, role: kafka, broker_id: 1, kafka_version: 3.6.0}]}
          - {name: b, root: /r, hosts: [{host: b1, role: kafka, broker_id: 1, kafka_version: 3.6.0}]}
        """)
    inv = load_inventory(path)
    assert [(h.cluster, h.broker_id) for h in inv.hosts] == [("a", 1), ("b", 1)]


def test_duplicate_host_across_clusters(tmp_path):
    path = write(tmp_path, """\
        clusters:
          - {name: a, root: /r, hosts: [{host: h1, role: kafka, broker_id: 1, kafka_version: 3.6.0}]}
          - {name: b, root: /r, hosts: [{host: h1, role: kafka, broker_id: 2, kafka_version: 3.6.0}]}
        """)
    [line] = problems_of(path)
    assert "clusters[b].hosts[h1].host" in line
    assert "duplicate host 'h1'" in line


def test_bad_timezone(tmp_path):
    path = write(tmp_path, one_host_inventory("{host: zk1, role: zookeeper, zk_myid: 1}", timezone="Mars/Olympus"))
    [line] = problems_of(path)
    assert "clusters[c1].timezone" in line
    assert "'Mars/Olympus'" in line


def test_missing_broker_id(tmp_path):
    path = write(tmp_path, one_host_inventory("{host: k2, role: kafka, kafka_version: 2.8.1}"))
    [line] = problems_of(path)
    assert "clusters[c1].hosts[k2].broker_id" in line
    assert "None" in line


def test_bad_kafka_version(tmp_path):
    path = write(tmp_path, one_host_inventory("{host: k2, role: kafka, broker_id: 2, kafka_version: latest}"))
    [line] = problems_of(path)
    assert "clusters[c1].hosts[k2].kafka_version" in line
    assert "'latest'" in line


def test_sftp_without_ssh_conn_id(tmp_path):
    path = write(tmp_path, one_host_inventory(
        "{host: k2, role: kafka, broker_id: 2, kafka_version: 2.8.1, transport: sftp}"))
    [line] = problems_of(path)
    assert "clusters[c1].hosts[k2].ssh_conn_id" in line
    assert "sftp" in line


def test_unknown_key_on_host_and_cluster(tmp_path):
    path = write(tmp_path, one_host_inventory(
        "{host: zk1, role: zookeeper, zk_myid: 1, jolokia: http://x}", timezon="UTC"))
    assert problems_of(path) == [
        f"{path}: clusters[c1].timezon: unknown key",
        f"{path}: clusters[c1].hosts[zk1].jolokia: unknown key (did you mean jolokia_url?)",
    ]


def test_invalid_yaml_names_line(tmp_path):
    path = write(tmp_path, "clusters:\n  - name: c1\n    hosts: [a, b\n    root: /x\n")
    [line] = problems_of(path)
    assert "not valid YAML" in line
    assert " line 4" in line


@pytest.mark.parametrize("text", ["clusters: []\n", "clusters:\n", "{}\n", ""])
def test_empty_clusters(tmp_path, text):
    path = write(tmp_path, text)
    assert problems_of(path) == [f"{path}: clusters: expected a non-empty list of clusters"]


def test_several_mistakes_give_several_lines(tmp_path):
    path = write(tmp_path, """\
        clusters:
          - name: c1
            timezone: Nowhere/City
            root: /r
            hosts:
              - {host: k1, role: kafka, broker_id: 1, kafka_version: 2.8.1}
              - {host: k2, role: kafka, broker_id: 1, kafka_version: 2.8.1}
              - {host: x1, role: brokers}
              - {host: k3, role: kafka, broker_id: 3, kafka_version: 2.8.1, transport: sftp}
        """)
    lines = problems_of(path)
    keys = [line.split(": ")[1] for line in lines]
    assert keys == [
        "clusters[c1].timezone",
        "clusters[c1].hosts[k2].broker_id",
        "clusters[c1].hosts[x1].role",
        "clusters[c1].hosts[k3].ssh_conn_id",
    ]


def test_missing_file(tmp_path):
    path = tmp_path / "nope.yaml"
    [line] = problems_of(path)
    assert "cannot read inventory" in line


@pytest.mark.parametrize("value, shown", [("0", 0), ("-5", -5), ("'big'", "big"), ("1.5", 1.5), ("true", True)])
def test_a_size_cap_that_is_not_a_positive_byte_count_is_one_line(tmp_path, value, shown):
    path = write(tmp_path, MINIMAL.format(root="/r").replace("    root: /r\n", f"    root: /r\n    max_file_bytes: {value}\n"))
    assert [line.split(": ", 2)[1:] for line in problems_of(path)] == [
        ["clusters[bigdata].max_file_bytes", f"expected a size in bytes (an integer >= 1), got {shown!r}"]]


def test_each_mistake_is_reported_once(tmp_path):
    """A typo'd key is one line (with the key it resembles), not also a line for the key it hides; a
    wrong cluster value that every host inherits is one line, not one per host."""
    path = write(tmp_path, """\
        clusters:
          - name: c1
            transport: ftp
            expect: [kafka, logs]
            hots_note: not a typo of anything close enough
            root: /r
            hosts:
              - {host: k1, role: kafka, broker_id: 1, kafka_versoin: 2.8.1}
              - {host: k2, role: kafka, broker_id: 2, kafka_version: 2.8.1}
              - {host: z1, role: zookeeper, zk_myd: 1, transport: local}
          - name: c2
            rot: /r
            hosts:
              - {host: k3, role: kafka, broker_id: 1, kafka_version: 2.8.1}
        """)
    assert [line.split(": ", 1)[1] for line in problems_of(path)] == [
        "clusters[c1].hots_note: unknown key",
        "clusters[c1].transport: unknown transport 'ftp' (one of local, sftp, http)",
        "clusters[c1].expect: expected a list of sources (kafka, zookeeper, jmx, threaddumps, logdirs, groups)",
        "clusters[c1].hosts[k1].kafka_versoin: unknown key (did you mean kafka_version?)",
        "clusters[c1].hosts[z1].zk_myd: unknown key (did you mean zk_myid?)",
        "clusters[c2].rot: unknown key (did you mean root?)",
    ]


# --- bounded values (hostile or unlucky inventories) ----------------------------------------------


@pytest.mark.parametrize("host_line, where", [
    ("{host: k2, role: kafka, broker_id: 2147483648, kafka_version: 2.8.1}", "hosts[k2].broker_id"),
    ("{host: k2, role: kafka, broker_id: -1, kafka_version: 2.8.1}", "hosts[k2].broker_id"),
    ("{host: z1, role: zookeeper, zk_myid: 2147483648}", "hosts[z1].zk_myid"),
    ("{host: " + "k" * 101 + ", role: kafka, broker_id: 2, kafka_version: 2.8.1}", ".host"),
])
def test_ids_are_java_ints_and_names_have_a_length(tmp_path, host_line, where):
    [line] = problems_of(write(tmp_path, one_host_inventory(host_line)))
    assert where in line


def test_ids_and_names_at_their_bounds_load(tmp_path):
    inv = load_inventory(write(tmp_path, one_host_inventory(
        "{host: " + "k" * 100 + ", role: kafka, broker_id: 2147483647, kafka_version: 2.8.1}", name="c" * 100)))
    assert inv.host("k" * 100).broker_id == 2**31 - 1


def test_a_cluster_name_too_long_for_a_file_name_is_refused(tmp_path):
    [line] = problems_of(write(tmp_path, one_host_inventory("{host: k2, role: kafka, broker_id: 2, "
                                                           "kafka_version: 2.8.1}", name="c" * 151)))
    assert "at most 100" in line


def test_nested_yaml_aliases_are_refused_before_they_expand(tmp_path):
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n" for i in range(9))
    [line] = problems_of(write(tmp_path, bomb))
    assert line.endswith("its YAML expands to more than 100000 values (aliases nested in aliases); "
                         "an inventory needs far fewer")
    assert len(line) < 300


def test_an_alias_an_inventory_shares_a_value_with_loads(tmp_path):
    inv = load_inventory(write(tmp_path, one_host_inventory(
        "{host: k2, role: kafka, broker_id: 2, kafka_version: 2.8.1, paths: *p}",
        paths="&p {kafka: /opt/kafka/logs}")))
    assert inv.host("k1").paths == inv.host("k2").paths == {"kafka": "/opt/kafka/logs"}


@pytest.mark.parametrize("url", ["http://user:pw1234@k2:8778/jolokia/", "http://k2:8778/jolokia/?access_token=tk1234",
                                 "http://k2:8778/jolokia/#fr1234"])
def test_a_jolokia_url_with_credentials_is_refused_without_repeating_it(tmp_path, url):
    [line] = problems_of(write(tmp_path, one_host_inventory(
        "{host: k2, role: kafka, broker_id: 2, kafka_version: 2.8.1, jolokia_url: '" + url + "'}")))
    assert "hosts[k2].jolokia_url: must not carry credentials" in line
    assert "1234" not in line


def test_a_cluster_s_prometheus_is_its_hosts_jmx_source_but_for_a_host_with_a_jolokia_url(tmp_path):
    """Issue 63: a host's JMX comes from one source: its jolokia_url, else its cluster's Prometheus."""
    from fleethealth.fleet.inventory import Prometheus

    inv = load_inventory(write(tmp_path, one_host_inventory(
        "{host: k2, role: kafka, broker_id: 2, kafka_version: 2.8.1, jolokia_url: 'http://k2:8778/jolokia/'}",
        prometheus="{url: 'https://mimir.example:8080/prometheus', conn_id: mimir, host_label: pod}")))
    assert inv.host("k1").prometheus == Prometheus("https://mimir.example:8080/prometheus", "mimir", "pod")
    assert (inv.host("k2").prometheus, inv.host("k2").jolokia_url) == (None, "http://k2:8778/jolokia/")
    assert load_inventory(write(tmp_path, one_host_inventory("{host: z1, role: zookeeper, zk_myid: 1}",
                                                             prometheus="{url: 'http://p:9090'}"))
                          ).host("k1").prometheus == Prometheus("http://p:9090", None, "instance")


@pytest.mark.parametrize("prom, problem", [
    ("{url: 'http://u:pw1234@p:9090'}", "prometheus.url: must not carry credentials"),
    ("{url: 'p:9090'}", "prometheus.url: expected an http(s) URL such as http://prometheus:9090"),
    ("{conn_id: p}", "prometheus.url: expected an http(s) URL such as http://prometheus:9090"),
    ("{url: 'http://p:9090', host_label: 'pod-name'}", "prometheus.host_label: expected a Prometheus label name"),
    ("{url: 'http://p:9090', naming: strimzy}", "prometheus.naming: expected a jmx_exporter naming (default, strimzi, "
                                               "strimzi-zookeeper, confluent), got 'strimzy'"),
    ("{url: 'http://p:9090', names: strimzi}", "prometheus.names: unknown key"),
])
def test_a_prometheus_mistake_is_one_line(tmp_path, prom, problem):
    [line] = problems_of(write(tmp_path, one_host_inventory("{host: z1, role: zookeeper, zk_myid: 1}", prometheus=prom)))
    assert f"clusters[c1].{problem}" in line, line
    assert "1234" not in line


# --- KRaft clusters: controllers, combined nodes, the cluster's mode ----------------------------------

KRAFT = """\
clusters:
  - name: kr
    root: /archive
    hosts:
      - {host: kr-ctl-1, role: controller, node_id: 3000, kafka_version: 3.9.0}
      - {host: kr-kafka-1, role: kafka, broker_id: 1, kafka_version: 4.1.0}
      - {host: kr-kafka-2, role: kafka, broker_id: 2, kafka_version: 3.9.0, controller: true}
"""


def test_a_kraft_cluster_of_a_controller_a_broker_and_a_combined_node(tmp_path):
    inv = load_inventory(write(tmp_path, KRAFT))
    assert inv.cluster("kr").mode == "kraft"
    assert [(h.host, h.role, h.broker_id, h.zk_myid, h.controller, h.mode, h.entity, h.processes, h.expect)
            for h in inv.hosts] == [
        ("kr-ctl-1", "controller", 3000, None, True, "kraft", "controller-3000", ("controller",), ("kafka", "jmx")),
        ("kr-kafka-1", "kafka", 1, None, False, "kraft", "broker-1", ("kraft_broker",), ("kafka", "jmx")),
        ("kr-kafka-2", "kafka", 2, None, True, "kraft", "broker-2", ("kraft_broker", "controller"),
         ("kafka", "jmx")),
    ]
    assert inv.host("kr-ctl-1").source_dir("kafka") == "/archive/kr/kr-ctl-1/kafka"


def test_a_cluster_without_controllers_is_zookeeper_mode_as_before(tmp_path):
    inv = load_inventory(write(tmp_path, MINIMAL.format(root="/r")))
    assert inv.cluster("bigdata").mode == "zookeeper"
    assert [(h.mode, h.controller, h.processes) for h in inv.hosts] == [
        ("zookeeper", False, ("zk_broker",)), ("zookeeper", False, ("zookeeper",)),
        ("zookeeper", False, ("zk_broker",))]


def test_a_controller_only_cluster_is_kraft_mode(tmp_path):
    inv = load_inventory(write(tmp_path, """\
        clusters:
          - {name: q, root: /r, hosts: [{host: q1, role: controller, node_id: 0, kafka_version: 3.3.1}]}
        """))
    assert (inv.cluster("q").mode, inv.host("q1").entity) == ("kraft", "controller-0")


@pytest.mark.parametrize("version", ["3.9.1", "3.3.0"])
def test_a_3x_broker_may_run_on_zookeeper(tmp_path, version):
    inv = load_inventory(write(tmp_path, one_host_inventory(
        f"{{host: k2, role: kafka, broker_id: 2, kafka_version: {version}}}")))
    assert inv.cluster("c1").mode == "zookeeper"


@pytest.mark.parametrize("version", ["4.0.0", "4.1", "4.1.0-rc2", "10.0.0"])
def test_a_4x_broker_cannot_run_on_zookeeper(tmp_path, version):
    """Beside a ZooKeeper server, or in a cluster of `mode: zookeeper`; listed with brokers only, its
    cluster is in KRaft mode (test_brokers_only_whose_mode_is_known)."""
    for extra, cluster in (("\n      - {host: z1, role: zookeeper, zk_myid: 1}", {}), ("", {"mode": "zookeeper"})):
        path = write(tmp_path, one_host_inventory(
            f"{{host: k2, role: kafka, broker_id: 2, kafka_version: '{version}'}}{extra}", **cluster))
        assert problems_of(path) == [
            f"{path}: clusters[c1].hosts[k2].kafka_version: Kafka {version} has no ZooKeeper mode: list the cluster's "
            "KRaft controllers (role: controller, or controller: true on a combined broker)"]


def test_a_4x_broker_beside_a_combined_node_is_kraft(tmp_path):
    inv = load_inventory(write(tmp_path, one_host_inventory(
        "{host: k2, role: kafka, broker_id: 2, kafka_version: 4.0.0, controller: true}")))
    assert [(h.host, h.mode, h.processes) for h in inv.hosts] == [
        ("k1", "kraft", ("kraft_broker",)), ("k2", "kraft", ("kraft_broker", "controller"))]


# --- a KRaft cluster listed with its brokers only (issue 61 item 5) ------------------------------------

BROKERS_ONLY = """\
clusters:
  - name: kb
    root: /r
{mode}    hosts:
      - {{host: kb-1, role: broker, node_id: 1, kafka_version: {version}}}
      - {{host: kb-2, role: kafka, broker_id: 2, kafka_version: {version}}}
"""


@pytest.mark.parametrize("version", ["3.9.1", "2.8.0"])
def test_brokers_only_of_a_version_with_both_modes_are_told_by_their_logs(tmp_path, version):
    """`role: broker` is `role: kafka`, a broker's `node_id` its `broker_id`; without a ZooKeeper server or
    a controller listed, the cluster's logs tell its mode (ZooKeeper the fallback): its brokers may run
    either process until then (what pull reads of their JMX)."""
    inv = load_inventory(write(tmp_path, BROKERS_ONLY.format(mode="", version=version)))
    c = inv.cluster("kb")
    assert (c.mode, c.mode_from_logs) == ("zookeeper", True)
    assert [(h.host, h.role, h.broker_id, h.entity, h.processes) for h in inv.hosts] == [
        ("kb-1", "kafka", 1, "broker-1", ("zk_broker", "kraft_broker")),
        ("kb-2", "kafka", 2, "broker-2", ("zk_broker", "kraft_broker"))]
    found = inv.with_modes({"kb": "kraft"})
    assert [(h.mode, h.mode_from_logs, h.processes) for h in found.hosts] == [("kraft", False, ("kraft_broker",))] * 2
    assert (found.cluster("kb").mode, found.cluster("kb").mode_from_logs) == ("kraft", False)
    fallback = inv.with_modes({})
    assert [(h.mode, h.processes) for h in fallback.hosts] == [("zookeeper", ("zk_broker",))] * 2


@pytest.mark.parametrize("mode, version, want", [
    ("", "4.1.0", "kraft"),               # Kafka 4 has no ZooKeeper mode: no controller needed to say so
    ("    mode: kraft\n", "3.9.1", "kraft"),
    ("    mode: zookeeper\n", "3.9.1", "zookeeper"),
    ("", "2.7.2", "zookeeper"),           # before KRaft (2.8): nothing for the logs to tell
])
def test_brokers_only_whose_mode_is_known(tmp_path, mode, version, want):
    inv = load_inventory(write(tmp_path, BROKERS_ONLY.format(mode=mode, version=version)))
    assert (inv.cluster("kb").mode, inv.cluster("kb").mode_from_logs) == (want, False)
    assert {h.mode for h in inv.hosts} == {want}
    assert inv.with_modes({"kb": "zookeeper" if want == "kraft" else "kraft"}) == inv


def test_a_listed_zookeeper_server_keeps_brokers_in_zookeeper_mode(tmp_path):
    inv = load_inventory(write(tmp_path, one_host_inventory("{host: z1, role: zookeeper, zk_myid: 1}")))
    assert (inv.cluster("c1").mode, inv.cluster("c1").mode_from_logs) == ("zookeeper", False)


@pytest.mark.parametrize("host_line, message", [
    ("{host: k2, role: [broker], node_id: 2, kafka_version: 3.9.1}",
     "hosts[k2].role: unknown role ['broker'] (one of kafka, zookeeper, controller)"),
    ("{host: k2, role: broker, node_id: 2, broker_id: 3, kafka_version: 3.9.1}",
     "hosts[k2].node_id: a broker's node id is its broker_id: write broker_id: 2 or broker_id: 3, not both differing"),
    ("{host: k2, role: broker, node_id: x, kafka_version: 3.9.1}",
     "hosts[k2].broker_id: expected an integer broker id 0..2147483647, got 'x'"),
    ("{host: k2, role: kafka, broker_id: 2, kafka_version: 3.9.1, controller: true}\n"
     "      - {host: z1, role: zookeeper, zk_myid: 1}",
     "hosts[z1].role: a ZooKeeper server in a KRaft cluster (controllers: k2)"),
])
def test_kraft_names_mistakes(tmp_path, host_line, message):
    path = write(tmp_path, one_host_inventory(host_line))
    assert problems_of(path) == [f"{path}: clusters[c1].{message}"]


def test_a_mode_that_contradicts_the_hosts_is_refused(tmp_path):
    path = write(tmp_path, one_host_inventory("{host: k2, role: kafka, broker_id: 2, kafka_version: 3.9.1, "
                                              "controller: true}", mode="zookeeper"))
    assert problems_of(path) == [f"{path}: clusters[c1].hosts[k2].controller: a KRaft controller in a cluster of "
                                 "mode: zookeeper"]
    path = write(tmp_path, one_host_inventory("{host: z1, role: zookeeper, zk_myid: 1}", mode="kraft"))
    assert problems_of(path) == [f"{path}: clusters[c1].hosts[z1].role: a ZooKeeper server in a KRaft cluster "
                                 "(controllers: none listed)"]
    path = write(tmp_path, one_host_inventory("{host: z1, role: zookeeper, zk_myid: 1}", mode="raft"))
    assert problems_of(path) == [f"{path}: clusters[c1].mode: unknown mode 'raft' (one of zookeeper, kraft; without "
                                 "it, the hosts' roles and logs tell)"]


def test_a_zookeeper_server_in_a_kraft_cluster_is_refused(tmp_path):
    path = write(tmp_path, KRAFT + "      - {host: kr-zk-1, role: zookeeper, zk_myid: 1}\n")
    assert problems_of(path) == [f"{path}: clusters[kr].hosts[kr-zk-1].role: a ZooKeeper server in a KRaft cluster "
                                 "(controllers: kr-ctl-1, kr-kafka-2)"]


def test_brokers_and_controllers_share_the_node_ids_myids_do_not(tmp_path):
    path = write(tmp_path, KRAFT + "      - {host: kr-ctl-2, role: controller, node_id: 1, kafka_version: 3.9.0}\n"
                                   "      - {host: kr-kafka-3, role: kafka, broker_id: 3000, kafka_version: 3.9.0}\n")
    assert problems_of(path) == [
        f"{path}: clusters[kr].hosts[kr-ctl-2].node_id: duplicate node id 1 in cluster kr",
        f"{path}: clusters[kr].hosts[kr-kafka-3].broker_id: duplicate broker id 3000 in cluster kr"]
    inv = load_inventory(write(tmp_path, one_host_inventory("{host: z1, role: zookeeper, zk_myid: 1}")))
    assert [h.entity for h in inv.hosts] == ["broker-1", "zk-1"]


@pytest.mark.parametrize("host_line, message", [
    ("{host: q1, role: controller, kafka_version: 3.9.0}", "hosts[q1].node_id: expected an integer node id "
                                                          "0..2147483647, got None"),
    ("{host: q1, role: controller, node_id: -1, kafka_version: 3.9.0}", "hosts[q1].node_id: expected an integer "
                                                                       "node id 0..2147483647, got -1"),
    ("{host: q1, role: controller, node_id: 9}", "hosts[q1].kafka_version: expected a Kafka version such as 2.8.1, "
                                                 "got None"),
    ("{host: k2, role: kafka, broker_id: 2, kafka_version: 3.9.0, controller: yes please}",
     "hosts[k2].controller: expected true or false, got 'yes please'"),
    ("{host: k2, role: kafka, broker_id: 2, kafka_version: 3.9.0, controller: 1}",
     "hosts[k2].controller: expected true or false, got 1"),
])
def test_a_controller_needs_its_node_id_and_version_and_controller_is_a_boolean(tmp_path, host_line, message):
    path = write(tmp_path, one_host_inventory(host_line))
    assert problems_of(path) == [f"{path}: clusters[c1].{message}"]
