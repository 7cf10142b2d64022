"""The event-rule catalogue (rules/*.yaml): valid, documented, and exercised by the golden corpus."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fleethealth.silver.parsers import rules
from fleethealth.runtime.frames import local_frame

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
    df = local_frame(spark, [(body, None), ("Rolled new log segment for 'orders-1' in 9 ms.", None),
                                ("nothing to see", None)], "message string, detail string")
    rows = log4j.with_events(df.withColumn("logger", F.lit(None).cast("string")), "kafka").orderBy("message").collect()
    got = [(r.event_type, r.topic, r.partition, r.duration_ms) for r in rows]
    assert got == [("group_load_finished", "__consumer\ufffdoffsets", 7, 31), ("segment_rolled", "orders", 1, 9),
                   ("other", None, None, None)]


# --- KRaft (3.3 - 4.1): what a detector reads of each message ------------------------------------
def _first_match(body: str, logger: str | None = None) -> tuple[str, dict[str, str]]:
    """The engine's choice in plain Python: the first rule whose logger (if any) and regex match, and
    the text of each field it captures (empty captures left out) or sets."""
    for rule in rules.load_rules("kafka"):
        if rule.logger and rule.logger != logger:
            continue
        m = re.search(rule.match, body)
        if m:
            got = {f: m.group(g) for f, g in rule.fields.items() if m.group(g)}
            return rule.event_type, {**got, **{f: str(v) for f, v in rule.set.items()}}
    return "other", {}


KRAFT_LINES = [
    # the eight lines of issue 46 that parsed as `other`, as public issue threads and a commit quote them
    # (AutoMQ/automq#686 and #2057, sentry-kubernetes/charts#1605, apache/kafka's KAFKA-16446, bitnami/charts#25129)
    ("[Controller 0] Fencing broker 1 because its session has timed out.",                            # AutoMQ #686
     "broker_fenced", {"controller": "0", "broker": "1", "reason": "session_timeout"}),
    ("[Controller 0] handleBrokerFenced: changing 6 partition(s)",
     "partitions_changed", {"controller": "0", "reason": "handleBrokerFenced", "count": "6"}),
    ("[Controller 0] UNCLEAN partition change for testOther-1 with topic ID Fs3yVbY9S2qtNEF8A-xMSA: replicas: [1] -> [0], "
     "isr: [1] -> [0], leader: 1 -> 0, leaderEpoch: 85 -> 86, partitionEpoch: 85 -> 86",
     "unclean_partition_change", {"controller": "0", "topic": "testOther", "partition": "1", "isr_before": "1",
                                  "isr_after": "0", "prev_leader": "1", "leader": "0", "prev_leader_epoch": "85",
                                  "leader_epoch": "86"}),
    ("[RaftManager id=2] Become candidate due to fetch timeout",                                       # AutoMQ #2057
     "raft_fetch_timeout", {"node": "2", "reason": "fetch_timeout"}),
    ("[RaftManager id=2] Completed transition to CandidateState(localId=2, localDirectoryId=ZopiWufpyFjYOJ-CzWKiMQ,epoch=951, "
     "retries=1, voteStates={1=UNRECORDED, 2=GRANTED, 3=UNRECORDED}, highWatermark=Optional[LogOffsetMetadata(offset="
     "3186751955, metadata=Optional.empty)], electionTimeoutMs=1495) from FollowerState(fetchTimeoutMs=2000, epoch=950, "
     "leaderId=1, voters=[1, 2, 3])",
     "raft_state_changed", {"node": "2", "to_state": "Candidate", "controller_epoch": "951", "from_state": "Follower"}),
    ("[QuorumController id=0] processBrokerHeartbeat: event failed with StaleBrokerEpochException in 25 microseconds. "
     "Exception message: Expected broker epoch 38558457, but got broker epoch 2293103",              # sentry charts #1605
     "controller_event_failed", {"controller": "0", "operation": "processBrokerHeartbeat",
                                 "error": "StaleBrokerEpochException"}),
    ("[QuorumController id=1] Exceptionally slow controller event createTopics took 5240 ms. ",       # KAFKA-16446 commit
     "controller_event_slow", {"controller": "1", "operation": "createTopics", "duration_ms": "5240"}),
    ("[BrokerLifecycleManager id=0] Broker 0 sent a heartbeat request but received error STALE_BROKER_EPOCH.",  # bitnami #25129
     "broker_heartbeat_failed", {"broker": "0", "error": "STALE_BROKER_EPOCH"}),
    # Raft's own NOT_LEADER_OR_FOLLOWER at a graceful shutdown (bitnami charts #25456): not a client's error
    ("[RaftManager id=0] Failed to handle fetch from 2 at 124689 due to NOT_LEADER_OR_FOLLOWER",
     "raft_fetch_failed", {"node": "0", "peer_broker": "2", "offset": "124689", "error": "NOT_LEADER_OR_FOLLOWER"}),
    ("[RaftManager id=0] Completed transition to Unattached(epoch=4535, voters=[0, 1, 2], electionTimeoutMs=1598) from "
     "Leader(localId=0, epoch=4534, epochStartOffset=38654548, highWatermark=Optional.empty, voterStates={})",
     "raft_state_changed", {"node": "0", "to_state": "Unattached", "controller_epoch": "4535", "from_state": "Leader"}),
    # later trunk (apache/kafka PR #20121, 2025-07) names the broker epoch
    ("[QuorumController id=1000] Fencing broker 0 at epoch 9 because its session has timed out.",
     "broker_fenced", {"controller": "1000", "broker": "0", "broker_epoch": "9", "reason": "session_timeout"}),
    # each version's Raft state forms: 3.3 (no "from", nodeId=), 3.8 (leader=Node), 3.9 (leader=N), 4.0 / 4.1
    ("[RaftManager nodeId=3] Completed transition to FollowerState(fetchTimeoutMs=2000, epoch=7, leaderId=2, "
     "voters=[1, 2, 3], highWatermark=Optional.empty, fetchingSnapshot=Optional.empty)",
     "raft_state_changed", {"node": "3", "to_state": "Follower", "controller_epoch": "7", "leader": "2"}),
    ("[RaftManager id=3] Completed transition to FollowerState(fetchTimeoutMs=2000, epoch=8, leader=ctrl-2:9093 (id: 2 "
     "rack: null) voters=[1, 2, 3], highWatermark=Optional.empty, fetchingSnapshot=Optional.empty) from "
     "Voted(epoch=8, votedKey=ReplicaKey(id=2, directoryId=Optional.empty), voters=[1, 2, 3], electionTimeoutMs=1200, "
     "highWatermark=Optional.empty)",
     "raft_state_changed", {"node": "3", "to_state": "Follower", "controller_epoch": "8", "leader": "2",
                            "from_state": "Voted"}),
    ("[RaftManager id=10] Completed transition to Leader(localReplicaKey=ReplicaKey(id=10, directoryId=Cco6adTtSDDCzLYisIcG7w), "
     "epoch=3, epochStartOffset=121, highWatermark=Optional.empty, voterStates={}) from CandidateState(localId=10, "
     "localDirectoryId=Cco6adTtSDDCzLYisIcG7w, epoch=3, retries=1, epochElection=EpochElection(voterStates={}), "
     "highWatermark=Optional.empty, electionTimeoutMs=1420)",
     "raft_state_changed", {"node": "10", "leader": "10", "to_state": "Leader", "controller_epoch": "3", "offset": "121",
                            "from_state": "Candidate"}),
    ("[RaftManager id=1] Completed transition to ProspectiveState(epoch=21, leaderId=OptionalInt[2], votedKey=Optional.empty, "
     "epochElection=EpochElection(voterStates={}), electionTimeoutMs=1377, highWatermark=Optional.empty) from "
     "FollowerState(fetchTimeoutMs=2000, epoch=21, leader=2, leaderEndpoints=Endpoints(endpoints={}), votedKey=Optional.empty, "
     "voters=[1, 2, 3], highWatermark=Optional.empty, fetchingSnapshot=Optional.empty)",
     "raft_state_changed", {"node": "1", "to_state": "Prospective", "controller_epoch": "21", "leader": "2",
                            "from_state": "Follower"}),
    ("[RaftManager id=1] Transitioning to Prospective state due to fetch timeout",
     "raft_fetch_timeout", {"node": "1", "reason": "fetch_timeout"}),
    ("[RaftManager id=3000] Did not receive fetch request from the majority of the voters within 3000ms. Current fetched "
     "voters are [], and voters are java.util.stream.ReferencePipeline$3@5f2d1a0b",
     "raft_check_quorum_failed", {"node": "3000", "duration_ms": "3000"}),
    ("[QuorumController id=3000] In the new epoch 43, the leader is (none).",
     "quorum_leader_changed", {"controller": "3000", "controller_epoch": "43"}),
    ("[QuorumController id=3000] processExpiredBrokerHeartbeat: controller event queue overloaded. Timed out heartbeat "
     "from broker 3.",
     "broker_heartbeat_timed_out", {"controller": "3000", "broker": "3", "reason": "controller_overloaded"}),
    ("[QuorumController id=3000] enterControlledShutdown[1]: changing 96 partition(s)",
     "partitions_changed", {"controller": "3000", "reason": "enterControlledShutdown", "broker": "1", "count": "96"}),
    ("[Controller 1] createTopics: failed with TopicExistsException in 41 us",
     "controller_event_failed", {"controller": "1", "operation": "createTopics", "error": "TopicExistsException"}),
    ("[BrokerLifecycleManager id=2 isZkBroker=true] Unable to send a heartbeat because the RPC got timed out before it "
     "could be sent.",
     "broker_heartbeat_failed", {"broker": "2", "reason": "rpc_timeout"}),
    ("[MetadataLoader id=2] maybePublishMetadata(LOG_DELTA): The loader is still catching up because we have loaded up "
     "to offset 88120, but the high water mark is 91007",
     "metadata_catching_up", {"node": "2", "offset": "88120", "high_watermark": "91007"}),
    ("Encountered metadata publishing fault: Unhandled error publishing the new metadata image ending at 91240 with "
     "publisher BrokerMetadataPublisher",
     "server_fault", {"fault": "metadata publishing", "offset": "91240"}),
    # a fence or unfence replayed by every controller: 3.6+ records, 3.3.0 - 3.3.1 text
    ("[QuorumController id=3001] Replayed BrokerRegistrationChangeRecord modifying the registration for broker 2: "
     "BrokerRegistrationChangeRecord(brokerId=2, brokerEpoch=88341, fenced=1, inControlledShutdown=0, logDirs=[])",
     "broker_fencing_replayed", {"controller": "3001", "broker": "2", "broker_epoch": "88341", "to_state": "fenced"}),
    ("[QuorumController id=3001] Replayed BrokerRegistrationChangeRecord modifying the registration for broker 2: "
     "BrokerRegistrationChangeRecord(brokerId=2, brokerEpoch=88341, fenced=-1, inControlledShutdown=0, logDirs=[])",
     "broker_fencing_replayed", {"controller": "3001", "broker": "2", "broker_epoch": "88341", "to_state": "unfenced"}),
    ("[QuorumController id=3001] Replayed BrokerRegistrationChangeRecord modifying the registration for broker 2: "
     "BrokerRegistrationChangeRecord(brokerId=2, brokerEpoch=88341, fenced=0, inControlledShutdown=1, logDirs=[])",
     "other", {}),
    ("[QuorumController id=3001] Replayed UnfenceBrokerRecord modifying the registration for broker 2: "
     "UnfenceBrokerRecord(id=2, epoch=88341)",
     "broker_fencing_replayed", {"controller": "3001", "broker": "2", "broker_epoch": "88341", "to_state": "unfenced"}),
    ("[Controller 1] Fenced broker: 4",
     "broker_fencing_replayed", {"controller": "1", "broker": "4", "to_state": "fenced"}),
    # state-change.log: the broker's side of the leader moves
    ("[Broker id=3] Transitioning 71 partition(s) to local followers.",
     "broker_partitions_transitioned", {"broker": "3", "count": "71", "role": "follower"}),
    ("[RaftManager id=2] Unexpected error UNKNOWN_SERVER_ERROR in VOTE response: InboundResponse(correlationId=911, "
     "data=VoteResponseData(errorCode=-1, nodeEndpoints=[], topics=[]), sourceId=1)",
     "raft_response_error", {"node": "2", "error": "UNKNOWN_SERVER_ERROR", "operation": "VOTE"}),
    # the replica fetcher's error stays client-facing
    ("[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Error for partition orders-3 at offset 8810\n"
     "org.apache.kafka.common.errors.NotLeaderOrFollowerException: For requests intended only for the leader, ...",
     "not_leader_for_partition", {"peer_broker": "2", "topic": "orders", "partition": "3"}),
]


@pytest.mark.parametrize("body, event_type, fields", KRAFT_LINES, ids=[f"{i}-{e}" for i, (_, e, _) in enumerate(KRAFT_LINES)])
def test_kraft_messages_parse_to_their_fields(body, event_type, fields):
    assert _first_match(body) == (event_type, fields)


@pytest.mark.parametrize("logger", ["kafka.log.LogCleaner", "kafka.log.LogCleaner$CleanerThread",
                                    "org.apache.kafka.storage.internals.log.LogCleaner$CleanerThread"])
def test_cleaner_death_is_recognised_under_each_versions_logger(logger):
    """3.3 - 3.4 (log-cleaner.log), 3.5 - 4.0 (server.log), 4.1 (log-cleaner.log, the storage module's logger)."""
    assert _first_match("[kafka-log-cleaner-thread-0]: Error due to\njava.lang.OutOfMemoryError: Java heap space",
                        logger) == ("cleaner_error", {"thread_name": "kafka-log-cleaner-thread-0"})


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
    df = local_frame(spark, [(b, lg) for b in sorted(bodies, key=str) for lg in loggers], "body string, logger string")
    name = rules.register(spark, rs, fields)
    got = df.selectExpr("body", "logger", f"{name}(body, NULL, logger) AS m").selectExpr("body", "logger", "m.rule", "m.values")
    want = df.selectExpr("body", "logger", f"{_sql_rule_index(rs, 'body', 'logger')} AS rule")
    want = want.selectExpr("body", "logger", "rule", f"{_sql_values(rs, fields, 'body', 'rule')} AS values")
    got_rows = sorted(map(tuple, got.collect()), key=str)
    assert got_rows == sorted(map(tuple, want.collect()), key=str)
    assert len({r[2] for r in got_rows if r[2] is not None}) >= len(rs) // 2     # most rules matched somewhere


ACCEPT_FRAMES = {8: "\tat sun.nio.ch.ServerSocketChannelImpl.accept0(Native Method)\n"
                    "\tat sun.nio.ch.ServerSocketChannelImpl.accept(ServerSocketChannelImpl.java:422)\n",
                 17: "\tat java.base/sun.nio.ch.Net.accept(Native Method)\n"
                     "\tat java.base/sun.nio.ch.ServerSocketChannelImpl.implAccept(ServerSocketChannelImpl.java:425)\n"}


@pytest.mark.parametrize("strerror, jdk, logger", [
    ("Too many open files", 8, "kafka.network.Acceptor"),
    ("打开的文件过多", 8, "kafka.network.Acceptor"),             # zh_CN
    ("Trop de fichiers ouverts", 8, "kafka.network.Acceptor"),    # fr_FR
    ("Zu viele offene Dateien", 17, "kafka.network.DataPlaneAcceptor"),   # de_DE, 3.x acceptor class
])
def test_the_acceptors_failed_accept_in_any_locale(strerror, jdk, logger):
    """Keyed off the native accept frame, never the OS's localised text, which becomes the error."""
    body = f"Error while accepting connection\njava.io.IOException: {strerror}\n{ACCEPT_FRAMES[jdk]}"
    assert _first_match(body, logger) == ("socket_accept_failed", {"error": strerror})


def test_an_acceptor_error_of_another_cause_is_not_a_failed_accept():
    # 2018's ArithmeticException in Acceptor.run (a public report): no native accept frame
    body = ("Error while accepting connection\njava.lang.ArithmeticException: / by zero\n"
            "\tat kafka.network.Acceptor.run(SocketServer.scala:354)\n\tat java.lang.Thread.run(Thread.java:748)")
    assert _first_match(body, "kafka.network.Acceptor") == ("other", {})


@pytest.mark.parametrize("body, event_type, fields", [
    # KafkaScheduler's failure keeps the type of the exception under it when a rule reads that (0.10 golden sample)
    ("Uncaught exception in scheduled task 'kafka-log-retention'\njava.io.IOException: Map failed", "map_failed", {}),
    ("Uncaught exception in scheduled task 'isr-expiration'\norg.apache.zookeeper.KeeperException$SessionExpiredException: "
     "KeeperErrorCode = Session expired for /brokers/topics/t/partitions/0/state", "scheduled_task_failed",
     {"operation": "isr-expiration"}),
    # 2.0 logs the ephemeral owner and session in decimal (KAFKA-7165): no session_id then
    ("Error while creating ephemeral at /controller, node already exists and owner '216186131422332301' does not match "
     "current session '288330817911521280'", "controller_znode_conflict", {}),
    ("[kafka-log-cleaner-thread-0]: Starting", "cleaner_starting", {"thread_name": "kafka-log-cleaner-thread-0"}),
    ("[MetadataLoader 1] The loader finished catch up to the current high water mark of 4021", "metadata_caught_up",
     {"node": "1", "high_watermark": "4021"}),
])
def test_typed_lines_keep_the_types_before_them(body, event_type, fields):
    assert _first_match(body) == (event_type, fields)
