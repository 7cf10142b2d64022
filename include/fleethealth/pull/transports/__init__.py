"""Pull transports: list a host's source folder (name, size, mtime, inode) and copy one file into landing.

`open_transport(host)` gives the transport of an inventory host as a context manager:
`local` (a directory tree) or `sftp` (an Airflow SSH connection). `http` hosts have no files: their
JMX comes from a live Jolokia read (`fleethealth.pull.transports.jolokia`), as does that of any host with
a `jolokia_url`.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from fleethealth.pull.transports.base import NoFiles, Transport, TransportError


@contextmanager
def open_transport(host) -> Iterator[Transport]:
    if host.transport == "local":
        from fleethealth.pull.transports.local import LocalTransport

        yield LocalTransport(host.root)
    elif host.transport == "sftp":
        from fleethealth.pull.transports.sftp import SftpTransport

        with SftpTransport.connect(host) as transport:
            yield transport
    elif host.transport == "http":
        yield NoFiles()
    else:
        raise TransportError(f"{host.host}: unknown transport {host.transport!r}")
