"""The notification channel type seam: what a channel type is (`ChannelType`: one module each,
fleethealth's or a deployment's), the building blocks of its Settings (`Url`, `ConnId`), and
`redact`, which keeps the secret parts of a receiver's URL out of everything stored or printed.
The inventory's `notifications:` is validated by the types in notify.inventory."""
from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Annotated, Any, ClassVar, Protocol

from pydantic import AfterValidator

from fleethealth.fleet.channels import NAME, Channel
from fleethealth.runtime.validation import Schema, fail, holds, says


class ChannelType(Protocol):
    """What a channel type is: a module (or any object) with these names. Adding one is one module;
    `notify.inventory.types()` finds it (fleethealth's imported there, a deployment's
    named in FLEETHEALTH_NOTIFY_CHANNEL_MODULES).

    - TYPE: its name (Channel.type, e.g. "webhook"); KEY: the inventory key naming its target
      (e.g. "webhook", "smtp_conn_id"), which also says which type an entry of `notifications:` is.
    - Settings: a pydantic model (runtime.validation.Schema) of its keys, KEY among them: the
      inventory's validation of an entry is the common keys (name, clusters, kinds, min_severity)
      plus these. A key its Settings do not declare is a mistake ("only with <the type declaring it>").
    - deliver(channel, messages, now): deliver the messages (notify.messages.message dicts, in order)
      and yield one outcome per message, in order, as each is known: None (the receiver took it)
      or the exception saying why not. The caller records each outcome before it asks for the next
      one and may stop asking (a deadline): nothing may be sent ahead of its outcome being asked for.
    - REFRESH (optional, default False): the receiver holds state, not messages, and forgets what it
      is not told again (Alertmanager): each run, quiet or not and whatever the hours' age, gives it
      the current state of every open incident it wants and ends each it was told is open and no
      longer is (resolved or retracted); no news rule, no --no-notify (notify.run._state).
    - heartbeat(channel, now) (optional): called once by each notify run, whatever it sends, yielding
      one outcome: Alertmanager's Watchdog, the alert that says fleethealth still runs.
    - prepare() (optional): called once in the main thread before the run's channels deliver, each
      in its own thread (imports that must not run in two threads at once, such as Airflow's).
    """
    TYPE: ClassVar[str]
    KEY: ClassVar[str]
    Settings: ClassVar[type[Schema]]

    def deliver(self, channel: Channel, messages: Sequence[dict], now: datetime) -> Iterable[BaseException | None]:
        ...


# ------------------------------------------------------------------------------------------ redaction
_URL_RE = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>()\[\]{},]+")


def redact_url(url: str) -> str:
    """scheme://host[:port], and /… when it had more (a path, a query, credentials: where a
    webhook's token lives); an unreadable URL is only its scheme."""
    try:
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return url.split("://", 1)[0] + "://…"
    if ":" in host:
        host = f"[{host}]"
    base = f"{parts.scheme}://{host}" + (f":{port}" if port else "")
    more = parts.path not in ("", "/") or parts.query or parts.fragment or parts.username or parts.password
    return base + ("/…" if more else "")


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every URL in it redacted (redact_url) and each secret (a receiver's URL: its path,
    query and credentials; a connection's password) replaced by …, wherever it appears: an HTTP
    library's error quotes the path alone ("with url: /hook/<token>")."""
    parts: set[str] = set()
    for secret in secrets:
        if not secret:
            continue
        if "://" in secret:
            try:
                u = urllib.parse.urlsplit(secret)
            except ValueError:
                continue
            path_query = u.path + ("?" + u.query if u.query else "")
            parts |= {secret, path_query, u.path, u.query, u.fragment, u.username or "", u.password or "",
                      urllib.parse.unquote(u.path)}
        else:
            parts.add(secret)
    for part in sorted((p for p in parts if len(p) > 1 and p != "/"), key=len, reverse=True):
        text = text.replace(part, "/…" if part.startswith("/") else "…")
    return _URL_RE.sub(lambda m: redact_url(m.group(0)), text)


# -------------------------------------------------------------------------- building blocks of a type's Settings
def _url(value: Any) -> str:
    """A webhook or Alertmanager URL; a mistake does not repeat it (a webhook's path may hold its token)."""
    if not isinstance(value, str):
        raise fail(f"expected an http:// or https:// URL, got {type(value).__name__}")
    try:
        parts = urllib.parse.urlsplit(value)
        parts.port
    except ValueError:
        raise fail("not a valid URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise fail("expected an http:// or https:// URL with a host")
    if parts.username or parts.password:
        raise fail("must not carry credentials (user:password@): keep secrets in Airflow connections")
    return value


# building blocks of a channel type's Settings
Url = Annotated[Any, AfterValidator(_url)]
ConnId = Annotated[str, holds(NAME.fullmatch, ""), says("expected an Airflow connection id")]
