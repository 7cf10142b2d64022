"""jmx_exporter Prometheus text exposition -> JMX samples (ObjectName + attribute), like Jolokia's.

A scrape file (`*.prom` in a host's jmx folder) is one bronze record, as a pretty-printed Jolokia
document is: its `# HELP`/`# TYPE` comments and blank lines are part of the record, so they are
accounted for with it. Each series line becomes one sample through the declarative mapping
`jmx_prometheus_mapping.yaml` (see there); the sample time is the line's own timestamp if it has one
(ms), else the capture time in the file name (cluster-local ISO-8601), else the hour.

Within a scrape that gave samples, an unmapped series or a malformed line is quarantined with
`line_count` 0 (the record is counted in silver); a scrape with no sample at all is quarantined
once with `line_count` 1. `jmx_scrape_error` > 0 (the exporter could not read some MBeans) is
quarantined the same way; the exporter's other own series are not MBean samples and are skipped.
All of it is Spark SQL expressions (no Python UDF): the mapping is compiled into literal columns.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import yaml
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from fleethealth.fleet import mbeans
from fleethealth.silver.parsers import jmx_values
from fleethealth.silver.parsers.logdirs import captured_at
from fleethealth.silver.parsers.rules import sql_string

MAPPING_FILE = "jmx_prometheus_mapping.yaml"
LINEAGE = ["cluster", "host", "source", "file", "file_sha256", "line_number", "hour"]
# name, optional {labels}, value, optional timestamp (ms)
SERIES = r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?[ \t]+(\S+)(?:[ \t]+(-?\d+))?[ \t]*$"
LABEL = r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"'
SCRAPE_ERROR = "jmx_scrape_error"
_PLACEHOLDER = re.compile(r"\{([a-zA-Z_][a-zA-Z0-9_]*)\}")


def metric_name(text: str) -> str:
    """How jmx_exporter spells `text` in a metric name (lowercaseOutputName)."""
    return re.sub(r"_+", "_", re.sub(r"[^a-zA-Z0-9:_]", "_", text)).lower()


@dataclass(frozen=True)
class Mapping:
    prefixes: tuple[tuple[str, str, str], ...]   # (metric-name prefix "d_t_", domain, type), longest first
    attributes: dict[str, str]                   # metric-name suffix -> attribute (may hold {label})
    labels: dict[str, str]                       # label -> key property
    exporter: tuple[str, ...]
    series: dict[str, tuple[str, str, str]] = None  # whole metric name -> (domain, type, attribute)

    @property
    def placeholders(self) -> tuple[str, ...]:
        return tuple(sorted({p for a in self.attributes.values() for p in _PLACEHOLDER.findall(a)}))

    def resolve(self, name: str) -> tuple[str, str, str] | None:
        """(domain, type, attribute template) of a metric name, or None (the Python twin of `columns`)."""
        if name in (self.series or {}):
            return self.series[name]
        for prefix, domain, type_ in self.prefixes:   # longest first
            if name.startswith(prefix):
                attribute = self.attributes.get(name[len(prefix):])
                return (domain, type_, attribute) if attribute else None
        return None


def _attribute_paths(node, path: str = "") -> list[str]:
    if isinstance(node, str):
        return [f"{path}.{node}" if path else node]
    if isinstance(node, list):
        return [p for item in node for p in _attribute_paths(item, path)]
    if isinstance(node, dict):
        return [p for key, sub in node.items() for p in _attribute_paths(sub, f"{path}.{key}" if path else str(key))]
    raise ValueError(f"{MAPPING_FILE}: attribute entry {node!r} under {path!r} is not a name, list or map")


def build_mapping(doc: dict, origin: str = MAPPING_FILE) -> Mapping:
    """A Mapping from the YAML document; ambiguous spellings are an error naming both."""
    prefixes = {}
    for domain, types in (doc.get("beans") or {}).items():
        for type_ in types:
            prefix = metric_name(f"{domain}_{type_}") + "_"
            if prefix in prefixes:
                raise ValueError(f"{origin}: {domain}:type={type_} and {prefixes[prefix][1:]} share the prefix {prefix}")
            prefixes[prefix] = (prefix, domain, str(type_))
    attributes: dict[str, str] = {}
    for path in _attribute_paths(doc.get("attributes") or []):
        # a {label} item is a label in the series, not part of its name
        key = metric_name(".".join(p for p in path.split(".") if not _PLACEHOLDER.fullmatch(p)))
        if key in attributes and attributes[key] != path:
            raise ValueError(f"{origin}: attributes {attributes[key]!r} and {path!r} are both spelled {key!r}")
        attributes[key] = path
    ordered = tuple(sorted(prefixes.values(), key=lambda p: -len(p[0])))
    series = {}
    for name, target in (doc.get("series") or {}).items():
        domain, _, keys = str(target.get("mbean", "")).partition(":")
        type_ = dict(kv.split("=", 1) for kv in keys.split(",") if "=" in kv).get("type")
        if not domain or not type_ or not target.get("attribute") or keys != f"type={type_}":
            raise ValueError(f"{origin}: series {name}: needs mbean '<domain>:type=<Type>' and attribute, got {target!r}")
        series[name] = (domain, type_, str(target["attribute"]))
    return Mapping(ordered, attributes, dict(doc.get("labels") or {}), tuple(doc.get("exporter") or ()), series)


def check_catalogue(m: Mapping, beans=None) -> Mapping:
    """`m`, after checking that the jmx_exporter series of every MBean fleethealth reads (the catalogue
    fleet/mbeans.yaml) maps back onto that bean and attribute: a mapping that would lose or misplace
    one is an error naming it, not a quarantine of every scrape's sample of it."""
    for bean in mbeans.ALL if beans is None else beans:
        if bean.exporter_series is None:   # a text attribute: jmx_exporter has no series of it
            continue
        expected = (bean.domain, dict(bean.keys)["type"], bean.attribute)
        if m.resolve(bean.exporter_series) != expected:
            raise ValueError(f"{MAPPING_FILE}: {bean.exporter_series} (the jmx_exporter series of {bean.id} in "
                             f"{mbeans.CATALOGUE_FILE}) maps to {m.resolve(bean.exporter_series)}, not {expected}")
    return m


