"""No single input can fail an hour (issue 12): broken, odd and vanishing files become quarantine rows
with a reason, visible per host-hour, while every other file of the fleet lands as usual.

One pull + gated bronze/silver/gold hour (`pipeline.run_hour`, real Spark and Delta) over a tiny fleet
holding: a truncated .gz, a .gz that is no gzip at all, file names with `[`, `{`, `*`, `+`, a space
and `:`, invalid UTF-8 and binary garbage, an empty file, a 3 MB line, a Jolokia bulk read with a
404 answer, and three files that change between listing and reading (one vanishes, one is swapped
for a symlink, one shrinks).
"""
from __future__ import annotations

import gzip
import json
import os
import zlib
from datetime import datetime, timezone
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from fleethealth.lake.catalog import Lakehouse
from fleethealth.pipeline import window as pipeline
from fleethealth.fleet.inventory import load_inventory
from fleethealth.lake import tables as lake
from fleethealth.pull import hour as pull
from fleethealth.pull.transports.local import LocalTransport

pytestmark = pytest.mark.spark

HOUR = datetime(2026, 11, 20, 10, tzinfo=timezone.utc)
STAMP = HOUR.strftime("%Y-%m-%d-%H")
INSIDE = datetime(2026, 11, 20, 10, 30, tzinfo=timezone.utc).timestamp()

INVENTORY = """\
clusters:
  - name: odd
    timezone: UTC
    root: fleet
    hosts:
      - {host: k1, role: kafka, broker_id: 1, kafka_version: 2.8.2}
      - {host: k2, role: kafka, broker_id: 2, kafka_version: 2.8.2}
"""


def line(minute: int, text: str, logger: str = "kafka.server.KafkaServer") -> str:
    return f"[2026-11-20 10:{minute:02d}:00,000] INFO {text} ({logger})\n"


GOOD = line(1, "[KafkaServer id=1] started") + line(2, "ok") + \
    "[2026-11-20 10:03:00,000] ERROR boom (kafka.server.ReplicaManager)\njava.io.IOException: x\n\tat a.b(C.java:1)\n"
# names that Spark's reader globs, cannot parse as a URI or URL-decodes
NOT_GZIP = ("damaged gzip (not readable as gzip: Error -3 while decompressing data: incorrect header check): "
            "nothing decompressed")
ODD_NAMES = [f"server[1].log.{STAMP}", f"server{{a,b}}.log.{STAMP}", f"server*.log.{STAMP}",
             f"server+x.log.{STAMP}", f"server copy.log.{STAMP}"]
CONTROLLER = "".join(line(m % 60, f"[Controller id=1] tick {m} " + "x" * 60, "kafka.controller.KafkaController")
                     for m in range(2000))
JOLOKIA_404 = json.dumps([
    {"request": {"mbean": "kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions", "attribute": "Value",
                 "type": "read"}, "value": 0, "timestamp": int(INSIDE), "status": 200},
    {"request": {"mbean": "kafka.log:type=LogCleaner,name=DeadThreadCount", "attribute": "Value", "type": "read"},
     "error_type": "javax.management.InstanceNotFoundException", "error": "not found", "status": 404}])
JSTACK = """2026-11-20 10:30:00
Full thread dump OpenJDK 64-Bit Server VM (17.0.9+9 mixed mode):

"kafka-log-cleaner-thread-0" #50 prio=5 os_prio=0 cpu=1.00ms elapsed=10.00s tid=0x1 nid=0x2 waiting on condition  [0x3]
   java.lang.Thread.State: TIMED_WAITING (sleeping)
\tat java.lang.Thread.sleep(java.base@17.0.9/Native Method)

"""


def put(path: Path, content: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    os.utime(path, (INSIDE, INSIDE))
    return path


def recoverable_lines(data: bytes) -> int:
    """Complete lines a streaming decompressor gets out of (possibly truncated) gzip bytes."""
    out = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data)
    return out.count(b"\n")


