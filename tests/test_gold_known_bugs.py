"""Tests of the known-bug catalogue (known_bugs.yaml / fleethealth.gold.known_bugs), gold.known_bug_exposure
at both sides of a fix (docs/postmortems.md, post-mortem 1) and the bugs an incident's own event shows."""
from __future__ import annotations

import re
from datetime import datetime, timezone

import pytest

from fleethealth.gold import known_bugs
from fleethealth.gold.known_bugs import KnownBugError, bugs_affecting, compare_versions, version_key
from fleethealth.runtime.frames import local_frame

POST_MORTEM_1 = {"KAFKA-3994", "KAFKA-4399", "KAFKA-4477", "KAFKA-4478", "KAFKA-4562"}
CLEANER = {"KAFKA-2235", "KAFKA-3894", "KAFKA-4497", "KAFKA-5413", "KAFKA-6834", "KAFKA-6854", "KAFKA-7215",
           "KAFKA-8335", "KAFKA-16574"}
# the KRaft bugs, each with its JIRA and the apache/kafka commit that fixed it in known_bugs.yaml (KAFKA-16574
# is among the cleaner's; KAFKA-17608, fixed in 3.9.0-rc1, affected no release)
KRAFT = {"KAFKA-13959", "KAFKA-14392", "KAFKA-14296", "KAFKA-14300", "KAFKA-14644", "KAFKA-14894", "KAFKA-15019",
         "KAFKA-15489", "KAFKA-14616", "KAFKA-17076", "KAFKA-19522", "KAFKA-19895"}


def test_catalogue_loads_with_every_brief_bug_and_a_source():
    bugs = known_bugs.load()
    assert {b.id for b in bugs} == POST_MORTEM_1 | {"KAFKA-5970"} | CLEANER | KRAFT
    for b in bugs:
        assert b.source.startswith(("https://github.com/apache/kafka/pull/", "https://issues.apache.org/jira/browse/"))
        assert b.affected and b.title and b.component
    # every entry says what could not be confirmed rather than passing it off as fact
    assert all(b.unverified for b in bugs if b.source.startswith("https://issues.apache.org/"))


@pytest.mark.parametrize("a, b, expected", [
    ("0.10.1.0", "0.10.1.1", -1), ("0.10.1.1", "0.10.1.0", 1), ("0.10.2.2", "0.11.0.0", -1),
    ("0.11.0.3", "1.0.0", -1), ("1.0.0", "1.0.0.0", 0), ("2.8.2", "2.10.0", -1), ("3.6.0", "3.6.0-rc1", 0),
    ("2.8.2", "3.6.0", -1), ("10.0", "9.9.9", 1),
])
def test_version_order(a, b, expected):
    assert compare_versions(a, b) == expected


def test_version_key_rejects_non_versions():
    assert version_key("0.10.1.0") == (0, 10, 1, 0) and version_key("2.8.2") == (2, 8, 2, 0)
    for bad in ("", "latest", "v2.8.2", "2"):
        with pytest.raises(ValueError, match="not a Kafka version"):
            version_key(bad)


def test_bugs_affecting_the_post_mortem_versions():
    ids = lambda v: {b.id for b in bugs_affecting(v, processes=("zk_broker",))}  # noqa: E731
    # post-mortem 1: 0.10.1.0 has the coordinator deadlocks; 0.10.1.1 fixes them but brings KAFKA-5970
    assert POST_MORTEM_1 <= ids("0.10.1.0") and "KAFKA-5970" not in ids("0.10.1.0")
    assert not POST_MORTEM_1 & ids("0.10.1.1") and "KAFKA-5970" in ids("0.10.1.1")
    assert ids("1.1.0") == {"KAFKA-6834", "KAFKA-6854", "KAFKA-7215", "KAFKA-8335"}
    assert ids("1.1.1") == {"KAFKA-6834", "KAFKA-7215", "KAFKA-8335"}   # KAFKA-6854 fixed in 1.1.1
    assert ids("2.8.2") == set()
    assert ids("3.6.0") == {"KAFKA-16574"} and ids("3.9.0") == set()
    assert ids("2.2.0") == {"KAFKA-8335"} and ids("2.2.1") == set()