@lru_cache(maxsize=1)
def mapping() -> Mapping:
    doc = yaml.safe_load(resources.files("fleethealth.silver").joinpath(MAPPING_FILE).read_text())
    return check_catalogue(build_mapping(doc))


def columns(name: Column, labels: Column, m: Mapping) -> Column:
    """struct(domain, type, attribute template) of a metric name; NULL domain if unmapped.

    The known `d_t_` prefix of the name with the most '_' decides domain and type; the rest of the
    name must then be a known attribute spelling. A whole-name `series` entry goes first.
    """
    # the name cut after its n-th '_' looked up among the prefixes with n '_', most first (a few map
    # lookups: no lambda, no 75-branch CASE)
    by_name = _sql_map((p, f"named_struct('prefix', {sql_string(p)}, 'domain', {sql_string(d)}, "
                           f"'type', {sql_string(t)})") for p, d, t in m.prefixes)
    cuts = sorted({p.count("_") for p, _, _ in m.prefixes}, reverse=True)
    first = F.coalesce(*[F.try_element_at(by_name, F.concat(F.substring_index(name, "_", n), F.lit("_")))
                         for n in cuts])
    attrs = _sql_map((k, sql_string(v)) for k, v in m.attributes.items())
    attribute = F.try_element_at(attrs, F.substring(name, F.length(first["prefix"]) + 1, 1 << 20))
    by_prefix = F.struct(F.when(attribute.isNotNull(), first["domain"]).alias("domain"),
                         first["type"].alias("type"), attribute.alias("attribute"))
    if not m.series:
        return by_prefix
    whole = _sql_map((n, f"named_struct('domain', {sql_string(d)}, 'type', {sql_string(t)}, "
                         f"'attribute', {sql_string(a)})") for n, (d, t, a) in m.series.items())
    return F.coalesce(F.try_element_at(whole, name), by_prefix)


def _sql_map(entries) -> Column:
    """map(key -> value SQL) of (key string, value as SQL text), parsed once in the JVM (built from
    Column calls the mapping's few hundred literals were as many py4j round trips: seconds per plan
    on a fresh JVM)."""
    return F.expr("map(" + ", ".join(f"{sql_string(k)}, {v}" for k, v in entries) + ")")


