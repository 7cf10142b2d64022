"""The runbook of each incident kind (runbooks.yaml): what it means, what to check, what to do."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import yaml

RUNBOOKS = "runbooks.yaml"


class RunbookError(ValueError):
    """runbooks.yaml is malformed (a packaging or editing mistake: the tests catch it)."""


MODES = ("kraft", "zookeeper")   # a kind's runbook may say otherwise for a cluster in one mode (fleet.inventory.MODES)


@dataclass(frozen=True)
class Runbook:
    kind: str
    means: str
    check: tuple[str, ...]
    do: tuple[str, ...]
    modes: tuple[tuple[str, Runbook], ...] = ()   # the runbook of a cluster in that mode, where it differs

    @property
    def first_step(self) -> str:
        return self.check[0]

    def in_mode(self, mode: str | None) -> Runbook:
        """This runbook for a cluster in `mode` (None: unknown, the general one)."""
        return dict(self.modes).get(mode, self)


def _book(kind: str, raw, path: str, base: Runbook | None = None) -> Runbook:
    keys = ["check", "do", "means"]
    given = sorted(k for k in raw if k not in MODES) if isinstance(raw, dict) else None
    if given is None or (given != keys if base is None else not set(given) <= set(keys) or not given):
        raise RunbookError(f"{path}: {kind}: expected " + ("exactly the keys" if base is None else "some of the keys")
                           + " means, check, do")
    fields = {k: raw.get(k, getattr(base, k, None)) for k in keys}
    if not isinstance(fields["means"], str) or not all(
            isinstance(v, (list, tuple)) and v and all(isinstance(s, str) and s for s in v)
            for v in (fields["check"], fields["do"])):
        raise RunbookError(f"{path}: {kind}: `means` is text, `check` and `do` non-empty lists of steps")
    return Runbook(kind, fields["means"], tuple(fields["check"]), tuple(fields["do"]))


def parse(text: str, path: str = RUNBOOKS) -> dict[str, Runbook]:
    doc = yaml.safe_load(text)
    if not isinstance(doc, dict) or not isinstance(doc.get("kinds"), dict):
        raise RunbookError(f"{path}: expected a mapping with a `kinds` mapping")
    out = {}
    for kind, raw in doc["kinds"].items():
        base = _book(kind, raw, path)
        modes = tuple((m, _book(f"{kind}.{m}", raw[m], path, base)) for m in MODES if m in raw)
        out[kind] = Runbook(base.kind, base.means, base.check, base.do, tuple((m, Runbook(kind, b.means, b.check, b.do))
                                                                              for m, b in modes))
    return out


def of(kind: str, mode: str | None = None) -> Runbook | None:
    """The runbook of an incident of `kind` on a cluster in `mode` (None: unknown), or None."""
    book = load().get(kind)
    return book.in_mode(mode) if book else None


@lru_cache(maxsize=1)
def load() -> dict[str, Runbook]:
    """The runbooks shipped with fleethealth, by incident kind."""
    return parse(resources.files("fleethealth.gold").joinpath(RUNBOOKS).read_text(encoding="utf-8"))
