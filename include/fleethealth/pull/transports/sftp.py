"""`sftp` transport: a host's files over SFTP with an Airflow SSH connection.

The connection (`ssh_conn_id` on the host or its cluster; e.g. `AIRFLOW_CONN_FLEET_SSH`) holds the
login, port, key (`key_file` or `private_key` extra) and the host key (`host_key` extra, as in
known_hosts: `ssh-ed25519 AAAA...`); without `host_key` the system known_hosts must know the host.
A connection that turns host-key checking off (`no_host_key_check`, `allow_host_key_change`) is
refused. Without a host in the connection (one connection per cluster) the inventory host name is
the address. One connect attempt per pull: the Airflow task retries with exponential back-off.
Only SFTP requests are sent; no remote command, so no shell string is ever built.
"""
from __future__ import annotations

import json
import os
import posixpath
import socket
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from fleethealth.pull.transports.base import FileError, RemoteFile, TransportError, copy_range, folders_below

CONNECT_TIMEOUT_S = 10        # TCP connect, SSH banner, authentication (unless the connection says)
IO_TIMEOUT_S = 60             # any single SFTP request


def _fingerprint(key) -> str:
    return f"{key.get_name()} SHA256:{key.fingerprint.split(':', 1)[-1]}" if hasattr(key, "fingerprint") \
        else key.get_name()


def _keyscan(hook) -> str:
    """The command that shows the host key a host presents (a host_key extra is its output's key)."""
    return f"`ssh-keyscan -p {hook.port} {hook.remote_host}`"


def _why(exc: OSError) -> str:
    """Why a connection failed in the system's words ("Connection refused"), also for paramiko's
    NoValidConnectionsError, which wraps the error of each address tried."""
    inner = next(iter(getattr(exc, "errors", {}).values()), exc)
    return getattr(inner, "strerror", None) or str(inner) or type(inner).__name__


def _check_env_connection(host: str, conn_id: str) -> None:
    """A connection given as AIRFLOW_CONN_<ID> that is neither a URI nor JSON: Airflow would only say
    it "isn't defined". Its text is not repeated (it may hold a password)."""
    name = f"AIRFLOW_CONN_{conn_id.upper()}"
    value = os.environ.get(name, "").strip()
    if not value or "://" in value.split("{", 1)[0]:
        return
    try:
        json.loads(value)
    except ValueError as exc:
        raise TransportError(f"{host}: connection {conn_id!r} ({name}) is neither a URI nor valid JSON: "
                             f"{exc.msg} at character {exc.pos}") from None


