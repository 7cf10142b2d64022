"""One big file cannot sink an hour: a busy broker's live `server.log` of 25 MB (make test), 300 MB or
2 GiB (make test-big) is pulled, goes through bronze and silver within the 4 GB driver heap of the jobs,
and every one of its lines is a record that reconciles; the other broker's hour lands beside it."""
from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

import pytest

from fleethealth.lake.catalog import Lakehouse
from fleethealth.pipeline import window as pipeline
from fleethealth.fleet.inventory import load_inventory
from fleethealth.lake import tables as lake
from fleethealth.pull.hour import pull_hour

pytestmark = pytest.mark.spark
HOUR = datetime(2026, 11, 20, 10, tzinfo=timezone.utc)
# a typical line of a busy broker (~150 bytes), in the hour; and one of the hour before, which the
# pull must leave out
BODY = b"] INFO [Log partition=orders-17, dir=/var/lib/kafka/data] Rolled new log segment at offset 18823312 in 3 ms. (kafka.log.LocalLog)\n"
BEFORE = b"[2026-11-20 09:59:59,999" + BODY
INVENTORY = """\
clusters:
  - name: c
    timezone: UTC
    root: fleet
    hosts:
      - {host: k1, role: kafka, broker_id: 1, kafka_version: 3.6.1, max_file_bytes: 3000000000}
      - {host: k2, role: kafka, broker_id: 2, kafka_version: 3.6.1}
"""


def live_server_log(path: Path, size: int) -> int:
    """A live server.log of about `size` bytes: a line of the hour before, then lines in time order over
    the hour. Returns the number of lines of the hour."""
    line_bytes = len(b"[2026-11-20 10:00:00,000") + len(BODY)
    per_second = max(1, size // line_bytes // 3600)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        out.write(BEFORE)
        for second in range(3600):
            out.write(b"[2026-11-20 10:%02d:%02d,000%s" % (second // 60, second % 60, BODY) * per_second)
    mtime = HOUR.timestamp() + 3599
    os.utime(path, (mtime, mtime))
    return per_second * 3600


def passed(report) -> bool:
    return bool(report.published) and all(r.success for r in report.results if r.critical)


@pytest.mark.parametrize("size", [
    pytest.param(25 * 10**6, id="25MB"),      # larger than a task's share of the hour: read in parts
    pytest.param(300 * 10**6, id="300MB", marks=pytest.mark.big),
    pytest.param(2 * 1024**3, id="2GiB", marks=pytest.mark.big),
])
def test_a_big_live_server_log_goes_through_bronze_and_silver_beside_its_neighbour(spark, tmp_path, size):
    lines = live_server_log(tmp_path / "fleet" / "c" / "k1" / "kafka" / "server.log", size)
    (tmp_path / "fleet" / "c" / "k2" / "kafka").mkdir(parents=True)
    (tmp_path / "fleet" / "c" / "k2" / "kafka" / "server.log").write_bytes(b"[2026-11-20 10:30:00,000" + BODY)
    (tmp_path / "inventory.yaml").write_text(INVENTORY)
    lakehouse = Lakehouse.at(tmp_path / "lake")

    pull_hour(load_inventory(tmp_path / "inventory.yaml"), HOUR, Lakehouse.at(lakehouse))
    out = pipeline.run_window(spark, [HOUR], str(tmp_path / "inventory.yaml"), lakehouse, layers=["bronze"])[HOUR]
    assert passed(out["gates"]["bronze"]) and out["bronze_records"] == lines + 1
    files = {r.host: (r.status, r.records, r.reason) for r in lake.read(spark, "bronze.files", Lakehouse.at(lakehouse)).collect()}
    assert files == {"k1": ("read", lines, None), "k2": ("read", 1, None)}

    out = pipeline.run_window(spark, [HOUR], str(tmp_path / "inventory.yaml"), lakehouse, layers=["silver"])[HOUR]
    recon = out["reconciliation"]
    assert passed(out["gates"]["silver"])
    kafka = {r["host"]: r for r in recon if r["source"] == "kafka"}
    assert kafka["k1"]["bronze_records"] == lines and kafka["k2"]["bronze_records"] == 1
    for r in kafka.values():
        assert r["unaccounted"] == 0 and r["bronze_records"] == r["silver_records"] + r["quarantined_records"], r