def test_signature_matching_of_the_post_mortem_1_deadlock():
    cycle = dict(threads=["executor-Heartbeat", "group-metadata-manager-0", "kafka-request-handler-3"],
                 lock_classes=["kafka.coordinator.GroupMetadata", "java.util.LinkedList"])
    ids = lambda version, **seen: [b.id for b in known_bugs.bugs_matching(version, **seen)]  # noqa: E731
    assert ids("0.10.1.0", **cycle) == ["KAFKA-3994", "KAFKA-4399", "KAFKA-4478", "KAFKA-4562"]
    assert ids("0.10.1.1", **cycle) == []          # the same cycle is not one of these bugs after the fix
    assert ids(None, threads=["kafka-request-handler-1", "executor-Heartbeat"],
               lock_classes=["kafka.coordinator.group.GroupMetadata", "kafka.server.DelayedProduce"]) == ["KAFKA-5970"]
    assert ids("0.10.1.0", log_line="java.io.IOException: Connection to 219 was disconnected before the response "
                                    "was read") == ["KAFKA-4477"]
    assert ids("1.1.0", log_line="[kafka-log-cleaner-thread-0]: Error due to") == ["KAFKA-7215"]
    assert ids("2.8.2", log_line="[kafka-log-cleaner-thread-0]: Error due to") == []


def test_kraft_bugs_affect_the_processes_that_run_their_code():
    ids = lambda v, *processes: {b.id for b in bugs_affecting(v, processes=processes)}  # noqa: E731
    # a ZooKeeper-mode broker of a KRaft-era version has none of them
    assert ids("3.6.0", "zk_broker") == {"KAFKA-16574"}
    assert ids("3.6.0", "kraft_broker") == {"KAFKA-16574", "KAFKA-14616", "KAFKA-17076", "KAFKA-19895"}
    assert ids("3.6.0", "controller") == {"KAFKA-15489"}
    assert ids("3.3.1", "controller") == {"KAFKA-14296", "KAFKA-14300", "KAFKA-14644", "KAFKA-15019", "KAFKA-15489"}
    assert ids("3.3.2", "controller") == {"KAFKA-14644", "KAFKA-15019", "KAFKA-15489"}   # 14296, 14300 fixed
    assert ids("3.9.0", "controller") == set() and ids("3.9.0", "kraft_broker") == {"KAFKA-17076", "KAFKA-19895"}
    assert ids("4.0.0", "kraft_broker", "controller") == {"KAFKA-19522", "KAFKA-19895"}
    assert ids("4.1.0", "kraft_broker", "controller") == {"KAFKA-19895"}   # open
    assert all(b.processes and set(b.processes) <= set(known_bugs.PROCESSES) for b in known_bugs.load())


GOOD = """
bugs:
  - id: KAFKA-1
    title: t
    component: log-cleaner
    affected: [{from: "1.0.0", to: "1.1.0"}]
    fixed_in: ["1.1.0"]
    signature: {threads: ['^x$'], lock_classes: [], log_lines: []}
    source: https://issues.apache.org/jira/browse/KAFKA-1
"""


@pytest.mark.parametrize("edit, message", [
    (("source: https://issues", "source: http://issues"), r"bad\.yaml: KAFKA-1: `source` must be an https:// URL"),
    (('to: "1.1.0"', 'to: "latest"'), r"bad\.yaml: KAFKA-1: affected\[0\]\.to: not a Kafka version: 'latest'"),
    (('from: "1.0.0"', 'from: "1.2.0"'), r"bad\.yaml: KAFKA-1: affected\[0\]: `from` 1\.2\.0 is not older than `to` 1\.1\.0"),
    (("    component: log-cleaner\n", ""), r"bad\.yaml: KAFKA-1: missing required key `component`"),
    (("threads: ['^x$']", "threads: ['(']"), r"bad\.yaml: KAFKA-1: signature\.threads\[0\]: bad regex"),
    (('fixed_in: ["1.1.0"]', 'fixed_in: ["1.0.5"]'), r"bad\.yaml: KAFKA-1: fixed_in 1\.0\.5 lies inside an affected range"),
    (("id: KAFKA-1", "id: kafka-1"), r"bad\.yaml: kafka-1: `id` must look like KAFKA-1234"),
    (("    title: t\n", "    title: t\n    fix: x\n"), r"bad\.yaml: KAFKA-1: unknown key\(s\) fix"),
    (("    title: t\n", "    title: t\n    processes: [zookeeper]\n"),
     r"bad\.yaml: KAFKA-1: `processes` must be a non-empty list of zk_broker, kraft_broker, controller"),
])
def test_a_bad_entry_names_file_entry_and_key(tmp_path, edit, message):
    path = tmp_path / "bad.yaml"
    assert edit[0] in GOOD
    path.write_text(GOOD.replace(*edit))
    with pytest.raises(KnownBugError, match=message):
        known_bugs.load(path)


