"""`http`: a live Jolokia bulk read of a host's MBeans (the ones gold uses: `fleethealth.fleet.mbeans`).

One POST of read requests to the host's `jolokia_url` (Jolokia 1.x and 2.x agents); the JSON
array of responses is landed as one line of `jmx/jolokia-live.<UTC time>.jsonl`, which silver parses
like any Jolokia export. A URL carrying credentials is refused (secrets belong in Airflow connections).

The agent is not trusted: the whole request has one deadline (a server that trickles bytes is cut
off), redirects are not followed, the answer is capped in size and parsed without recursion limits
being an exception, and no error message quotes the answer's body.
"""
from __future__ import annotations

import json
import urllib.parse
from datetime import datetime, timezone
from pathlib import Path

from fleethealth.fleet import mbeans
from fleethealth.pull.transports import web
from fleethealth.pull.transports.base import TransportError

TIMEOUT_S = 10                  # connect, and each read of the socket
DEADLINE_S = 30                 # the whole request: connect, send, headers, body
MAX_RESPONSE_BYTES = 64 * 1024**2
PREFIX = "jolokia-live."


def file_name(at: datetime) -> str:
    return f"{PREFIX}{at.astimezone(timezone.utc):%Y-%m-%dT%H-%M-%SZ}.jsonl"


def read(url: str, processes: tuple[str, ...], timeout: float = TIMEOUT_S, deadline: float | None = None) -> list[dict]:
    """The responses of a bulk read of the MBeans of a host running `processes` (Host.processes) from
    the Jolokia agent at `url`, all of it within `deadline` seconds (default DEADLINE_S)."""
    deadline = DEADLINE_S if deadline is None else deadline
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TransportError(f"{parts.scheme or 'a URL without scheme'}://{parts.hostname or ''}: "
                             "not an http(s) Jolokia URL")
    if parts.username or parts.password:
        raise TransportError(f"{parts.hostname}: jolokia_url must not carry credentials")
    where = parts.netloc
    path = (parts.path or "/").rstrip("/") + "/"
    _, raw = web.request(urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, parts.query, "")),
                      json.dumps(mbeans.jolokia_requests(processes)).encode(), {"Content-Type": "application/json"},
                      what="Jolokia", timeout=timeout, deadline=deadline, max_bytes=MAX_RESPONSE_BYTES)
    try:
        doc = json.loads(raw)
    except RecursionError:
        raise TransportError(f"{where}: Jolokia's answer is nested too deeply to be a bulk read") from None
    except ValueError:
        raise TransportError(f"{where}: Jolokia answered with something that is not JSON") from None
    if not isinstance(doc, list) or not all(isinstance(x, dict) for x in doc):
        kind = type(doc).__name__ if not isinstance(doc, list) else "list of other things than responses"
        raise TransportError(f"{where}: Jolokia answered a JSON {kind} to a bulk read (expected a list of "
                             "responses)")
    return doc


def land(url: str, processes: tuple[str, ...], folder: Path, at: datetime, deadline: float | None = None) -> Path:
    """Read now (within `deadline` seconds, default DEADLINE_S) and write the responses as one JSON line
    into `folder`; returns the file."""
    responses = read(url, processes, deadline=deadline)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / file_name(at)
    target.write_text(json.dumps(responses, separators=(",", ":")) + "\n")
    return target
