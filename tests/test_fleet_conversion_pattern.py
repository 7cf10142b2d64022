"""The inventory's `log_pattern:` (fleethealth.fleet.conversion_pattern): real published log4j
ConversionPatterns compiled into the regex and time format silver reads records with, each checked on
a line that layout writes; mistakes in a pattern are one InventoryError line naming the key.

Patterns (as published):
- Kafka's config/log4j.properties and Confluent's images (confluentinc/kafka-images
  kafka-connect-base/include/etc/confluent/docker/log4j.properties.template): `[%d] %p %m (%c)%n`
- Strimzi's ZooKeeper-era Kafka (strimzi/strimzi-kafka-operator
  cluster-operator/src/main/resources/default-logging/KafkaCluster.log4j1.properties):
  `%d{ISO8601} %p %m (%c) [%t]%n`
- Strimzi's Kafka 4 (.../default-logging/KafkaCluster.properties): `%d{yyyy-MM-dd HH:mm:ss} %-5p [%t] %c{1}:%L - %m%n`
- ZooKeeper's conf/log4j.properties (apache/zookeeper 3.4-3.6): `%d{ISO8601} [myid:%X{myid}] - %-5p [%t:%C{1}@%L] - %m%n`
"""
from __future__ import annotations

import re

import pytest

from fleethealth.fleet.conversion_pattern import PatternError, compile_pattern, first_parsed
from fleethealth.fleet.inventory import InventoryError, parse_inventory

KAFKA = "[%d] %p %m (%c)%n"
STRIMZI_ZK = "%d{ISO8601} %p %m (%c) [%t]%n"
STRIMZI_4 = "%d{yyyy-MM-dd HH:mm:ss} %-5p [%t] %c{1}:%L - %m%n"
ZOOKEEPER = "%d{ISO8601} [myid:%X{myid}] - %-5p [%t:%C{1}@%L] - %m%n"
CUSTOM = "%d{yyyy-MM-dd'T'HH:mm:ss.SSS} [%t] %-5p %c:%L - %m%n"

CASES = [
    (KAFKA, "[2026-03-10 09:00:00,123] INFO [GroupCoordinator 1]: Group g (x) with 1 members (kafka.coordinator.group.GroupCoordinator)",
     {"ts": "2026-03-10 09:00:00,123", "level": "INFO", "thread": None,
      "logger": "kafka.coordinator.group.GroupCoordinator", "message": "[GroupCoordinator 1]: Group g (x) with 1 members"},
     "uuuu-MM-dd HH:mm:ss,SSS"),
    (STRIMZI_ZK, "2026-03-10 01:07:16,625 INFO Cleaner 0: Beginning cleaning of log __consumer_offsets-3. "
                 "(kafka.log.LogCleaner) [kafka-log-cleaner-thread-0]",
     {"ts": "2026-03-10 01:07:16,625", "level": "INFO", "thread": "kafka-log-cleaner-thread-0",
      "logger": "kafka.log.LogCleaner", "message": "Cleaner 0: Beginning cleaning of log __consumer_offsets-3."},
     "uuuu-MM-dd[ ]['T']HH:mm:ss,SSS"),
    (STRIMZI_4, "2026-03-10 01:07:16 INFO  [kafka-log-cleaner-thread-0] LogCleaner:71 - Cleaner 0: Beginning cleaning",
     {"ts": "2026-03-10 01:07:16", "level": "INFO", "thread": "kafka-log-cleaner-thread-0", "logger": "LogCleaner",
      "message": "Cleaner 0: Beginning cleaning"}, "uuuu-MM-dd HH:mm:ss"),
    (ZOOKEEPER, "2026-03-10 02:02:01,662 [myid:1] - WARN  [QuorumPeer[myid=1](plain=[0:0:0:0:0:0:0:0]:2181)"
                "(secure=disabled):Follower@129] - Exception when following the leader",
     {"ts": "2026-03-10 02:02:01,662", "level": "WARN",
      "thread": "QuorumPeer[myid=1](plain=[0:0:0:0:0:0:0:0]:2181)(secure=disabled)", "logger": "Follower",
      "message": "Exception when following the leader"}, "uuuu-MM-dd[ ]['T']HH:mm:ss,SSS"),
    (CUSTOM, "2026-03-10T01:07:16.625 [main] ERROR kafka.server.KafkaServer:110 - Fatal error during startup",
     {"ts": "2026-03-10T01:07:16.625", "level": "ERROR", "thread": "main", "logger": "kafka.server.KafkaServer",
      "message": "Fatal error during startup"}, "uuuu-MM-dd'T'HH:mm:ss.SSS"),
]


@pytest.mark.parametrize("pattern, line, fields, time_format", CASES, ids=lambda v: v if v in
                         (KAFKA, STRIMZI_ZK, STRIMZI_4, ZOOKEEPER, CUSTOM) else "")
