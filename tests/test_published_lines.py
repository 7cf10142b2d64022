"""Real published log lines (tests/fixtures/published_lines/lines.jsonl, sources in ORIGIN.md there),
unedited, through silver's real parse: each record's header line starts a record of its own, and each
record gets its expected event type and fields.

A corpus entry: `published` (the lines as the source shows them), `wrapper` (text the publication put
before each line, e.g. docker compose's `kafka-1  | `; the log line is what follows it), `log` (the fleet
source whose parser reads it), `layout` (how the line is written), `expect` (`event_type` and fields).
READABLE_LAYOUTS names the layouts silver reads; every entry is in one of them.
"""
from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from fleethealth.bronze import tables as bronze
from fleethealth.fleet import sources as fleet
from fleethealth.fleet.inventory import parse_inventory
from fleethealth.lake.catalog import Lakehouse
from fleethealth.pull.landing import Landed
from fleethealth.silver import tables as silver

CORPUS = Path(__file__).parent / "fixtures" / "published_lines" / "lines.jsonl"
ENTRIES = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
# kafka: Kafka's default `[%d] %p %m (%c)%n`; zookeeper: ZooKeeper's `%d{ISO8601} [myid:%X{myid}] - %-5p
# [%t:%C{1}@%L] - %m%n` (3.4 - 3.9, `[myid:]` empty or not), strimzi (`%d{ISO8601} %p %m (%c) [%t]%n`),
# kafka-zk (ZooKeeper's own lines in Kafka's layout)
READABLE_LAYOUTS = {"kafka", "zookeeper", "strimzi", "kafka-zk"}
HOUR = datetime(2026, 11, 20, 10, tzinfo=timezone.utc)
LOG_NAME = {"kafka": "server.log", "zookeeper": "zookeeper.log"}


def lines_of(entry: dict) -> list[str]:
    wrapper = entry.get("wrapper", "")
    assert all(p.startswith(wrapper) for p in entry["published"]), entry["source"]
    return [p[len(wrapper):] for p in entry["published"]]


def _id(i: int, entry: dict) -> str:
    return f"{i:02d}-{entry['layout']}-{entry['expect'].get('event_type', 'record')}"


CASES = [(i, e) for i, e in enumerate(ENTRIES)]


def test_the_corpus_is_large_and_varied_enough():
    sources = {e["source"].split("#")[0] for e in ENTRIES}
    assert sum(len(e["published"]) for e in ENTRIES) >= 40 and len(sources) >= 15
    assert {e["log"] for e in ENTRIES} == set(LOG_NAME) and all(e["expect"].get("event_type") for e in ENTRIES)


@pytest.fixture(scope="module")
def parsed(spark, tmp_path_factory):
    """{entry index: (silver rows, quarantine rows)} of every readable entry, each a host of its own, from
    one bronze and silver build."""
    landing = Lakehouse.at(tmp_path_factory.mktemp("published") / "lakehouse").landing(HOUR)
    hosts, landed, index_of = [], [], {}
    for i, entry in CASES:
        if entry["layout"] not in READABLE_LAYOUTS:
            continue
        host = f"line-{i}"
        role = fleet.SOURCES[entry["log"]].role
        hosts.append({"host": host, "role": "zookeeper", "zk_myid": i + 1} if role == "zookeeper" else
                     {"host": host, "role": "kafka", "broker_id": i + 1, "kafka_version": "3.6.1"})
        rel = f"published/{host}/{entry['log']}/{LOG_NAME[entry['log']]}"
        data = ("\n".join(lines_of(entry)) + "\n").encode()
        (landing / rel).parent.mkdir(parents=True)
        (landing / rel).write_bytes(data)
        landed.append(Landed("published", host, entry["log"], rel, len(data), hashlib.sha256(data).hexdigest(),
                             HOUR.timestamp(), 0.0))
        index_of[host] = i
    inventory = parse_inventory({"clusters": [{"name": "published", "timezone": "UTC", "root": "/nonexistent",
                                               "hosts": hosts}]}, "published")
    tables = silver.build(spark, bronze.records(spark, landed, landing, HOUR), inventory)
    out = {i: ([], []) for i in index_of.values()}
    for name in ("silver.kafka_events", "silver.zk_events", "silver.quarantine"):
        for r in tables[name].where("cluster = 'published'").collect():
            out[index_of[r["host"]]][name == "silver.quarantine"].append(r.asDict())
    return out


@pytest.mark.parametrize("i,entry", CASES, ids=[_id(i, e) for i, e in CASES])
def test_each_published_record_parses_to_its_event(parsed, i, entry):
    assert entry["layout"] in READABLE_LAYOUTS, f"a layout silver does not read: {entry['layout']}"
    rows, quarantined = parsed[i]
    lines = lines_of(entry)
    assert quarantined == [], quarantined
    assert [(r["line_number"], r["line_count"]) for r in rows] == [(1, len(lines))], entry["source"]
    [row] = rows
    assert row["message"].split("\n", 1)[0][:40] in lines[0]   # the header's own message
    expect = dict(entry["expect"])
    assert {k: row[k] for k in expect} == expect, entry["source"]
