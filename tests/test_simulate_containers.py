"""The container log forms of `fleethealth simulate --log-format` (simulate/containers.py): every line of a
Kafka host's four logs, merged in time order into one stream and wrapped as kubelet (CRI), Docker's
json-file driver or `kubectl logs --timestamps` store it; the inventory's `paths:` finds them."""
from __future__ import annotations

import gzip
import json
import re
from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from fleethealth.cli import demo
from fleethealth.simulate import simulate

START, END = demo.START, demo.START + timedelta(hours=2)
CLUSTER = "pm3-dead-cleaner"
CRI = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z) stdout ([FP]) (.*)$")


def _fleet(root: Path, form: str) -> tuple[Path, dict]:
    inventory = simulate(root, [CLUSTER], START, END, brokers=2, jmx_samples_per_broker_hour=0,
                         bytes_per_broker_hour=20_000, log_format=form)
    doc = yaml.safe_load(inventory.read_text())
    return root / "fleet" / CLUSTER, doc["clusters"][0]


@pytest.fixture(scope="module")
def plain(tmp_path_factory) -> dict[str, list[str]]:
    """Each broker's lines in Kafka's own files (the `kafka` form), sorted."""
    base, _ = _fleet(tmp_path_factory.mktemp("plain"), "kafka")
    return {h.name: sorted(line for f in (h / "kafka").iterdir() for line in f.read_text().splitlines())
            for h in base.iterdir() if (h / "kafka").is_dir()}


def _cri_lines(folder: Path) -> list[str]:
    """The wrapped lines of a pod's files, oldest file first (the rotated names sort by time, 0.log last)."""
    files = sorted(folder.iterdir(), key=lambda p: (p.name == "0.log", p.name.removesuffix(".gz")))
    return [line for p in files for line in
            (gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes()).decode().splitlines()]


def test_cri_pod_folder_rotation_split_line_and_paths_glob(tmp_path, plain):
    base, entry = _fleet(tmp_path, "cri")
    brokers = [h for h in entry["hosts"] if h["role"] == "kafka"]
    assert [h["paths"] for h in brokers] == [
        {"kafka": f"{base.resolve()}/pods/kafka_{h['host']}_*/kafka"} for h in brokers]
    assert [h for h in entry["hosts"] if h["role"] == "zookeeper" and "paths" in h] == []
    for h in brokers:
        assert not (base / h["host"] / "kafka").exists()
        [pod] = (base / "pods").glob(f"kafka_{h['host']}_*")
        names = sorted(p.name for p in (pod / "kafka").iterdir())
        assert names[0] == "0.log" and len(names) == 4
        assert all(re.fullmatch(r"0\.log\.\d{8}-\d{6}(\.gz)?", n) for n in names[1:])
        assert sum(n.endswith(".gz") for n in names) == 2
        wrapped = [CRI.match(line) for line in _cri_lines(pod / "kafka")]
        assert all(wrapped)
        assert [m.group(1) for m in wrapped] == sorted(m.group(1) for m in wrapped)   # one stream in time order
        assert [m.group(2) for m in wrapped].count("P") == 2                          # one line in three pieces
        lines, piece = [], ""
        for m in wrapped:
            piece += m.group(3)
            if m.group(2) == "F":
                lines.append(piece)
                piece = ""
        assert sorted(lines) == plain[h["host"]]


def test_docker_json_rotation_and_split_line(tmp_path, plain):
    base, entry = _fleet(tmp_path, "docker-json")
    for h in (h for h in entry["hosts"] if h["role"] == "kafka"):
        [folder] = (base / "docker" / h["host"]).iterdir()
        assert h["paths"] == {"kafka": f"{base.resolve()}/docker/{h['host']}/*"}
        cid = folder.name
        assert sorted(p.name for p in folder.iterdir()) == [f"{cid}-json.log", *(f"{cid}-json.log.{n}" for n in (1, 2, 3))]
        docs = [json.loads(line) for n in (3, 2, 1, 0) for line in
                (folder / (f"{cid}-json.log" + (f".{n}" if n else ""))).read_text().splitlines()]
        assert {d["stream"] for d in docs} == {"stdout"}
        assert sum(not d["log"].endswith("\n") for d in docs) == 2
        assert sorted("".join(d["log"] for d in docs).splitlines()) == plain[h["host"]]


def test_kubectl_timestamps(tmp_path, plain):
    base, entry = _fleet(tmp_path, "kubectl")
    for h in (h for h in entry["hosts"] if h["role"] == "kafka"):
        text = (base / "kubectl" / h["host"] / "kafka.log").read_text().splitlines()
        assert all(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z ", line) for line in text)
        assert sorted(line.split(" ", 1)[1] for line in text) == plain[h["host"]]
