"""Deployment forms of a cluster's Kafka logs in layouts its operators chose (simulate/forms.py):

- `json-ecs`: log4j 2's JsonTemplateLayout with its ECS template (EcsLayout.json of
  apache/logging-log4j2): one JSON object a line, `@timestamp` in UTC, a stack trace in
  `error.stack_trace`;
- `custom-pattern`: a PatternLayout no built-in layout reads (CUSTOM_PATTERN), with the cluster's
  inventory entry given it as `log_pattern:`.

Each rewrites the records of the Kafka-process hosts' `kafka/` files (written in Kafka's default
layout `[%d] %p %m (%c)%n`) one by one: same time, level, logger, message and following lines.
"""
from __future__ import annotations

import gzip
import json
import re
import zlib
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from .fleet import Cluster

CUSTOM_PATTERN = "%d{yyyy-MM-dd'T'HH:mm:ss.SSS} [%t] %-5p %c:%L - %m%n"
ECS_VERSION = "1.2.0"     # EcsLayout.json's

_START = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})\] ([A-Z]+) (.*)$")
_LOGGER = re.compile(r" \(([\w$.-]+)\)$")
_EXCEPTION = re.compile(r"^([\w$.]+(?:Exception|Error|Throwable)[\w$]*)(?:: (.*))?$")
# threads as Kafka names them, for the loggers that run on one (others: the request handlers')
_THREADS = {"kafka.log.LogCleaner": "kafka-log-cleaner-thread-0", "kafka.controller.KafkaController":
            "controller-event-thread", "state.change.logger": "controller-event-thread"}


def _records(lines: list[str]):
    """(None, line) for a line before the first record; else ((local time, millis, level), [lines])."""
    head, body = None, []
    for line in lines:
        m = _START.match(line)
        if m:
            if head is not None or body:
                yield head, body
            head, body = (m.group(1), m.group(2), m.group(3)), [m.group(4)]
        elif head is None:
            yield None, [line]
        else:
            body.append(line)
    if head is not None:
        yield head, body


def _split(body: list[str]) -> tuple[str | None, str, list[str]]:
    """(logger, message, following lines) of a record's body in Kafka's default layout: the logger ends
    the first line (the lines after: a stack trace), else the last (a message of several lines)."""
    m = _LOGGER.search(body[0])
    if m:
        return m.group(1), body[0][:m.start()], body[1:]
    m = _LOGGER.search(body[-1]) if len(body) > 1 else None
    if m:
        return m.group(1), "\n".join([*body[:-1], body[-1][:m.start()]]), []
    return None, "\n".join(body), []


def _rewrite(base: Path, cluster: Cluster, record) -> None:
    for host in cluster.hosts:
        if host.role == "zookeeper":
            continue
        folder = base / host.name / "kafka"
        for path in sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else ():
            gz = path.suffix == ".gz"
            data = gzip.decompress(path.read_bytes()) if gz else path.read_bytes()
            lines = data.decode("utf-8").splitlines()
            out = []
            for head, body in _records(lines):
                out.extend(body if head is None else record(cluster, head, *_split(body)))
            text = ("\n".join(out) + "\n" if out else "").encode("utf-8")
            path.write_bytes(gzip.compress(text, mtime=0) if gz else text)


def _ecs(cluster: Cluster, head, logger, message, rest) -> list[str]:
    local, millis, level = head
    at = datetime.strptime(local, "%Y-%m-%d %H:%M:%S").replace(tzinfo=ZoneInfo(cluster.timezone))
    doc = {"@timestamp": at.astimezone(ZoneInfo("UTC")).strftime("%Y-%m-%dT%H:%M:%S") + f".{millis}Z",
           "ecs.version": ECS_VERSION, "log.level": level, "message": message,
           "process.thread.name": _THREADS.get(logger, "data-plane-kafka-request-handler-0")}
    if logger:
        doc["log.logger"] = logger
    if rest:
        m = _EXCEPTION.match(rest[0])
        if m:
            doc["error.type"] = m.group(1)
            if m.group(2) is not None:
                doc["error.message"] = m.group(2)
        doc["error.stack_trace"] = "\n".join(rest)
    return [json.dumps(doc, ensure_ascii=False, separators=(",", ":"))]


def _custom(cluster: Cluster, head, logger, message, rest) -> list[str]:
    local, millis, level = head
    line = zlib.crc32((logger or "").encode()) % 900 + 50      # a stable %L per logger
    first, *more = message.split("\n")
    return [f"{local.replace(' ', 'T')}.{millis} [{_THREADS.get(logger, 'data-plane-kafka-request-handler-0')}] "
            f"{level:<5} {logger or '?'}:{line} - {first}", *more, *rest]


def json_ecs(base: Path, cluster: Cluster, entry: dict) -> None:
    """The cluster's Kafka logs in log4j 2's JsonTemplateLayout, ECS template."""
    _rewrite(base, cluster, _ecs)


def custom_pattern(base: Path, cluster: Cluster, entry: dict) -> None:
    """The cluster's Kafka logs in CUSTOM_PATTERN, its inventory entry given it as log_pattern."""
    _rewrite(base, cluster, _custom)
    entry["log_pattern"] = CUSTOM_PATTERN
