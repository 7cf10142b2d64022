"""Thresholds: declared once in thresholds.yaml (default, bounds, doc), validated centrally.

The declarations make a pydantic model, one field per threshold; it checks the defaults and an
override file alike. A bad value fails fast with one line naming the file, the key and what is wrong.
An override file may give a cluster its own values (under `clusters:`), but not of the thresholds that
shape the whole hour (`fleet: true` in thresholds.yaml: the look-back, the lifecycle).
"""
from __future__ import annotations

import difflib
from functools import lru_cache
from importlib import resources
from pathlib import Path
from collections.abc import Collection
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, Field, Strict, create_model

from fleethealth.runtime import config, yamlfile
from fleethealth.runtime.validation import Schema, check, holds, says


class ThresholdError(ValueError):
    pass


def declarations() -> dict[str, dict[str, Any]]:
    return yaml.safe_load(resources.files("fleethealth.gold").joinpath("thresholds.yaml").read_text())


def _accepts(decl: dict[str, Any]) -> Any:
    """The type of a threshold: one of its choices, or a number (an integer if its default is one)
    within its bounds."""
    if "choices" in decl:
        return Annotated[Literal[tuple(decl["choices"])], says(f"{{got}} is not one of {', '.join(decl['choices'])}")]
    whole = isinstance(decl["value"], int)
    bounds = [holds(lambda v, low=decl["min"]: v >= low, f"{{value}} is below the minimum {decl['min']}")
              ] if "min" in decl else []
    bounds += [holds(lambda v, high=decl["max"]: v <= high, f"{{value}} is above the maximum {decl['max']}")
               ] if "max" in decl else []
    return Annotated[(int if whole else float, Strict(),
                      says(f"expected {'an integer' if whole else 'a number'}, got {{got}}"), *bounds)]


@lru_cache(maxsize=1)
def _model() -> type[BaseModel]:
    """Every threshold, by its name in thresholds.yaml (a field's alias: the names hold dots); its
    default is validated too."""
    return create_model("Thresholds", __base__=Schema, **{
        name.replace(".", "__"): (_accepts(decl), Field(decl["value"], alias=name, validate_default=True))
        for name, decl in declarations().items()})


def _validate(doc: dict[str, Any], where: str) -> dict[str, Any]:
    values, lines, *_ = check(_model(), doc, unknown="unknown threshold", suggest=False)
    if lines:
        raise ThresholdError("\n".join(f"{where}: {_known(line)}" for line in lines))
    return values.model_dump(by_alias=True)


# thresholds of kinds there are no more: what became of them
RETIRED = {"known_bug_exposure.severity": "no longer a threshold: a version's catalogued bugs are the table "
                                          "gold.known_bug_exposure, not incidents (remove the key)"}


def _known(line: str) -> str:
    """An unknown threshold's line with the closest known name, else the known names of its kind, else
    where they are listed."""
    name, _, what = line.partition(": ")
    if what != "unknown threshold":
        return line
    if name in RETIRED:
        return f"{name}: {RETIRED[name]}"
    known = sorted(declarations())
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
    same_kind = [k for k in known if k.split(".")[0] == name.split(".")[0]]
    hint = (f"did you mean {close[0]}?" if close else f"known for {name.split('.')[0]}: {', '.join(same_kind)}"
            if same_kind else "the thresholds are listed in include/fleethealth/gold/thresholds.yaml")
    return f"{line} ({hint})"


CLUSTERS = "clusters"   # the key of an override file's per-cluster values


def fleet_only() -> list[str]:
    """The thresholds no cluster has a value of its own of."""
    return [name for name, decl in declarations().items() if decl.get("fleet")]


def load(override: str | Path | None = None, clusters: Collection[str] | None = None) -> dict[str, Any]:
    """Defaults, overridden by `override` (or $FLEETHEALTH_THRESHOLDS); every value validated (its
    clusters' too: load_all)."""
    return load_all(override, clusters)[0]


def load_all(override: str | Path | None = None, clusters: Collection[str] | None = None,
             ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """(the fleet's values, {cluster: its values} of each cluster the file gives values of its own): the
    defaults, overridden by `override` (or $FLEETHEALTH_THRESHOLDS), and a cluster's by its own under
    `clusters:`. Every value validated; `clusters`, when given: the inventory's, which a cluster of the
    file must be one of."""
    values = _validate({}, "thresholds.yaml")
    path = override or config.thresholds_path()
    if not path:
        return values, {}
    try:
        doc = yamlfile.load(path, "thresholds") or {}
    except yamlfile.YamlFileError as exc:
        raise ThresholdError(str(exc)) from None
    if not isinstance(doc, dict):
        raise ThresholdError(f"{path}: expected a mapping of threshold names to values")
    own = doc.pop(CLUSTERS, None) or {}
    lines, per_cluster = [], {}
    try:
        values = _validate(doc, str(path))
    except ThresholdError as exc:
        lines.append(str(exc))
    if not isinstance(own, dict):
        lines.append(f"{path}: {CLUSTERS}: expected a mapping of cluster names to their thresholds")
        own = {}
    for name, given in own.items():
        where = f"{path}: {CLUSTERS}: {name}"
        if clusters is not None and name not in clusters:
            lines.append(f"{where}: no such cluster in the inventory (its clusters: {', '.join(sorted(clusters))})")
            continue
        if not isinstance(given, dict):
            lines.append(f"{where}: expected a mapping of threshold names to values")
            continue
        fleet = [key for key in fleet_only() if key in given]
        lines += [f"{where}: {key}: one value for the whole fleet (set it at the top level)" for key in fleet]
        mine = {k: v for k, v in given.items() if k not in fleet}
        try:
            checked = _validate(mine, where)
        except ThresholdError as exc:
            lines.append(str(exc))
            continue
        per_cluster[str(name)] = {**values, **{k: checked[k] for k in mine}}
    if lines:
        raise ThresholdError("\n".join(lines))
    return values, per_cluster


def groups(fleet: dict[str, Any], per_cluster: dict[str, dict[str, Any]]) -> list[tuple[dict[str, Any], list[str]]]:
    """The clusters whose values differ from the fleet's, grouped by their values: [(values, clusters)]
    (a cluster whose own values equal the fleet's is no group: it is the fleet's)."""
    out: dict[tuple, tuple[dict, list[str]]] = {}
    for cluster, values in sorted(per_cluster.items()):
        if values != fleet:
            out.setdefault(tuple(sorted(values.items())), (values, []))[1].append(cluster)
    return list(out.values())
