"""The event-rule catalogue (rules/*.yaml): valid, documented, and exercised by the golden corpus."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fleethealth.silver.parsers import rules

GOLDEN = Path(__file__).parent / "fixtures" / "golden"
SOURCES = ("kafka", "zookeeper")


def _yaml_text(source: str) -> str:
    return (Path(rules.__file__).parents[1] / "rules" / f"{source}_events.yaml").read_text()


@pytest.mark.parametrize("source", SOURCES)
def test_rules_load_and_name_known_fields(source):
    loaded = rules.load_rules(source)
    assert loaded and all(r.event_type != "other" for r in loaded)
    known = rules.load_fields()
    assert {f for r in loaded for f in [*r.fields, *r.set]} <= set(known)


@pytest.mark.parametrize("source", SOURCES)
def test_every_event_type_is_documented_in_the_header(source):
    text = _yaml_text(source)
    types = {r.event_type for r in rules.load_rules(source)}
    undocumented = {t for t in types if not re.search(rf"^#   (?:[a-z_]+ / )?{t}\s", text, re.M)}
    assert undocumented == set(), "event types missing from the comment header"


@pytest.mark.parametrize("source", SOURCES)
def test_every_event_type_occurs_in_the_golden_corpus(source):
    seen = {r["event_type"] for p in (GOLDEN / source).glob("*-expected.json")
            for table, rows in json.loads(p.read_text()).items() if table.endswith("_events") for r in rows}
    types = {r.event_type for r in rules.load_rules(source)}
    assert types - seen == set(), "event types no golden sample exercises"
    assert "other" in seen


def test_list_and_megabyte_fields_are_declared():
    fields = rules.load_fields()
    assert fields["isr_before"].read == "list" and fields["isr_before"].type == "array<int>"
    assert fields["start_size_bytes"].read == "megabytes" and fields["start_size_bytes"].type == "bigint"
    assert all(f.doc for f in fields.values())


def test_bad_rule_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(rules, "_read_yaml", lambda name: {"rules": [
        {"event_type": "x", "match": "a(b)", "fields": {"topic": 2}}]} if name != "fields.yaml"
        else {"fields": {"topic": {"type": "string", "doc": "t"}}})
    rules.load_rules.cache_clear()
    rules.load_fields.cache_clear()
    try:
        with pytest.raises(rules.RuleError, match=r"rules/bad_events.yaml: rule 0 \(x\): field 'topic' names group 2, "
                                                  r"the regex has 1"):
            rules.load_rules("bad")
    finally:
        rules.load_rules.cache_clear()
        rules.load_fields.cache_clear()


@pytest.mark.parametrize("body, event_type, epoch, isr", [
    # 1.x - 2.3 LeaderAndIsrRequest.PartitionState joins the ISR with "," and no brackets (post-mortem 5 runs 2.1.1)
    ("[Controller id=1 epoch=33] Sending become-leader LeaderAndIsr request PartitionState(controllerEpoch=33, "
     "leader=3, leaderEpoch=428, isr=3,1,2, zkVersion=435, replicas=3,1,2, isNew=false) to broker 3 for partition "
     "payments-2", "leader_and_isr_sent", "428", "3,1,2"),
    ("[Broker id=3] Received LeaderAndIsr request PartitionState(controllerEpoch=33, leader=3, leaderEpoch=426, "
     "isr=3,1,2, zkVersion=433, replicas=3,1,2, isNew=false) correlation id 7 from controller 1 epoch 33 for "
     "partition payments-2", "leader_and_isr_received", "426", "3,1,2"),
    ("[Controller id=1 epoch=7] Sending become-leader LeaderAndIsr request PartitionState(controllerEpoch=7, leader=3, "
     "leaderEpoch=15, isr=[3, 1], zkVersion=58, replicas=[2, 3, 1], isNew=false) to broker 3 for partition orders-3",
     "leader_and_isr_sent", "15", "3, 1"),
])
def test_leader_and_isr_partition_state_with_and_without_isr_brackets(body, event_type, epoch, isr):
    rule = next(r for r in rules.load_rules("kafka") if re.search(r.match, body))
    m = re.search(rule.match, body)
    assert (rule.event_type, m.group(rule.fields["leader_epoch"]), m.group(rule.fields["isr"])) == (event_type, epoch, isr)


@pytest.mark.parametrize("pattern, prefixes", [
    (r"^\[(?:Log|LocalLog|UnifiedLog) partition=([\w.-]+)-(\d+), dir=", ("[Log partition=", "[LocalLog partition=",
                                                                       "[UnifiedLog partition=")),
    (r"^Deleting segment (\d+) from log", ("Deleting segment ",)),
    (r"^(LOOKING|FOLLOWING)$", ("LOOKING", "FOLLOWING")),
    (r"^\[(kafka-log-cleaner-thread-\d+)\][,:] Stopped", ("[kafka-log-cleaner-thread-",)),
    (r"Deleting segment (\d+)", ()),          # not anchored: may start anywhere
    (r"^(\d+) ms", ()),                       # no literal text first
    (r"^(?:abc|\d+)x", ()),                   # one alternative starts with no literal text
    (r"(?i)^abc", ()),
    (r"(?m)^abc", ()),                        # ^ at any line start
    (r"(?s)^abc.", ("abc",)),
])
def test_required_prefixes(pattern, prefixes):
    assert rules.required_prefixes(pattern) == prefixes


@pytest.mark.parametrize("source", SOURCES)
def test_byte_tests_hold_for_every_golden_match(source):
    """A record a rule's regex matches passes the rule's cheaper tests (prefix, hint): they only
    spare records the regex would reject."""
    bodies = {"\n".join(x for x in (r.get("message"), r.get("detail")) if x)
              for p in (GOLDEN / source).glob("*-expected.json")
              for table, rows in json.loads(p.read_text()).items() if table.endswith("_events") for r in rows}
    checked = 0
    for rule in rules.load_rules(source):
        for body in bodies:
            if re.search(rule.match, body):
                checked += 1
                assert not rule.prefixes or body.startswith(rule.prefixes), (rule.event_type, body)
                assert not rule.hints or any(h in body for h in rule.hints), (rule.event_type, body)
    assert checked >= len(rules.load_rules(source))


def test_fields_of_a_body_holding_the_separator(spark):
    """The field values travel joined by rules.SEP: one inside a captured value becomes U+FFFD and
    every other field keeps its value."""
    from pyspark.sql import functions as F

    from fleethealth.silver.parsers import log4j

    body = f"Finished loading offsets and group metadata from __consumer{rules.SEP}offsets-7 in 31 milliseconds."
    df = spark.createDataFrame([(body, None), ("Rolled new log segment for 'orders-1' in 9 ms.", None),
                                ("nothing to see", None)], "message string, detail string")
    rows = log4j.with_events(df.withColumn("logger", F.lit(None).cast("string")), "kafka").orderBy("message").collect()
    got = [(r.event_type, r.topic, r.partition, r.duration_ms) for r in rows]
    assert got == [("group_load_finished", "__consumer\ufffdoffsets", 7, 31), ("segment_rolled", "orders", 1, 9),
                   ("other", None, None, None)]


# --- the engine's function gives what the rules gave as Spark SQL ----------------------------------
def _sql_rule_index(rs, body: str, logger: str) -> str:
    """The reference: the first matching rule as the CASE WHEN ... RLIKE that silver ran before the
    engine's function (no prefix or hint tests: they only spare the regex)."""
    sql = rules.sql_string
    whens = " ".join(f"WHEN {f'{logger} = {sql(r.logger)} AND ' if r.logger else ''}{body} RLIKE {sql(r.match)} "
                     f"THEN {i}" for i, r in enumerate(rs))
    return f"CASE {whens} END"


