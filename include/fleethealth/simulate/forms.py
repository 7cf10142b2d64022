"""Deployment forms: the same fleet written as deployments write it.

The simulator writes every cluster in Kafka's default layout (`[%d] %p %m (%c)`, ZooKeeper's own
layout), one file per log per local hour, in the cluster's time zone. A form rewrites one cluster's
files afterwards into what another deployment writes (Strimzi's layout, a pod's container log files,
...), and amends the cluster's inventory entry to match (a pod folder's glob under `paths:`, a
`log_pattern:`): the events, and so the ground truth, stay the same.

A form is a function `(base, cluster, entry) -> None`: `base` the cluster's folder, `cluster` the
simulated cluster (`fleet.Cluster`), `entry` its inventory entry (`Cluster.inventory_entry`'s dict,
its `hosts` a list of dicts), which the form may change in place.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from . import layouts
from . import patterns
from . import containers
from .fleet import Cluster

Form = Callable[[Path, Cluster, dict], None]


def _kafka(base: Path, cluster: Cluster, entry: dict) -> None:
    """Kafka's default layout, as written: nothing to change."""


def _kraft_brokers_only(base: Path, cluster: Cluster, entry: dict) -> None:
    """A KRaft cluster as listed by who runs only its brokers (its controllers run by an operator):
    no controller in the entry, each broker written the way KRaft names it (`role: broker`, `node_id`),
    no `mode:`: the cluster's logs tell its mode. The controllers' files stay, unread."""
    entry["hosts"] = [{("node_id" if k == "broker_id" else k): ("broker" if k == "role" else v) for k, v in h.items()}
                      for h in entry["hosts"] if h.get("role") == "kafka" and not h.get("controller")]


FORMS: dict[str, Form] = {
    "kafka": _kafka,
    **layouts.FORMS,
    "json-ecs": patterns.json_ecs,
    "custom-pattern": patterns.custom_pattern,
    "cri": containers.cri,
    "docker-json": containers.docker_json,
    "kubectl": containers.kubectl,
    "kraft-brokers-only": _kraft_brokers_only,
}
DEFAULT = "kafka"


def resolve(log_format: str | dict[str, str] | None, clusters: list[str]) -> dict[str, str]:
    """cluster name -> form: one form for every cluster, or a mapping (clusters not in it: the default).
    ValueError naming an unknown form and every choice."""
    if isinstance(log_format, dict):
        chosen = {c: log_format.get(c, DEFAULT) for c in clusters}
    else:
        chosen = {c: log_format or DEFAULT for c in clusters}
    unknown = sorted({f for f in chosen.values() if f not in FORMS})
    if unknown:
        raise ValueError(f"unknown log format(s) {', '.join(unknown)} (choose from {', '.join(FORMS)})")
    return chosen


def apply(form: str, base: Path, cluster: Cluster, entry: dict) -> None:
    FORMS[form](base, cluster, entry)
