"""The known-bug catalogue (known_bugs.yaml): loading with validation, Kafka version order, lookups.

    bugs_affecting("0.10.1.0")  -> the catalogued bugs whose affected ranges hold that version

A mistake in the catalogue raises `KnownBugError` naming the file, the entry and the key.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

import yaml

CATALOGUE = "known_bugs.yaml"
_ID = re.compile(r"^KAFKA-\d+$")
_VERSION = re.compile(r"^(\d+(?:\.\d+){1,3})(?:[-+.]?[A-Za-z][\w.+-]*)?$")
_SIGNATURE_KEYS = ("threads", "lock_classes", "log_lines")
_REQUIRED = ("id", "title", "component", "affected", "fixed_in", "signature", "source")
_OPTIONAL = ("unverified", "processes", "kinds")
_KIND = re.compile(r"^[a-z][a-z_]*$")
# the Kafka processes a bug can be in (fleet.mbeans.PROCESSES but ZooKeeper's); without `processes` an
# entry is a broker's, in either mode
PROCESSES = ("zk_broker", "kraft_broker", "controller")
BROKERS = ("zk_broker", "kraft_broker")


class KnownBugError(ValueError):
    pass


def version_key(version: str) -> tuple[int, int, int, int]:
    """Numeric sort key of a Kafka version: "0.10.1.0" -> (0, 10, 1, 0), "2.8.2" -> (2, 8, 2, 0).

    Kafka numbered releases a.b.c.d before 1.0 and a.b.c after; padding with zeros orders both
    (1.0.0 == 1.0.0.0 > 0.11.0.3). A qualifier ("3.6.0-rc1", "2.8.2.redhat") is ignored.
    """
    m = _VERSION.match(str(version).strip())
    if not m:
        raise ValueError(f"not a Kafka version: {version!r} (expected e.g. 0.10.1.0, 2.8.2, 3.6.0)")
    parts = [int(p) for p in m.group(1).split(".")]
    return tuple(parts + [0] * (4 - len(parts)))  # type: ignore[return-value]


def compare_versions(a: str, b: str) -> int:
    """-1, 0 or 1 as version a is older than, the same as, or newer than b."""
    ka, kb = version_key(a), version_key(b)
    return (ka > kb) - (ka < kb)


@dataclass(frozen=True)
class VersionRange:
    start: str | None   # inclusive; None: every earlier version
    end: str | None     # exclusive (the first fixed release of that line); None: not fixed

    def contains(self, version: str) -> bool:
        k = version_key(version)
        return ((self.start is None or version_key(self.start) <= k)
                and (self.end is None or k < version_key(self.end)))

    def __str__(self) -> str:
        return f"[{self.start or '*'}, {self.end or '*'})"


@dataclass(frozen=True)
class KnownBug:
    id: str
    title: str
    component: str
    affected: tuple[VersionRange, ...]
    fixed_in: tuple[str, ...]
    threads: tuple[str, ...]
    lock_classes: tuple[str, ...]
    log_lines: tuple[str, ...]
    source: str
    unverified: str = ""
    processes: tuple[str, ...] = BROKERS
    kinds: tuple[str, ...] = ()   # the incident kinds whose event this bug can be (known_bugs.yaml)

    @property
    def kind_only(self) -> bool:
        """Shown by the kind of an incident alone (on an affected version): no log line of its own."""
        return bool(self.kinds) and not self.log_lines

    def affects(self, version: str, processes: tuple[str, ...] | None = None) -> bool:
        """Whether `version` is in an affected range (and, given the host's processes, one runs the code)."""
        return (any(r.contains(version) for r in self.affected)
                and (processes is None or bool(set(processes) & set(self.processes))))


def _check_version(value, where: str) -> str:
    if not isinstance(value, str):
        raise KnownBugError(f"{where}: expected a version string in quotes, got {value!r}")
    try:
        version_key(value)
    except ValueError as exc:
        raise KnownBugError(f"{where}: {exc}") from None
    return value


def _parse_entry(raw, i: int, path: str) -> KnownBug:
    if not isinstance(raw, dict):
        raise KnownBugError(f"{path}: bugs[{i}]: expected a mapping, got {type(raw).__name__}")
    bid = raw.get("id", f"bugs[{i}]")
    where = f"{path}: {bid}"
    for key in _REQUIRED:
        if key not in raw or raw[key] in (None, ""):
            raise KnownBugError(f"{where}: missing required key `{key}`")
    unknown = set(raw) - set(_REQUIRED) - set(_OPTIONAL)
    if unknown:
        raise KnownBugError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    if not isinstance(bid, str) or not _ID.match(bid):
        raise KnownBugError(f"{where}: `id` must look like KAFKA-1234")
    if not str(raw["source"]).startswith("https://"):
        raise KnownBugError(f"{where}: `source` must be an https:// URL, got {raw['source']!r}")
    if not isinstance(raw["affected"], list) or not raw["affected"]:
        raise KnownBugError(f"{where}: `affected` must be a non-empty list of {{from, to}} ranges")
    ranges = []
    for j, r in enumerate(raw["affected"]):
        rw = f"{where}: affected[{j}]"
        if not isinstance(r, dict) or not r or set(r) - {"from", "to"}:
            raise KnownBugError(f"{rw}: expected a mapping with `from` and/or `to`, got {r!r}")
        start = _check_version(r["from"], f"{rw}.from") if "from" in r else None
        end = _check_version(r["to"], f"{rw}.to") if "to" in r else None
        if start and end and compare_versions(start, end) >= 0:
            raise KnownBugError(f"{rw}: `from` {start} is not older than `to` {end}")
        ranges.append(VersionRange(start, end))
    if not isinstance(raw["fixed_in"], list):
        raise KnownBugError(f"{where}: `fixed_in` must be a list of versions")
    fixed = tuple(_check_version(v, f"{where}: fixed_in[{k}]") for k, v in enumerate(raw["fixed_in"]))
    for v in fixed:
        if any(r.contains(v) for r in ranges):
            raise KnownBugError(f"{where}: fixed_in {v} lies inside an affected range")
    sig = raw["signature"]
    if not isinstance(sig, dict) or set(sig) - set(_SIGNATURE_KEYS):
        raise KnownBugError(f"{where}: `signature` must be a mapping of {', '.join(_SIGNATURE_KEYS)}")
    patterns = {}
    for key in _SIGNATURE_KEYS:
        values = sig.get(key) or []
        if not isinstance(values, list):
            raise KnownBugError(f"{where}: signature.{key} must be a list of regexes")
        for k, p in enumerate(values):
            try:
                re.compile(p)
            except (re.error, TypeError) as exc:
                raise KnownBugError(f"{where}: signature.{key}[{k}]: bad regex {p!r}: {exc}") from None
        patterns[key] = tuple(values)
    processes = raw.get("processes", list(BROKERS))
    if (not isinstance(processes, list) or not processes
            or not all(isinstance(x, str) and x in PROCESSES for x in processes)):
        raise KnownBugError(f"{where}: `processes` must be a non-empty list of {', '.join(PROCESSES)}")
    kinds = raw.get("kinds", [])
    if not isinstance(kinds, list) or not all(isinstance(k, str) and _KIND.match(k) for k in kinds):
        raise KnownBugError(f"{where}: `kinds` must be a list of incident kinds (e.g. [log_cleaner_dead])")
    return KnownBug(bid, str(raw["title"]), str(raw["component"]), tuple(ranges), fixed,
                    patterns["threads"], patterns["lock_classes"], patterns["log_lines"],
                    str(raw["source"]), str(raw.get("unverified") or ""), tuple(processes), tuple(kinds))


def parse(text: str, path: str = CATALOGUE) -> tuple[KnownBug, ...]:
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise KnownBugError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("bugs"), list):
        raise KnownBugError(f"{path}: expected a mapping with a `bugs` list")
    bugs = [_parse_entry(raw, i, path) for i, raw in enumerate(doc["bugs"])]
    seen = set()
    for b in bugs:
        if b.id in seen:
            raise KnownBugError(f"{path}: {b.id}: duplicate id")
        seen.add(b.id)
    return tuple(bugs)


