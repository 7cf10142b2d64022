"""jmx_exporter Prometheus exposition mapped onto MBean ObjectName + attribute (jmx_prometheus_mapping.yaml).

The real scrape (tests/fixtures/samples/ORIGIN.md: jmx_exporter 0.6 on a Kafka 0.10 broker, 414
series) must map at least 95 % of its series onto MBean names through the silver code; the MBeans
gold reads (fleethealth.fleet.mbeans) must come out with their exact spelling.
"""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from fleethealth.fleet import mbeans
from fleethealth.silver.parsers import prometheus
from fleethealth.runtime.frames import local_frame

SAMPLE = Path(__file__).parent / "fixtures" / "samples" / "tangfeixiong_kafka-0.10_jmx_exporter-0.6_scrape.prom"
MIN_MAPPED = 0.95
SCHEMA = ("cluster string, host string, source string, file string, file_sha256 string, line_number int, "
          "record string, hour timestamp")
HOUR = datetime(2026, 11, 20, 10, tzinfo=timezone.utc)


def _series_lines(text: str) -> list[str]:
    return [x for x in text.splitlines() if x.strip() and not x.startswith("#")]


@pytest.fixture(scope="module")
def sample(spark):
    text = SAMPLE.read_text()
    bronze = local_frame(spark, 
        [("c", "broker-0", "jmx", "c/broker-0/jmx/metrics-2026-11-20T05-00-00.prom", "sha", 1, text, HOUR)], SCHEMA)
    samples, quarantine = prometheus.parse(bronze, F.lit("America/New_York"))
    return {"text": text, "samples": samples.cache(), "rows": [r.asDict() for r in samples.collect()],
            "quarantine": [r.asDict() for r in quarantine.collect()]}


def test_real_scrape_maps_at_least_95_percent_of_series_onto_mbeans(sample):
    series = _series_lines(sample["text"])
    assert len(series) == 414
    mapped = [r for r in sample["rows"] if r["mbean"] and r["domain"] and r["attribute"]]
    ratio = len(mapped) / len(series)
    assert ratio >= MIN_MAPPED, f"only {ratio:.1%} of the scrape's series mapped onto MBeans"
    # what is not mapped is jmx_exporter's own two series; Kafka 0.10 reports a `*-max` without a
    # measurement as -Inf: its four such samples are set aside (silver.parsers.jmx_values), each a
    # quarantine row that stands for no record (the scrape is in silver)
    set_aside = [l for l in series if l.endswith(" -Inf")]
    assert len(set_aside) == 4 and len(mapped) == 412 - 4
    assert sorted((q["record"], q["reason"], q["line_count"]) for q in sample["quarantine"]) == sorted(
        (l, "jmx sample set aside: value is infinite", 0) for l in set_aside)
    assert {r["line_number"] for r in mapped} == {1}
    # sample time: the file name's capture time, 05:00 in New York
    assert {datetime.fromtimestamp(r["ts"].timestamp(), timezone.utc) for r in mapped} == {HOUR}


def test_mbeans_gold_reads_come_out_spelled_exactly(sample):
    df = sample["samples"]
    fds = {r["attribute"]: r["value"] for r in df.where(mbeans.OPEN_FDS.matches() | mbeans.MAX_FDS.matches()).collect()}
    assert fds == {"OpenFileDescriptorCount": 186.0, "MaxFileDescriptorCount": 1048576.0}
    idle = [r.asDict() for r in df.where(F.col("props")["name"] == "NetworkProcessorAvgIdlePercent").collect()]
    assert [(r["mbean"], r["domain"], r["props"], r["attribute"]) for r in idle] == [
        ("kafka.network:type=SocketServer,name=NetworkProcessorAvgIdlePercent", "kafka.network",
         {"type": "SocketServer", "name": "NetworkProcessorAvgIdlePercent"}, "Value")]


