"""Maintenance windows: the inventory's `maintenance:` list, each a cluster (or some of its hosts), from
and to (a date and time with its offset) and a reason.

During a window gold records incidents as ever; people's channels get nothing of an incident on what it
covers (fleethealth.notify), and what is still open when it ends is sent then, once; Alertmanager keeps
the alerts, labelled `maintenance`, so a team's silence on that label applies.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any

from pydantic import AwareDatetime, Field, StringConstraints, ValidationInfo, field_validator, model_validator

from fleethealth.fleet.channels import name_of
from fleethealth.runtime.validation import Schema, check, fail, required, says

WHEN = "expected a date and time with its offset, e.g. 2026-11-20T22:00:00Z or 2026-11-20T23:00:00+01:00, got {got}"


@dataclass(frozen=True)
class Window:
    cluster: str
    start: datetime          # aware
    end: datetime
    reason: str
    hosts: tuple[str, ...] = ()   # empty: the whole cluster

    def covers(self, cluster: str, host: str | None, at: datetime) -> bool:
        """Whether something of `cluster` on `host` (None: no one host, e.g. the cluster's quorum) at `at`
        (aware) is in this window."""
        return (cluster == self.cluster and (not self.hosts or host in self.hosts)
                and self.start <= at < self.end)

    def text(self) -> str:
        return (f"maintenance of {self.cluster}{' (' + ', '.join(self.hosts) + ')' if self.hosts else ''} "
                f"{self.start:%Y-%m-%d %H:%M%z} – {self.end:%Y-%m-%d %H:%M%z}: {self.reason}")


class WindowSpec(Schema):
    cluster: name_of("cluster") = required()
    hosts: Annotated[tuple[str, ...], Field(min_length=1), says("expected a non-empty list of host names")] = ()
    start: Annotated[AwareDatetime, says(WHEN)] = Field(None, alias="from", validate_default=True)
    end: Annotated[AwareDatetime, says(WHEN)] = Field(None, alias="to", validate_default=True)
    reason: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500),
                      says("expected a reason (a non-empty text), got {got}")] = required()

    @field_validator("cluster")
    @classmethod
    def _known_cluster(cls, value: str, info: ValidationInfo) -> str:
        known = info.context["clusters"]
        if value not in known:
            raise fail(f"unknown cluster {{got}} (known: {', '.join(sorted(known))})", value)
        return value

    @model_validator(mode="after")
    def _hosts_and_order(self, info: ValidationInfo) -> WindowSpec:
        own = info.context["clusters"][self.cluster]
        for h in self.hosts:
            if h not in own:
                raise fail(f"hosts: {{got}} is not a host of cluster {self.cluster}", h)
        if self.end <= self.start:
            raise fail(f"to: {self.end.isoformat()} is not after from: {self.start.isoformat()}")
        return self


def parse(doc: Any, clusters: dict[str, set[str]]) -> tuple[tuple[Window, ...], list[str]]:
    """The `maintenance:` list (`clusters`: each cluster's host names): (its windows, one line per mistake)."""
    if doc is None:
        return (), []
    if not isinstance(doc, list):
        return (), ["maintenance: expected a list of windows"]
    out, problems = [], []
    for i, w in enumerate(doc):
        spec, lines, *_ = check(WindowSpec, w, f"maintenance[{i}]", context={"clusters": clusters})
        problems += lines
        if spec is not None:
            out.append(Window(spec.cluster, spec.start, spec.end, spec.reason, spec.hosts))
    return tuple(out), problems
