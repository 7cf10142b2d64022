"""Files and settings checked by pydantic models, each mistake told in one line: `<key path>: <what>`.

A model's fields say what they accept (`says`, `holds`); `check` validates one mapping and turns
pydantic's errors into those lines, its unknown keys first, each with the known key it likely
misspells (a misspelt key is one mistake: the known key it hides is not reported missing too).
"""
from __future__ import annotations

import difflib
from typing import Annotated, Any, Callable, NamedTuple

from pydantic import (AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, Strict, ValidationError,
                      WrapValidator)
from pydantic_core import PydanticCustomError

SHOWN = 101     # characters of a string value quoted in a message (a name may be 100 long)


class Schema(BaseModel):
    """A mapping of a file: unknown keys are mistakes."""
    model_config = ConfigDict(extra="forbid", frozen=True)


def _whole(value: Any) -> Any:
    return int(value) if isinstance(value, str) and value.strip().isdigit() else value


# an integer, written as one or as digits; never a bool or a float (`true` and `1.5` are mistakes)
Int = Annotated[int, Strict(), BeforeValidator(_whole)]


def required() -> Any:
    """The default of a key that must be given: its absence is validated, a mistake `got None`."""
    return Field(None, validate_default=True)


def shown(value: Any) -> str:
    return repr(value[:SHOWN] if isinstance(value, str) else value)


def _error(template: str, value: Any) -> PydanticCustomError:
    # the message goes in as context: braces in a quoted value are not a template's
    return PydanticCustomError("fleethealth", "{message}", {"message": template.format(got=shown(value), value=value)})


def says(template: str) -> WrapValidator:
    """Any mistake in the value (its type, bounds, the checks inside) is this one message: `{got}` is
    the value as given, quoted; `{value}` as is."""
    def wrap(value: Any, handler: Callable) -> Any:
        try:
            return handler(value)
        except ValidationError:
            raise _error(template, value) from None
    return WrapValidator(wrap)


def holds(test: Callable[[Any], bool], template: str) -> AfterValidator:
    """A valid value must also pass `test`; else `template` (as in `says`)."""
    def check(value: Any) -> Any:
        if not test(value):
            raise _error(template, value)
        return value
    return AfterValidator(check)


def fail(template: str, value: Any = None) -> PydanticCustomError:
    """The error a validator raises for a mistake no type says."""
    return _error(template, value)


def key_path(loc: tuple) -> str:
    """('hosts', 0, 'role') -> hosts[0].role"""
    out = ""
    for part in loc:
        if part != "":
            out += f"[{part}]" if isinstance(part, int) else f".{part}" if out else str(part)
    return out


class Checked(NamedTuple):
    value: BaseModel | None     # None: there were mistakes
    lines: list[str]            # one per mistake
    typos: frozenset[str]       # known keys misspelt in the mapping (or in the one it inherits from)
    wrong: frozenset[str]       # its keys holding a mistake
    unknown: list[str]          # the lines about unknown keys (the first of `lines`)


def check(model: type[BaseModel], doc: Any, key: str = "", *, inherited: frozenset[str] = frozenset(),
          context: dict | None = None, unknown: str = "unknown key", suggest: bool = True,
          ) -> Checked:
    """Validate the mapping `doc` (at `key`) with `model`; `inherited`: the typos of the mapping `doc`
    inherits values from (a key missing because of one is not a mistake of `doc` too)."""
    try:
        return Checked(model.model_validate(doc, context=context), [], inherited, frozenset(), [])
    except ValidationError as exc:
        errors = exc.errors()
    known = [f.alias or name for name, f in model.model_fields.items()]
    given = doc if isinstance(doc, dict) else {}
    lines, typos = [], set(inherited - set(given))
    for err in sorted((e for e in errors if e["type"] == "extra_forbidden"), key=lambda e: str(e["loc"][-1])):
        name = str(err["loc"][-1])
        match = difflib.get_close_matches(name, known, n=1, cutoff=0.75) if suggest else []
        if match and match[0] not in given:
            typos.add(match[0])
        lines.append(f"{key_path((key, *err['loc']))}: {unknown}"
                     + (f" (did you mean {match[0]}?)" if match and match[0] not in given else ""))
    unknown_keys = list(lines)
    aliases = {name: f.alias for name, f in model.model_fields.items() if f.alias}   # a default's error names the field
    for err in errors:
        loc = (aliases.get(err["loc"][0], err["loc"][0]), *err["loc"][1:]) if err["loc"] else ()
        if err["type"] != "extra_forbidden" and not (loc and loc[-1] in typos):
            what = err["msg"] if err["type"] == "fleethealth" else f"{err['msg']}, got {shown(err['input'])}"
            lines.append(f"{key_path((key, *loc))}: {what}")
    return Checked(None, lines, frozenset(typos), frozenset(str(e["loc"][0]) for e in errors if e["loc"]),
                   unknown_keys)
