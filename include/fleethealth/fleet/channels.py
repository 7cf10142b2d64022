"""A notification channel as the inventory declares it (`notifications:`): where to send, and which
incidents it wants; the channel types (one module each, fleethealth.notify's or a deployment's,
registered by type name: `types()`) each validate their own keys and deliver; and `redact`, which
keeps the secret parts of a receiver's URL out of everything stored or printed."""
from __future__ import annotations

import importlib
import re
import urllib.parse
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from importlib import resources
from typing import Annotated, Any, ClassVar, Literal, Protocol

import yaml
from pydantic import AfterValidator, Field, ValidationInfo, field_validator

from fleethealth.runtime import config
from fleethealth.runtime.validation import Schema, check, fail, holds, key_path, required, says
from fleethealth.runtime.vocabulary import SEVERITY_RANK

# the channel types fleethealth ships, in the order an inventory mistake lists their keys; more come
# from FLEETHEALTH_NOTIFY_CHANNEL_MODULES (a module each)
BUILTIN_TYPES = ("fleethealth.notify.webhook", "fleethealth.notify.smtp", "fleethealth.notify.slack",
                 "fleethealth.notify.alertmanager")
# Alertmanager forgets an alert not re-posted by its endsAt: 4 hourly runs may be missed first
DEFAULT_ENDS_AFTER_S = 4 * 3600
MAX_NAME = 100            # a cluster, host or channel name (they go into lock and landing file names)
_NAME = re.compile(r"[A-Za-z0-9][\w.-]*")


def is_name(value: Any) -> bool:
    """A cluster, host or channel name: letters, digits, . _ -, at most MAX_NAME characters."""
    return isinstance(value, str) and bool(_NAME.fullmatch(value)) and len(value) <= MAX_NAME


def name_of(what: str) -> Any:
    """The type of a cluster's or channel's name (required: a missing one is `got None`)."""
    return Annotated[str, holds(is_name, ""),
                     says(f"expected a {what} name (letters, digits, . _ -; at most {MAX_NAME}), got {{got}}")]


@dataclass(frozen=True)
class Channel:
    name: str                   # the channel's key in gold.notifications
    type: str                   # its ChannelType.TYPE: webhook | smtp | slack | alertmanager | ...
    target: str                 # the value of its type's KEY: a URL (webhook, alertmanager) or an Airflow connection id
    to: tuple[str, ...] = ()    # smtp: the recipients
    ends_after_seconds: int = DEFAULT_ENDS_AFTER_S
    clusters: tuple[str, ...] = ()      # empty: every cluster
    kinds: tuple[str, ...] = ()         # empty: every kind
    min_severity: str | None = None
    options: tuple[tuple[str, Any], ...] = ()   # a channel type's other keys (none for the built-in types)

    def option(self, name: str, default: Any = None) -> Any:
        return dict(self.options).get(name, default)

    def urls(self) -> list[str]:
        """The URLs among its settings: what `redact` must keep out of an error about it."""
        values = [self.target, *(v for _, v in self.options)]
        return [v for v in values if isinstance(v, str) and "://" in v]

    def wants(self, cluster: str, kind: str, severity: str) -> bool:
        """Whether an incident (in its severity after the transition) passes the channel's filters."""
        return ((not self.clusters or cluster in self.clusters)
                and (not self.kinds or kind in self.kinds)
                and (self.min_severity is None
                     or SEVERITY_RANK.get(severity, 0) >= SEVERITY_RANK[self.min_severity]))


@lru_cache(maxsize=1)
def incident_kinds() -> frozenset[str]:
    """The incident kinds a channel may filter on: gold's, one runbook each. Read as data from
    gold/runbooks.yaml, not through fleethealth.gold.runbooks: fleet is below gold and imports none
    of it (a new kind needs its runbook anyway, so the file is always complete)."""
    doc = yaml.safe_load(resources.files("fleethealth").joinpath("gold/runbooks.yaml").read_text())
    return frozenset(doc["kinds"])


class ChannelType(Protocol):
    """What a channel type is: a module (or any object) with these names. Adding one is one module;
    `types()` finds it (fleethealth's in BUILTIN_TYPES, a deployment's in FLEETHEALTH_NOTIFY_CHANNEL_MODULES).

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
    - prepare() (optional): called once in the main thread before the run's channels deliver, each
      in its own thread (imports that must not run in two threads at once, such as Airflow's).
    """
    TYPE: ClassVar[str]
    KEY: ClassVar[str]
    Settings: ClassVar[type[Schema]]

    def deliver(self, channel: Channel, messages: Sequence[dict], now: datetime) -> Iterable[BaseException | None]:
        ...


