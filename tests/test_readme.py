"""README and docs/ as a newcomer uses them: every fenced block is marked with what it is
(tests/readme_blocks.py), and each kind is checked here or by the test that has what it needs."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from readme_blocks import DOCS, KINDS, README, block, blocks

from fleethealth.cli import main as cli
from fleethealth.notify.inventory import parse_inventory  # the inventory with its notifications: channels

VENV_BIN = Path(sys.executable).parent
# which test checks the blocks of each kind and name that this module does not
ELSEWHERE = {("output", "make demo"): "test_mixed_fleet.py", ("run", "demo-query"): "test_mixed_fleet.py",
             ("run", "readers"): "test_readers.py",
             ("run", "scheduler"): "test_scheduler.py", ("sql", ""): "test_docs_sql.py",
             ("run", "jolokia-request"): "test_docs_recipes.py"}
CHECKED_HERE = {("run", "ssh-connection"), ("run", "ssh-host-key")}


def test_every_block_says_what_it_is_and_a_test_checks_it():
    found = blocks()
    assert len(found) >= 9
    assert {b.path for b in found} >= {"README.md", "docs/deployment.md", "docs/inventory.md"}
    unmarked = [b.where for b in found if b.kind not in KINDS]
    assert unmarked == [], f"fenced blocks without a `<!-- readme-test: KIND [NAME] -->` line before them: {unmarked}"
    for b in found:
        if b.kind in ("run", "output"):
            assert (b.kind, b.name) in ELSEWHERE.keys() | CHECKED_HERE, f"{b.where}: no test checks {b.kind} {b.name!r}"
        if b.kind == "not-run":
            assert len(b.name.split()) >= 5, f"{b.where}: say why it is not run and what tests it instead"
        assert (b.lang == "sql") == (b.kind == "sql"), f"{b.where}: a sql block is marked sql, and only one"
    for (kind, name), module in ELSEWHERE.items():
        if kind == "sql":
            assert [b for b in found if b.kind == "sql"], "no sql block left"
            continue
        block(kind, name)                               # still in README or docs/, once
        assert f'"{kind}", "{name}"' in (Path(__file__).parent / module).read_text(), module


def test_the_inventory_example_loads_as_shown():
    [b] = [b for b in blocks() if b.kind == "inventory" and not b.name]
    inventory = parse_inventory(yaml.safe_load(b.text), "README.md")
    cluster, kraft = inventory.clusters
    assert (cluster.name, cluster.timezone, cluster.mode, [h.host for h in cluster.hosts]) == (
        "bigdata", "Europe/Berlin", "zookeeper", ["bd-kafka-1", "bd-zk-1", "bd-kafka-2"])
    assert cluster.hosts[2].paths["jmx"] == "/nfs/bd-kafka-2/jmx"
    assert (kraft.name, kraft.mode, [(h.entity, h.controller) for h in kraft.hosts]) == (
        "events", "kraft", [("controller-3000", True), ("broker-1", False), ("broker-2", True)])
    assert inventory.notifications == ()


def test_readme_is_a_guide_of_at_most_300_lines():
    assert len(README.read_text().splitlines()) <= 300


def test_the_ten_steps_inventory_is_a_whole_fleet_over_sftp_with_jolokia_and_a_channel():
    inventory = parse_inventory(yaml.safe_load(block("inventory", "fleet").text), "README.md")
    [cluster] = inventory.clusters
    brokers = [h for h in cluster.hosts if h.role == "kafka"]
    assert {h.transport for h in cluster.hosts} == {"sftp"} and {h.ssh_conn_id for h in cluster.hosts} == {"fleet_ssh"}
    assert [h.jolokia_url for h in brokers] == [f"http://pay-kafka-{n}:8778/jolokia/" for n in (1, 2)]
    assert [(c.name, c.type, c.min_severity) for c in inventory.notifications] == [("oncall", "webhook", "major")]
    # the connection of step 3 is the one the inventory names
    assert "AIRFLOW_CONN_FLEET_SSH=" in block("run", "ssh-connection").text


def test_the_spark_settings_example_loads(tmp_path, monkeypatch):
    from fleethealth.runtime.spark_conf import spark_conf

    [b] = [b for b in blocks() if b.kind == "spark-conf"]
    (tmp_path / "spark.conf").write_text(b.text)
    monkeypatch.setenv("FLEETHEALTH_SPARK_CONF", str(tmp_path / "spark.conf"))
    conf = spark_conf("/lake")
    assert (conf["spark.executor.instances"], conf["spark.executor.memory"], conf["spark.driver.memory"]) == (
        "5", "16g", "8g")


def test_the_notifications_example_loads_beside_the_inventory():
    inventory = yaml.safe_load(next(b for b in blocks() if b.kind == "inventory" and not b.name).text)
    inventory.update(yaml.safe_load(block("inventory", "notifications").text))
    channels = parse_inventory(inventory, "README.md").notifications
    assert [(c.name, c.type) for c in channels] == [
        ("oncall-hook", "webhook"), ("oncall-mail", "smtp"), ("kafka-slack", "slack"), ("alertmanager", "alertmanager")]
    assert (channels[1].to, channels[1].min_severity, channels[2].clusters) == (
        ("kafka-oncall@example.com",), "major", ("bigdata",))
    assert channels[3].ends_after_seconds == 4 * 3600


def test_the_maintenance_example_loads_beside_the_inventory():
    from datetime import datetime, timezone

    inventory = yaml.safe_load(next(b for b in blocks() if b.kind == "inventory" and not b.name).text)
    inventory.update(yaml.safe_load(block("inventory", "maintenance").text))
    windows = parse_inventory(inventory, "docs/notifications.md").maintenance
    assert [(w.cluster, w.hosts, w.start, w.end) for w in windows] == [
        ("bigdata", (), datetime(2026, 12, 5, 21, tzinfo=timezone.utc), datetime(2026, 12, 6, 1, tzinfo=timezone.utc)),
        ("bigdata", ("bd-kafka-2",), datetime(2026, 12, 8, 9, tzinfo=timezone.utc),
         datetime(2026, 12, 8, 10, 30, tzinfo=timezone.utc))]


def test_the_prometheus_example_loads():
    from fleethealth.fleet.inventory import Prometheus

    [cluster] = parse_inventory(yaml.safe_load(block("inventory", "prometheus").text), "docs/inventory.md").clusters
    assert cluster.hosts[0].prometheus == Prometheus("https://mimir.monitoring:8080/prometheus", "mimir_payments", "pod",
                                                        "strimzi")


def test_the_thresholds_example_loads_beside_the_inventory(tmp_path):
    from fleethealth.gold import thresholds

    inventory = parse_inventory(yaml.safe_load(next(b for b in blocks() if b.kind == "inventory" and not b.name).text),
                                "README.md")
    path = tmp_path / "thresholds.yaml"
    path.write_text(block("thresholds", "clusters").text.replace("payments", "bigdata"))
    fleet, per_cluster = thresholds.load_all(path, [c.name for c in inventory.clusters])
    assert fleet == {**thresholds.load(None), "offsets_partition_bloat.max_size_bytes": 2 * 1024**3}
    assert per_cluster == {"bigdata": {**fleet, "offsets_partition_bloat.severity": "critical",
                                       "leader_election_storm.min_partitions": 200}}


@pytest.mark.parametrize("name, variable, shown", [
    ("ssh-connection", "AIRFLOW_CONN_FLEET_SSH", "ssh None 22 fleetpull ['conn_timeout', 'key_file']"),
    ("ssh-host-key", "AIRFLOW_CONN_FLEET_SSH_KAFKA_2",
     "ssh bd-kafka-2.example 22 fleetpull ['conn_timeout', 'host_key', 'key_file']")])
def test_the_ssh_connection_examples_are_ones_airflow_accepts(name, variable, shown):
    b = block("run", name)
    check = ("from airflow.models.connection import Connection; import os; "
             f"c = Connection.from_json(os.environ['{variable}'], conn_id='fleet_ssh'); "
             "print(c.conn_type, c.host, c.port, c.login, sorted(c.extra_dejson))")
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", b.text + f'\n{VENV_BIN}/python -c "{check}"'],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "AIRFLOW__CORE__LOAD_EXAMPLES": "False"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == shown


def test_the_synopsis_is_the_parser():
    [b] = [b for b in blocks() if b.kind == "synopsis"]
    parser = cli.build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    shown: dict[str, set[str]] = {}
    current = None
    for line in b.text.splitlines():
        head = re.match(r"fleethealth (\w+)", line)
        if head:
            current = head.group(1)
            shown[current] = set()
        shown[current] |= set(re.findall(r"--[a-z][\w-]*", line))
    shown["backfill"] = shown["run"] if "(same as run)" in b.text else shown["backfill"]
    assert sorted(shown) == sorted(commands)
    for name, sub in commands.items():
        options = {o for a in sub._actions for o in a.option_strings if o.startswith("--") and o != "--help"}
        assert shown[name] == options, name
    assert "--source kafka|zookeeper|jolokia|prometheus|jstack|logdirs" in b.text


def test_readme_names_only_commands_that_exist():
    """Every `fleethealth <command>` in README's and docs' text is a command of the parser."""
    commands = set(next(a for a in cli.build_parser()._actions if a.dest == "command").choices)
    named = set(re.findall(r"fleethealth ([a-z]\w*) --", "".join(doc.read_text() for doc in DOCS)))
    assert named and named <= commands, named - commands


def test_shown_output_matches_line_by_line_with_the_ellipsis_for_any_text():
    from readme_blocks import matches_shown

    printed = "gold.incidents: 2 incident(s)\n\nMAJOR c1 slow_group_load x: 95123 ms > 60000 ms | check first: size\n"
    assert matches_shown("gold.incidents: 2 incident(s)\n\nMAJOR c1 slow_group_load x: … | check first: …\n", printed) == []
    assert matches_shown("gold.incidents: 3 incident(s)\n\nMAJOR c1 slow_group_load x: …\n", printed) == [
        "gold.incidents: 3 incident(s)"]
    assert matches_shown("gold.incidents: 2 incident(s)\n", printed) == ["README shows 1 lines, the command printed 3"]


def test_a_block_without_its_marker_is_found(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("text\n\n```bash\nmake demo\n```\n\n  <!-- readme-test: run x -->\n  ```bash\n  ls\n  ```\n")
    assert [(b.kind, b.name, b.text, b.line) for b in blocks(readme)] == [
        ("", "", "make demo\n", 3), ("run", "x", "ls\n", 8)]