@pytest.fixture(scope="module")
def broken(spark, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("broken")
    (tmp / "inventory.yaml").write_text(INVENTORY)
    k1, k2 = tmp / "fleet" / "odd" / "k1", tmp / "fleet" / "odd" / "k2"
    put(k1 / "kafka" / f"server.log.{STAMP}", GOOD.encode())
    for i, name in enumerate(ODD_NAMES):
        put(k1 / "kafka" / name, line(10 + i, f"odd name {i}").encode())
    whole = gzip.compress(CONTROLLER.encode())
    truncated = whole[: len(whole) * 6 // 10]
    put(k1 / "kafka" / f"controller.log.{STAMP}.gz", truncated)
    put(k1 / "kafka" / f"state-change.log.{STAMP}",
        line(20, "caf\xe9").encode("latin-1") + b"\x00\xff\xfe\x01garbage\x9c\n" + line(21, "after garbage").encode())
    put(k1 / "kafka" / f"log-cleaner.log.{STAMP}", b"")
    put(k1 / "kafka" / f"big.log.{STAMP}", line(30, "big " + "y" * 3_000_000).encode())
    put(k1 / "kafka" / f"vanishing.log.{STAMP}", line(40, "gone before it was read").encode())
    put(k1 / "kafka" / f"swapped.log.{STAMP}", line(41, "replaced by a symlink").encode())
    put(k1 / "kafka" / f"shrinking.log.{STAMP}", (line(42, "kept") + line(43, "cut away")).encode())
    put(k1 / "jmx" / f"jolokia.json.{STAMP}", JOLOKIA_404.encode())
    put(k1 / "threaddumps" / "jstack-2026-11-20T10:30:00.txt", JSTACK.encode())
    put(k2 / "kafka" / f"server.log.{STAMP}.gz", b"this is not gzip at all\n")
    put(k2 / "jmx" / f"jolokia.json.{STAMP}", JOLOKIA_404.encode())
    secret = put(tmp / "secret.txt", b"never pulled\n")

    listed = LocalTransport.list_files

    def list_then_change(self, folder):     # the host changes files between listing and reading
        files = listed(self, folder)
        if folder.endswith("k1/kafka"):
            (k1 / "kafka" / f"vanishing.log.{STAMP}").unlink()
            (k1 / "kafka" / f"swapped.log.{STAMP}").unlink()
            (k1 / "kafka" / f"swapped.log.{STAMP}").symlink_to(secret)
            (k1 / "kafka" / f"shrinking.log.{STAMP}").write_bytes(line(42, "kept").encode())
        return files

    mp = pytest.MonkeyPatch()
    mp.setattr(LocalTransport, "list_files", list_then_change)
    lakehouse = Lakehouse.at(tmp / "lakehouse")
    inventory = load_inventory(tmp / "inventory.yaml")
    try:
        landed = pull.pull_hour(inventory, HOUR, Lakehouse.at(lakehouse))
    finally:
        mp.undo()
    out = pipeline.run_hour(spark, HOUR, str(tmp / "inventory.yaml"), Lakehouse.at(lakehouse))
    read = lambda name: lake.read(spark, name, Lakehouse.at(lakehouse), HOUR)  # noqa: E731
    return {"landed": landed, "out": out, "read": read, "lakehouse": lakehouse,
            "controller_lines": recoverable_lines(truncated)}


def test_every_listed_file_is_in_the_ledger_with_its_fate(broken):
    files = {r.file.split("/", 2)[2]: r for r in broken["read"]("bronze.files").collect()}
    rejected = {f: r.reason for f, r in files.items() if r.status == "rejected"}
    assert set(rejected) == {f"kafka/vanishing.log.{STAMP}", f"kafka/swapped.log.{STAMP}",
                             f"kafka/server.log.{STAMP}.gz"}
    assert "No such file" in rejected[f"kafka/vanishing.log.{STAMP}"]
    assert "Too many levels of symbolic links" in rejected[f"kafka/swapped.log.{STAMP}"]
    assert rejected[f"kafka/server.log.{STAMP}.gz"] == NOT_GZIP
    damaged = files[f"kafka/controller.log.{STAMP}.gz"]
    assert damaged.status == "read" and damaged.records == broken["controller_lines"] > 0
    assert damaged.reason.startswith(f"damaged gzip (truncated: it ends before the gzip end-of-stream marker): "
                                     f"kept the {broken['controller_lines']} complete lines that decompressed")
    shrunk = files[f"kafka/shrinking.log.{STAMP}"]
    assert shrunk.status == "read" and shrunk.records == 1 and "shrank from" in shrunk.reason
    assert files[f"kafka/log-cleaner.log.{STAMP}"].records == 0
    assert files[f"kafka/log-cleaner.log.{STAMP}"].status == "read"
    for r in files.values():   # what was read gave exactly the bronze records it says
        assert (r.records == 0) == (r.status == "rejected" or r.size == 0), r


def test_odd_file_names_keep_their_lineage(broken):
    events = broken["read"]("silver.kafka_events")
    got = {r.file: (r.cluster, r.host, r.source, r.message)
           for r in events.where(F.col("message").startswith("odd name")).collect()}
    assert got == {f"odd/k1/kafka/{name}": ("odd", "k1", "kafka", f"odd name {i}")
                   for i, name in enumerate(ODD_NAMES)}
    threads = broken["read"]("silver.threads").select("file", "host").distinct().collect()
    assert [(r.file, r.host) for r in threads] == [("odd/k1/threaddumps/jstack-2026-11-20T10:30:00.txt", "k1")]


def test_damaged_and_odd_content_is_kept_or_quarantined(broken):
    events = broken["read"]("silver.kafka_events")
    controller = events.where(F.col("file").endswith(f"controller.log.{STAMP}.gz"))
    assert controller.count() == broken["controller_lines"]
    big = events.where(F.col("file").endswith(f"big.log.{STAMP}")).collect()
    assert len(big) == 1 and len(big[0].message) == len("big ") + 3_000_000
    state = {r.message for r in events.where(F.col("file").endswith(f"state-change.log.{STAMP}")).collect()}
    assert "caf\ufffd" in state                           # invalid UTF-8: a replacement character
    quarantine = broken["read"]("silver.quarantine")
    garbage = quarantine.where(F.col("file").endswith(f"state-change.log.{STAMP}")).collect()
    # a line without a header continues the record before it; nothing of the file is lost
    assert sum(r.line_count for r in garbage) + sum(
        r.line_count for r in events.where(F.col("file").endswith(f"state-change.log.{STAMP}")).collect()) == 3


def test_reconciliation_counts_every_quarantine_row_and_file(broken):
    recon = broken["out"]["reconciliation"]
    quarantine = broken["read"]("silver.quarantine").groupBy("host", "source").count().collect()
    per_source = {(r.host, r.source): r["count"] for r in quarantine}
    assert {(r["host"], r["source"]): r["quarantine_rows"] for r in recon if r["quarantine_rows"]} == per_source
    assert per_source[("k1", "jmx")] == 1 and per_source[("k2", "jmx")] == 1    # the 404 answers
    for r in recon:
        assert r["unaccounted"] == 0, r
        assert r["files_listed"] == r["files_read"] + r["files_rejected"], r
    k1 = next(r for r in recon if (r["host"], r["source"]) == ("k1", "kafka"))
    assert (k1["files_listed"], k1["files_rejected"]) == (13, 2)
    assert len(k1["file_problems"]) == 4   # vanished, swapped, shrunk, truncated .gz


def test_problems_are_visible_per_host_hour_and_explain_missing_data(broken):
    health = {r.host: r for r in broken["read"]("gold.broker_health_hourly").collect()}
    assert health["k1"].sources_missing == [] and health["k1"].files_rejected == 2
    assert health["k2"].sources_missing == ["kafka"] and health["k2"].files_rejected == 1
    assert health["k2"].file_problems == [f"kafka: server.log.{STAMP}.gz (rejected): {NOT_GZIP}"]
    missing = [r for r in broken["read"]("gold.incident_findings").collect() if r.kind == "data_missing"]
    assert [m.entity for m in missing] == ["k2:kafka"]
    assert missing[0].evidence.endswith(f"; files that could not be read: server.log.{STAMP}.gz (rejected): "
                                        f"{NOT_GZIP}")
