"""The inventory's `notifications:`, validated by the channel types (`types()`: fleethealth's, then
FLEETHEALTH_NOTIFY_CHANNEL_MODULES's), and the inventory loaded with its channels
(`load_inventory`: fleet.inventory's, a mistake in `notifications:` reported with the others)."""
from __future__ import annotations

import importlib
import itertools
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, Strict, ValidationInfo, field_validator

from fleethealth.fleet import inventory as fleet_inventory
from fleethealth.fleet.channels import DEFAULT_ENDS_AFTER_S, Channel, is_name, name_of
from fleethealth.notify.channels import ChannelType
from fleethealth.runtime import config
from fleethealth.runtime.validation import Schema, check, fail, key_path, required, says
from fleethealth.runtime.vocabulary import SEVERITY_RANK


def load_inventory(path: str | Path) -> fleet_inventory.Inventory:
    """fleet.inventory.load_inventory with `notifications:` read: an InventoryError lists a bad
    channel with the inventory's other mistakes."""
    return fleet_inventory.load_inventory(path, notifications=parse_channels)


def host_names(inventory: fleet_inventory.Inventory) -> dict[tuple[str, str], str]:
    """(cluster, process name: broker-2, controller-3000, zk-1) -> host, of every host of `inventory`."""
    return {(h.cluster, h.entity): h.host for h in inventory.hosts}


def parse_inventory(doc: Any, name: str = "<inventory>", base_dir: Path | None = None) -> fleet_inventory.Inventory:
    """fleet.inventory.parse_inventory with `notifications:` read (load_inventory)."""
    return fleet_inventory.parse_inventory(doc, name, base_dir, notifications=parse_channels)


@lru_cache(maxsize=1)
def incident_kinds() -> frozenset[str]:
    """The incident kinds a channel may filter on: gold's, one runbook each (a new kind needs its
    runbook anyway, so the runbooks are always complete)."""
    from fleethealth.gold import runbooks

    return frozenset(runbooks.load())


def types() -> dict[str, ChannelType]:
    """The channel types by TYPE: fleethealth's (in the order an inventory mistake lists their keys),
    then FLEETHEALTH_NOTIFY_CHANNEL_MODULES's, each imported (a module is imported once; a wrong one
    raises naming it)."""
    from fleethealth.notify import alertmanager, slack, smtp, webhook

    # a deployment's modules by the names it configured: the one import by name (the extension point)
    extra = (importlib.import_module(name) for name in config.notify_channel_modules())
    out: dict[str, ChannelType] = {}
    for module in itertools.chain((webhook, smtp, slack, alertmanager), extra):
        name = module.__name__
        missing = [a for a in ("TYPE", "KEY", "Settings", "deliver") if not hasattr(module, a)]
        if missing:
            raise TypeError(f"channel type module {name} lacks {', '.join(missing)} (notify.channels.ChannelType)")
        if module.KEY not in module.Settings.model_fields:
            raise TypeError(f"channel type module {name}: its Settings lack its KEY {module.KEY!r}")
        out[module.TYPE] = module
    return out


# ------------------------------------------------------------------------------------------ validation
def _names(what: str) -> Any:
    return Annotated[tuple[str, ...], Field(min_length=1), says(f"expected a non-empty list of {what}s")]


class CommonSpec(Schema):
    """The keys of every entry of `notifications:`; validated with the context {"clusters": the
    inventory's cluster names}. A type's Settings add to them."""
    name: name_of("channel") = required()
    clusters: _names("cluster") = ()
    kinds: _names("kind") = ()
    exclude_clusters: _names("cluster") = ()
    exclude_kinds: _names("kind") = ()
    min_severity: Annotated[Literal[tuple(SEVERITY_RANK)],
                            says(f"unknown severity {{got}} (one of {', '.join(SEVERITY_RANK)})")] | None = None
    roots_only: Annotated[bool, Strict(), says("expected true or false, got {got}")] = False

    @field_validator("clusters", "kinds", "exclude_clusters", "exclude_kinds")
    @classmethod
    def _known(cls, value: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        what = "cluster" if info.field_name.endswith("clusters") else "kind"
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
                           spec.min_severity, options, spec.exclude_clusters, spec.exclude_kinds, spec.roots_only))
    return tuple(out), problems
