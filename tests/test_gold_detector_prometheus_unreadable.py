"""prometheus_unreadable: a cluster whose Prometheus gave none of its hosts' JMX in an hour is one finding,
not a data_missing per broker; when only some hosts' JMX is missing, those are data_missing each."""
from __future__ import annotations

from datetime import datetime

import pytest

from fleethealth.gold import thresholds
from fleethealth.gold.detectors import data_missing, prometheus_unreadable
from fleethealth.gold.facts.core import Facts
from fleethealth.runtime.frames import local_frame

pytestmark = pytest.mark.spark

HOUR = datetime(2026, 11, 21, 6)
HEALTH = ("cluster string, host string, hour timestamp, sources_expected array<string>, "
          "sources_arrived array<string>, sources_missing array<string>, file_problems array<string>")
FILE = "prometheus.2026-11-21T06-00-00Z.prom"
REFUSED = (f"jmx: {FILE} (rejected): not read from the cluster's Prometheus: 10.0.0.9:9090: cannot reach Prometheus: "
           "Connection refused")
NO_SAMPLE = "jmx: {file} (read): the cluster's Prometheus has no sample of {host} in this hour"


def row(cluster: str, host: str, missing: list[str], problems: list[str], expected=("jmx", "kafka")):
    arrived = sorted(set(expected) - set(missing))
    return (cluster, host, HOUR, sorted(expected), arrived, sorted(missing), problems)


def found(spark, rows) -> tuple[list[tuple], list[tuple]]:
    facts = Facts(HOUR, None, None, None, None, None, None, None, None,
                  broker_health=local_frame(spark, rows, HEALTH))
    limits = thresholds.load()
    unread = [(r.cluster, r.entity, r.severity, r.evidence)
              for r in prometheus_unreadable.detect(facts, limits).collect()]
    missing = sorted((r.cluster, r.entity) for r in data_missing.detect(facts, limits).collect())
    return unread, missing


def test_every_host_unread_is_one_finding_for_the_cluster_and_no_data_missing(spark):
    rows = [row("pay", f"pay-kafka-{n}", ["jmx"], [REFUSED]) for n in (1, 2, 3)]
    rows.append(row("pay", "pay-zk-1", [], [], expected=("zookeeper",)))        # expects no JMX
    # another cluster: Prometheus holds nothing of any of its hosts (a wrong host_label, say)
    rows += [row("ord", f"ord-kafka-{n}", ["jmx"], [NO_SAMPLE.format(file=FILE, host=f"ord-kafka-{n}")])
             for n in (1, 2)]
    unread, missing = found(spark, rows)
    assert sorted(unread) == [
        ("ord", "prometheus", "major", "no JMX of 2 host(s) of the cluster (ord-kafka-1, ord-kafka-2) came from its "
         "Prometheus in this hour: the cluster's Prometheus has no sample of ord-kafka-1 in this hour"),
        ("pay", "prometheus", "major", "no JMX of 3 host(s) of the cluster (pay-kafka-1, pay-kafka-2, pay-kafka-3) "
         "came from its Prometheus in this hour: not read from the cluster's Prometheus: 10.0.0.9:9090: cannot "
         "reach Prometheus: Connection refused")]
    assert missing == []


def test_some_hosts_unread_are_data_missing_each(spark):
    rows = [row("pay", "pay-kafka-1", ["jmx"], [NO_SAMPLE.format(file=FILE, host="pay-kafka-1")]),
            row("pay", "pay-kafka-2", [], []),
            # a host whose logs are missing too keeps its data_missing for them (its thread dumps came)
            row("pay", "pay-kafka-3", ["jmx", "kafka"], [NO_SAMPLE.format(file=FILE, host="pay-kafka-3")],
                expected=("jmx", "kafka", "threaddumps"))]
    unread, missing = found(spark, rows)
    assert unread == []
    assert missing == [("pay", "pay-kafka-1:jmx"), ("pay", "pay-kafka-3:jmx"), ("pay", "pay-kafka-3:kafka")]
    # every host unread, one of them missing its logs as well: the cluster's finding, and its logs' data_missing
    rows[1] = row("pay", "pay-kafka-2", ["jmx"], [REFUSED])
    unread, missing = found(spark, rows)
    assert [u[1] for u in unread] == ["prometheus"]
    assert missing == [("pay", "pay-kafka-3:kafka")]


def test_jmx_missing_for_another_reason_is_not_prometheus_s(spark):
    """A Jolokia-read cluster (its problems name no Prometheus): data_missing per host, as before."""
    rows = [row("j", f"j-kafka-{n}", ["jmx"], ["jmx: jolokia.json (rejected): HOST:8778: cannot reach Jolokia"])
            for n in (1, 2)]
    unread, missing = found(spark, rows)
    assert (unread, missing) == ([], [("j", "j-kafka-1:jmx"), ("j", "j-kafka-2:jmx")])
