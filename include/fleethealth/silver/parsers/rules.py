"""A small engine for event rules kept as data (rules/<source>_events.yaml, rules/fields.yaml).

Each rule: `event_type`, a Java regex `match` tried against the record body in order (first match
wins), an optional `logger` filter, `fields`: typed field name -> capture group, and `set`: field
name -> constant. Several rules may share an event_type (one per Kafka/ZooKeeper version's wording);
fields are extracted with the regex of the rule that matched, and only on the rows it matched.

The rules are loaded and checked here, then matched inside the JVM by the engine's function
(engine/, `io.fleethealth.engine.EventRules`): one call per record finds the first matching rule and
cuts out its values, sparing the regex of every rule whose logger, prefix or hint rules it out
(tested on the record's UTF-8 bytes).
"""
from __future__ import annotations

import hashlib
import json
import re
import re._parser as sre_parse  # the stdlib regex parser: finds a rule's required literal text
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

import yaml
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

READERS = ("text", "list", "megabytes")
# the engine's functions (engine/: io.fleethealth.engine.Functions), a catalog of every session
ENGINE_FUNCTIONS = "fleethealth.engine"
MIB = 1024 * 1024


@dataclass(frozen=True)
class Field:
    name: str
    type: str          # Spark SQL type
    read: str = "text"
    doc: str = ""


def simple_name(logger: str) -> str:
    """A logger's simple name, as log4j's `%c{1}` writes it: the text after its last dot."""
    return logger.rsplit(".", 1)[-1]


def logger_matches(rule_logger: str, logger: str | None) -> bool:
    """A record's logger matches a rule's when equal or when one is the other's simple name (a host
    writing `%c{1}`: `LogCleaner` for `kafka.log.LogCleaner`); as the engine's EventRules matches."""
    if logger is None:
        return False
    return logger == rule_logger or logger == simple_name(rule_logger) or (
        "." not in rule_logger and simple_name(logger) == rule_logger)


def logger_in(logger: Column, qualified: tuple[str, ...]) -> Column:
    """Whether the column's logger is one of `qualified`, named in full or by its simple name."""
    return logger.isin(*sorted(set(qualified) | {simple_name(q) for q in qualified}))


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
    # texts one of which every match starts with, for a regex anchored at the body's start: a test
    # of a few leading bytes, cheaper still than the search for a hint
    prefixes: tuple[str, ...] = ()


class RuleError(ValueError):
    pass


def _read_yaml(name: str) -> dict:
    return yaml.safe_load(resources.files("fleethealth.silver.rules").joinpath(name).read_text()) or {}


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
    """The event rules of a log4j `source`: its declared `rules` file (fleethealth.fleet.sources; an
    undeclared name, a test's, reads `<name>_events.yaml`)."""
    from fleethealth.fleet.sources import event_rules

    name = event_rules().get(source, f"{source}_events.yaml")
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
                          required_literals(raw["match"]), required_prefixes(raw["match"])))
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


MAX_PREFIXES = 16


def _starts(items) -> list[tuple[str, bool]]:
    """(text, whole) pairs for a parsed sequence: every match begins with one of the texts; `whole`
    when the text is that alternative's entire match (so what follows the sequence extends it)."""
    alts = [("", True)]
    for op, arg in items:
        if op is sre_parse.LITERAL:
            step = [(chr(arg), True)]
        elif op is sre_parse.SUBPATTERN and not arg[1] and not arg[2]:   # (...) or (?:...), no flags
            step = _starts(arg[3])
        elif op is sre_parse.BRANCH:
            step = [s for branch in arg[1] for s in _starts(branch)]
        else:
            step = [("", False)]
        grown = list(dict.fromkeys((p + q, more) for p, whole in alts
                                   for q, more in (step if whole else [("", False)])))
        if len(grown) > MAX_PREFIXES:
            return [(p, False) for p, _ in alts]
        alts = grown
        if not any(whole for _, whole in alts):
            break
    return alts


def required_prefixes(pattern: str) -> tuple[str, ...]:
    """Texts one of which starts every match of `pattern` when it is anchored at the start (`^...`);
    () when it is not, or when some match may start with an empty text. Under (?m) `^` also matches
    after each line break, so no prefix holds."""
    parsed = sre_parse.parse(pattern)
    items = list(parsed)
    if parsed.state.flags & (re.IGNORECASE | re.MULTILINE) or not items or items[0] != (sre_parse.AT, sre_parse.AT_BEGINNING):
        return ()
    prefixes = tuple(p for p, _ in _starts(items[1:]))
    return prefixes if prefixes and all(prefixes) else ()


# The expressions below are written as Spark SQL text and parsed once in the JVM: built from
# Column calls they took thousands of py4j round trips (seconds per plan, more than the parse itself).
def sql_string(value: str) -> str:
    """`value` as a Spark SQL string literal."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _ident(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _by_rule(values: list[str], index: str) -> str:
    """SQL: values[index] (values are SQL literals, one per rule)."""
    return f"get(array({', '.join(values)}), {index})"


def event_type(rules: tuple[Rule, ...], index: str) -> str:
    """The matched rule's event_type, else 'other'."""
    if not rules:
        return "'other'"
    return f"coalesce({_by_rule([sql_string(r.event_type) for r in rules], index)}, 'other')"