def load(path: str | Path | None = None) -> tuple[KnownBug, ...]:
    """The catalogue shipped with fleethealth, or the one at `path`."""
    if path is None:
        return _packaged()
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise KnownBugError(f"{path}: cannot read the known-bug catalogue: {exc}") from None
    return parse(text, str(path))


@lru_cache(maxsize=1)
def _packaged() -> tuple[KnownBug, ...]:
    return parse(resources.files("fleethealth.gold").joinpath(CATALOGUE).read_text(encoding="utf-8"), CATALOGUE)


def bugs_affecting(version: str, catalogue: tuple[KnownBug, ...] | None = None,
                   processes: tuple[str, ...] | None = None) -> list[KnownBug]:
    """The catalogued bugs whose affected ranges hold `version`, in catalogue order; given a host's
    `processes` (fleet.inventory.Host.processes), only those of code it runs."""
    return [b for b in (catalogue if catalogue is not None else load()) if b.affects(version, processes)]


def bugs_matching(version: str | None, *, threads=(), lock_classes=(), log_line: str | None = None,
                  catalogue: tuple[KnownBug, ...] | None = None) -> list[KnownBug]:
    """Catalogued bugs whose signature matches what was seen (and that affect `version`, if given).

    A thread-dump deadlock matches a bug when every thread pattern of the bug matches a thread of the
    cycle and every lock-class pattern a lock class of it (bugs without thread/lock patterns do not);
    a log line matches when any of the bug's log-line patterns is found in it.
    """
    out = []
    for b in (catalogue if catalogue is not None else load()):
        if version is not None and not b.affects(version):
            continue
        seen = False
        if threads and b.threads:
            seen = (all(any(re.search(p, t) for t in threads) for p in b.threads)
                    and all(any(re.search(p, c) for c in lock_classes) for p in b.lock_classes))
        if not seen and log_line is not None and b.log_lines:
            seen = any(re.search(p, log_line) for p in b.log_lines)
        if seen:
            out.append(b)
    return out


