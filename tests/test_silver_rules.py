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