def types() -> dict[str, ChannelType]:
    """The channel types by TYPE: fleethealth's, then FLEETHEALTH_NOTIFY_CHANNEL_MODULES's, each
    imported (a module is imported once; a wrong one raises naming it)."""
    out: dict[str, ChannelType] = {}
    for name in (*BUILTIN_TYPES, *config.notify_channel_modules()):
        module = importlib.import_module(name)
        missing = [a for a in ("TYPE", "KEY", "Settings", "deliver") if not hasattr(module, a)]
        if missing:
            raise TypeError(f"channel type module {name} lacks {', '.join(missing)} (fleet.channels.ChannelType)")
        if module.KEY not in module.Settings.model_fields:
            raise TypeError(f"channel type module {name}: its Settings lack its KEY {module.KEY!r}")
        out[module.TYPE] = module
    return out


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


# ------------------------------------------------------------------------------------------ validation
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
ConnId = Annotated[str, holds(_NAME.fullmatch, ""), says("expected an Airflow connection id")]


def _names(what: str) -> Any:
    return Annotated[tuple[str, ...], Field(min_length=1), says(f"expected a non-empty list of {what}s")]


class CommonSpec(Schema):
    """The keys of every entry of `notifications:`; validated with the context {"clusters": the
    inventory's cluster names}. A type's Settings add to them."""
    name: name_of("channel") = required()
    clusters: _names("cluster") = ()
    kinds: _names("kind") = ()
    min_severity: Annotated[Literal[tuple(SEVERITY_RANK)],
                            says(f"unknown severity {{got}} (one of {', '.join(SEVERITY_RANK)})")] | None = None

    @field_validator("clusters", "kinds")
    @classmethod
    def _known(cls, value: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        what = info.field_name[:-1]
        known = info.context["clusters"] if what == "cluster" else incident_kinds()
        for v in value:
            if v not in known:
                raise fail(f"unknown {what} {{got}} (known: {', '.join(sorted(known))})", v)
        return value


@lru_cache(maxsize=None)
def _spec(*settings: type[Schema]) -> type[Schema]:
    """The model of an entry: the common keys and the given types' Settings."""
    return type("ChannelSpec", (CommonSpec, *settings), {})


def parse_channels(doc: Any, clusters: set[str]) -> tuple[tuple[Channel, ...], list[str]]:
    """The `notifications:` list: (one Channel per entry, one line per mistake). Each entry is
    validated by the type whose KEY it has (types())."""
    if doc is None:
        return (), []
    if not isinstance(doc, list):
        return (), ["notifications: expected a list of channels"]
    by_key = {t.KEY: t for t in types().values()}
    common = set(CommonSpec.model_fields)
    out, problems, seen = [], [], set()
    for i, n in enumerate(doc):
        key = f"notifications[{i}]"
        if not isinstance(n, dict):
            problems.append(f"{key}: expected a mapping")
            continue
        name = n.get("name")
        if is_name(name):
            if name in seen:
                problems.append(f"{key}.name: duplicate channel name {name!r}")
            seen.add(name)
            key = f"notifications[{name}]"
        given = [k for k in by_key if k in n]
        if len(given) != 1:     # what else is wrong depends on which target was meant
            _, _, typos, _, unknown = check(_spec(*(t.Settings for t in by_key.values())), n, key,
                                            context={"clusters": clusters})
            problems += unknown
            if given or not typos & set(by_key):     # `webhok:` is one mistake, already reported
                problems.append(f"{key}: expected exactly one of {', '.join(by_key)}"
                                + (f", got {' and '.join(given)}" if given else ""))
            continue
        kind = by_key[given[0]]
        own = set(kind.Settings.model_fields) | common
        foreign = {}                 # another type's key: one line naming the type(s) it belongs to
        for k in n:
            if k not in own:
                owners = [t.KEY for t in by_key.values() if k in t.Settings.model_fields]
                if owners:
                    foreign[k] = owners
        problems += [f"{key_path((key, k))}: only with {' or '.join(owners)}" for k, owners in foreign.items()]
        spec, lines, _, _, _ = check(_spec(kind.Settings), {k: v for k, v in n.items() if k not in foreign}, key,
                                     context={"clusters": clusters})
        if spec is None or foreign:
            problems += lines
            continue
        fields = {f: getattr(spec, f) for f in type(spec).model_fields}
        target = fields.pop(kind.KEY)
        to = tuple(fields.pop("to", None) or ())
        ends_after = fields.pop("ends_after_seconds", DEFAULT_ENDS_AFTER_S)
        options = tuple(sorted((f, v) for f, v in fields.items() if f not in common))
        out.append(Channel(spec.name, kind.TYPE, target, to, ends_after, spec.clusters, spec.kinds,
                           spec.min_severity, options))
    return tuple(out), problems
