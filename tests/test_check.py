"""`fleethealth check` against real servers on loopback (issue 48, item 2): OpenSSH sshd for `sftp` hosts
(started without root's override of file permissions, so a folder mode 000 is unreadable as to any
pull user), a real ZooKeeper JVM with the Jolokia agent, and an HTTP webhook receiver (tests/realservers.py).
Each problem kind prints its one line and exits 2; a healthy set-up exits 0 with the summary. No Spark.
"""
from __future__ import annotations

import json
import logging
import os
import subprocess
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml
from realservers import Alertmanager, Receiver, SlowProxy, Smtpd, Sshd, ZooKeeper, free_port

from fleethealth.cli import check as check_command
from fleethealth.cli import main as cli

HEALTHY = "check: 1 cluster(s), 2 host(s), 1 of 1 channel(s) took a test message: an hour would run"


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    root = tmp_path_factory.mktemp("check")
    sshd = Sshd(root / "sshd", permissions_bind_root=True)
    zk = hook = None
    try:
        zk = ZooKeeper(root / "zk", root / "remote" / "zk-1" / "zookeeper")
        hook = Receiver()
        yield {"root": root, "sshd": sshd, "zk": zk, "hook": hook}
    finally:
        for server in (hook, zk):
            if server:
                server.stop()
        sshd.stop()


@pytest.fixture
def fleet(servers, tmp_path, monkeypatch):
    """A healthy set-up: zk-1 (its real ZooKeeper log over SFTP, live Jolokia) and kafka-1 (its logs and
    JMX exports over SFTP, a connection of its own), a webhook channel. `write(**changes)` writes the
    inventory with kafka-1's or zk-1's keys changed and returns its path."""
    sshd, zk, hook = servers["sshd"], servers["zk"], servers["hook"]
    hook.status, hook.bodies[:] = 200, []
    monkeypatch.setenv("HOME", str(tmp_path))             # no ~/.ssh/known_hosts to fall back on
    monkeypatch.setenv("FLEETHEALTH_LAKEHOUSE", str(tmp_path / "lake"))
    monkeypatch.setenv("AIRFLOW_CONN_FLEET_SSH", sshd.connection())
    monkeypatch.setenv("AIRFLOW_CONN_KAFKA1_SSH", sshd.connection())
    k1 = tmp_path / "remote" / "kafka-1"
    for source, name, line in (("kafka", "server.log", "[2026-11-20 10:00:00,000] INFO starting (kafka.server.KafkaServer)"),
                               ("jmx", "jolokia.jsonl", "a line")):
        (k1 / source).mkdir(parents=True)
        (k1 / source / name).write_text(line + "\n")
    hosts = {"zk-1": {"host": "zk-1", "role": "zookeeper", "zk_myid": 1, "jolokia_url": zk.jolokia_url,
                      "paths": {"zookeeper": str(zk.log_file.parent)}},
             "kafka-1": {"host": "kafka-1", "role": "kafka", "broker_id": 1, "kafka_version": "3.9.1",
                         "ssh_conn_id": "kafka1_ssh", "paths": {"kafka": str(k1 / "kafka"), "jmx": str(k1 / "jmx")}}}

    def write(notifications: list | None = None, **changes) -> str:
        for name, keys in changes.items():
            hosts[name.replace("_", "-")].update(keys)
        doc = {"clusters": [{"name": "loop", "timezone": "UTC", "transport": "sftp", "ssh_conn_id": "fleet_ssh",
                             "hosts": list(hosts.values())}],
               "notifications": [{"name": "hook", "webhook": f"{hook.url}/hook"}] + (notifications or [])}
        path = tmp_path / "inventory.yaml"
        path.write_text(yaml.safe_dump(doc))
        return str(path)

    return {"write": write, "kafka": k1 / "kafka", "sshd": sshd, "zk": zk, "hook": hook, "tmp": tmp_path}


def check(capsys, *args) -> tuple[int, list[str]]:
    rc = cli.main(["check", *args])
    out, err = capsys.readouterr()
    assert err == "", err
    return rc, out.splitlines()


