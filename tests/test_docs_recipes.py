"""docs/inventory.md's recipes for producing the inputs on a host: the Jolokia request body it writes is
the bulk read the pull posts itself (fleet.mbeans.jolokia_requests), and its worked `expect:` loads with
the sources it says. No Spark."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml
from readme_blocks import block

from fleethealth.fleet import mbeans
from fleethealth.notify.inventory import parse_inventory


def test_the_jolokia_request_written_as_shown_is_the_pulls_bulk_read(tmp_path):
    (tmp_path / ".venv").symlink_to(Path(sys.executable).parents[1])
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", block("run", "jolokia-request").text], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    body = json.loads((tmp_path / "jolokia-read.json").read_text())
    assert body == mbeans.jolokia_requests(("zk_broker",)) and len(body) >= 10
    assert {r["type"] for r in body} == {"read"}


def test_the_worked_expect_loads_with_the_sources_it_says():
    inventory = parse_inventory(yaml.safe_load(block("inventory", "expect").text), "docs/inventory.md")
    assert {h.host: h.expect for h in inventory.hosts} == {
        "pay-kafka-1": ("kafka", "jmx", "threaddumps", "logdirs", "groups"),
        "pay-kafka-2": ("kafka", "jmx", "threaddumps", "logdirs"),
        "pay-zk-1": ("zookeeper",)}