def key_properties(hit: Column, labels: Column, m: Mapping) -> tuple[Column, Column]:
    """(attribute with its {label} placeholders filled, key properties map with `type` first)."""
    template = hit["attribute"]
    attribute = template
    for label in m.placeholders:
        attribute = F.replace(attribute, F.lit("{" + label + "}"),
                              F.coalesce(F.try_element_at(labels, F.lit(label)), F.lit("")))
    # (lambdas are interpreted per element: only run them on the few series that need them)
    keys = F.when(template.contains("{"), F.map_filter(
        labels, lambda k, v: ~template.contains(F.concat(F.lit("{"), k, F.lit("}"))))).otherwise(labels)
    if m.labels:
        renames = _sql_map((k, sql_string(v)) for k, v in m.labels.items())
        renamed = F.arrays_overlap(F.map_keys(labels), _sql_array(m.labels))
        keys = F.when(renamed, F.transform_keys(keys, lambda k, v: F.coalesce(F.try_element_at(renames, k), k))) \
                .otherwise(keys)
    # a label named `type` would clash with the ObjectName's type key: the bean's own type wins
    keys = F.when(F.array_contains(F.map_keys(keys), "type"), F.map_filter(keys, lambda k, v: k != "type")) \
            .otherwise(keys)
    return attribute, F.map_concat(F.create_map(F.lit("type"), hit["type"]), keys)


def _sql_array(values) -> Column:
    return F.expr("array(" + ", ".join(sql_string(v) for v in values) + ")")


def _unescape(value: Column) -> Column:
    return F.regexp_replace(F.regexp_replace(F.regexp_replace(value, r'\\"', '"'), r"\\n", "\n"), r"\\\\", r"\\")


def series(lines: DataFrame, text: str = "text", m: Mapping | None = None) -> DataFrame:
    """Per line: name, labels map, value (double), ts_ms, and the mapping's domain/props/attribute/mbean."""
    m = m or mapping()
    # one regex pass per line: the four groups joined by \x01 (a line that does not match stays as is)
    parts = F.split(F.regexp_replace(F.col(text), SERIES, "$1\u0001$2\u0001$3\u0001$4"), "\u0001")
    df = lines.withColumn("_p", F.when(F.size(parts) == 4, parts))
    raw_labels = F.col("_p")[1]
    values = F.regexp_extract_all(raw_labels, F.lit(LABEL), F.lit(2))
    escaped = raw_labels.contains("\\")
    names = F.regexp_extract_all(raw_labels, F.lit(LABEL), F.lit(1))
    # a label named twice is no exposition line (and no map): NULL labels, a malformed line
    labels = F.when(F.size(F.array_distinct(names)) == F.size(names), F.map_from_arrays(
        names, F.when(escaped, F.transform(values, _unescape)).otherwise(values)))
    # Prometheus spells infinities +Inf/-Inf; Spark's cast knows Infinity/-Infinity
    value = F.regexp_replace(F.col("_p")[2], r"^([+-]?)Inf$", "$1Infinity").try_cast("double")
    ts_ms = F.nullif(F.col("_p")[3], F.lit("")).try_cast("bigint")
    df = df.select("*", F.col("_p")[0].alias("name"), labels.alias("labels"), value.alias("value"),
                   ts_ms.alias("ts_ms"), raw_labels.alias("_raw"), escaped.alias("_escaped")).drop("_p")
    # resolved once per line (a separate projection: the struct is used several times below)
    df = df.withColumn("_hit", columns(F.col("name"), F.col("labels"), m))
    attribute, props = key_properties(F.col("_hit"), F.col("labels"), m)
    df = df.select("*", F.col("_hit.domain").alias("domain"), F.col("_hit.type").alias("type"),
                   attribute.alias("attribute"), props.alias("props")).drop("_hit")
    # ObjectName text: from the label text as written when the key properties are the labels as
    # they are (the common case), else from the props map (a lambda per key)
    plain = ~F.col("_escaped") & (F.size("props") == F.size("labels") + 1)
    if m.labels:
        plain = plain & ~F.arrays_overlap(F.map_keys("labels"), _sql_array(m.labels))
    from_text = F.concat(F.lit("type="), F.col("type"), F.regexp_replace(F.col("_raw"), LABEL + ",?", ",$1=$2"))
    from_map = F.array_join(F.transform(F.map_entries("props"), lambda e: F.concat(e["key"], F.lit("="), e["value"])), ",")
    mbean = F.concat(F.col("domain"), F.lit(":"), F.when(plain, from_text).otherwise(from_map))
    return df.withColumn("mbean", F.when(F.col("domain").isNotNull(), mbean)).drop("_raw", "_escaped")


