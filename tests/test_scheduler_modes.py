"""docs/deployment.md's "Run a scheduler" on a shared host (issue 47): its block, as written up to the api-server's
health check (test_scheduler.py runs all of it), leaves the database, airflow.cfg, the passwords file
and the logs to their user alone (0600, folders 0700), writes no password to a log, and the login
takes the password the block generated. No Spark."""
from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import urllib.request
from pathlib import Path

from readme_blocks import block

PROJECT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_scheduler_recipe_keeps_its_secrets_and_database_to_its_user(tmp_path):
    home, port = tmp_path / "airflow-home", free_port()
    text = block("run", "scheduler").text
    for shown, ours in (("~/fleethealth-airflow", home), ("~/fleet.yaml", tmp_path / "fleet.yaml"),
                        ("~/lakehouse", tmp_path / "lakehouse"), ("AIRFLOW__API__PORT=8080", f"AIRFLOW__API__PORT={port}")):
        assert text.count(shown) == 1, shown
        text = text.replace(shown, str(ours))
    # up to the health check: the api-server answers, the password file is in use
    text = text[:text.index("airflow scheduler")]
    assert text.startswith("umask 077 ") and "/monitor/health" in text
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "FLEETHEALTH_"))}
    env["PATH"] = f"{PROJECT / '.venv' / 'bin'}:{env['PATH']}"
    script = tmp_path / "scheduler.sh"
    script.write_text(text)
    proc = subprocess.Popen(["bash", "-euo", "pipefail", str(script)], cwd=PROJECT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=400)
        assert proc.returncode == 0, out[-4000:]
        passwords = home / "simple_auth_manager_passwords.json.generated"
        password = json.loads(passwords.read_text())["admin"]
        login = urllib.request.Request(f"http://127.0.0.1:{port}/auth/token", method="POST",
                                       data=json.dumps({"username": "admin", "password": password}).encode(),
                                       headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(login, timeout=30) as answer:
            assert json.loads(answer.read())["access_token"]
    finally:
        os.killpg(proc.pid, signal.SIGTERM)     # the script's session: the api-server it started
        proc.wait(30)
    for name in ("airflow.db", "airflow.cfg", passwords.name, "api-server.log"):
        assert stat.S_IMODE((home / name).stat().st_mode) == 0o600, name
    files = [p for p in home.rglob("*") if p.is_file()]
    folders = [p for p in home.rglob("*") if p.is_dir()]
    assert len(files) >= 4 and [str(p) for p in files if stat.S_IMODE(p.stat().st_mode) & 0o077] == []
    assert [str(p) for p in folders if stat.S_IMODE(p.stat().st_mode) & 0o077] == []
    assert [str(p) for p in files if p != passwords and password.encode() in p.read_bytes()] == []
    assert password not in out