def problem(capsys, inventory: str, *args) -> str:
    """The one problem line of a check that found exactly one, with its summary."""
    rc, lines = check(capsys, "--inventory", inventory, *args)
    assert rc == 2, lines
    assert lines[1:] == ["check: 1 cluster(s), 2 host(s), 1 channel(s) not tested (--notify sends each a test "
                         "message): 1 problem(s): an hour would not run as set up"]
    return lines[0]


def test_a_healthy_set_up_passes_and_each_channel_gets_a_test_message(fleet, capsys):
    rc, lines = check(capsys, "--inventory", fleet["write"](), "--notify")
    assert (rc, lines) == (0, [HEALTHY])
    [body] = fleet["hook"].bodies
    assert (body["transition"], body["status"], body["kind"]) == ("test", "test", "test")
    assert body["summary"].startswith("TEST message from fleethealth check to channel hook at ")
    assert not (fleet["tmp"] / "lake").exists()             # nothing pulled, nothing written


def test_each_channel_type_delivers_a_test_message_through_its_own_code(fleet, capsys, monkeypatch, tmp_path):
    """Webhook, e-mail, Slack and a real Alertmanager: a real delivery each, marked TEST; the test alert
    ends by itself after TEST_ALERT_FOR."""
    from fleethealth.notify.alertmanager import TEST_ALERT_FOR

    monkeypatch.setattr(logging.getLogger("mail.log"), "filters", [lambda record: False])   # the test server's log
    slack, smtp, am = Receiver(), Smtpd(), None
    try:
        am = Alertmanager(tmp_path / "am")
        monkeypatch.setenv("AIRFLOW_CONN_SMTP_TEST", smtp.connection())
        monkeypatch.setenv("AIRFLOW_CONN_SLACK_TEST", slack.slack_connection())
        before = datetime.now(timezone.utc)
        rc, lines = check(capsys, "--notify", "--inventory", fleet["write"]([
            {"name": "mail", "smtp_conn_id": "smtp_test", "to": ["oncall@example.com"]},
            {"name": "chat", "slack_conn_id": "slack_test"}, {"name": "am", "alertmanager": am.url}]))
        assert (rc, lines) == (0, ["check: 1 cluster(s), 2 host(s), 4 of 4 channel(s) took a test message: an hour "
                                   "would run"])
        [(to, mail)] = smtp.messages
        assert to == ["oncall@example.com"] and mail["Subject"].startswith("TEST message from fleethealth check to "
                                                                             "channel mail at ")
        [chat] = slack.bodies
        assert chat["text"].startswith("TEST message from fleethealth check to channel chat at ")
        [alert] = am.get("/api/v2/alerts")
        assert {k: alert["labels"][k] for k in ("alertname", "severity", "source")} == {
            "alertname": "test", "severity": "info", "source": "fleethealth"}
        ends = datetime.fromisoformat(alert["endsAt"].replace("Z", "+00:00"))
        assert before + TEST_ALERT_FOR - timedelta(seconds=1) <= ends <= datetime.now(timezone.utc) + TEST_ALERT_FOR
        [hook] = fleet["hook"].bodies
        assert hook["summary"].startswith("TEST message from fleethealth check to channel hook at ")
    finally:
        for server in (am, slack, smtp):
            if server:
                server.stop()


def test_the_inventory_comes_from_fleethealth_inventory_without_inventory(fleet, capsys, monkeypatch):
    monkeypatch.setenv("FLEETHEALTH_INVENTORY", fleet["write"]())
    rc, lines = check(capsys)
    assert (rc, lines) == (0, ["check: 1 cluster(s), 2 host(s), 1 channel(s) not tested (--notify sends each a "
                               "test message): an hour would run"])
    assert fleet["hook"].bodies == []                       # no --notify: nothing sent
    monkeypatch.setenv("FLEETHEALTH_INVENTORY", str(fleet["tmp"] / "nowhere.yaml"))
    assert check(capsys)[1][0] == (f"{fleet['tmp'] / 'nowhere.yaml'}: cannot read inventory: "
                                   "No such file or directory")


