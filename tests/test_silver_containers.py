"""Silver unwrapping of container log files (issue 61 item 2), on the golden files of
tests/fixtures/containers (ORIGIN.md): kubelet's CRI files (a rotated gzip'd one with a line split into P
pieces), Docker's json-file (a line split into pieces without their newline) and `kubectl logs
--timestamps` output, one host each, pulled, loaded into bronze and parsed once per module. Each record is
the line inside its wrapper, its `log` that of its logger, the wrapper's UTC time kept, and bronze's
physical lines reconcile with the records' line counts."""
from __future__ import annotations

import gzip
import os
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from fleethealth.bronze import tables as bronze
from fleethealth.fleet.inventory import load_inventory
from fleethealth.lake.catalog import Lakehouse
from fleethealth.pull import hour as pull
from fleethealth.silver import tables as silver
from fleethealth.silver.parsers import containers

pytestmark = pytest.mark.spark

UTC = timezone.utc
HOUR = datetime(2026, 3, 10, 2, tzinfo=UTC)
FIXTURES = Path(__file__).parent / "fixtures" / "containers"
POD_A = "kafka_my-cluster-kafka-0_3f1c2a7e-5b9d-4e0a-9c1b-2d7f8e6a4b10"
DOCKER = "6a1f0c9d2e5b4a7c8d3e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c"


def at(h, mi, s, us=0) -> datetime:
    return datetime(2026, 3, 10, h, mi, s, us, tzinfo=UTC)


def _run(spark, base: Path):
    shutil.copytree(FIXTURES, base / "fleet")
    for p in (base / "fleet").rglob("*"):
        if p.is_file():
            stamp = at(2, 30, 0).timestamp() if "8a4e6d21" not in str(p) else at(3, 5, 0).timestamp()
            os.utime(p, (stamp, stamp))
    f = base / "fleet"
    (base / "inventory.yaml").write_text(f"""\
clusters:
  - name: pods
    timezone: UTC
    root: {f}
    hosts:
      - {{host: cri-0, role: kafka, broker_id: 0, kafka_version: 3.9.1,
         paths: {{kafka: {f}/cri/kafka_my-cluster-kafka-0_*/kafka}}}}
      - {{host: docker-1, role: kafka, broker_id: 1, kafka_version: 3.9.1, paths: {{kafka: {f}/docker/*}}}}
      - {{host: kubectl-2, role: kafka, broker_id: 2, kafka_version: 3.9.1, paths: {{kafka: {f}/kubectl}}}}
""")
    inv = load_inventory(base / "inventory.yaml")
    lakehouse = Lakehouse.at(base / "lakehouse")
    landed = pull.pull_hour(inv, HOUR, lakehouse)
    b = bronze.records(spark, landed, lakehouse.landing(HOUR), HOUR).cache()
    tables = silver.build(spark, b, inv)
    out = {"events": [r.asDict() for r in tables["silver.kafka_events"].collect()],
           "quarantine": [r.asDict() for r in tables["silver.quarantine"].collect()],
           "bronze": b.where("source = 'kafka'").count(),
           "recon": [r.asDict() for r in silver.reconciliation(b, tables, tables["silver.quarantine"]).collect()
                     if r.source == "kafka"]}
    b.unpersist()
    return out


@pytest.fixture(scope="module")
def run(spark, tmp_path_factory):
    return _run(spark, tmp_path_factory.mktemp("silver-containers"))


def utc(ts):
    return None if ts is None else datetime.fromtimestamp(ts.timestamp(), UTC)


def rows(run, host: str, file: str) -> list[tuple]:
    return sorted((e["line_number"], e["line_count"], e["log"], e["level"], e["logger"], utc(e["ts"]),
                   utc(e["wrapped_at"])) for e in run["events"] if e["host"] == host and e["file"].endswith(file))


def long_line() -> str:
    """The controller's long line, as its three P/F pieces in the rotated CRI file spell it."""
    lines = gzip.decompress((FIXTURES / "cri" / POD_A / "kafka" / "0.log.20260310-021500.gz").read_bytes())
    return "".join(line.split(" ", 3)[3] for line in lines.decode().splitlines()[1:4])