# --- the same order and lookup as Spark columns (inventory-sized inputs, no Python UDF) -------------
def version_key_col(version):
    """Spark Column: `version_key` of a version string column as array<int> of 4 (null if not a version).

    Spark orders arrays element by element, so these compare like the Python tuples.
    """
    from pyspark.sql import functions as F

    numeric = F.regexp_extract(version, r"^\s*(\d+(?:\.\d+){1,3})", 1)
    parts = F.transform(F.split(numeric, r"\."), lambda x: x.cast("int"))
    padded = F.slice(F.concat(parts, F.array(*[F.lit(0)] * 4)), 1, 4)
    return F.when(numeric != "", padded)


def ranges_frame(spark, catalogue: tuple[KnownBug, ...] | None = None):
    """One row per (bug, affected range): bug_id, component, from_key, to_key (null = open), affected (the
    range as text), title, fixed_in, processes (the Kafka processes that run the code)."""
    rows = []
    for b in (catalogue if catalogue is not None else load()):
        for r in b.affected:
            rows.append((b.id, b.component, list(version_key(r.start)) if r.start else None,
                         list(version_key(r.end)) if r.end else None, str(r), b.title, list(b.fixed_in),
                         list(b.processes)))
    from fleethealth.runtime.frames import local_frame

    return local_frame(spark, rows, "bug_id string, component string, from_key array<int>, to_key array<int>, "
                                    "affected string, title string, fixed_in array<string>, processes array<string>")


def signatures_frame(spark, catalogue: tuple[KnownBug, ...] | None = None):
    """One row per bug with a thread-dump signature: bug_id, threads, lock_classes (Java regexes)."""
    rows = [(b.id, list(b.threads), list(b.lock_classes))
            for b in (catalogue if catalogue is not None else load()) if b.threads]
    from fleethealth.runtime.frames import local_frame

    return local_frame(spark, rows, "bug_id string, threads array<string>, lock_classes array<string>")


def exposures(hosts, ranges):
    """Spark: (cluster, host, role, broker_id, entity, kafka_version, hour, bug_id, component, affected,
    title, fixed_in) for every affected Kafka host-hour (`hosts`: one row per host and hour, silver's hosts frame):
    its version in a bug's range, and one of its processes (the hosts frame's `processes`: a ZooKeeper-mode
    broker, a KRaft broker, a controller) running the bug's code."""
    from pyspark.sql import functions as F

    brokers = (hosts.where(F.col("role").isin("kafka", "controller") & F.col("kafka_version").isNotNull())
               .select("cluster", "host", "role", "broker_id", "entity", "kafka_version", "hour",
                       version_key_col(F.col("kafka_version")).alias("vkey"),
                       F.col("processes").alias("host_processes")))
    inside = ((F.col("from_key").isNull() | (F.col("from_key") <= F.col("vkey")))
              & (F.col("to_key").isNull() | (F.col("vkey") < F.col("to_key")))
              & F.arrays_overlap("host_processes", "processes"))
    return (brokers.join(F.broadcast(ranges), inside, "inner")
            .select("cluster", "host", "role", "broker_id", "entity", "kafka_version", "hour", "bug_id", "component",
                    "affected", "title", "fixed_in"))