class SftpTransport:
    def __init__(self, sftp, where: str, root: str | None = None):
        self.sftp = sftp
        self.where = where
        self.root = root

    @classmethod
    @contextmanager
    def connect(cls, host) -> Iterator["SftpTransport"]:
        import paramiko
        from airflow.providers.ssh.hooks.ssh import SSHHook
        from airflow.sdk import BaseHook

        conn_id = host.ssh_conn_id
        _check_env_connection(host.host, conn_id)
        try:
            conn = BaseHook.get_connection(conn_id)
        except Exception as exc:  # noqa: BLE001 - Airflow raises several kinds for a missing connection
            raise TransportError(f"{host.host}: Airflow connection {conn_id!r} not found: {exc}") from None
        try:
            hook = SSHHook(ssh_conn_id=conn_id, remote_host="" if conn.host else host.host,
                           conn_retry_attempts=1, banner_timeout=CONNECT_TIMEOUT_S)
        except Exception as exc:  # noqa: BLE001 - a bad host_key, key file or option in the connection
            raise TransportError(f"{host.host}: connection {conn_id!r} is not usable: {exc}") from None
        if hook.no_host_key_check or hook.allow_host_key_change:
            raise TransportError(f"{host.host}: connection {conn_id!r} turns host-key checking off "
                                 "(no_host_key_check / allow_host_key_change); refused: give its host_key")
        hook.conn_timeout = hook.conn_timeout or CONNECT_TIMEOUT_S
        hook.auth_timeout = hook.auth_timeout or CONNECT_TIMEOUT_S
        where = f"{hook.username}@{hook.remote_host}:{hook.port} (connection {conn_id})"
        try:
            client = hook.get_conn()
        except paramiko.BadHostKeyException as exc:
            raise TransportError(
                f"{host.host}: HOST KEY MISMATCH for {hook.remote_host}:{hook.port}: it presented "
                f"{_fingerprint(exc.key)} but connection {conn_id!r} expects {_fingerprint(exc.expected_key)}; "
                f"refused (if the host was re-keyed on purpose: {_keyscan(hook)}, and put the key it prints, "
                "checked against the host's own fingerprint, in the connection's host_key extra)") from None
        except paramiko.AuthenticationException as exc:
            raise TransportError(f"{host.host}: authentication failed for {where}: {exc}") from None
        except paramiko.SSHException as exc:
            if "known_hosts" in str(exc):
                raise TransportError(f"{host.host}: host key of {hook.remote_host}:{hook.port} is unknown: "
                                     f"refused (set the host_key extra of connection {conn_id!r} to the key "
                                     f"{_keyscan(hook)} prints, checked against the host's own fingerprint)") from None
            raise TransportError(f"{host.host}: SSH to {where} failed: {exc}") from None
        except (OSError, socket.timeout) as exc:
            raise TransportError(f"{host.host}: cannot connect to {where}: {_why(exc)} (is sshd listening on "
                                 f"{hook.remote_host}:{hook.port}, and are connection {conn_id!r}'s host and port "
                                 "right?)") from None
        try:
            sftp = client.open_sftp()
            sftp.get_channel().settimeout(IO_TIMEOUT_S)
            yield cls(sftp, where, host.root)
        finally:
            client.close()

    def abort(self) -> None:
        """Drop the connection (from another thread: the pull's deadline passed); a request under way
        fails at once instead of trickling on."""
        transport = self.sftp.get_channel().get_transport()
        if transport is not None:
            transport.close()

    def list_files(self, folder: str) -> list[RemoteFile]:
        try:
            # listdir_attr would follow a symlinked folder on the server: each folder below the
            # host's root is checked first
            for path in folders_below(self.root, folder):
                if stat.S_ISLNK(self.sftp.lstat(path).st_mode or 0):
                    raise FileError(f"{self.where}: {path} is a symlink, not followed")
            entries = self.sftp.listdir_attr(folder)
        except FileNotFoundError:
            return []
        except (OSError, socket.timeout) as exc:
            raise TransportError(f"{self.where}: cannot list {folder}: {exc}") from None
        # listdir_attr gives lstat attributes: symlinks are S_IFLNK and skipped with folders.
        # SFTP (v3) has no inode: RemoteFile.inode stays None.
        return sorted((RemoteFile(e.filename, e.st_size, float(e.st_mtime)) for e in entries
                       if e.st_mode is not None and stat.S_ISREG(e.st_mode)), key=lambda f: f.name)

    def is_folder(self, folder: str) -> bool:
        try:
            return stat.S_ISDIR(self.sftp.lstat(folder).st_mode or 0)
        except FileNotFoundError:
            return False
        except (OSError, socket.timeout) as exc:
            raise TransportError(f"{self.where}: cannot look at {folder}: {exc}") from None

    def subfolders(self, folder: str) -> list[str]:
        """Names of the folders directly in `folder` (lstat attributes: a symlink is not one)."""
        try:
            entries = self.sftp.listdir_attr(folder)
        except FileNotFoundError:
            return []
        except (OSError, socket.timeout) as exc:
            raise TransportError(f"{self.where}: cannot list {folder}: {exc}") from None
        return sorted(e.filename for e in entries if e.st_mode is not None and stat.S_ISDIR(e.st_mode))

    def head(self, folder: str, name: str, n: int) -> bytes:
        return self.read(folder, name, 0, n)

    def read(self, folder: str, name: str, offset: int, n: int) -> bytes:
        path = posixpath.join(folder, name)
        try:
            with self.sftp.open(path, "rb") as src:
                src.seek(offset)
                return src.read(n)
        except (OSError, socket.timeout) as exc:
            raise self._error(path, exc) from None

    def fetch(self, folder: str, name: str, target: Path, start: int = 0, end: int | None = None) -> int:
        path = posixpath.join(folder, name)
        try:
            if not stat.S_ISREG(self.sftp.lstat(path).st_mode):
                raise FileError(f"{self.where}: {path} is no longer a regular file")
            with self.sftp.open(path, "rb") as src, target.open("xb") as dst:
                src.seek(start)
                src.prefetch(end)
                return copy_range(src, dst, start, end)
        except (OSError, socket.timeout) as exc:
            raise self._error(path, exc) from None

    def _error(self, path: str, exc: Exception) -> TransportError:
        """A missing or forbidden file is this file's problem; anything else (a dropped connection,
        a timeout) is the host's."""
        kind = FileError if isinstance(exc, (FileNotFoundError, PermissionError)) else TransportError
        return kind(f"{self.where}: cannot read {path}: {exc}")