def test_the_demo_inventory_passes(tmp_path, capsys, monkeypatch):
    from fleethealth.cli import demo
    from fleethealth.simulate import simulate

    monkeypatch.setenv("FLEETHEALTH_LAKEHOUSE", str(tmp_path / "lake"))
    inventory = simulate(tmp_path / "demo", ",".join(demo.SCENARIOS), demo.START, demo.END, bytes_per_broker_hour=2000,
                         jmx_samples_per_broker_hour=0)
    rc, lines = check(capsys, "--inventory", str(inventory))
    assert (rc, lines) == (0, ["check: 2 cluster(s), 10 host(s), 0 channel(s) not tested (--notify sends each a "
                               "test message): an hour would run"])
    assert not (tmp_path / "lake").exists()


def test_an_http_host_is_its_jolokia_read_only(fleet, capsys):
    rc, lines = check(capsys, "--inventory", fleet["write"](zk_1={"transport": "http", "paths": None}))
    assert (rc, lines) == (0, ["check: 1 cluster(s), 2 host(s), 1 channel(s) not tested (--notify sends each a "
                               "test message): an hour would run"])


def test_a_local_host_is_checked_by_the_local_transport(tmp_path, capsys, monkeypatch):
    """A symlinked source folder is refused as the pull refuses it (never followed)."""
    monkeypatch.setenv("FLEETHEALTH_LAKEHOUSE", str(tmp_path / "lake"))
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "zookeeper.log").write_text("2026-11-20 10:00:00,000 [myid:1] - INFO  [main:QuorumPeerMain@132] - Starting quorum peer\n")
    (tmp_path / "fleet" / "c" / "z1").mkdir(parents=True)
    (tmp_path / "fleet" / "c" / "z1" / "zookeeper").symlink_to(tmp_path / "elsewhere")
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(f"clusters:\n  - name: c\n    timezone: UTC\n    root: {tmp_path / 'fleet'}\n"
                         "    hosts:\n      - {host: z1, role: zookeeper, zk_myid: 1}\n")
    folder = tmp_path / "fleet" / "c" / "z1" / "zookeeper"
    assert check(capsys, "--inventory", str(inventory)) == (2, [
        f"z1: zookeeper: {folder}: a symlink, not followed (let the pull's user read {folder}/ and its files; no "
        "symlink is followed: set paths.zookeeper to the real folder)",
        "check: 1 cluster(s), 1 host(s), 0 channel(s) not tested (--notify sends each a test message): 1 problem(s): "
        "an hour would not run as set up"])
    folder.unlink()
    (tmp_path / "elsewhere").rename(folder)
    assert check(capsys, "--inventory", str(inventory))[0] == 0
    assert not (tmp_path / "lake").exists()


def fingerprint(public_key: Path) -> str:
    """`ssh-keygen -lf`'s SHA256 fingerprint of a public key file."""
    return subprocess.run(["ssh-keygen", "-lf", str(public_key)], capture_output=True, text=True,
                          check=True).stdout.split()[1]


