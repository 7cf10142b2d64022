"""Spark settings that may hold secrets (the deployment's FLEETHEALTH_SPARK_CONF, every setting whose name
says it holds a key, a token or a password) reach spark-submit in a properties file only its owner can
read: never on a command line (`ps`), in a log or in the serialized DAG; the DAG file reads none of them
when it is parsed (issue 47)."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest

from fleethealth.runtime import config
from fleethealth.runtime.spark_conf import properties_file, spark_conf, submitted_conf

PROJECT = Path(__file__).resolve().parents[1]
DAGS = PROJECT / "dags"
# Hadoop S3A's settings that hold a secret, and their per-bucket forms
S3A_SECRETS = [f"spark.hadoop.fs.s3a.{where}{name}" for where in ("", "bucket.fleet-health.")
               for name in ("access.key", "secret.key", "session.token", "encryption.key",
                            "server-side-encryption.key")]


@pytest.fixture
def planted(tmp_path, monkeypatch) -> dict[str, str]:
    """A deployment's Spark settings file with a distinct token in every S3A secret setting (one holds
    the characters a properties file escapes), and a driver memory that overrides fleethealth's 4g."""
    tokens = {key: f"tok{i}-{uuid.uuid4().hex}" for i, key in enumerate(S3A_SECRETS)}
    tokens[S3A_SECRETS[1]] += " = : # ! \\ end"
    conf = tmp_path / "spark-deployment.conf"
    conf.write_text("".join(f"{key} {value}\n" for key, value in tokens.items()) + "spark.driver.memory 1g\n")
    monkeypatch.setenv("FLEETHEALTH_SPARK_CONF", str(conf))
    return tokens


def test_the_command_line_gets_no_setting_of_the_file(planted):
    public, private = submitted_conf(spark_conf("/lake", short_lived=True, deployment=False))
    assert {k: private[k] for k in planted} == planted and private["spark.driver.memory"] == "1g"
    assert "spark.driver.memory" not in public and not set(planted) & set(public)
    assert public["spark.sql.extensions"] == "io.delta.sql.DeltaSparkSessionExtension"


def test_a_secrets_name_sends_it_to_the_file_too(monkeypatch):
    """A cluster's executors get the driver's AWS keys: from the file, not the command line."""
    monkeypatch.delenv("FLEETHEALTH_SPARK_CONF", raising=False)
    for key, value in {"AWS_ACCESS_KEY_ID": "AKIAFLEET", "AWS_SECRET_ACCESS_KEY": "s3cr3t",
                       "AWS_SESSION_TOKEN": "sess"}.items():
        monkeypatch.setenv(key, value)
    public, private = submitted_conf(spark_conf("/lake", tables="s3a://fleet/t", master="spark://h:7077"))
    assert private == {"spark.executorEnv.AWS_ACCESS_KEY_ID": "AKIAFLEET",
                       "spark.executorEnv.AWS_SECRET_ACCESS_KEY": "s3cr3t", "spark.executorEnv.AWS_SESSION_TOKEN": "sess"}
    assert not any(v in ("AKIAFLEET", "s3cr3t", "sess") for v in public.values())


def test_the_properties_file_is_its_owners_alone_and_gone_after(planted):
    with properties_file(planted) as path:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        text = path.read_text()
    assert not path.exists() and not path.parent.exists()
    assert all(key in text for key in planted)


def serialized_dags() -> str:
    from airflow.dag_processing.dagbag import DagBag
    from airflow.serialization.serialized_objects import DagSerialization

    bag = DagBag(dag_folder=str(DAGS))
    assert bag.import_errors == {} and {config.DAG_ID, config.MAINTENANCE_DAG_ID} <= set(bag.dags)
    return json.dumps([DagSerialization.to_dict(dag) for dag in bag.dags.values()])


def test_the_serialized_dags_hold_none_of_the_files_settings(planted):
    text = serialized_dags()
    assert "spark.sql.extensions" in text and "io.delta.sql.DeltaSparkSessionExtension" in text
    assert [k for k, v in planted.items() if k in text or v.split()[0] in text] == []
    assert '"spark.driver.memory": "4g"' in text         # fleethealth's own; 1g is read when the task runs