# the kinds of line that are quarantine rows (one stands for a scrape that gave no sample)
PROBLEMS = ("malformed", "unmapped", "scrape_error", "set_aside")


def parse(bronze: DataFrame, timezone: Column) -> tuple[DataFrame, DataFrame]:
    """(samples, quarantine) from bronze `jmx` records of Prometheus scrape files (one record per scrape)."""
    m = mapping()
    lines = (bronze.select(*LINEAGE, captured_at(F.col("file"), timezone, F.col("hour")).alias("captured_at"),
                           F.posexplode(F.split("record", "\n")).alias("pos", "text"))
             .withColumn("text", F.regexp_replace("text", "\r$", ""))
             .where(~F.ltrim("text").startswith("#") & (F.trim("text") != "")))
    s = series(lines, "text", m)
    exporter = F.col("name").isin(*m.exporter)
    kind = (F.when(F.col("name").isNull() | F.col("value").isNull() | F.col("labels").isNull(), "malformed")
             .when(exporter & (F.col("name") == SCRAPE_ERROR) & (F.col("value") != 0), "scrape_error")
             .when(exporter, "exporter")
             .when(F.col("domain").isNull(), "unmapped")
             .when(F.col("problem").isNotNull(), "set_aside")
             .otherwise("sample"))
    # the sample's time: its own (ms), else the scrape's; checked before it becomes a timestamp
    seconds = F.coalesce(F.floor(F.col("ts_ms") / 1000), F.unix_seconds("captured_at"))
    problem = F.coalesce(jmx_values.window_problem(seconds, F.col("hour"), "its time"),
                         jmx_values.value_problem(F.col("value"), F.col("domain"), F.col("props"), F.col("attribute")))
    s = s.withColumn("problem", F.when(F.col("domain").isNotNull(), problem)).withColumn("kind", kind).cache()
    samples = s.where(F.col("kind") == "sample").select(
        "cluster", "host",
        jmx_values.served_time(F.coalesce(F.timestamp_millis("ts_ms"), F.col("captured_at")), F.col("hour")).alias("ts"),
        "mbean", "domain", "props", "attribute", "value", F.lit(None).cast("string").alias("value_text"),
        "source", "file", "line_number", "hour")
    # per scrape: did it give a sample, and which problem line stands for it if not
    record = ["file", "line_number"]
    per_scrape = (s.groupBy(*record)
                  .agg(F.count(F.when(F.col("kind") == "sample", 1)).alias("n_samples"),
                       F.min(F.when(F.col("kind").isin(*PROBLEMS), F.col("pos"))).alias("first_problem")))
    reason = (F.when(F.col("kind") == "malformed", F.concat(F.lit("not a Prometheus exposition line (line "),
                                                              (F.col("pos") + 1).cast("string"), F.lit(")")))
               .when(F.col("kind") == "unmapped", F.concat(F.lit("prometheus series "), F.col("name"),
                                                             F.lit(f" not in {MAPPING_FILE}")))
               .when(F.col("kind") == "set_aside", F.concat(F.lit("jmx sample set aside: "), F.col("problem")))
               .otherwise(F.lit("jmx_exporter jmx_scrape_error: some MBeans could not be read")))
    problems = (s.where(F.col("kind").isin(*PROBLEMS))
                .join(per_scrape, record)
                .select(*[c for c in LINEAGE if c != "line_number"],
                        (F.col("line_number") + F.col("pos")).alias("line_number"),   # the problem's own line
                        F.when((F.col("n_samples") == 0) & (F.col("pos") == F.col("first_problem")), 1)
                        .otherwise(0).alias("line_count"),
                        F.col("text").alias("record"), reason.alias("reason")))
    empty = (bronze.join(per_scrape.where((F.col("n_samples") > 0) | F.col("first_problem").isNotNull()),
                         record, "left_anti")
             .select(*LINEAGE, F.lit(1).alias("line_count"), "record",
                     F.lit("prometheus scrape without samples").alias("reason")))
    return samples, problems.unionByName(empty)