@pytest.mark.parametrize("kind", ["unknown host key", "host key mismatch", "connection refused"])
def test_an_ssh_problem_is_one_line_saying_what_to_do(fleet, capsys, monkeypatch, kind):
    sshd = fleet["sshd"]
    port = free_port() if kind == "connection refused" else sshd.port
    connection = {"unknown host key": sshd.connection(host_key=None),
                  "host key mismatch": sshd.connection(host_key=sshd.other_host_key),
                  "connection refused": sshd.connection(port=port)}[kind]
    monkeypatch.setenv("AIRFLOW_CONN_KAFKA1_SSH", connection)
    keys = sshd.folder
    assert problem(capsys, fleet["write"]()) == {
        "unknown host key": f"kafka-1: host key of 127.0.0.1:{port} is unknown: refused (set the host_key extra of "
                            f"connection 'kafka1_ssh' to the key `ssh-keyscan -p {port} 127.0.0.1` prints, checked "
                            "against the host's own fingerprint)",
        "host key mismatch": f"kafka-1: HOST KEY MISMATCH for 127.0.0.1:{port}: it presented ssh-ed25519 "
                             f"{fingerprint(keys / 'host_ed25519.pub')} but connection 'kafka1_ssh' expects "
                             f"ssh-ed25519 {fingerprint(keys / 'impostor_ed25519.pub')}; refused (if the host was "
                             f"re-keyed on purpose: `ssh-keyscan -p {port} 127.0.0.1`, and put the key it prints, "
                             "checked against the host's own fingerprint, in the connection's host_key extra)",
        "connection refused": f"kafka-1: cannot connect to {sshd.user}@127.0.0.1:{port} (connection kafka1_ssh): "
                              f"Connection refused (is sshd listening on 127.0.0.1:{port}, and are connection "
                              "'kafka1_ssh''s host and port right?)"}[kind]


def test_a_missing_folder_and_an_empty_one(fleet, capsys):
    jmx = str(fleet["kafka"].parent / "jmx")
    missing = fleet["tmp"] / "no" / "kafka"
    assert problem(capsys, fleet["write"](kafka_1={"paths": {"kafka": str(missing), "jmx": jmx}})) == (
        f"kafka-1: kafka: no folder {missing} (set paths.kafka of the host, or its root, to where they are; "
        "or `expect:` without kafka)")
    (fleet["tmp"] / "empty").mkdir()
    assert problem(capsys, fleet["write"](kafka_1={"paths": {"kafka": str(fleet["tmp"] / "empty"), "jmx": jmx}})) == (
        f"kafka-1: kafka: {fleet['tmp'] / 'empty'} holds no files (set paths.kafka to the folder where kafka-1's "
        "kafka files are written)")


@pytest.mark.parametrize("what", ["folder", "file"])
def test_an_unreadable_folder_or_file(fleet, capsys, what):
    sshd, kafka = fleet["sshd"], fleet["kafka"]
    locked = kafka if what == "folder" else kafka / "server.log"
    os.chmod(locked, 0)
    try:
        line = problem(capsys, fleet["write"]())
    finally:
        os.chmod(locked, 0o755)
    verb = "list" if what == "folder" else "read"
    assert line == (f"kafka-1: kafka: {sshd.user}@127.0.0.1:{sshd.port} (connection kafka1_ssh): cannot {verb} "
                    f"{locked}: [Errno 13] Permission denied (let the pull's user read {kafka}/ and its files; no "
                    "symlink is followed: set paths.kafka to the real folder)")


@pytest.mark.parametrize("kind", ["down", "404", "another JVM"])
def test_a_jolokia_url_that_does_not_answer_with_the_beans(fleet, capsys, kind):
    zk = fleet["zk"]
    port = free_port() if kind == "down" else zk.jolokia_port
    if kind == "another JVM":       # kafka-1's url is ZooKeeper's agent: no Kafka MBean there; its JMX comes
        # from Jolokia, so its jmx folder is not looked for
        inventory = fleet["write"](kafka_1={"jolokia_url": zk.jolokia_url,
                                            "paths": {"kafka": str(fleet["kafka"]), "jmx": "/nowhere/jmx"}})
    else:
        inventory = fleet["write"](zk_1={"jolokia_url": f"http://127.0.0.1:{port}/"
                                                        + ("jolokia/" if kind == "down" else "metrics/")})
    fix = ("(jolokia_url must be the agent's URL, e.g. http://zk-1:8778/jolokia/, and the agent running in the "
           "host's JVM)")
    assert problem(capsys, inventory) == {
        "down": f"zk-1: 127.0.0.1:{port}: cannot reach Jolokia: Connection refused {fix}",
        "404": f"zk-1: 127.0.0.1:{port}: Jolokia answered HTTP 404 {fix}",
        "another JVM": f"kafka-1: Jolokia at {zk.jolokia_url} has no MBean of a kafka host (kafka.log:name=Size,"
                       "topic=__consumer_offsets,type=Log,* and 10 more not found; is jolokia_url the agent of this "
                       "host's kafka JVM?)"}[kind]


