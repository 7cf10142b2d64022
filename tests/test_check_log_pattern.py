"""`fleethealth check` reads each host's newest log as silver would (issue 61 items 1 and 3): with a
`log_pattern:`, the first line of its newest
Kafka log the pattern reads is printed with its fields; a pattern that reads none of it is a problem.
Local transport, files written by the simulator's custom-pattern form. No Spark."""
from __future__ import annotations

import pytest
from test_check import check

from fleethealth.simulate import patterns

SERVER_LOG = (
    "[2026-11-20 10:00:00,000] INFO starting (kafka.server.KafkaServer)\n"
    "[2026-11-20 10:00:01,250] ERROR [KafkaServer id=1] Fatal error during KafkaServer startup. Prepare to shutdown "
    "(kafka.server.KafkaServer)\njava.io.IOException: No space left on device\n\tat kafka.log.Log.<init>(Log.scala:1)\n")
SUMMARY = "check: 1 cluster(s), 1 host(s), 0 channel(s) not tested (--notify sends each a test message): "


@pytest.fixture
def host(tmp_path, monkeypatch):
    monkeypatch.setenv("FLEETHEALTH_LAKEHOUSE", str(tmp_path / "lake"))
    kafka = tmp_path / "fleet" / "c" / "k1" / "kafka"
    kafka.mkdir(parents=True)
    (tmp_path / "fleet" / "c" / "k1" / "jmx").mkdir()
    (tmp_path / "fleet" / "c" / "k1" / "jmx" / "jolokia.jsonl").write_text("{}\n")
    (kafka / "controller.log").write_text("")
    lines = [line for head, body in patterns._records(SERVER_LOG.splitlines())
             for line in patterns._custom(None, head, *patterns._split(body))]
    (kafka / "server.log").write_text("\n".join(["Picked up JAVA_TOOL_OPTIONS: -Xmx1g", *lines]) + "\n")

    def inventory(pattern: str) -> str:
        path = tmp_path / "inventory.yaml"
        path.write_text(f"clusters:\n  - name: c\n    timezone: UTC\n    root: {tmp_path / 'fleet'}\n    log_pattern: \"{pattern}\"\n"
                        "    hosts:\n      - {host: k1, role: kafka, broker_id: 1, kafka_version: 3.9.1}\n")
        return str(path)
    return inventory


def test_check_prints_the_first_line_the_pattern_reads(host, capsys):
    assert check(capsys, "--inventory", host(patterns.CUSTOM_PATTERN)) == (0, [
        "k1: log_pattern reads server.log: time 2026-11-20T10:00:00.000, level INFO, logger kafka.server.KafkaServer, "
        "message 'starting'",
        SUMMARY + "an hour would run"])


def test_a_pattern_that_reads_no_line_is_a_problem(host, capsys):
    assert check(capsys, "--inventory", host("%d{ISO8601} %p %m (%c) [%t]%n")) == (2, [
        "k1: log_pattern reads no line of server.log (its first: 'Picked up JAVA_TOOL_OPTIONS: -Xmx1g'): set "
        "log_pattern to the broker's log4j ConversionPattern, or remove it for the built-in layouts",
        SUMMARY + "1 problem(s): an hour would not run as set up"])


def test_a_file_in_no_known_layout_is_a_problem_and_a_known_one_is_not(host, tmp_path, capsys):
    # log4j 1's TTCCLayout (`%r [%t] %-5p %c %x - %m%n`: milliseconds since start, no date), which no
    # built-in layout reads; then the same records in Strimzi's layout, which one does
    kafka = tmp_path / "fleet" / "c" / "k1" / "kafka"
    (kafka / "server.log").write_text("0 [main] INFO kafka.server.KafkaServer  - starting\n"
                                      "1250 [main] ERROR kafka.server.KafkaServer  - Fatal error during KafkaServer "
                                      "startup. Prepare to shutdown\n")
    path = tmp_path / "plain.yaml"
    path.write_text(f"clusters:\n  - name: c\n    timezone: UTC\n    root: {tmp_path / 'fleet'}\n"
                    "    hosts:\n      - {host: k1, role: kafka, broker_id: 1, kafka_version: 3.9.1}\n")
    assert check(capsys, "--inventory", str(path)) == (2, [
        "k1: kafka/server.log is in no log layout fleethealth reads (its first line: '0 [main] INFO "
        "kafka.server.KafkaServer  - starting'): every line of it would be quarantined; give the broker's log4j "
        "ConversionPattern as log_pattern: on the host or its cluster",
        SUMMARY + "1 problem(s): an hour would not run as set up"])
    (kafka / "server.log").write_text("2026-11-20 10:00:00,000 INFO starting (kafka.server.KafkaServer) [main]\n")
    assert check(capsys, "--inventory", str(path)) == (0, [SUMMARY + "an hour would run"])