LIST_PUNCTUATION = sql_string(r"[\[\]\s]")


def _read(f: Field, text: str) -> str:
    # an empty capture is NULL: a group that did not take part leaves an empty text too. A capture
    # the type cannot hold (`Fencing broker 99999999999`) is NULL too, never the hour's failure:
    # field_errors names it with its text
    text = f"nullif({text}, '')"
    if f.read == "list":    # a list with an item its type cannot hold is no list (NULL) either
        items = f"TRY_CAST(array_remove(split(regexp_replace({text}, {LIST_PUNCTUATION}, ''), ','), '') AS {f.type})"
        return f"IF(exists({items}, x -> x IS NULL), NULL, {items})"
    if f.read == "megabytes":
        return f"TRY_CAST(round(TRY_CAST(regexp_replace({text}, ',', '') AS DOUBLE) * {MIB}) AS {f.type})"
    return f"TRY_CAST({text} AS {f.type})"


FIELD_ERRORS = "field_errors"


def _failed(raw: str, typed: str) -> str:
    """SQL: whether the capture `raw` was there but `typed` (its _read) could not hold it."""
    return f"(nullif({raw}, '') IS NOT NULL AND {typed} IS NULL)"


def field_errors(fields: list[Field]) -> str:
    """SQL: map<field, captured text> of the fields whose capture their type could not hold (the
    field itself is NULL), NULL when there is none; over columns `_values` and the typed fields."""
    typed = [(k, f) for k, f in enumerate(fields) if f.type != "string"]
    if not typed:
        return f"CAST(NULL AS map<string,string>) AS {FIELD_ERRORS}"
    failed = [(k, f, _failed(f"get(_values, {k})", _ident(f.name))) for k, f in typed]
    entries = ", ".join(f"CASE WHEN {cond} THEN struct({sql_string(f.name)} AS field, get(_values, {k}) AS text) END"
                        for k, f, cond in failed)
    # the map (a lambda, interpreted) is built only for the rare record with a failed cast: the test
    # of each field is compiled
    return (f"CASE WHEN _values IS NOT NULL AND ({' OR '.join(c for _, _, c in failed)}) "
            f"THEN map_from_entries(filter(array({entries}), e -> e IS NOT NULL)) END AS {FIELD_ERRORS}")


# A body holding this character has its values cut with U+FFFD in its place (the rule engine's
# values have never held it; the engine's function keeps that)
SEP = "\u0001"


def rules_json(rules: tuple[Rule, ...], fields: list[Field]) -> str:
    """The rules as the engine's function reads them: each rule's regex, logger, prefixes and hints,
    and for each of `fields` where its value comes from (a group, a constant, or none)."""
    out = []
    for r in rules:
        values = None
        if r.fields or r.set:
            values = [{"group": r.fields[f.name]} if f.name in r.fields else
                      {"constant": str(r.set[f.name])} if f.name in r.set else {} for f in fields]
        out.append({"match": r.match, "logger": r.logger, "prefixes": list(r.prefixes), "hints": list(r.hints),
                    "values": values})
    return json.dumps({"rules": out}, sort_keys=True)


def register(spark, rules: tuple[Rule, ...], fields: list[Field]) -> str:
    """Registers `rules` as a function of the engine's catalog (named by their content) and returns
    its qualified name: `<name>(message, detail, logger)`."""
    text = rules_json(rules, fields)
    name = "events_" + hashlib.sha256(text.encode()).hexdigest()[:16]
    spark._jvm.io.fleethealth.engine.Functions.registerEvents(name, text)
    return f"{ENGINE_FUNCTIONS}.{name}"


def with_event_columns(df: DataFrame, rules: tuple[Rule, ...], message: str, detail: str, logger: str) -> DataFrame:
    """`df` plus event_type and one typed column per field the rules use (rules/fields.yaml order),
    from columns `message`, `detail` (the body: both joined by \\n) and `logger`: the first matching
    rule and its values from one call of the engine's function (_rule, _values), then each field
    reads its position."""
    fields = fields_of(rules)
    if rules:
        name = register(df.sparkSession, rules, fields)
        out = df.withColumn("_m", F.call_function(name, F.col(message), F.col(detail), F.col(logger)))
        out = out.select("*", F.col("_m.rule").alias("_rule"), F.col("_m.values").alias("_values")).drop("_m")
    else:
        out = df.withColumn("_rule", F.lit(None).cast("int")).withColumn("_values", F.lit(None).cast("array<string>"))
    cols = [f"{_read(f, f'get(_values, {k})')} AS {_ident(f.name)}" for k, f in enumerate(fields)]
    keep = [_ident(c) for c in out.columns if c not in ("_rule", "_values")]
    out = out.selectExpr(*keep, f"{event_type(rules, '_rule')} AS event_type", *cols, "_values")
    return out.selectExpr(*keep, "event_type", *[_ident(f.name) for f in fields], field_errors(fields))