def _sql_values(rs, fields, body: str, index: str) -> str:
    """The reference values: one regexp_replace of the matched rule's regex, wrapped to take the whole
    text, by a template of its groups and constants joined by SEP."""
    sql, sep = rules.sql_string, rules.SEP
    templates = []
    for r in rs:
        parts = [f"${r.fields[f.name]}" if f.name in r.fields else
                 str(r.set[f.name]).replace("\\", "\\\\").replace("$", "\\$") if f.name in r.set else "" for f in fields]
        templates.append(sql(sep + sep.join(parts)) if r.fields or r.set else "NULL")
    wrapped = [sql(r"^[\s\S]*?(?:" + r.match + r")[\s\S]*$") for r in rs]
    source = f"CASE WHEN contains({body}, {sql(sep)}) THEN translate({body}, {sql(sep)}, {sql(chr(0xFFFD))}) ELSE {body} END"
    cut = f"regexp_replace({source}, get(array({', '.join(wrapped)}), {index}), get(array({', '.join(templates)}), {index}))"
    return f"CASE WHEN startswith({cut}, {sql(sep)}) THEN split(substr({cut}, 2), {sql(sep)}, -1) END"


@pytest.mark.parametrize("source", SOURCES)
def test_the_engine_function_matches_the_rules_as_spark_sql(spark, source):
    """Every golden body (and each cut at its first line, with the separator inside, under each
    logger a rule names and none): the same rule and the same values as Spark SQL's RLIKE and
    regexp_replace gave."""
    rs = rules.load_rules(source)
    fields = rules.fields_of(rs)
    bodies = {"\n".join(x for x in (r.get("message"), r.get("detail")) if x)
              for p in (GOLDEN / source).glob("*-expected.json")
              for table, rows in json.loads(p.read_text()).items() for r in rows if "message" in r}
    bodies |= {b.split("\n", 1)[0] for b in bodies} | {b.replace(" ", rules.SEP, 1) for b in bodies} | {"", None}
    loggers = [None, "", *sorted({r.logger for r in rs if r.logger})]
    df = spark.createDataFrame([(b, lg) for b in sorted(bodies, key=str) for lg in loggers], "body string, logger string")
    name = rules.register(spark, rs, fields)
    got = df.selectExpr("body", "logger", f"{name}(body, NULL, logger) AS m").selectExpr("body", "logger", "m.rule", "m.values")
    want = df.selectExpr("body", "logger", f"{_sql_rule_index(rs, 'body', 'logger')} AS rule")
    want = want.selectExpr("body", "logger", "rule", f"{_sql_values(rs, fields, 'body', 'rule')} AS values")
    got_rows = sorted(map(tuple, got.collect()), key=str)
    assert got_rows == sorted(map(tuple, want.collect()), key=str)
    assert len({r[2] for r in got_rows if r[2] is not None}) >= len(rs) // 2     # most rules matched somewhere
