"""The runbook of each incident kind (runbooks.yaml): what it means, what to check, what to do."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import yaml

RUNBOOKS = "runbooks.yaml"


class RunbookError(ValueError):
    """runbooks.yaml is malformed (a packaging or editing mistake: the tests catch it)."""


@dataclass(frozen=True)
class Runbook:
    kind: str
    means: str
    check: tuple[str, ...]
    do: tuple[str, ...]

    @property
    def first_step(self) -> str:
        return self.check[0]


def parse(text: str, path: str = RUNBOOKS) -> dict[str, Runbook]:
    doc = yaml.safe_load(text)
    if not isinstance(doc, dict) or not isinstance(doc.get("kinds"), dict):
        raise RunbookError(f"{path}: expected a mapping with a `kinds` mapping")
    out = {}
    for kind, raw in doc["kinds"].items():
        if not isinstance(raw, dict) or sorted(raw) != ["check", "do", "means"]:
            raise RunbookError(f"{path}: {kind}: expected exactly the keys means, check, do")
        steps = {k: raw[k] for k in ("check", "do")}
        if not isinstance(raw["means"], str) or not all(
                isinstance(v, list) and v and all(isinstance(s, str) and s for s in v) for v in steps.values()):
            raise RunbookError(f"{path}: {kind}: `means` is text, `check` and `do` non-empty lists of steps")
        out[kind] = Runbook(kind, raw["means"], tuple(raw["check"]), tuple(raw["do"]))
    return out


@lru_cache(maxsize=1)
def load() -> dict[str, Runbook]:
    """The runbooks shipped with fleethealth, by incident kind."""
    return parse(resources.files("fleethealth.gold").joinpath(RUNBOOKS).read_text(encoding="utf-8"))
