"""A small engine for event rules kept as data (rules/<source>_events.yaml, rules/fields.yaml).

Each rule: `event_type`, a Java regex `match` tried against the record body in order (first match
wins), an optional `logger` filter, `fields`: typed field name -> capture group, and `set`: field
name -> constant. Several rules may share an event_type (one per Kafka/ZooKeeper version's wording);
fields are extracted with the regex of the rule that matched, and only on the rows it matched.
"""
from __future__ import annotations

import re
import re._parser as sre_parse  # the stdlib regex parser: finds a rule's required literal text
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

import yaml
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

READERS = ("text", "list", "megabytes")
MIB = 1024 * 1024


@dataclass(frozen=True)
class Field:
    name: str
    type: str          # Spark SQL type
    read: str = "text"
    doc: str = ""


@dataclass(frozen=True)
class Rule:
    event_type: str
    match: str
    fields: dict[str, int] = field(default_factory=dict)
    set: dict[str, object] = field(default_factory=dict)
    logger: str | None = None
    # literal texts one of which every match contains (derived from `match`): a cheap byte search
    # that spares most records the regex (Spark's rlike decodes each value to a Java String first)
    hints: tuple[str, ...] = ()


class RuleError(ValueError):
    pass


def _read_yaml(name: str) -> dict:
    return yaml.safe_load(resources.files("fleethealth.rules").joinpath(name).read_text()) or {}


@lru_cache(maxsize=None)
def load_fields() -> dict[str, Field]:
    """Every extractable field, in declaration order (rules/fields.yaml)."""
    out = {}
    for name, spec in (_read_yaml("fields.yaml").get("fields") or {}).items():
        f = Field(name, spec["type"], spec.get("read", "text"), spec.get("doc", ""))
        if f.read not in READERS:
            raise RuleError(f"rules/fields.yaml: field {name!r}: read {f.read!r} (known: {', '.join(READERS)})")
        out[name] = f
    return out


@lru_cache(maxsize=None)
def load_rules(source: str) -> tuple[Rule, ...]:
    name = f"{source}_events.yaml"
    known = load_fields()
    rules = []
    for i, raw in enumerate(_read_yaml(name).get("rules", [])):
        where = f"rules/{name}: rule {i} ({raw.get('event_type', '?')})"
        try:
            pattern = re.compile(raw["match"])
        except (KeyError, re.error) as exc:
            raise RuleError(f"{where}: bad or missing `match`: {exc}") from None
        fields = raw.get("fields") or {}
        consts = raw.get("set") or {}
        for fname in [*fields, *consts]:
            if fname not in known:
                raise RuleError(f"{where}: unknown field {fname!r} (rules/fields.yaml has: {', '.join(known)})")
        for fname, group in fields.items():
            if not isinstance(group, int) or not 1 <= group <= pattern.groups:
                raise RuleError(f"{where}: field {fname!r} names group {group!r}, "
                                f"the regex has {pattern.groups}")
        rules.append(Rule(raw["event_type"], raw["match"], dict(fields), dict(consts), raw.get("logger"),
                          required_literals(raw["match"])))
    return tuple(rules)


def fields_of(rules: tuple[Rule, ...]) -> list[Field]:
    """The fields the rules extract or set, in rules/fields.yaml order."""
    used = {f for r in rules for f in [*r.fields, *r.set]}
    return [f for name, f in load_fields().items() if name in used]


MIN_HINT = 4


def _hints(items) -> tuple[str, ...]:
    """Texts one of which every match of a parsed sequence contains: its longest literal run, or the
    hints of each alternative of a mandatory group, whichever has the longer shortest text."""
    candidates, run = [], []
    for op, arg in list(items) + [(None, None)]:
        if op is sre_parse.LITERAL:
            run.append(chr(arg))
            continue
        if run:
            candidates.append(("".join(run),))
            run = []
        if op is sre_parse.SUBPATTERN and not arg[1] and not arg[2]:   # (...) or (?:...), no flags
            inner = _hints(arg[3])
            if inner:
                candidates.append(inner)
        elif op is sre_parse.BRANCH:
            per_branch = [_hints(b) for b in arg[1]]
            if all(per_branch):
                candidates.append(tuple(h for hs in per_branch for h in hs))
    return max(candidates, key=lambda c: min(map(len, c)), default=())


