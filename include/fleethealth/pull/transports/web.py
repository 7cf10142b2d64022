"""One request to a server that is not trusted (a Jolokia agent, a Prometheus): one deadline for all of it (a
server that trickles bytes is cut off), no redirect followed, the answer capped in size, and no error
message that quotes the answer's body."""
from __future__ import annotations

import http.client
import socket
import ssl
import threading
import urllib.parse

from fleethealth.pull.transports.base import TransportError


def request(url: str, body: bytes | None, headers: dict[str, str], *, what: str, timeout: float, deadline: float,
            max_bytes: int, context: ssl.SSLContext | None = None, ok: tuple[int, ...] = (200,),
            whole: float | None = None, method: str = "POST") -> tuple[int, bytes]:
    """(status, body) of the answer to `method` (default POST) `body` to `url`; a status not in `ok` (a
    redirect too: never followed) is a TransportError naming `what` answered it. A watchdog shuts the socket down when
    `deadline` passes, which ends any blocked read; `whole`: the deadline a missed one names (of which
    this request had `deadline` left)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "https":
        conn = http.client.HTTPSConnection(parts.hostname, parts.port, timeout=min(timeout, deadline), context=context)
    else:
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=min(timeout, deadline))
    expired, sockets = threading.Event(), []

    def abort() -> None:
        expired.set()
        for sock in sockets:     # the connection's own: a response that closes it has taken it over
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    watchdog = threading.Timer(deadline, abort)
    watchdog.daemon = True
    watchdog.start()
    where = parts.netloc
    try:
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        conn.connect()
        sockets.append(conn.sock)
        if expired.is_set():        # the deadline passed while connecting, before the watchdog had it
            raise OSError("deadline")
        conn.request(method, path, body, headers)
        resp = conn.getresponse()
        if resp.status not in ok:
            raise TransportError(f"{where}: {what} answered HTTP {resp.status}"
                                 + (" (a redirect: not followed)" if 300 <= resp.status < 400 else ""))
        chunks, size = [], 0
        while chunk := resp.read1(1 << 16):
            size += len(chunk)
            if size > max_bytes:
                raise TransportError(f"{where}: {what} answered over {max_bytes} bytes")
            chunks.append(chunk)
        if expired.is_set():
            raise OSError("deadline")
        return resp.status, b"".join(chunks)
    except (OSError, http.client.HTTPException) as exc:
        if expired.is_set():
            raise TransportError(f"{where}: no complete answer from {what} within {whole or deadline:g} s") from None
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        if isinstance(exc, ssl.SSLError):
            reason = f"TLS: {exc.reason or exc}"
        raise TransportError(f"{where}: cannot reach {what}: {reason}") from None
    finally:
        watchdog.cancel()
        conn.close()