@pytest.mark.parametrize("answer", ["[]", "java.lang", "unasked"])
def test_a_jolokia_that_answers_none_of_the_hosts_beans_fails(fleet, capsys, answer):
    """Issue 59: a Jolokia answering `[]` passed. So would one answering only java.lang, or beans it was
    not asked for: none of the MBeans a ZooKeeper host needs is there."""
    agent = Receiver()
    agent.answer = json.dumps({
        "[]": [],
        "java.lang": [{"request": {"mbean": "java.lang:type=OperatingSystem", "type": "read"}, "status": 200,
                       "value": {"OpenFileDescriptorCount": 10}}],
        "unasked": [{"request": {"mbean": "com.example:type=Other", "type": "read"}, "status": 200, "value": 1}],
    }[answer]).encode()
    try:
        url = f"{agent.url}/jolokia/"
        line = problem(capsys, fleet["write"](zk_1={"jolokia_url": url}))
    finally:
        agent.stop()
    n = 0 if answer == "[]" else 1
    assert line == (f"zk-1: Jolokia at {url} answered none of the 1 MBean(s) of a zookeeper host it was asked for "
                    f"({n} response(s)); is jolokia_url the agent of this host's zookeeper JVM?")


def test_check_has_a_deadline_per_host_and_in_all_and_checks_hosts_at_once(fleet, capsys, monkeypatch):
    """Issue 59: 21 s per host that drops packets and 122 s for one slow SFTP host, one after another.
    Three hosts whose server accepts and then says nothing and one whose SFTP passes 100 bytes a
    second (its SSH handshake alone takes half a minute) are checked at once beside a healthy one: each
    is a line after its 2 s, the whole check ends then. With one host at a time and 3 s in all, the
    third host is not checked, and the check ends at 3 s."""
    import airflow.providers.ssh.hooks.ssh  # noqa: F401  (its first import, seconds, is no host's)

    # the hosts left behind end when their proxy closes: paramiko's threads say so to no one
    monkeypatch.setattr(logging.getLogger("paramiko"), "filters", [lambda record: False])
    monkeypatch.setattr(logging.getLogger("paramiko.transport"), "filters", [lambda record: False])
    drop, slow = SlowProxy(fleet["sshd"].port, drop=True), SlowProxy(fleet["sshd"].port, bytes_per_s=100)
    monkeypatch.setenv("AIRFLOW_CONN_FLEET_DROP", fleet["sshd"].connection(port=drop.port))
    monkeypatch.setenv("AIRFLOW_CONN_FLEET_SLOW", fleet["sshd"].connection(port=slow.port))
    monkeypatch.setattr(check_command, "HOST_TIMEOUT_S", 2)
    kafka = {"kafka": str(fleet["kafka"]), "jmx": str(fleet["kafka"].parent / "jmx")}

    def inventory(*names: str) -> str:
        hosts = [{"host": name, "role": "kafka", "broker_id": i, "kafka_version": "3.9.1", "paths": kafka,
                  "ssh_conn_id": {"drop": "fleet_drop", "slow": "fleet_slow", "kafka": "kafka1_ssh"}[name[:-2]]}
                 for i, name in enumerate(names, 1)]
        path = fleet["tmp"] / "deadlines.yaml"
        path.write_text(yaml.safe_dump({"clusters": [{"name": "loop", "timezone": "UTC", "transport": "sftp", "hosts": hosts}]}))
        return str(path)

    late = "no answer within 2 s (is the host reachable, and its sshd and Jolokia agent answering?)"
    try:
        t0 = time.monotonic()
        rc, lines = check(capsys, "--inventory", inventory("kafka-1", "drop-1", "drop-2", "drop-3", "slow-1"))
        seconds = time.monotonic() - t0
        assert (rc, lines) == (2, [f"drop-1: {late}", f"drop-2: {late}", f"drop-3: {late}", f"slow-1: {late}",
                                   "check: 1 cluster(s), 5 host(s), 0 channel(s) not tested (--notify sends each a "
                                   "test message): 4 problem(s): an hour would not run as set up"])
        assert seconds < 2 + 1.5, seconds

        monkeypatch.setattr(check_command, "PARALLEL", 1)
        monkeypatch.setattr(check_command, "TOTAL_TIMEOUT_S", 3)
        t0 = time.monotonic()
        rc, lines = check(capsys, "--inventory", inventory("drop-1", "slow-1", "kafka-1"))
        seconds = time.monotonic() - t0
        assert (rc, lines[:3]) == (2, [f"drop-1: {late}", f"slow-1: {late}",
                                       "kafka-1: not checked: check's 3 s for all hosts ran out (many hosts past "
                                       "their deadline?)"])
        assert seconds < 3 + 1.5, seconds
    finally:
        drop.stop()
        slow.stop()
        for thread in threading.enumerate():
            if thread.name.startswith("check "):
                thread.join(15)


