"""jmx_exporter's namings (fleet/exporter_namings.yaml, issue 63 item 2), both ways: every bean a detector
reads has a series under each naming or a stated reason it has none, and each naming's series reaches its
bean (and the default naming's spelling of it, which silver maps back onto the MBean). No Spark."""
from __future__ import annotations

import pytest
import yaml

from fleethealth.fleet import mbeans, namings
from fleethealth.silver.parsers import prometheus as silver_prometheus

EXPORTED = {b.id: b for b in mbeans.ALL if b.exporter_series is not None}
KRAFT_ONLY = {"raft_current_leader", "raft_current_epoch", "raft_high_watermark", "raft_election_latency_avg",
              "raft_election_latency_max", "broker_metadata_applied_offset", "broker_metadata_applied_lag",
              "broker_metadata_load_errors", "broker_metadata_apply_errors"}


def test_each_naming_gives_every_exported_bean_a_series_or_says_why_not():
    assert namings.NAMES == ("default", "strimzi", "strimzi-zookeeper", "confluent")
    for naming in namings.namings().values():
        assert set(naming.series) | set(naming.absent) == set(EXPORTED), naming.name
        assert not set(naming.series) & set(naming.absent)
    # the gaps, exactly: what a cluster of that naming cannot tell
    assert {n: set(v.absent) for n, v in namings.namings().items()} == {
        "default": set(), "strimzi": {"request_handler_idle"},
        "strimzi-zookeeper": {"request_handler_idle"} | KRAFT_ONLY, "confluent": KRAFT_ONLY}
    assert "MeanRate only" in namings.naming("strimzi").absent["request_handler_idle"]
    assert "kafka.server:type=*" in namings.naming("confluent").absent["raft_current_leader"]


def _written(series: namings.Series, instance: dict[str, str]) -> tuple[str, dict[str, str]]:
    """A sample of the bean as that naming's exporter writes it (one instance's variable keys)."""
    labels = dict(series.matchers)
    labels.update((label, instance[key]) for label, key in series.labels)
    return series.name, labels


@pytest.mark.parametrize("name", namings.NAMES)
def test_each_series_reaches_its_bean_and_the_default_spelling_silver_maps_back(name):
    naming = namings.naming(name)
    mapping = silver_prometheus.mapping()
    for bean_id, series in naming.series.items():
        bean = EXPORTED[bean_id]
        instance = {"partition": "38"}
        for suffix in ("", "_total"):            # jmx_exporter 1.x's counter suffix, or not
            metric, labels = _written(series, instance)
            found = naming.bean_of(metric + suffix, {**labels, "pod": "kafka-0", "namespace": "kafka"})
            assert found is series, (name, bean_id, suffix)
        keys = {**dict(bean.keys), **instance}
        assert series.default_labels(labels) == tuple(sorted((k, keys[k]) for k in bean.exporter_labels)), bean_id
        # the default spelling is what silver reads: it turns it back into the bean's domain, type and attribute
        assert mapping.resolve(bean.exporter_series) == (bean.domain, keys["type"], bean.attribute), bean_id


def test_a_series_of_no_bean_of_ours_is_none():
    strimzi = namings.naming("strimzi")
    assert strimzi.bean_of("kafka_log_log_size", {"topic": "orders", "partition": "3"}) is None
    assert strimzi.bean_of("kafka_controller_controllereventmanager_eventqueuetimems", {"quantile": "0.5"}) is None
    assert strimzi.bean_of("kafka_server_replicamanager_leadercount", {}) is None
    default = namings.naming("default")
    assert default.bean_of("kafka_server_replicamanager_value", {"name": "LeaderCount"}) is None
    assert default.bean_of("kafka_server_replicamanager_value", {"name": "UnderReplicatedPartitions"}).bean.id == \
        "under_replicated"


# Series as the projects' own alert rules and rules files spell them, for the beans they stand for
PUBLISHED = [
    # Strimzi's PrometheusRule (packaging/examples/metrics/prometheus-install/prometheus-rules/
    # prometheus-kafka-rules.yaml @002c1aedcef3): UnderReplicatedPartitions, AbnormalControllerState
    ("strimzi", "kafka_server_replicamanager_underreplicatedpartitions", {}, "under_replicated"),
    ("strimzi", "kafka_controller_kafkacontroller_activecontrollercount", {}, "active_controller_count"),
    ("strimzi-zookeeper", "kafka_server_replicamanager_underreplicatedpartitions", {}, "under_replicated"),
    # Confluent's kafka_broker.yml @6a3c258119b2 names this one in a rule of its own
    ("confluent", "kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_total", {},
     "request_handler_idle"),
    ("confluent", "kafka_server_replicamanager_underreplicatedpartitions", {}, "under_replicated"),
]


@pytest.mark.parametrize("naming, series, labels, bean", PUBLISHED)
def test_published_series_reach_their_beans(naming, series, labels, bean):
    assert namings.naming(naming).bean_of(series, labels).bean.id == bean


@pytest.mark.parametrize("doc, message", [
    ({"x": {"source": "s", "beans": {}}}, "x: says nothing of "),
    ({"x": {"source": "s", "beans": {"nope": {"series": "a"}}}}, "x: beans: nope: no bean of mbeans.yaml"),
    ({"x": {"source": "s", "like": "y", "beans": {}}}, "x: like: 'y' is no naming above it"),
    ({"x": {"beans": {}}}, "x: source must say which rules file"),
    ({"default": {"source": "s", "beans": {}}}, "default: is built in"),
    ({"x": {"source": "s", "like": "strimzi", "beans": {"offsets_log_size": {"series": "kafka_log_log_size"}}}},
     "x: beans: offsets_log_size: no label carries its key(s) partition"),
    ({"x": {"source": "s", "like": "strimzi", "beans": {"open_fds": {"series": "process_max_fds"}}}},
     "x: open_fds and max_fds are both process_max_fds with nothing telling them apart"),
    ({"x": {"source": "s", "like": "strimzi", "beans": {"open_fds": {"absent": " "}}}},
     "x: beans: open_fds: absent must say why"),
])
def test_a_mistake_in_a_naming_is_one_error_naming_it(doc, message):
    shipped = yaml.safe_load(namings.resources.files("fleethealth.fleet").joinpath(namings.NAMINGS_FILE).read_text())
    with pytest.raises(ValueError) as err:
        namings.build({"strimzi": shipped["strimzi"], **doc}, "f.yaml")
    assert f"f.yaml: {message}" in str(err.value)