ROTATED = [
    (1, 1, "server", "INFO", "kafka.log.Log", at(2, 14, 58, 993000), at(2, 14, 58, 993581)),
    (2, 3, "controller", "INFO", "kafka.controller.KafkaController", at(2, 14, 59, 120000), at(2, 14, 59, 120012)),
]
LIVE = [
    (1, 1, "log-cleaner", "INFO", "kafka.log.LogCleaner", at(2, 15, 0, 1000), at(2, 15, 0, 2118)),
    (2, 5, "log-cleaner", "ERROR", "kafka.log.LogCleaner", at(2, 15, 0, 90000), at(2, 15, 0, 90471)),
    (7, 1, "log-cleaner", "INFO", "kafka.log.LogCleaner", at(2, 15, 0, 90000), at(2, 15, 0, 91002)),
]
STATE_CHANGE = (5, 1, "state-change", "TRACE", "state.change.logger", at(2, 14, 59, 501000), at(2, 14, 59, 501000))


def test_cri_records_unwrapped_with_the_p_pieces_joined(run):
    assert rows(run, "cri-0", f"{POD_A}.0.log.20260310-021500.gz") == [*ROTATED, STATE_CHANGE]
    assert rows(run, "cri-0", f"{POD_A}.0.log") == LIVE
    [long] = [e for e in run["events"] if e["host"] == "cri-0" and e["line_count"] == 3]
    assert long_line().startswith("[2026-03-10 02:14:59,120] INFO [Controller id=0] Preferred replicas by broker ")
    assert "[2026-03-10 02:14:59,120] INFO " + long["message"] + " (kafka.controller.KafkaController)" == long_line()


def test_docker_json_records_unwrapped_with_the_split_pieces_joined(run):
    assert rows(run, "docker-1", f"{DOCKER}-json.log.1") == ROTATED
    assert rows(run, "docker-1", f"{DOCKER}-json.log") == LIVE
    [long] = [e for e in run["events"] if e["host"] == "docker-1" and e["line_count"] == 3]
    assert "[2026-03-10 02:14:59,120] INFO " + long["message"] + " (kafka.controller.KafkaController)" == long_line()


def test_kubectl_records_unwrapped(run):
    assert rows(run, "kubectl-2", "my-cluster-kafka-0.log") == [
        ROTATED[0], (2, 1, *STATE_CHANGE[2:]), *[(n + 2, *rest) for n, *rest in LIVE]]


def test_a_stack_trace_is_one_wrapped_line_per_physical_line(run):
    for host in ("cri-0", "docker-1", "kubectl-2"):
        [e] = [e for e in run["events"] if e["host"] == host and e["level"] == "ERROR"]
        assert e["message"] == "[kafka-log-cleaner-thread-0]: Error due to"
        assert e["detail"].split("\n") == [
            "java.lang.IllegalStateException: This log contains a message larger than maximum allowable size of "
            "1000012.", "\tat kafka.log.Cleaner.growBuffers(LogCleaner.scala:622)",
            "\tat kafka.log.Cleaner.buildOffsetMap(LogCleaner.scala:574)",
            "\tat kafka.utils.ShutdownableThread.run(ShutdownableThread.scala:82)"]


def test_bronze_lines_reconcile_with_records_and_nothing_is_quarantined(run):
    assert run["quarantine"] == []
    # 5 + 7 CRI lines, 4 + 7 Docker lines, 9 kubectl lines
    assert run["bronze"] == 32 == sum(e["line_count"] for e in run["events"])
    assert {(r["host"], r["bronze_records"], r["silver_records"], r["unaccounted"]) for r in run["recon"]} == {
        ("cri-0", 12, 12, 0), ("docker-1", 11, 11, 0), ("kubectl-2", 9, 9, 0)}


LOG_OF_LOGGER = [
    ("kafka.controller.KafkaController", "controller"), ("org.apache.kafka.controller.QuorumController", "controller"),
    ("state.change.logger", "state-change"), ("kafka.log.LogCleaner", "log-cleaner"),
    ("kafka.log.LogCleaner$CleanerThread", "server"), ("kafka.log.Cleaner", "server"),
    ("org.apache.kafka.storage.internals.log.Cleaner", "log-cleaner"),
    ("org.apache.kafka.storage.internals.log.LogCleaner$CleanerThread", "log-cleaner"),
    ("kafka.log.LogCleanerManager$", "server"), ("kafka.server.KafkaServer", "server"),
    ("org.apache.kafka.raft.KafkaRaftClient", "server")]


def test_the_log_of_a_logger(spark):
    from pyspark.sql import functions as F

    from fleethealth.runtime.frames import local_frame
    df = local_frame(spark, [(logger,) for logger, _ in LOG_OF_LOGGER], "logger string")
    got = {r.logger: r.log for r in df.select("logger", containers.log_of_logger(F.col("logger")).alias("log")).collect()}
    assert got == dict(LOG_OF_LOGGER)
