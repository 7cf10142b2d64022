"""`http`: a live Jolokia bulk read of a host's MBeans (the ones silver and gold use, `fleethealth.mbeans`).

One POST of read requests to the host's `jolokia_url` (Jolokia 1.x and 2.x agents); the JSON
array of responses is landed as one line of `jmx/jolokia-live.<UTC time>.jsonl`, which silver parses
like any Jolokia export. A URL carrying credentials is refused (secrets belong in Airflow connections).
"""
from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime, timezone
from pathlib import Path

from fleethealth import mbeans
from fleethealth.transports import TransportError

TIMEOUT_S = 10
MAX_RESPONSE_BYTES = 64 * 1024**2
PREFIX = "jolokia-live."


def file_name(at: datetime) -> str:
    return f"{PREFIX}{at.astimezone(timezone.utc):%Y-%m-%dT%H-%M-%SZ}.jsonl"


def read(url: str, role: str, timeout: float = TIMEOUT_S) -> list[dict]:
    """The responses of a bulk read of `role`'s MBeans from the Jolokia agent at `url`."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TransportError(f"{url}: not an http(s) Jolokia URL")
    if parts.username or parts.password:
        raise TransportError(f"{parts.hostname}: jolokia_url must not carry credentials")
    body = json.dumps(mbeans.jolokia_requests(role)).encode()
    request = urllib.request.Request(url.rstrip("/") + "/", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp:  # noqa: S310 - scheme checked above
            raw = resp.read(MAX_RESPONSE_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise TransportError(f"{parts.netloc}: Jolokia answered HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise TransportError(f"{parts.netloc}: cannot reach Jolokia: {getattr(exc, 'reason', exc)}") from None
    if len(raw) > MAX_RESPONSE_BYTES:
        raise TransportError(f"{parts.netloc}: Jolokia response over {MAX_RESPONSE_BYTES} bytes")
    try:
        doc = json.loads(raw)
    except ValueError:
        raise TransportError(f"{parts.netloc}: Jolokia answered with something that is not JSON") from None
    if not isinstance(doc, list):
        raise TransportError(f"{parts.netloc}: Jolokia answered {str(doc)[:200]} to a bulk read")
    return doc


def land(url: str, role: str, folder: Path, at: datetime) -> Path:
    """Read now and write the responses as one JSON line into `folder`; returns the file."""
    responses = read(url, role)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / file_name(at)
    target.write_text(json.dumps(responses, separators=(",", ":")) + "\n")
    return target
