"""No single value from a host fails the fleet's hour (issue 59, items 1 and 2).

One pull + gated bronze/silver/gold hour (`pipeline.run_hour`, real Spark and Delta) of two clusters,
each value below from the hostile review on one host while the others are healthy:
- a KRaft controller's `Fencing broker 99999999999 at epoch 5 because its session has timed out`
  (the rules cast `(\\d+)` to int: CAST_INVALID_INPUT failed silver for every cluster),
- its raft-metrics `current-epoch` of 1e10 (CAST_OVERFLOW in gold), a broker's
  `OpenFileDescriptorCount` of 1e999 (Infinity: gold, and the report's "Out of range float values"),
- a Jolokia answer whose MBean name repeats a key (`DUPLICATED_MAP_KEY`) and one with a huge
  `timestamp` (long overflow),
- an honest live Jolokia read taken 40 minutes after the hour's end (from a real HTTP server on
  loopback), inside the documented live window but outside the gate's old 10-minute tolerance,
- NaN, which Kafka's idle averages report, kept in silver and no value in gold,
- and a generated batch of adversarial log lines and Jolokia answers (tests/fuzz_inputs.py) on z9.
"""
from __future__ import annotations

import json
import math
import os
import threading
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from pyspark.sql import functions as F

import fuzz_inputs
from fleethealth.cli import main as cli
from fleethealth.fleet import mbeans
from fleethealth.fleet.inventory import load_inventory
from fleethealth.lake import tables as lake
from fleethealth.lake.catalog import Lakehouse
from fleethealth.pipeline import window as pipeline
from fleethealth.pull import hour as pull
from fleethealth.pull.hour import pull_host

pytestmark = pytest.mark.spark

HOUR = datetime(2026, 11, 20, 10, tzinfo=timezone.utc)
STAMP = HOUR.strftime("%Y-%m-%d-%H")
INSIDE = int((HOUR + timedelta(minutes=30)).timestamp())
LATE_READ = HOUR + timedelta(minutes=100)          # 40 minutes after the hour's end
FENCE = "[QuorumController id=3000] Fencing broker 99999999999 at epoch 5 because its session has timed out."
HUGE_TIMESTAMP = 99999999999999999

INVENTORY = """\
clusters:
  - name: zk
    timezone: UTC
    mode: zookeeper
    root: fleet
    hosts:
      - {{host: k1, role: kafka, broker_id: 1, kafka_version: "3.6.1"}}
      - {{host: k2, role: kafka, broker_id: 2, kafka_version: "3.6.1"}}
      - {{host: z9, role: kafka, broker_id: 9, kafka_version: "3.6.1"}}
  - name: kr
    timezone: UTC
    root: fleet
    hosts:
      - {{host: c1, role: controller, node_id: 3000, kafka_version: "3.9.0"}}
      - {{host: b1, role: kafka, broker_id: 1, kafka_version: "3.9.0", jolokia_url: "http://127.0.0.1:{port}/jolokia/"}}
"""


def log(minute: int, text: str, logger: str, level: str = "INFO") -> str:
    return f"[2026-11-20 10:{minute:02d}:00,000] {level} {text} ({logger})\n"


def read(mbean: str, attribute: str, value, ts: int = INSIDE, status: int = 200) -> dict:
    return {"request": {"mbean": mbean, "attribute": attribute, "type": "read"}, "value": value,
            "timestamp": ts, "status": status}


OPEN_FDS = f"{mbeans.OPEN_FDS.domain}:type=OperatingSystem"
URP = "kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions"
IDLE = "kafka.network:type=SocketServer,name=NetworkProcessorAvgIdlePercent"
EPOCH = mbeans.bean("raft_current_epoch")


def jolokia_lines(host: str) -> str:
    """The hour's Jolokia export of a host, one bulk read per line."""
    if host == "k1":        # an infinite value among good ones, a repeated key alone, a huge time alone
        return "\n".join(json.dumps(doc) for doc in [
            [read(URP, "Value", 0), read(OPEN_FDS, "OpenFileDescriptorCount", "1e999"),
             read(OPEN_FDS, "MaxFileDescriptorCount", 100000), read(IDLE, "Value", "NaN")],
            [read("kafka.server:type=a,type=b", "Value", 1)],
            [read(URP, "Value", 0, ts=HUGE_TIMESTAMP)],
        ]) + "\n"
    if host == "c1":        # the controller's Raft epoch, beyond what an epoch (a Java int) holds
        return json.dumps([read("kafka.server:type=raft-metrics", "current-epoch", 1e10),
                           read(OPEN_FDS, "OpenFileDescriptorCount", 300)]) + "\n"
    return json.dumps([read(URP, "Value", 0), read(OPEN_FDS, "OpenFileDescriptorCount", 200),
                       read(OPEN_FDS, "MaxFileDescriptorCount", 100000), read(IDLE, "Value", 0.9)]) + "\n"


