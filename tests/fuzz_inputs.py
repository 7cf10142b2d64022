"""Adversarial inputs for the parsers (issue 59): Hypothesis strategies of Kafka log lines, Jolokia
answers and Prometheus scrapes, and a seeded batch of the same for one host of a whole hour.

Log lines start from real published ones (the Kafka logs of tests/fixtures/golden/kafka, see its
ORIGIN.md) with every number replaced by a drawn one: too large for its type, signed, in
scientific notation, Unicode digits. Values and times of JMX samples are drawn from what hostile or
broken agents send: infinities, NaN, values beyond a long, a time past year 9999, an ObjectName that
repeats a key, JSON of the wrong shape.
"""
from __future__ import annotations

import json
import random
import re
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path

from hypothesis import strategies as st

HOUR = datetime(2026, 11, 20, 10, tzinfo=timezone.utc)
GOLDEN = Path(__file__).parent / "fixtures" / "golden" / "kafka"
HEADER = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] [A-Z]+ ")

NUMBERS = ["0", "-1", "7", "2147483647", "2147483648", "-2147483649", "99999999999", "9223372036854775807",
           "9223372036854775808", "99999999999999999999999", "1e10", "1e999", "-0", "00000000000000000001",
           "\u0661\u0662\u0663", "\uff11\uff12", "", " 12 ", "0x1F", "NaN", "Infinity"]
TEXTS = ["", " ", "\u202eevil\u202c", "\x00\x01\x7f", "caf\u00e9", "\ud7ff", "\u2028", "\t", "{", "[", "]", ")",
         "(", "\\", "'", '"', "\n\tat x.y(Z.java:1)", "=" * 3, ",", "java.io.IOException: x"]
STAMPS = ["2026-11-20 10:{m:02d}:{s:02d},123", "2026-11-20 10:{m:02d}:{s:02d},999", "2026-13-45 99:99:99,999",
          "99999-11-20 10:00:00,000", "1969-12-31 23:59:59,999", "2026-11-20 09:55:00,000", "2026-11-20 11:09:59,999"]
LEVELS = ["INFO", "WARN", "ERROR", "DEBUG", "TRACE", "FATAL", "info", "NOTICE", ""]


@lru_cache(maxsize=None)
def real_lines() -> tuple[str, ...]:
    """Record lines of the real and generated Kafka logs of the golden corpus (bodies with loggers)."""
    out = []
    for path in sorted(GOLDEN.glob("*.log")):
        out += [line for line in path.read_text(errors="replace").splitlines() if HEADER.match(line)]
    return tuple(dict.fromkeys(out))


def _renumber(line: str, numbers: list[str]) -> str:
    body = HEADER.sub("", line)
    it = iter(numbers)
    return re.sub(r"\d+", lambda m: next(it, m.group(0)), body)


@st.composite
def log_lines(draw) -> list[str]:
    """A Kafka log file's lines: real records with drawn numbers, broken headers and odd text."""
    lines = []
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["real", "real", "real", "header", "continuation", "text"]))
        stamp = draw(st.sampled_from(STAMPS)).format(m=draw(st.integers(0, 59)), s=draw(st.integers(0, 59)))
        if kind == "real":
            body = _renumber(draw(st.sampled_from(real_lines())),
                             draw(st.lists(st.sampled_from(NUMBERS), max_size=8)))
            lines.append(f"[{stamp}] {draw(st.sampled_from(LEVELS))} {body}")
        elif kind == "header":
            lines.append(f"[{stamp}] {draw(st.sampled_from(LEVELS))} {draw(st.sampled_from(TEXTS))} "
                         f"({draw(st.sampled_from(['kafka.server.KafkaServer', '', ')(', 'x' * 300]))})")
        elif kind == "continuation":
            lines.append(draw(st.sampled_from(TEXTS)))
        else:
            lines.append(draw(st.text(max_size=60)).replace("\n", " ").replace("\r", " "))
    return lines


MBEANS = ["kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions", "java.lang:type=OperatingSystem",
          "kafka.server:type=raft-metrics", "kafka.log:type=LogCleaner,name=DeadThreadCount",
          "kafka.controller:type=KafkaController,name=ActiveControllerCount",
          "kafka.log:type=Log,name=Size,topic=__consumer_offsets,partition=3", "kafka.server:type=a,type=b",
          "no-colon", "", ":", "a:b", "a:=", "a:type=", "kafka.log:type=Log,name=Size,topic=__consumer_offsets,*"]
ATTRIBUTES = ["Value", "OpenFileDescriptorCount", "current-epoch", "current-leader", "current-state", None, "",
              "[Value]", "HeapMemoryUsage"]
