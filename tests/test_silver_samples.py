"""Silver parsing of real, public logs (tests/fixtures/samples/ORIGIN.md, shared/samples/SOURCES.md).

- loghub's ZooKeeper_2k (2000 lines, CRLF, no `[myid:N]`): every line is a record; timestamp, level
  and message must agree with loghub's own structured CSV. Read from shared/samples (loghub's
  license allows research use only, so it is not copied into the repository); skipped when absent.
- Kafka 0.10.2 server/controller/state-change logs and a Kafka 4.0.0 KRaft server log (Apache-2.0
  distributions, copied to tests/fixtures/samples): no line quarantined, as many WARN/ERROR records
  as raw lines starting one, and every line accounted for.

The files are landed (as `fleethealth.pull.hour` would) into one hour of a UTC cluster, so a silver
timestamp equals the wall-clock text of the log. Parsed once per module; asserts on Python values.
"""
from __future__ import annotations

import csv
import hashlib
import re
import shutil
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import pytest
from conftest import SHARED_SAMPLES

from fleethealth.lake.catalog import Lakehouse
from fleethealth.bronze import tables as bronze
from fleethealth.fleet.inventory import parse_inventory
from fleethealth.pull.landing import Landed
from fleethealth.silver import tables as silver

UTC = timezone.utc
HOUR = datetime(2026, 11, 20, 10, tzinfo=UTC)
KAFKA_SAMPLES = Path(__file__).parent / "fixtures" / "samples"
ZK_SAMPLES = SHARED_SAMPLES / "zookeeper-logs"
LOGHUB_LOG = ZK_SAMPLES / "loghub_Zookeeper_2k.log"
LOGHUB_CSV = ZK_SAMPLES / "loghub_Zookeeper_2k.log_structured.csv"

# host -> (role, files)
KAFKA_FILES = {
    "andrei-1": ["andreinedelciu_kafka-0.10.2_server.log", "andreinedelciu_kafka-0.10.2_controller.log",
                 "andreinedelciu_kafka-0.10.2_state-change.log"],
    "ammar-1": ["ammar_kafka-4.0.0-kraft_server.log.2025-05-14-22"],
}
# a 4.x broker runs in KRaft mode (a combined node here), in a cluster of its own
INVENTORY = {"clusters": [
    {"name": "samples", "timezone": "UTC", "root": "/nonexistent",
     "hosts": [{"host": "andrei-1", "role": "kafka", "broker_id": 1, "kafka_version": "0.10.2.0"},
               {"host": "loghub-zk", "role": "zookeeper", "zk_myid": 1}]},
    {"name": "samples-kraft", "timezone": "UTC", "root": "/nonexistent",
     "hosts": [{"host": "ammar-1", "role": "kafka", "broker_id": 2, "kafka_version": "4.0.0", "controller": True}]}]}

WARN_OR_ERROR_START = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] (WARN|ERROR) ")
ZK_MIN_AGREEMENT = 0.995


def raw_lines(path: Path) -> list[str]:
    """The lines of a file as bronze counts them (\\n-separated, a final newline ends the last line)."""
    text = path.read_bytes().decode("utf-8")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def land(src: Path, landing: Path, host: str, source: str) -> Landed:
    cluster = next(c["name"] for c in INVENTORY["clusters"] if any(h["host"] == host for h in c["hosts"]))
    rel = f"{cluster}/{host}/{source}/{src.name}"
    target = landing / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, target)
    data = target.read_bytes()
    return Landed(cluster, host, source, rel, len(data), hashlib.sha256(data).hexdigest(),
                  src.stat().st_mtime, time.time())


@pytest.fixture(scope="module")
def parsed(spark, tmp_path_factory):
    base = tmp_path_factory.mktemp("samples")
    inv = parse_inventory(INVENTORY, "samples-inventory")
    landing = Lakehouse.at(base / "lakehouse").landing(HOUR)
    landed = [land(KAFKA_SAMPLES / name, landing, host, "kafka")
              for host, names in KAFKA_FILES.items() for name in names]
    if LOGHUB_LOG.exists():
        landed.append(land(LOGHUB_LOG, landing, "loghub-zk", "zookeeper"))
    b = bronze.records(spark, landed, landing, HOUR).cache()
    tables = silver.build(spark, b, inv)
    kafka_cols = ["file", "line_number", "line_count", "level", "logger", "ts"]
    out = {
        "kafka": [r.asDict() for r in tables["silver.kafka_events"].select(*kafka_cols).collect()],
        "zk": [r.asDict() for r in tables["silver.zk_events"]
               .select("file", "line_number", "line_count", "ts", "level", "message").collect()],
        "quarantine": [r.asDict() for r in tables["silver.quarantine"].collect()],
        "reconciliation": [r.asDict() for r in
                           silver.reconciliation(b, tables, tables["silver.quarantine"]).collect()],
    }
    b.unpersist()
    return out


def _by_file(rows, name):
    return [r for r in rows if r["file"].endswith("/" + name)]


def wall_clock(ts: datetime) -> datetime:
    """A collected timestamp (naive, Python-local) as UTC wall-clock, naive."""
    return datetime.fromtimestamp(ts.timestamp(), UTC).replace(tzinfo=None)


# --- loghub ZooKeeper ---------------------------------------------------------------------------