class LateJolokia(BaseHTTPRequestHandler):
    """A Jolokia agent answering every pattern read of a bulk request with one instance, stamped with
    the time of the late read."""

    def do_POST(self):
        requests = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        out = []
        healthy = {"current-state": "observer", "current-epoch": 4, "current-leader": 3000,
                   "MaxFileDescriptorCount": 100000, "OpenFileDescriptorCount": 120}
        for r in requests:
            bean = r["mbean"].removesuffix(",*")
            if "topic=__consumer_offsets" in bean:
                bean += ",partition=0"
            value = healthy.get(r["attribute"], 0)
            out.append({"request": r, "value": {bean: {r["attribute"]: value}},
                        "timestamp": int(LATE_READ.timestamp()), "status": 200})
        body = json.dumps(out).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def put(path: Path, content: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    os.utime(path, (INSIDE, INSIDE))


@pytest.fixture(scope="module")
def hour(spark, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile")
    server = ThreadingHTTPServer(("127.0.0.1", 0), LateJolokia)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        (tmp / "inventory.yaml").write_text(INVENTORY.format(port=server.server_address[1]))
        fleet = tmp / "fleet"
        for cluster, host in (("zk", "k1"), ("zk", "k2"), ("kr", "c1"), ("kr", "b1")):
            logger = "org.apache.kafka.controller.QuorumController" if host == "c1" else "kafka.server.KafkaServer"
            text = (log(1, "[KafkaServer id=1] started", "kafka.server.KafkaServer") if host != "c1"
                    else log(1, "[QuorumController id=3000] Becoming the active controller at epoch 4", logger)
                    + log(20, FENCE, logger))
            put(fleet / cluster / host / "kafka" / f"{'controller' if host == 'c1' else 'server'}.log.{STAMP}", text)
            if host != "b1":
                put(fleet / cluster / host / "jmx" / f"jolokia.json.{STAMP}", jolokia_lines(host))
        for name, content in fuzz_inputs.batch(59).items():     # z9: a generated batch (tests/fuzz_inputs.py)
            put(fleet / "zk" / "z9" / name, content)
        lakehouse = Lakehouse.at(tmp / "lakehouse")
        inventory = load_inventory(tmp / "inventory.yaml")
        pull.pull_hour(inventory, HOUR, lakehouse)
        # b1's live read, as the hourly pull takes it 40 minutes after the hour's end
        landed = pull_host(inventory.host("b1"), "UTC", HOUR, lakehouse, now=LATE_READ)
    finally:
        server.shutdown()
    out = pipeline.run_hour(spark, HOUR, str(tmp / "inventory.yaml"), lakehouse)
    return {"out": out, "read": lambda name: lake.read(spark, name, lakehouse, HOUR), "tmp": tmp,
            "lakehouse": lakehouse, "landed": landed}


def test_the_hour_is_published_for_every_host_of_both_clusters(hour):
    assert [r.source for r in hour["landed"] if r.source == "jmx"] == ["jmx"]       # the live read landed
    health = {(r.cluster, r.host): r for r in hour["read"]("gold.broker_health_hourly").collect()}
    assert set(health) == {("zk", "k1"), ("zk", "k2"), ("zk", "z9"), ("kr", "c1"), ("kr", "b1")}
    for key, r in health.items():
        assert r.sources_missing == [], key
    for r in hour["out"]["reconciliation"]:
        assert r["unaccounted"] == 0, r
    findings = [r.kind for r in hour["read"]("gold.incident_findings").collect()]
    assert "data_missing" not in findings and "host_silent" not in findings


def test_a_generated_batch_on_one_host_is_accounted_for_record_by_record(hour):
    batch = fuzz_inputs.batch(59)
    recon = {r["source"]: r for r in hour["out"]["reconciliation"] if r["host"] == "z9"}
    assert recon["kafka"]["bronze_records"] == batch["kafka/server.log.2026-11-20-10"].count("\n")
    assert recon["jmx"]["bronze_records"] == batch["jmx/jolokia.json.2026-11-20-10"].count("\n")
    for r in recon.values():
        assert r["unaccounted"] == 0 and r["quarantined_records"] > 0, r
    z9 = hour["read"]("silver.kafka_events").where(F.col("host") == "z9")
    assert z9.where(F.col("field_errors").isNotNull()).count() > 0


def test_an_int_capture_beyond_int_is_null_and_named_in_field_errors(hour):
    fences = hour["read"]("silver.kafka_events").where(F.col("event_type") == "broker_fenced").collect()
    assert [(r.host, r.controller, r.broker, r.broker_epoch, r.field_errors) for r in fences] == [
        ("c1", 3000, None, 5, {"broker": "99999999999"})]
    others = hour["read"]("silver.kafka_events").where((F.col("event_type") != "broker_fenced") & (F.col("host") != "z9"))
    assert others.where(F.col("field_errors").isNotNull()).count() == 0


def test_values_a_bean_cannot_hold_and_refused_answers_are_quarantine_rows_with_the_reason(hour):
    q = {(r.host, r.reason, r.record, r.line_count) for r in hour["read"]("silver.quarantine")
         .where((F.col("source") == "jmx") & (F.col("host") != "z9")).collect()}
    window = "(from 10 min before it to 60 min after it)"
    assert q == {
        ("k1", "jmx sample set aside: value is infinite",
         f"{OPEN_FDS} OpenFileDescriptorCount = 1e999", 0),
        ("k1", "jmx sample set aside: the MBean name repeats a key property",
         "kafka.server:type=a,type=b Value = 1", 1),
        ("k1", f"jolokia answer for {URP}: its time {HUGE_TIMESTAMP} (epoch seconds) is outside the read window "
         f"of hour 2026-11-20T10:00Z {window}", json.dumps([read(URP, "Value", 0, ts=HUGE_TIMESTAMP)]), 1),
        ("c1", "jmx sample set aside: value is beyond a Java int (raft_current_epoch: unit epoch)",
         "kafka.server:type=raft-metrics current-epoch = 1.0E10", 0),
    }
    assert EPOCH.unit == "epoch"


def test_a_late_live_read_lands_in_silver_and_nan_stays_there(hour):
    samples = hour["read"]("silver.jmx_samples")
    late = samples.where(F.col("host") == "b1").select("ts").distinct().collect()
    # stamped with the hour it serves: its end (the file's name keeps the read's time)
    assert [r.ts for r in late] == [datetime(2026, 11, 20, 11)]
    idle = samples.where((F.col("host") == "k1") & (F.col("mbean") == IDLE)).collect()
    assert len(idle) == 1 and math.isnan(idle[0].value)
    k1 = {r.attribute for r in samples.where(F.col("host") == "k1").collect()}
    assert k1 == {"Value", "MaxFileDescriptorCount"}      # URP and the idle average; the infinite fd count set aside


def test_gold_holds_no_value_it_cannot_hold_and_the_report_renders(hour, tmp_path):
    saturation = hour["read"]("gold.request_saturation").collect()
    assert all(r.min_network_idle is None or math.isfinite(r.min_network_idle) for r in saturation)
    quorum = hour["read"]("gold.kraft_quorum").collect()
    assert [(r.cluster, r.epoch) for r in quorum] == [("kr", 4)]          # b1's; c1's 1e10 was set aside
    out = tmp_path / "report"
    assert cli.main(["report", "--lakehouse", str(hour["lakehouse"].root), "--from", "2026-11-20T10:00Z",
                     "--to", "2026-11-20T11:00Z", "--out", str(out)]) == 0
    assert any(out.rglob("*.html"))


def test_parse_prints_one_line_per_set_aside_value_and_no_traceback(hour, capsys):
    raw = hour["tmp"] / "fleet" / "kr" / "c1" / "kafka" / f"controller.log.{STAMP}"
    assert cli.main(["parse", "--source", "kafka", str(raw)]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err and "Exception" not in err
    lines = [json.loads(x) for x in err.splitlines() if x.startswith("{")]
    assert lines == [{"field_errors": {"broker": "99999999999"}, "line_number": 2}]
    assert err.splitlines()[-1] == (f"fleethealth: {raw}: 2 parsed (1 with a value set aside in field_errors), "
                                    "0 quarantined")
