"""Thresholds: declared once in thresholds.yaml (default, bounds, doc), validated centrally.

The declarations make a pydantic model, one field per threshold; it checks the defaults and an
override file alike. A bad value fails fast with one line naming the file, the key and what is wrong.
"""
from __future__ import annotations

import difflib
from functools import lru_cache
from importlib import resources
from pathlib import Path
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


def load(override: str | Path | None = None) -> dict[str, Any]:
    """Defaults, overridden by `override` (or $FLEETHEALTH_THRESHOLDS); every value validated."""
    values = _validate({}, "thresholds.yaml")
    path = override or config.thresholds_path()
    if path:
        try:
            doc = yamlfile.load(path, "thresholds") or {}
        except yamlfile.YamlFileError as exc:
            raise ThresholdError(str(exc)) from None
        if not isinstance(doc, dict):
            raise ThresholdError(f"{path}: expected a mapping of threshold names to values")
        values = _validate(doc, str(path))
    return values
