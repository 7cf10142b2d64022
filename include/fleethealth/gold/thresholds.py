"""Thresholds: declared once in thresholds.yaml (default, bounds, doc), validated centrally.

A bad value fails fast with one line naming the file, the key and what is wrong.
"""
from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from fleethealth.runtime import config
from fleethealth.runtime.vocabulary import SEVERITY_RANK  # noqa: F401 - the kinds' severities, as thresholds name them


class ThresholdError(ValueError):
    pass


def declarations() -> dict[str, dict[str, Any]]:
    return yaml.safe_load(resources.files("fleethealth.gold").joinpath("thresholds.yaml").read_text())


def _check(name: str, decl: dict[str, Any], value: Any, where: str) -> Any:
    default = decl["value"]
    if "choices" in decl:
        if value not in decl["choices"]:
            raise ThresholdError(f"{where}: {name}: {value!r} is not one of {', '.join(decl['choices'])}")
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
            isinstance(default, int) and not isinstance(value, int)):
        kind = "an integer" if isinstance(default, int) else "a number"
        raise ThresholdError(f"{where}: {name}: expected {kind}, got {value!r}")
    if "min" in decl and value < decl["min"]:
        raise ThresholdError(f"{where}: {name}: {value} is below the minimum {decl['min']}")
    if "max" in decl and value > decl["max"]:
        raise ThresholdError(f"{where}: {name}: {value} is above the maximum {decl['max']}")
    return value


def load(override: str | Path | None = None) -> dict[str, Any]:
    """Defaults, overridden by `override` (or $FLEETHEALTH_THRESHOLDS); every value validated."""
    decls = declarations()
    values = {name: _check(name, d, d["value"], "thresholds.yaml") for name, d in decls.items()}
    path = override or config.thresholds_path()
    if path:
        try:
            doc = yaml.safe_load(Path(path).read_text()) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise ThresholdError(f"{path}: cannot read thresholds: {exc}") from None
        if not isinstance(doc, dict):
            raise ThresholdError(f"{path}: expected a mapping of threshold names to values")
        for name, value in doc.items():
            if name not in decls:
                raise ThresholdError(f"{path}: {name}: unknown threshold (known: {', '.join(sorted(decls))})")
            values[name] = _check(name, decls[name], value, str(path))
    return values