def test_a_channel_that_refuses_the_test_message(fleet, capsys):
    fleet["hook"].status = 500
    rc, lines = check(capsys, "--inventory", fleet["write"](), "--notify")
    assert (rc, lines) == (2, [
        "notifications[hook]: test message not delivered: Refused: 500 Internal Server Error (check the webhook "
        "receiver and the channel's settings)",
        "check: 1 cluster(s), 2 host(s), 0 of 1 channel(s) took a test message: 1 problem(s): an hour would not run "
        "as set up"])


def test_a_bad_inventory_or_setting_stops_before_any_host(fleet, capsys, monkeypatch):
    bad = fleet["tmp"] / "bad.yaml"
    bad.write_text("clusters: [\n  - name: x\n")
    first = "no host reached until they are fixed"
    assert check(capsys, "--inventory", str(bad)) == (2, [
        f"{bad}: line 2 not valid YAML: expected the node content, but found '-'",
        f"check: 1 problem(s) in the settings or the inventory {bad}; {first}"])
    monkeypatch.setenv("FLEETHEALTH_PULL_TIMEOUT_S", "0")
    inventory = fleet["write"]()
    assert check(capsys, "--inventory", inventory) == (2, [
        "FLEETHEALTH_PULL_TIMEOUT_S: expected a number of seconds > 0, got '0' (set it right, or unset it for its "
        "default)", f"check: 1 problem(s) in the settings or the inventory {inventory}; {first}"])


def test_a_wrong_host_key_a_missing_path_and_a_closed_jolokia_port_are_a_line_each(fleet, capsys, monkeypatch):
    """Issue 48's acceptance: three problems on two hosts, each its own line; the other host still checked."""
    sshd = fleet["sshd"]
    monkeypatch.setenv("AIRFLOW_CONN_KAFKA1_SSH", sshd.connection(host_key=sshd.other_host_key))
    closed, missing = free_port(), fleet["tmp"] / "no" / "zookeeper"
    rc, lines = check(capsys, "--inventory", fleet["write"](
        zk_1={"paths": {"zookeeper": str(missing)}, "jolokia_url": f"http://127.0.0.1:{closed}/jolokia/"}))
    assert rc == 2
    assert [line.split(" (")[0] for line in lines] == [
        f"zk-1: zookeeper: no folder {missing}",
        f"zk-1: 127.0.0.1:{closed}: cannot reach Jolokia: Connection refused",
        f"kafka-1: HOST KEY MISMATCH for 127.0.0.1:{sshd.port}: it presented ssh-ed25519 "
        f"{fingerprint(sshd.folder / 'host_ed25519.pub')} but connection 'kafka1_ssh' expects ssh-ed25519 "
        f"{fingerprint(sshd.folder / 'impostor_ed25519.pub')}; refused",
        "check: 1 cluster(s), 2 host(s), 1 channel(s) not tested",
    ]
    assert lines[-1].endswith(": 3 problem(s): an hour would not run as set up")