def command_lines() -> list[str]:
    """Every process's command line, as `ps -eo args` shows it."""
    lines = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            lines.append(cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:     # ended meanwhile
            pass
    return lines


class Watched:
    """Every process's command line while the block runs (read every 50 ms), and the properties file
    handed to spark-submit: its path, modes and text as it was then."""

    def __init__(self):
        self.seen: list[str] = []
        self.given: dict = {}
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._done.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._done.is_set():
            for line in command_lines():
                self.seen.append(line)
                if "--properties-file " in line and "path" not in self.given:
                    path = Path(line.split("--properties-file ", 1)[1].split(" ", 1)[0])
                    try:
                        self.given.update(path=path, mode=stat.S_IMODE(path.stat().st_mode),
                                          folder=stat.S_IMODE(path.parent.stat().st_mode), text=path.read_text())
                    except OSError:
                        pass
            self._done.wait(0.05)

    def check(self, planted: dict[str, str]) -> None:
        """spark-submit read the file (its driver memory, the file's 1g over fleethealth's 4g, sized the
        JVM), only its owner could, it held every token and is gone; no command line held one."""
        assert any("org.apache.spark.deploy.SparkSubmit" in line and "-Xmx1g" in line for line in self.seen)
        assert self.given["mode"] == 0o600 and self.given["folder"] == 0o700, self.given
        assert all(value.split()[0] in self.given["text"] for value in planted.values())
        assert not self.given["path"].exists()
        leaked = [line for line in self.seen if any(v.split()[0] in line for v in planted.values())]
        assert leaked == [] and len(self.seen) > 100


def without_tokens(planted: dict[str, str], log: str, *folders: Path) -> None:
    assert [k for k, v in planted.items() if v.split()[0] in log] == []
    files = [p for root in folders if root.is_dir() for p in root.rglob("*") if p.is_file()]
    assert [str(p) for p in files if any(v.split()[0].encode() in p.read_bytes() for v in planted.values())] == []


@pytest.mark.spark
def test_a_dag_task_submits_them_in_a_file_and_no_ps_line_or_log_has_one(planted, tmp_path):
    """`airflow tasks test` of the maintenance DAG's spark-submit task (real spark-submit on
    spark_default, local); then the task's output and every log file are searched."""
    lakehouse = tmp_path / "lakehouse"
    lakehouse.mkdir()
    airflow = str(Path(sys.executable).with_name("airflow"))
    with Watched() as watched:
        proc = subprocess.run([airflow, "tasks", "test", config.MAINTENANCE_DAG_ID, "optimize_vacuum",
                               "2026-11-20T00:00:00+00:00"], capture_output=True, text=True, timeout=600,
                              env={**os.environ, config.ENV_LAKEHOUSE: str(lakehouse)})
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-3000:]
    assert "Spark-Submit cmd" in log and "--properties-file" in log
    watched.check(planted)
    without_tokens(planted, log, lakehouse, Path(os.environ["AIRFLOW_HOME"]) / "logs")


@pytest.mark.spark
def test_a_command_starts_its_jvm_with_them_in_a_file(planted, tmp_path):
    """`fleethealth parse`: PySpark's spark-submit (the JVM of every command) gets them the same way."""
    work = tmp_path / "work"
    work.mkdir()
    log_file = work / "server.log"
    log_file.write_text("[2026-11-20 10:00:01,000] INFO [KafkaServer id=1] started (kafka.server.KafkaServer)\n")
    fleethealth = str(Path(sys.executable).with_name("fleethealth"))
    with Watched() as watched:
        proc = subprocess.run([fleethealth, "parse", "--source", "kafka", str(log_file)], capture_output=True,
                              text=True, timeout=300, cwd=work)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert '"message": "[KafkaServer id=1] started' in proc.stdout
    watched.check(planted)
    without_tokens(planted, proc.stdout + proc.stderr, work)