def test_good_file_and_duplicates(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(GOOD)
    (bug,) = known_bugs.load(path)
    assert bug.affects("1.0.0") and bug.affects("1.0.9") and not bug.affects("1.1.0") and not bug.affects("0.11.0.3")
    path.write_text(GOOD + GOOD.split("bugs:\n", 1)[1])
    with pytest.raises(KnownBugError, match=r"bad\.yaml: KAFKA-1: duplicate id"):
        known_bugs.load(path)
    with pytest.raises(KnownBugError, match=r"nope\.yaml: cannot read"):
        known_bugs.load(tmp_path / "nope.yaml")


# --- Spark: the same order as a column, and the detector -------------------------------------------
@pytest.mark.spark
def test_version_key_column_matches_python(spark):
    from pyspark.sql import functions as F

    versions = ["0.10.1.0", "0.10.1.1", "1.1.0", "2.8.2", "3.6.0", "3.6.0-rc1", "1.0"]
    df = local_frame(spark, [(v,) for v in versions + ["bad", None]], "v string")
    got = {r.v: r.k for r in df.select("v", known_bugs.version_key_col(F.col("v")).alias("k")).collect()}
    assert got == {**{v: list(version_key(v)) for v in versions}, "bad": None, None: None}


HOUR = datetime(2026, 11, 20, 10, tzinfo=timezone.utc)


def _exposure(spark, hosts):
    from fleethealth.gold.facts.core import Facts
    from fleethealth.gold.facts.exposure import known_bug_exposure

    facts = Facts(HOUR, hosts, None, None, None, None, None, None, None)
    return {(r.cluster, r.kafka_version, r.bug_id): r for r in known_bug_exposure(facts, {}).collect()}


@pytest.mark.spark
def test_known_bug_exposure_at_both_sides_of_the_fix(spark):
    from fleethealth.silver import tables as silver

    versions = {217: "0.10.1.0", 218: "0.10.1.1", 219: "2.8.2", 220: None, 221: "0.10.1.0"}
    rows = [("c1", f"c1-kafka-{b}", "kafka", b, None, v, "UTC", 50, ["kafka", "jmx"]) for b, v in versions.items()]
    rows.append(("c1", "c1-zk-1", "zookeeper", None, 1, None, "UTC", 50, ["zookeeper"]))
    found = _exposure(spark, silver.hosts_of(spark, rows))
    # 2.8.2: nothing catalogued; no version: no claim; one row per version and bug, naming its hosts
    assert sorted((v, b) for _, v, b in found) == sorted(
        [("0.10.1.0", b) for b in ("KAFKA-3994", "KAFKA-4399", "KAFKA-4477", "KAFKA-4478", "KAFKA-4497", "KAFKA-4562",
                                   "KAFKA-5413", "KAFKA-6834", "KAFKA-7215")]
        + [("0.10.1.1", b) for b in ("KAFKA-5413", "KAFKA-5970", "KAFKA-6834", "KAFKA-7215")])
    row = found[("c1", "0.10.1.0", "KAFKA-3994")]
    assert (row.hosts, row.host_count, row.affected, row.fixed_in, row.component) == (
        ["c1-kafka-217", "c1-kafka-221"], 2, "[0.10.0.0, 0.10.1.1)", ["0.10.1.1", "0.10.2.0"], "group-coordinator")
    assert row.title.startswith("Deadlock between the group coordinator") and row.hour == HOUR.replace(tzinfo=None)
    assert found[("c1", "0.10.1.1", "KAFKA-5413")].affected == "[*, 0.10.2.2)"


@pytest.mark.spark
def test_known_bug_exposure_of_kraft_controllers_and_brokers(spark):
    from fleethealth.fleet.inventory import parse_inventory
    from fleethealth.silver.tables import hosts_frame

    inventory = parse_inventory({"clusters": [
        {"name": "kr", "root": "/r", "hosts": [
            {"host": "kr-ctl-1", "role": "controller", "node_id": 3000, "kafka_version": "3.3.1"},
            {"host": "kr-kafka-1", "role": "kafka", "broker_id": 1, "kafka_version": "3.6.0"},
            {"host": "kr-kafka-2", "role": "kafka", "broker_id": 2, "kafka_version": "3.6.0", "controller": True}]},
        {"name": "zk", "root": "/r", "hosts": [
            {"host": "zk-kafka-1", "role": "kafka", "broker_id": 1, "kafka_version": "3.6.0"},
            {"host": "zk-zk-1", "role": "zookeeper", "zk_myid": 1}]}]})
    found = _exposure(spark, hosts_frame(spark, inventory))
    hosts = {k: r.hosts for k, r in found.items()}
    assert hosts == {
        **{("kr", "3.3.1", b): ["kr-ctl-1"] for b in ("KAFKA-14296", "KAFKA-14300", "KAFKA-14644", "KAFKA-15019",
                                                      "KAFKA-15489")},
        # a combined node runs its broker's bugs and its controller's
        **{("kr", "3.6.0", b): ["kr-kafka-1", "kr-kafka-2"] for b in ("KAFKA-14616", "KAFKA-16574", "KAFKA-17076",
                                                                      "KAFKA-19895")},
        ("kr", "3.6.0", "KAFKA-15489"): ["kr-kafka-2"],
        ("zk", "3.6.0", "KAFKA-16574"): ["zk-kafka-1"]}


# --- known bugs on the incidents whose own event shows them (issue 62, item 1) -----------------------
def test_kinds_name_detectors_and_their_log_lines_one_regex():
    from fleethealth.gold.detectors import DETECTORS

    bugs = known_bugs.load()
    assert {k for b in bugs for k in b.kinds} <= set(DETECTORS)
    assert {b.id for b in known_bugs.explaining("log_cleaner_dead")} == CLEANER - {"KAFKA-8335", "KAFKA-16574"}
    # a deadlock's bugs are matched by their threads (gold.deadlocks), not by kind
    assert not {b.id for b in bugs if b.kinds} & (POST_MORTEM_1 | {"KAFKA-5970"})
    regex = known_bugs.log_lines_regex()
    for line in ("[kafka-log-cleaner-thread-0]: Error due to", "[kafka-log-cleaner-thread-1], Stopped  ",
                 "Unable to send a heartbeat because the RPC got timed out"):
        assert re.search(regex, line), line
    assert not re.search(regex, "[kafka-log-cleaner-thread-0]: Starting")


def test_a_bad_kinds_list_is_named(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(GOOD.replace("    title: t\n", "    title: t\n    kinds: log_cleaner_dead\n"))
    with pytest.raises(KnownBugError, match=r"bad\.yaml: KAFKA-1: `kinds` must be a list of incident kinds"):
        known_bugs.load(path)


def _at(minute: int, second: int = 0) -> datetime:
    return HOUR.replace(tzinfo=None, minute=minute, second=second)


# The cleaner's death lines as Kafka writes them: "[kafka-log-cleaner-thread-0], Error due to " (0.10, its
# ShutdownableThread's logIdent ends ", ") and "[kafka-log-cleaner-thread-0]: Error due to" (1.0 on), the
# exception under it; the requirement's text is LogCleaner.scala's (apache/kafka PR #1332, #1725).
OFFSET_MAP = ("java.lang.IllegalArgumentException: requirement failed: 9730197928 messages in segment "
              "__consumer_offsets-38/00000000000000000000.log but offset map can fit only 5033164. You can increase "
              "log.cleaner.dedupe.buffer.size or decrease log.cleaner.threads\n\tat scala.Predef$.require(Predef.scala:219)")
TOO_LARGE = ("java.lang.IllegalStateException: This log contains a message larger than maximum allowable size of "
             "1000012.\n\tat kafka.log.Cleaner.growBuffers(LogCleaner.scala:622)")


@pytest.mark.spark
def test_an_incident_carries_the_bugs_its_own_lines_and_version_show(spark):
    from fleethealth.gold.detectors.base import FINDING_COLUMNS
    from fleethealth.gold.facts.core import kafka_events_read
    from fleethealth.silver import tables as silver
    from pyspark.sql import functions as F

    versions = {"v110": "1.1.0", "v241": "2.4.1", "v1001": "0.10.0.1", "v1010": "0.10.1.0"}
    hosts = silver.hosts_of(spark, [(c, f"{c}-kafka-{b}", "kafka", b, None, v, "UTC", 50, ["kafka"])
                                    for c, v in versions.items() for b in (1, 2, 3)])
    hosts = hosts.withColumn("hour", F.lit(HOUR.replace(tzinfo=None)))
    error, stopped = "[kafka-log-cleaner-thread-0]: Error due to", "[kafka-log-cleaner-thread-0]: Stopped"
    lines = [
        ("v110", 2, _at(20), "cleaner_error", error, "java.io.IOException: Map failed"),
        ("v110", 2, _at(20, 1), "cleaner_stopped", stopped, None),
        ("v110", 3, _at(30), "cleaner_error", error, TOO_LARGE),
        ("v241", 1, _at(20), "cleaner_error", error, "java.io.IOException: Map failed"),
        ("v1001", 1, _at(5), "cleaner_error", "[kafka-log-cleaner-thread-0], Error due to ", OFFSET_MAP),
        ("v1001", 2, _at(5), "cleaner_error", "[kafka-log-cleaner-thread-0], Error due to ", OFFSET_MAP),
        ("v110", 1, _at(19), "leader_epoch_start", "[Partition t-0 broker=1] t-0 starts at leader epoch 4", None)]
    events = local_frame(spark, [(c, f"{c}-kafka-{b}", b, ts, HOUR.replace(tzinfo=None), t, m, d)
                                 for c, b, ts, t, m, d in lines],
                         "cluster string, host string, broker_id int, ts timestamp, hour timestamp, event_type string, "
                         "message string, detail string")
    read = kafka_events_read(events)   # as the gold job hands them over: the text of a signature's lines kept
    assert {(r.host, r.event_type) for r in read.where("message IS NOT NULL").collect()} == {
        (f"{c}-kafka-{b}", t) for c, b, _, t, _, _ in lines if t != "leader_epoch_start"}

    def dead(cluster, broker, first, kind="log_cleaner_dead", entity=None, known_bug=None):
        return (cluster, kind, "critical", entity or f"broker-{broker}", first, _at(55), "e", known_bug,
                HOUR.replace(tzinfo=None))
    found = [
        dead("v110", 2, _at(20)),                     # its 'Error due to' on 1.1.0: KIP-346 came in 2.1.0
        dead("v110", 3, _at(35)),                     # and a message too large for the cleaner, < 1.1.1 / 2.0.0
        dead("v110", 1, _at(20)),                     # broker 2's line is not broker 1's
        dead("v110", 2, _at(21), "offsets_partition_bloat", "__consumer_offsets-38@broker-2"),   # not a bloat bug
        dead("v241", 1, _at(20)),                     # 2.4.1: past every fix
        dead("v1001", 1, _at(14, 59)),                # the offset map's requirement (< 0.10.1.0), 9:59 after it
        dead("v1001", 2, _at(15, 1)),                 # 10:01 after its line: another event
        dead("v1010", 1, _at(30)),                    # 0.10.1.0's dying cleaner without a line: may be KAFKA-4497
        dead("v110", 2, _at(20), "broker_deadlock", None, "KAFKA-5970")]   # no kind of a bug: as it was
    findings = local_frame(spark, found, "cluster string, kind string, severity string, entity string, "
                           "first_seen timestamp, last_seen timestamp, evidence string, known_bug string, hour timestamp")
    got = {}
    for kind in ("log_cleaner_dead", "offsets_partition_bloat", "broker_deadlock"):
        out = known_bugs.with_known_bugs(findings.where(F.col("kind") == kind), kind, hosts, read)
        assert out.columns == FINDING_COLUMNS
        got.update({(r.cluster, r.kind, r.entity, r.first_seen.minute): r.known_bug for r in out.collect()})
    assert got == {
        ("v110", "log_cleaner_dead", "broker-2", 20): "KAFKA-7215",
        ("v110", "log_cleaner_dead", "broker-3", 35): "KAFKA-6834,KAFKA-6854,KAFKA-7215",
        ("v110", "log_cleaner_dead", "broker-1", 20): None,
        ("v110", "offsets_partition_bloat", "__consumer_offsets-38@broker-2", 21): None,
        ("v241", "log_cleaner_dead", "broker-1", 20): None,
        ("v1001", "log_cleaner_dead", "broker-1", 14): "KAFKA-3894,KAFKA-7215",
        ("v1001", "log_cleaner_dead", "broker-2", 15): None,
        ("v1010", "log_cleaner_dead", "broker-1", 30): "KAFKA-4497",
        ("v110", "broker_deadlock", "broker-2", 20): "KAFKA-5970"}


def test_the_page_says_matches_or_may_be_with_the_fix_release():
    from fleethealth.report.text import incident_notes, known_bugs_text

    assert known_bugs_text("KAFKA-7215") == ("matches KAFKA-7215 (One bad partition kills the cleaner thread; KIP-346 "
                                             "marks the partition uncleanable instead), fixed in 2.1.0")
    assert known_bugs_text("KAFKA-4497,KAFKA-7215").endswith(
        "fixed in 2.1.0 | may be KAFKA-4497 (LogCleaner appended the wrong offset to the time index (cleaner thread "
        "dies on 0.10.1.0)), fixed in 0.10.1.1 / 0.10.2.0")
    assert known_bugs_text("KAFKA-19895") == ("matches KAFKA-19895 (A partition marked uncleanable stays so until a "
                                              "restart: __consumer_offsets partitions grow indefinitely), no fix yet")
    assert known_bugs_text("KAFKA-7215", said="... KAFKA-7215 ...") is None and known_bugs_text(None) is None
    assert incident_notes("no_such_kind", "KAFKA-7215").startswith(" | matches KAFKA-7215 (")