def test_a_published_pattern_reads_the_lines_it_writes(pattern, line, fields, time_format):
    compiled = compile_pattern(pattern)
    assert first_parsed(compiled, ["\tat x.y(Z.java:1)", line]) == fields
    assert compiled.time_format == time_format
    assert re.match(compiled.start.replace("(?<", "(?P<"), line)
    assert not re.match(compiled.start.replace("(?<", "(?P<"), "\tat kafka.log.Cleaner.clean(LogCleaner.scala:1)")


def test_the_regex_is_javas_and_the_python_twin_pythons():
    c = compile_pattern(CUSTOM)
    assert "(?<ts>" in c.regex and "(?P<" not in c.regex
    assert re.compile(c.python_regex).groupindex.keys() == {"ts", "thread", "level", "logger", "message"}


def test_named_and_custom_dates():
    assert compile_pattern("%d{DATE} %p %m%n").time_format == "dd MMM uuuu HH:mm:ss,SSS"
    assert compile_pattern("%d{DEFAULT} %p %m%n").time_format == "uuuu-MM-dd HH:mm:ss,SSS"
    assert compile_pattern("%d %p %m%n").time_format == "uuuu-MM-dd HH:mm:ss,SSS"
    c = compile_pattern("%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %5p %m%n")
    assert c.time_format == "uuuu-MM-dd'T'HH:mm:ss.SSSXXX"
    assert first_parsed(c, ["2026-03-10T01:07:16.625+05:30  WARN hello"])["ts"] == "2026-03-10T01:07:16.625+05:30"


def test_literals_are_escaped_and_percent_is_literal():
    c = compile_pattern("%d{ISO8601} (%p) *%c* 100%% - %m%n")
    assert first_parsed(c, ["2026-03-10 01:07:16,625 (INFO) *kafka.Foo* 100% - a.b (c)"]) == {
        "ts": "2026-03-10 01:07:16,625", "level": "INFO", "thread": None, "logger": "kafka.Foo", "message": "a.b (c)"}


@pytest.mark.parametrize("pattern, message", [
    ("%d %p %q %m%n", "unknown conversion %q"),
    ("%p %m (%c)%n", "needs %d (the time) and %m (the message)"),
    ("%d %p (%c)%n", "needs %d (the time) and %m (the message)"),
    ("%d{HH:mm:ss,SSS} %p %m%n", "writes no date"),
    ("%d{ABSOLUTE} %p %m%n", "writes no date"),
    ("%d{ISO8601}{UTC} %p %m%n", "writes times in a zone of its own"),
    ("%d{yyyy-MM-dd qq} %p %m%n", "unknown date letter 'q'"),
    ("%d %p %m%n %", "unknown conversion at '%'"),
])
def test_a_pattern_it_cannot_read_is_a_clear_error(pattern, message):
    with pytest.raises(PatternError, match=re.escape(message)):
        compile_pattern(pattern)


def _inventory(cluster_pattern=None, host_pattern=None) -> dict:
    broker = {"host": "k1", "role": "kafka", "broker_id": 1, "kafka_version": "3.9.1"}
    if host_pattern is not None:
        broker["log_pattern"] = host_pattern
    cluster = {"name": "c1", "root": "/archive", "hosts": [
        broker, {"host": "k2", "role": "kafka", "broker_id": 2, "kafka_version": "3.9.1"},
        {"host": "z1", "role": "zookeeper", "zk_myid": 1}]}
    if cluster_pattern is not None:
        cluster["log_pattern"] = cluster_pattern
    return {"clusters": [cluster]}


def test_a_hosts_pattern_overrides_its_clusters_and_zookeeper_keeps_its_own_layout():
    inv = parse_inventory(_inventory(STRIMZI_ZK, CUSTOM))
    assert {h.host: h.log_pattern for h in inv.hosts} == {"k1": CUSTOM, "k2": STRIMZI_ZK, "z1": None}
    assert {h.host: h.log_pattern for h in parse_inventory(_inventory()).hosts} == {"k1": None, "k2": None, "z1": None}


def test_a_bad_pattern_is_one_line_naming_the_key():
    with pytest.raises(InventoryError) as err:
        parse_inventory(_inventory(host_pattern="%d %p %q %m%n"), "inv.yaml")
    assert err.value.problems == [
        "inv.yaml: clusters[c1].hosts[k1].log_pattern: unknown conversion %q (known: %d %p %m %c %C %t %L %F %M %X "
        "%x %r %n %%) in '%d %p %q %m%n'"]
    with pytest.raises(InventoryError) as err:
        parse_inventory(_inventory(cluster_pattern="%p %m%n"), "inv.yaml")
    assert err.value.problems == [
        "inv.yaml: clusters[c1].log_pattern: a pattern needs %d (the time) and %m (the message): records cannot be "
        "read without both in '%p %m%n'"]