@pytest.mark.parametrize("argv, error", [
    (["--inventory"], "fleethealth check: error: argument --inventory: expected one argument"),
    (["--notify", "yes"], "fleethealth: error: unrecognized arguments: yes"),
    (["--from", "2026-11-20T10:00Z"], "fleethealth: error: unrecognized arguments: --from 2026-11-20T10:00Z"),
])
def test_a_usage_error_exits_2(argv, error, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["check", *argv])
    assert exc.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == error


def test_a_bad_thresholds_file_is_a_line_per_mistake_and_the_run_refuses_it_before_it_pulls(tmp_path, capsys,
                                                                                              monkeypatch):
    """Issue 62 item 9: check reads the thresholds file as gold would (--thresholds, else
    $FLEETHEALTH_THRESHOLDS), and `run` refuses a bad one before any host is pulled."""
    monkeypatch.setenv("FLEETHEALTH_LAKEHOUSE", str(tmp_path / "lake"))
    monkeypatch.delenv("FLEETHEALTH_THRESHOLDS", raising=False)
    (tmp_path / "fleet" / "c" / "z1" / "zookeeper").mkdir(parents=True)
    (tmp_path / "fleet" / "c" / "z1" / "zookeeper" / "zookeeper.log").write_text(
        "2026-11-20 10:00:00,000 [myid:1] - INFO  [main:QuorumPeerMain@132] - Starting quorum peer\n")
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(f"clusters:\n  - name: c\n    timezone: UTC\n    root: {tmp_path / 'fleet'}\n"
                         "    hosts:\n      - {host: z1, role: zookeeper, zk_myid: 1}\n")
    bad = tmp_path / "thresholds.yaml"
    bad.write_text("offsets_partition_bloat.max_size_bytes: 10 GB\nlog_cleaner_dead.severity: urgent\n"
                   "leader_election_storm.min_partitons: 5\nclusters:\n  d: {log_cleaner_dead.severity: major}\n")
    rc, lines = check(capsys, "--inventory", str(inventory), "--thresholds", str(bad))
    assert rc == 2
    assert [line.split(": ", 1)[0] for line in lines[:4]] == [str(bad)] * 4
    assert [line.split(": ", 1)[1] for line in lines[:4]] == [
        "leader_election_storm.min_partitons: unknown threshold (did you mean leader_election_storm.min_partitions?) "
        "(fix it, or leave the key out for its default)",
        "offsets_partition_bloat.max_size_bytes: expected an integer, got '10 GB' (fix it, or leave the key out for "
        "its default)",
        "log_cleaner_dead.severity: 'urgent' is not one of critical, major, minor, info (fix it, or leave the key "
        "out for its default)",
        "clusters: d: no such cluster in the inventory (its clusters: c) (fix it, or leave the key out for its default)"]
    assert lines[4].endswith(": 4 problem(s): an hour would not run as set up")
    monkeypatch.setenv("FLEETHEALTH_THRESHOLDS", str(bad))   # the file the DAG's jobs read
    assert check(capsys, "--inventory", str(inventory))[0] == 2
    monkeypatch.delenv("FLEETHEALTH_THRESHOLDS")

    rc = cli.main(["run", "--inventory", str(inventory), "--thresholds", str(bad),
                   "--from", "2026-11-20T10:00Z", "--to", "2026-11-20T11:00Z"])
    err = capsys.readouterr().err.splitlines()
    assert rc == 2 and len(err) == 4 and all(line.startswith(f"fleethealth: {bad}: ") for line in err), err
    assert not (tmp_path / "lake").exists()       # nothing pulled, no lakehouse made
    bad.write_text("log_cleaner_dead.severity: minor\n")
    assert check(capsys, "--inventory", str(inventory), "--thresholds", str(bad))[0] == 0
