"""A notification channel as the inventory declares it (`notifications:`): where to send, and which
incidents it wants. fleethealth.notify sends to it."""
from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Annotated, Any, Literal

import yaml
from pydantic import AfterValidator, Field, ValidationInfo, field_validator

from fleethealth.runtime.validation import Int, Schema, check, fail, holds, required, says
from fleethealth.runtime.vocabulary import SEVERITY_RANK

# how a channel is reached: the inventory key naming its target -> the channel's type
TARGETS = {"webhook": "webhook", "smtp_conn_id": "smtp", "slack_conn_id": "slack", "alertmanager": "alertmanager"}
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
    type: str                   # webhook | smtp | slack | alertmanager
    target: str                 # the URL (webhook, alertmanager) or the Airflow connection id
    to: tuple[str, ...] = ()    # smtp: the recipients
    ends_after_seconds: int = DEFAULT_ENDS_AFTER_S
    clusters: tuple[str, ...] = ()      # empty: every cluster
    kinds: tuple[str, ...] = ()         # empty: every kind
    min_severity: str | None = None

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


Url = Annotated[Any, AfterValidator(_url)]
ConnId = Annotated[str, holds(_NAME.fullmatch, ""), says("expected an Airflow connection id")]
TO = "expected a non-empty list of e-mail addresses (required with smtp_conn_id)"


def _names(what: str) -> Any:
    return Annotated[tuple[str, ...], Field(min_length=1), says(f"expected a non-empty list of {what}s")]


class ChannelSpec(Schema):
    """One entry of `notifications:`; validated with the context {"target": the one target key given,
    "clusters": the inventory's cluster names}."""
    name: name_of("channel") = required()
    webhook: Url = None
    smtp_conn_id: ConnId = None
    slack_conn_id: ConnId = None
    alertmanager: Url = None
    to: Annotated[tuple[Annotated[str, holds(lambda a: "@" in a, "")], ...], Field(min_length=1),
                  says(TO)] = required()
    ends_after_seconds: Annotated[Int, Field(ge=3600),
                                  says("expected an integer >= 3600 (one hourly run), got {got}")] = DEFAULT_ENDS_AFTER_S
    clusters: _names("cluster") = ()
    kinds: _names("kind") = ()
    min_severity: Annotated[Literal[tuple(SEVERITY_RANK)],
                            says(f"unknown severity {{got}} (one of {', '.join(SEVERITY_RANK)})")] | None = None

    @field_validator("to", mode="wrap")
    @classmethod
    def _with_smtp_only(cls, value: Any, handler, info: ValidationInfo) -> Any:
        if info.context["target"] != "smtp_conn_id":
            if value is not None:
                raise fail("only with smtp_conn_id")
            return None
        return handler(value)

    @field_validator("ends_after_seconds", mode="before")
    @classmethod
    def _with_alertmanager_only(cls, value: Any, info: ValidationInfo) -> Any:
        if info.context["target"] != "alertmanager":
            raise fail("only with alertmanager")
        return value

    @field_validator("clusters", "kinds")
    @classmethod
    def _known(cls, value: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        what = info.field_name[:-1]
        known = info.context["clusters"] if what == "cluster" else incident_kinds()
        for v in value:
            if v not in known:
                raise fail(f"unknown {what} {{got}} (known: {', '.join(sorted(known))})", v)
        return value


def parse_channels(doc: Any, clusters: set[str]) -> tuple[tuple[Channel, ...], list[str]]:
    """The `notifications:` list: (one Channel per entry, one line per mistake)."""
    if doc is None:
        return (), []
    if not isinstance(doc, list):
        return (), ["notifications: expected a list of channels"]
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
        given = [k for k in TARGETS if k in n]
        spec, lines, typos, _, unknown = check(ChannelSpec, n, key, context={
            "target": given[0] if len(given) == 1 else None, "clusters": clusters})
        if len(given) != 1:     # what else is wrong depends on which target was meant
            problems += unknown
            if given or not typos & set(TARGETS):     # `webhok:` is one mistake, already reported
                problems.append(f"{key}: expected exactly one of {', '.join(TARGETS)}"
                                + (f", got {' and '.join(given)}" if given else ""))
        elif spec is None:
            problems += lines
        else:
            [how] = given
            out.append(Channel(spec.name, TARGETS[how], getattr(spec, how), spec.to or (),
                               spec.ends_after_seconds, spec.clusters, spec.kinds, spec.min_severity))
    return tuple(out), problems