def required_literals(pattern: str) -> tuple[str, ...]:
    """Texts one of which occurs in every match of `pattern` (any-of); () when none of at least
    MIN_HINT characters can be told (then the regex alone decides)."""
    parsed = sre_parse.parse(pattern)
    if parsed.state.flags & re.IGNORECASE:
        return ()
    hints = _hints(parsed)
    return hints if hints and min(map(len, hints)) >= MIN_HINT else ()


def _condition(rule: Rule, body: Column, logger: Column) -> Column:
    cond = body.rlike(rule.match)
    if rule.hints:
        has_hint = None
        for h in rule.hints:
            has_hint = body.contains(h) if has_hint is None else has_hint | body.contains(h)
        cond = has_hint & cond
    if rule.logger:
        cond = (logger == rule.logger) & cond
    return cond


def rule_index(rules: tuple[Rule, ...], body: Column, logger: Column) -> Column:
    """0-based index of the first matching rule, NULL when none matches."""
    expr = None
    for i, rule in enumerate(rules):
        cond = _condition(rule, body, logger)
        expr = F.when(cond, F.lit(i)) if expr is None else expr.when(cond, F.lit(i))
    return F.lit(None).cast("int") if expr is None else expr


def event_type(rules: tuple[Rule, ...], index: Column) -> Column:
    """The matched rule's event_type, else 'other'."""
    if not rules:
        return F.lit("other")
    return F.coalesce(F.get(F.array(*[F.lit(r.event_type) for r in rules]), index), F.lit("other"))


def _read(f: Field, text: Column) -> Column:
    # an empty capture is NULL: regexp_extract cannot tell an empty group from one that did not take part
    text = F.nullif(text, F.lit(""))
    if f.read == "list":
        return F.array_remove(F.split(F.regexp_replace(text, r"[\[\]\s]", ""), ","), "").cast(f.type)
    if f.read == "megabytes":
        return F.round(F.regexp_replace(text, ",", "").cast("double") * MIB).cast(f.type)
    return text.cast(f.type)


def with_event_columns(df: DataFrame, rules: tuple[Rule, ...], body: str, logger: Column) -> DataFrame:
    """`df` plus event_type and one typed column per field the rules use (rules/fields.yaml order).

    Three small projections rather than one expression per (rule, field): the matching rule's index;
    then capture groups 1..n of *that* rule's regex (a per-row pattern, on matched rows only); then
    each field picks its group by rule index. Generated code stays small (one CASE per rule would
    outgrow the JVM's 64 KB method limit and fall back to interpretation), and unmatched records
    (most) cost one NULL test per group.
    """
    text = F.col(body)
    out = df.withColumn("_rule", rule_index(rules, text, logger))
    index = F.col("_rule")
    used = sorted({g for r in rules for g in r.fields.values()})
    pattern = F.get(F.array(*[F.lit(r.match) for r in rules]), index)
    n_groups = F.get(F.array(*[F.lit(re.compile(r.match).groups) for r in rules]), index)
    out = out.select("*", event_type(rules, index).alias("event_type"),
                     *[F.when(n_groups >= g, F.call_function("regexp_extract", text, pattern, F.lit(g)))
                       .alias(f"_g{g}") for g in used])
    cols = []
    for f in fields_of(rules):
        expr = None
        by_group: dict[int, list[int]] = {}
        consts: dict[str, list[int]] = {}
        for i, rule in enumerate(rules):
            if f.name in rule.fields:
                by_group.setdefault(rule.fields[f.name], []).append(i)
            elif f.name in rule.set:
                consts.setdefault(str(rule.set[f.name]), []).append(i)
        for value, ids in [*((F.col(f"_g{g}"), ids) for g, ids in by_group.items()),
                           *((F.lit(c), ids) for c, ids in consts.items())]:
            cond = index.isin(ids)
            expr = F.when(cond, value) if expr is None else expr.when(cond, value)
        cols.append(_read(f, expr).alias(f.name))
    helpers = ["_rule", *[f"_g{g}" for g in used]]
    return out.select(*[c for c in out.columns if c not in helpers], *cols)