def deadlock_matches_col(threads, lock_classes, bug_threads, bug_lock_classes):
    """Spark Column: `bugs_matching`'s thread-dump test - every thread pattern of the bug finds a
    thread of the cycle and every lock-class pattern a lock class (regex search, as re.search)."""
    from pyspark.sql import functions as F

    def all_found(patterns, values):
        return F.forall(patterns, lambda p: F.exists(values, lambda v: F.regexp(v, p)))

    return ((F.size(bug_threads) > 0) & all_found(bug_threads, threads)
            & all_found(F.coalesce(bug_lock_classes, F.array().cast("array<string>")), lock_classes))


# a signature line counts from this long before the incident's first_seen (a heartbeat that could not
# be sent precedes the fence it causes)
SIGNATURE_LEAD_MINUTES = 10


def explaining(kind: str, catalogue: tuple[KnownBug, ...] | None = None) -> tuple[KnownBug, ...]:
    """The catalogued bugs whose event an incident of `kind` can be (their `kinds`)."""
    return tuple(b for b in (catalogue if catalogue is not None else load()) if kind in b.kinds)


def log_lines_regex(catalogue: tuple[KnownBug, ...] | None = None) -> str | None:
    """One regex that finds every log-line signature of a bug listed for a kind (None: there is none):
    what gold keeps the text of, of the silver lines it reads."""
    patterns = [p for b in (catalogue if catalogue is not None else load()) if b.kinds for p in b.log_lines]
    return "|".join(f"(?:{p})" for p in patterns) or None


def with_known_bugs(findings, kind: str, hosts, kafka_events, catalogue: tuple[KnownBug, ...] | None = None):
    """Spark: `findings` of `kind` (FINDING_COLUMNS) whose `known_bug` also names the catalogued bugs their
    own event shows (`explaining(kind)`): the cluster runs the bug's code at an affected version (any of its
    hosts of the hour: `hosts`, silver's hosts frame) and, when the bug has log lines, the finding's node
    (any node, for a finding about no node) logged one of them from SIGNATURE_LEAD_MINUTES before its
    first_seen to its last_seen (`kafka_events`: gold's read of silver.kafka_events, which keeps the text of
    such lines). Ids comma-separated, sorted."""
    bugs = explaining(kind, catalogue)
    if not bugs:
        return findings
    from pyspark.sql import functions as F

    from fleethealth.fleet.entities import PROCESS_PATTERN
    from fleethealth.runtime.frames import local_frame

    spark = findings.sparkSession
    keys = ["cluster", "entity", "first_seen", "last_seen", "hour"]
    exposed = exposures(hosts, ranges_frame(spark, bugs)).select("cluster", "hour", "bug_id").distinct()
    candidates = findings.select(*keys).distinct().join(F.broadcast(exposed), ["cluster", "hour"])
    lined = [b.id for b in bugs if b.log_lines]
    shown = candidates.where(~F.col("bug_id").isin(*lined)) if lined else candidates
    if lined:
        text = F.concat_ws("\n", "message", "detail")
        lines = (kafka_events.where(text.rlike(log_lines_regex(bugs)))
                 .select("cluster", "hour", F.col("broker_id").alias("line_node"), "ts", text.alias("text")))
        patterns = local_frame(spark, [(b.id, p) for b in bugs for p in b.log_lines], "bug_id string, pattern string")
        # the Kafka node the finding is about (broker-2, controller-3000, t-p@broker-2: its id), if any
        node = F.regexp_extract(F.regexp_extract("entity", PROCESS_PATTERN, 1), r"^(?:broker|controller)-(\d+)$", 1)
        since = F.col("first_seen") - F.expr(f"INTERVAL {SIGNATURE_LEAD_MINUTES} MINUTES")
        seen = (candidates.where(F.col("bug_id").isin(*lined)).join(F.broadcast(patterns), "bug_id")
                .join(lines, ["cluster", "hour"])
                .where(((node == "") | (node.cast("int") == F.col("line_node")))
                       & F.col("ts").between(since, F.col("last_seen")) & F.regexp(F.col("text"), F.col("pattern")))
                .select(*keys, "bug_id"))
        shown = shown.select(*keys, "bug_id").unionByName(seen)
    named = shown.groupBy(*keys).agg(F.array_sort(F.collect_set("bug_id")).alias("_bugs"))
    none = F.array().cast("array<string>")
    both = F.concat(F.coalesce(F.split("known_bug", ","), none), F.coalesce("_bugs", none))
    merged = F.array_join(F.array_sort(F.array_distinct(both)), ",")
    return (findings.join(named, keys, "left")
            .withColumn("known_bug", F.nullif(merged, F.lit("")))
            .select(*findings.columns))