@pytest.mark.skipif(not LOGHUB_LOG.exists(), reason=f"{ZK_SAMPLES} not available")
def test_loghub_zookeeper_agrees_with_loghub_structured_csv(parsed):
    lines = raw_lines(LOGHUB_LOG)
    assert len(lines) == 2000
    events = {r["line_number"]: r for r in parsed["zk"]}
    assert len(parsed["zk"]) == 2000 and sorted(events) == list(range(1, 2001))
    assert {r["line_count"] for r in parsed["zk"]} == {1}
    assert not [q for q in parsed["quarantine"] if q["source"] == "zookeeper"]

    with LOGHUB_CSV.open(newline="", encoding="utf-8") as fh:
        expected = list(csv.DictReader(fh))
    assert [int(row["LineId"]) for row in expected] == list(range(1, 2001))
    # loghub's Content has trailing whitespace stripped ("... error = " in the log is "... error ="
    # in the CSV); silver keeps the message as logged. So: exact agreement, reported, and agreement
    # up to trailing whitespace, asserted.
    exact, disagree = 0, []
    for row in expected:
        n = int(row["LineId"])
        want = (datetime.strptime(f"{row['Date']} {row['Time']}", "%Y-%m-%d %H:%M:%S,%f"),
                row["Level"], row["Content"])
        e = events[n]
        got = (wall_clock(e["ts"]), e["level"], e["message"])
        if got == want:
            exact += 1
        elif got[:2] != want[:2] or got[2].rstrip() != want[2].rstrip():
            disagree.append(f"line {n}: silver {got!r} != loghub {want!r}")
    total = len(expected)
    agreement = (total - len(disagree)) / total
    summary = (f"loghub ZooKeeper_2k: {total - len(disagree)}/{total} lines agree on ts, level and message "
               f"({agreement:.2%}); {exact}/{total} ({exact / total:.2%}) also on trailing whitespace")
    print(summary)
    assert agreement >= ZK_MIN_AGREEMENT, summary + ":\n" + "\n".join(disagree)
    assert disagree == [], summary + ":\n" + "\n".join(disagree)      # none today: keep it so


# --- Kafka broker logs ----------------------------------------------------------------------------

ALL_KAFKA = [(host, name) for host, names in KAFKA_FILES.items() for name in names]


@pytest.mark.parametrize("host,name", ALL_KAFKA, ids=[n for _, n in ALL_KAFKA])
def test_kafka_sample_parses_without_quarantine(parsed, host, name):
    lines = raw_lines(KAFKA_SAMPLES / name)
    events = _by_file(parsed["kafka"], name)
    quarantined = _by_file(parsed["quarantine"], name)
    assert quarantined == [], f"{len(quarantined)} quarantined lines, first: {quarantined[:3]}"

    # every line accounted for: silver line counts add up to the file's lines
    assert sum(r["line_count"] for r in events) == len(lines)
    starts = [i + 1 for i, line in enumerate(lines) if re.match(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] ", line)]
    assert sorted(r["line_number"] for r in events) == starts

    # WARN / ERROR records = raw lines that start a record with that level
    raw = Counter(m.group(1) for m in map(WARN_OR_ERROR_START.match, lines) if m)
    got = Counter(r["level"] for r in events if r["level"] in ("WARN", "ERROR"))
    print(f"{name}: {len(lines)} lines, {len(events)} records, WARN {got['WARN']}, ERROR {got['ERROR']}")
    assert got == raw

    # every record has a level, a logger and a timestamp equal to its text
    assert all(r["level"] and r["logger"] and r["ts"] for r in events), \
        [r for r in events if not (r["level"] and r["logger"] and r["ts"])][:3]
    for r in events:
        text = lines[r["line_number"] - 1][1:24]
        assert wall_clock(r["ts"]) == datetime.strptime(text, "%Y-%m-%d %H:%M:%S,%f"), (name, r)


def test_kafka_sample_known_values(parsed):
    """A few records checked by hand against the raw files."""
    def rec(name, line):
        [r] = [r for r in _by_file(parsed["kafka"], name) if r["line_number"] == line]
        return r["level"], r["logger"], r["line_count"]

    server = "andreinedelciu_kafka-0.10.2_server.log"
    assert rec(server, 1) == ("INFO", "kafka.server.KafkaConfig", 143)      # logger alone on line 143
    controller = "andreinedelciu_kafka-0.10.2_controller.log"               # `$` in the logger, 24-line trace
    assert rec(controller, 288) == ("ERROR", "kafka.controller.ReplicaStateMachine$BrokerChangeListener", 25)
    kraft = "ammar_kafka-4.0.0-kraft_server.log.2025-05-14-22"               # 1.6 KB first line + exception
    assert rec(kraft, 85) == ("ERROR", "kafka.server.ControllerApis", 2)


def test_samples_reconcile(parsed):
    rows = {(r["host"], r["source"]): r for r in parsed["reconciliation"]}
    expected_hosts = {("andrei-1", "kafka"), ("ammar-1", "kafka")}
    if LOGHUB_LOG.exists():
        expected_hosts.add(("loghub-zk", "zookeeper"))
    assert set(rows) == expected_hosts
    for key, r in rows.items():
        assert r["unaccounted"] == 0, r
        assert r["bronze_records"] == r["silver_records"] + r["quarantined_records"], r
        files = KAFKA_FILES.get(key[0])
        raw = (sum(len(raw_lines(KAFKA_SAMPLES / f)) for f in files) if files else len(raw_lines(LOGHUB_LOG)))
        assert r["bronze_records"] == raw, (key, r, raw)