@pytest.mark.parametrize("line,mbean,attribute", [
    ('kafka_log_log_value{name="LogEndOffset",topic="__consumer_offsets",partition="0",} 0.0',
     "kafka.log:type=Log,name=LogEndOffset,topic=__consumer_offsets,partition=0", "Value"),
    ('java_lang_garbagecollector_lastgcinfo_memoryusagebeforegc_used{name="G1 Young Generation",'
     'key="G1 Survivor Space",} 6291456.0',
     "java.lang:type=GarbageCollector,name=G1 Young Generation", "LastGcInfo.memoryUsageBeforeGc.G1 Survivor Space.used"),
    ('java_lang_memory_heapmemoryusage_used 1.97122048E8', "java.lang:type=Memory", "HeapMemoryUsage.used"),
    ('kafka_server_produce_queue_size 0.0', "kafka.server:type=Produce", "queue-size"),
    ('kafka_network_requestmetrics_oneminuterate{name="RequestsPerSec",request="ApiVersions",} 0.0',
     "kafka.network:type=RequestMetrics,name=RequestsPerSec,request=ApiVersions", "OneMinuteRate"),
])
def test_sample_lines_map_to_these_mbeans(sample, line, mbean, attribute):
    assert line in sample["text"].splitlines()
    got = [(r["mbean"], r["attribute"]) for r in sample["rows"]
           if r["mbean"] == mbean and r["attribute"] == attribute]
    assert got == [(mbean, attribute)]


def test_mapping_python_twin_agrees_and_ambiguity_is_an_error():
    m = prometheus.mapping()
    names = {x.split("{")[0].split(" ")[0] for x in _series_lines(SAMPLE.read_text())}
    unresolved = sorted(n for n in names if m.resolve(n) is None)
    assert unresolved == ["jmx_scrape_duration_seconds", "jmx_scrape_error"]
    assert m.resolve("kafka_log_logcleaner_value") == ("kafka.log", "LogCleaner", "Value")
    assert m.resolve("process_open_fds") == ("java.lang", "OperatingSystem", "OpenFileDescriptorCount")
    with pytest.raises(ValueError, match="both spelled 'value'"):
        prometheus.build_mapping({"beans": {"kafka.log": ["Log"]}, "attributes": ["Value", "value"]})
    with pytest.raises(ValueError, match="share the prefix kafka_log_log_"):
        prometheus.build_mapping({"beans": {"kafka.log": ["Log", "log"]}, "attributes": ["Value"]})


@pytest.mark.parametrize("series, bean", [
    ("kafka_server_raft_metrics_current_leader", ("kafka.server", "raft-metrics", "current-leader")),
    ("kafka_server_raft_metrics_election_latency_max", ("kafka.server", "raft-metrics", "election-latency-max")),
    ("kafka_server_raft_metrics_log_end_offset", ("kafka.server", "raft-metrics", "log-end-offset")),
    ("kafka_server_broker_metadata_metrics_last_applied_record_lag_ms",
     ("kafka.server", "broker-metadata-metrics", "last-applied-record-lag-ms")),
    ("kafka_server_broker_metadata_metrics_metadata_apply_error_count",
     ("kafka.server", "broker-metadata-metrics", "metadata-apply-error-count")),
    ("kafka_controller_kafkacontroller_value", ("kafka.controller", "KafkaController", "Value")),
    ("kafka_controller_controllereventmanager_99thpercentile",
     ("kafka.controller", "ControllerEventManager", "99thPercentile")),
])
def test_kraft_series_map_back_onto_their_mbeans(series, bean):
    """jmx_exporter's names of a KRaft node's beans (raft-metrics on every node, a broker's metadata, the
    controller's Yammer beans) resolve to their exact domain, type and attribute spelling."""
    assert prometheus.mapping().resolve(series) == bean


def test_the_raft_state_has_no_series():
    # a string attribute: jmx_exporter skips it, so no name maps to it (Jolokia reads it as text)
    assert prometheus.mapping().resolve("kafka_server_raft_metrics_current_state") is None