VALUES = [0, 1, -1, 1e10, 2**31, 2**63, 2**64, -2**63 - 1, 1.5, "1e999", "-1e999", "Infinity", "-Infinity", "NaN",
          "nan", "", "leader", None, True, [], [1, 2], {}, {"used": 5, "max": "1e999"}, {"a": {"b": "c"}},
          {"kafka.server:type=a,type=b": {"Value": 1}}, {"kafka.log:type=Log,name=Size,topic=t,partition=1": {"Value": 9}}]


def _times() -> list[int]:
    start = int(HOUR.timestamp())
    return [start + 1800, start - 601, start - 599, start + 7199, start + 7201, 0, -1, 253402300800,
            99999999999999999, -99999999999999999, 2**63 - 1]


@st.composite
def jolokia_docs(draw) -> list[str]:
    """A Jolokia export's lines: bulk reads of drawn answers, single answers, and non-answers."""
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        answers = [{"request": {"mbean": draw(st.sampled_from(MBEANS)), "attribute": draw(st.sampled_from(ATTRIBUTES)),
                                "type": "read"},
                    "value": draw(st.sampled_from(VALUES)), "timestamp": draw(st.sampled_from(_times())),
                    "status": draw(st.sampled_from([200, 200, 200, 404, None, "200", 500]))}
                   for _ in range(draw(st.integers(0, 5)))]
        shape = draw(st.sampled_from(["bulk", "bulk", "one", "garbage", "deep"]))
        if shape == "bulk":
            lines.append(json.dumps(answers))
        elif shape == "one":
            lines.append(json.dumps(answers[0] if answers else {}))
        elif shape == "deep":
            lines.append("[" * 200 + "]" * 200)
        else:
            lines.append(draw(st.sampled_from(TEXTS + ["{", "[{]", "null", "1", '"x"', "[1,2]"])))
    return lines


SERIES = ["kafka_server_replicamanager_value", "java_lang_operatingsystem_openfiledescriptorcount",
          "kafka_server_raft_metrics_current_epoch", "kafka_log_logcleaner_value", "process_open_fds",
          "jmx_scrape_error", "unknown_series", "bad name", ""]
LABELS = ['', '{name="UnderReplicatedPartitions",}', '{name="DeadThreadCount"}', '{a="1",a="2"}',
          '{name="x\\"y\\\\z\\n"}', '{name=}', '{=""}', '{name="a",type="b",}', '{topic="__consumer_offsets",partition="3",name="Size"}']
PROM_VALUES = ["0", "1", "+Inf", "-Inf", "NaN", "1e999", "1e10", "9223372036854775808", "-1", "x", "", "0x10"]


@st.composite
def prometheus_scrape(draw) -> str:
    """A jmx_exporter scrape: drawn series, labels, values and sample times, and comment lines."""
    start_ms = int(HOUR.timestamp()) * 1000
    lines = []
    for _ in range(draw(st.integers(0, 10))):
        if draw(st.booleans()) and draw(st.booleans()):
            lines.append(draw(st.sampled_from(["# HELP x y", "# TYPE x gauge", "#", "  ", "\r"])))
            continue
        ts = draw(st.sampled_from(["", f" {start_ms + 60000}", " -1", " 99999999999999999", " 9223372036854775807",
                                   f" {start_ms + 7_500_000}", " x"]))
        lines.append(f"{draw(st.sampled_from(SERIES))}{draw(st.sampled_from(LABELS))} "
                     f"{draw(st.sampled_from(PROM_VALUES))}{ts}")
    return "\n".join(lines) + "\n"


def batch(seed: int, n: int = 40) -> dict[str, str]:
    """A seeded batch for one host of a whole hour: {file name under the host: content}, drawn from
    the strategies above (one hour of a small fleet runs it: tests/test_hostile_values.py)."""
    rnd = random.Random(seed)
    lines = []
    # (a line of another hour in an hour's file fails the silver gate by design: tests/test_jobs.py)
    stamps = [x for x in STAMPS if not x.startswith("1969")]
    for i in range(n):
        stamp = rnd.choice(stamps).format(m=rnd.randrange(60), s=rnd.randrange(60))
        body = _renumber(rnd.choice(real_lines()), [rnd.choice(NUMBERS) for _ in range(8)])
        lines.append(f"[{stamp}] {rnd.choice(LEVELS)} {body}")
        if i % 5 == 0:
            lines.append(rnd.choice(TEXTS).replace("\n", " "))
    docs = []
    for _ in range(n // 4):
        docs.append(json.dumps([{"request": {"mbean": rnd.choice(MBEANS), "attribute": rnd.choice(ATTRIBUTES),
                                             "type": "read"},
                                 "value": rnd.choice(VALUES), "timestamp": rnd.choice(_times()),
                                 "status": rnd.choice([200, 200, 404])} for _ in range(rnd.randrange(1, 5))]))
    return {"kafka/server.log.2026-11-20-10": "\n".join(lines) + "\n",
            "jmx/jolokia.json.2026-11-20-10": "\n".join(docs) + "\n"}

