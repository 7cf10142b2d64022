#!/usr/bin/env python3
"""Write the .env that docker-compose.yaml reads: its secrets and the host folders it mounts.

    python3 scripts/compose_env.py [--config-dir DIR] [--archives-dir DIR] [--ssh-dir DIR] [--bind ADDRESS]

The guide is docs/deployment.md, "Compose". Standard library only: it runs on the Docker host before
anything is installed. Secrets already in the file are kept (a new Fernet key would make the stored
connections unreadable; Postgres keeps the password of its first start); everything else is written
as given. The file is the owner's only (0600). Exit 2 with one line per problem, nothing written.
"""
from __future__ import annotations

import argparse
import base64
import os
import secrets
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GUIDE = "docs/deployment.md, Compose"
# the secrets docker-compose.yaml refuses to start without
SECRETS = {
    "AIRFLOW_FERNET_KEY": lambda: base64.urlsafe_b64encode(secrets.token_bytes(32)).decode(),
    "AIRFLOW_JWT_SECRET": lambda: secrets.token_hex(32),
    "AIRFLOW_API_SECRET_KEY": lambda: secrets.token_hex(32),
    "POSTGRES_PASSWORD": lambda: secrets.token_hex(32),     # hex: safe in a database URL
}
# the host folders docker-compose.yaml mounts read-only: variable -> (option, default, what it holds)
FOLDERS = {
    "FLEETHEALTH_CONFIG_DIR": ("--config-dir", "/etc/fleethealth", "inventory.yaml"),
    "FLEETHEALTH_ARCHIVES_DIR": ("--archives-dir", "/srv/fleethealth/archives",
                                 "files copied off the hosts: the roots of `transport: local`"),
    "FLEETHEALTH_SSH_DIR": ("--ssh-dir", "/etc/fleethealth/ssh", "the SSH keys the connections' key_file name"),
}
# the rest docker-compose.yaml reads, each with a default of its own there
OPTIONAL = ("FLEETHEALTH_BIND", "FLEETHEALTH_IMAGE", "FLEETHEALTH_AIRFLOW_USERS", "SPARK_WORKER_CORES",
            "SPARK_WORKER_MEMORY")
VARIABLES = (*SECRETS, *FOLDERS, *OPTIONAL)


def read_env(path: Path) -> dict[str, str]:
    """NAME=value lines of an .env (comments and blank lines skipped)."""
    if not path.exists():
        return {}
    lines = (line.strip() for line in path.read_text().splitlines())
    return dict(line.split("=", 1) for line in lines if line and not line.startswith("#") and "=" in line)


def problems(folders: dict[str, Path]) -> list[str]:
    out = [f"{FOLDERS[name][0]} {path}: no such folder (it holds {FOLDERS[name][2]}; see {GUIDE})"
           for name, path in folders.items() if not path.is_dir()]
    inventory = folders["FLEETHEALTH_CONFIG_DIR"] / "inventory.yaml"
    if folders["FLEETHEALTH_CONFIG_DIR"].is_dir() and not inventory.is_file():
        out.append(f"--config-dir {folders['FLEETHEALTH_CONFIG_DIR']}: no inventory.yaml in it (see {GUIDE})")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="compose_env.py", description=__doc__.splitlines()[0],
                                epilog=f"example: python3 scripts/compose_env.py --config-dir /etc/fleethealth "
                                       f"--archives-dir /srv/kafka-archives ({GUIDE})")
    for name, (option, default, what) in FOLDERS.items():
        p.add_argument(option, dest=name, default=default, metavar="DIR",
                       help=f"host folder of {what}, mounted read-only (default {default})")
    p.add_argument("--bind", dest="FLEETHEALTH_BIND", default=None, metavar="ADDRESS",
                   help="address the Airflow UI is published on (default 127.0.0.1; 0.0.0.0: every interface)")
    p.add_argument("--out", default=str(ROOT / ".env"), metavar="FILE",
                   help="the file to write (default .env beside docker-compose.yaml)")
    args = p.parse_args(argv)
    folders = {name: Path(getattr(args, name)).expanduser().resolve() for name in FOLDERS}
    wrong = problems(folders)
    if wrong:
        print("\n".join(f"compose_env.py: {line}" for line in wrong), file=sys.stderr)
        return 2
    out = Path(args.out)
    values = read_env(out)
    for name, new in SECRETS.items():
        values[name] = values.get(name) or new()
    values.update({name: str(path) for name, path in folders.items()})
    if args.FLEETHEALTH_BIND:
        values["FLEETHEALTH_BIND"] = args.FLEETHEALTH_BIND
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)        # an existing file keeps its mode through O_CREAT
    with os.fdopen(fd, "w") as f:
        f.write("".join(f"{name}={value}\n" for name, value in values.items()))
    print(f"wrote {out} (0600): {', '.join(values)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
