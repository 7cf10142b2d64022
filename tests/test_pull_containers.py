"""Pull of container log files (issue 61 item 2): pod folders found by a glob in `paths:` (two pods: a
restart), kubelet's and Docker's rotated names placed by their lines (not taken for hourly-rolled
files), and each wrapped line landing in the hour of its own Kafka timestamp, else of its wrapper's."""
from __future__ import annotations

import os
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from fleethealth.fleet.inventory import load_inventory
from fleethealth.lake.catalog import Lakehouse
from fleethealth.lake.hours import time_in_name
from fleethealth.pull import containers
from fleethealth.pull.hour import pull_hour
from fleethealth.pull.transports.local import LocalTransport

UTC = timezone.utc
FIXTURES = Path(__file__).parent / "fixtures" / "containers"
POD_A = "kafka_my-cluster-kafka-0_3f1c2a7e-5b9d-4e0a-9c1b-2d7f8e6a4b10"
POD_B = "kafka_my-cluster-kafka-0_8a4e6d21-0c3f-4b7a-a5e2-9f1d3c7b6e58"
H2, H3 = datetime(2026, 3, 10, 2, tzinfo=UTC), datetime(2026, 3, 10, 3, tzinfo=UTC)
MTIMES = {f"{POD_A}/kafka/0.log.20260310-021500.gz": datetime(2026, 3, 10, 2, 15, tzinfo=UTC),
          f"{POD_A}/kafka/0.log": datetime(2026, 3, 10, 2, 15, 1, tzinfo=UTC),
          f"{POD_B}/kafka/0.log": datetime(2026, 3, 10, 3, 5, tzinfo=UTC)}


def reader(data: bytes):
    return lambda offset, n: data[offset:offset + n]


@pytest.fixture
def pods(tmp_path) -> Path:
    root = tmp_path / "var" / "log" / "pods"
    shutil.copytree(FIXTURES / "cri", root)
    for rel, at in MTIMES.items():
        os.utime(root / rel, (at.timestamp(), at.timestamp()))
    (root / "kafka_my-cluster-kafka-1_0b1c").mkdir()        # another pod's folder: not matched
    (tmp_path / "inventory.yaml").write_text(f"""\
clusters:
  - name: my-cluster
    timezone: UTC
    root: {tmp_path}
    hosts:
      - {{host: my-cluster-kafka-0, role: kafka, broker_id: 0, kafka_version: 3.9.1,
         paths: {{kafka: {root}/kafka_my-cluster-kafka-0_*/kafka}}}}
""")
    return tmp_path


def landed(tmp_path: Path, hour: datetime) -> dict[str, bytes]:
    inventory = load_inventory(tmp_path / "inventory.yaml")
    rows = pull_hour(inventory, hour, Lakehouse.at(tmp_path / "lake"))
    assert [(r.file, r.reason) for r in rows if r.status != "read" or r.reason] == []
    base = Lakehouse.at(tmp_path / "lake").landing(hour)
    return {r.file.split("/")[-1]: (base / r.path).read_bytes() for r in rows}


def test_a_glob_finds_both_pods_folders_and_each_file_lands_in_the_hours_of_its_lines(pods):
    cri = FIXTURES / "cri"
    got = landed(pods, H2)
    assert sorted(got) == [f"{POD_A}.0.log", f"{POD_A}.0.log.20260310-021500.gz"]
    assert got[f"{POD_A}.0.log"] == (cri / POD_A / "kafka" / "0.log").read_bytes()
    import gzip
    assert got[f"{POD_A}.0.log.20260310-021500.gz"] == gzip.decompress(
        (cri / POD_A / "kafka" / "0.log.20260310-021500.gz").read_bytes())
    # after the restart: the new pod's folder, its lines in the hour after
    assert landed(pods, H3) == {f"{POD_B}.0.log": (cri / POD_B / "kafka" / "0.log").read_bytes()}


def test_the_glob_matches_folders_only_and_never_through_a_symlink(pods):
    root = pods / "var" / "log" / "pods"
    (root / "kafka_my-cluster-kafka-0_link").symlink_to(root / POD_A)
    (root / "kafka_my-cluster-kafka-0_file").write_text("not a folder")
    folders = containers.GlobFolders(LocalTransport()).matches(f"{root}/kafka_my-cluster-kafka-0_*/kafka")
    assert folders == [(f"{root}/{POD_A}/kafka", POD_A), (f"{root}/{POD_B}/kafka", POD_B)]


def test_rotated_container_files_are_not_hourly_rolled():
    for name in ("0.log.20260310-021500", "0.log.20260310-021500.gz", "abc-json.log.1", "abc-json.log"):
        assert not time_in_name(name), name


def test_a_wrapped_lines_hour_is_its_kafka_timestamp_local_to_the_cluster():
    """Asia/Kolkata: the Kafka timestamps are local (+05:30), the wrappers UTC; the hour 02:00 UTC is
    07:30-08:30 local. A stack trace line (no timestamp of its own) stays with its record."""
    lines = [b"2026-03-10T01:59:59.000000000Z stdout F [2026-03-10 07:29:59,000] INFO before (kafka.Kafka)",
             b"2026-03-10T02:00:00.500000000Z stdout F [2026-03-10 07:30:00,500] ERROR in (kafka.Kafka)",
             b"2026-03-10T03:00:00.100000000Z stdout F \tat kafka.Kafka.main(Kafka.scala:1)",
             b"2026-03-10T03:00:00.200000000Z stdout F [2026-03-10 08:30:00,200] INFO after (kafka.Kafka)"]
    data = b"\n".join(lines) + b"\n"
    start, end = containers.hour_range(reader(data), len(data), H2, "Asia/Kolkata")
    assert data[start:end] == lines[1] + b"\n" + lines[2] + b"\n"


def test_without_any_kafka_timestamp_the_wrappers_utc_time_cuts_the_hours():
    docs = [b'{"log":"starting\\n","stream":"stdout","time":"2026-03-10T01:59:00.000000001Z"}',
            b'{"log":"ready\\n","stream":"stdout","time":"2026-03-10T02:10:00.000000001Z"}',
            b'{"log":"bye\\n","stream":"stderr","time":"2026-03-10T03:00:00.000000001Z"}']
    data = b"\n".join(docs) + b"\n"
    start, end = containers.hour_range(reader(data), len(data), H2, "UTC")
    assert data[start:end] == docs[1] + b"\n"


def test_a_plain_log_is_cut_as_before():
    data = b"[2026-03-10 01:59:00,000] INFO a (x)\n[2026-03-10 02:00:00,000] INFO b (x)\n"
    assert containers.hour_range(reader(data), len(data), H2, "UTC") == (data.index(b"\n") + 1, len(data))


def test_check_lists_a_glob_folder_and_names_one_matching_nothing(pods):
    from fleethealth.cli.check import source_problems
    host = load_inventory(pods / "inventory.yaml").host("my-cluster-kafka-0")
    assert [p for p in source_problems(host, LocalTransport()) if ": kafka:" in p] == []
    (pods / "inventory.yaml").write_text((pods / "inventory.yaml").read_text().replace("kafka-0_*", "kafka-7_*"))
    host = load_inventory(pods / "inventory.yaml").host("my-cluster-kafka-0")
    assert [p for p in source_problems(host, LocalTransport()) if ": kafka:" in p] == [
        f"my-cluster-kafka-0: kafka: no folder {pods}/var/log/pods/kafka_my-cluster-kafka-7_*/kafka (set paths.kafka "
        "of the host, or its root, to where they are; or `expect:` without kafka)"]
