"""The simulator's KRaft clusters (issue 46 item 5; no Spark): hosts and sources per role, every log record
a message form of the Kafka source for the node's version (the source files are named in simulate/kraft_episodes.py
and kraft_raft.py) in the file that version's default log4j configuration writes it to,
the JMX beans mbeans.yaml lists per process kind, each scenario's ground truth where its lines are.
Parsing the same files through silver: tests/test_scenarios_kraft.py."""
from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from fleethealth.fleet import mbeans
from fleethealth.fleet.inventory import load_inventory
from fleethealth.simulate import KRAFT_SCENARIOS, SCENARIOS, kraft_scenarios as kr, simulate, write_cluster
from fleethealth.simulate.fleet import version_tuple
from fleethealth.simulate.model import ClusterState
from fleethealth.simulate.scenarios import KRAFT_GROUPS, user_topics

UTC = timezone.utc
START = datetime(2026, 11, 20, 10, tzinfo=UTC)
END = START + timedelta(hours=3)
RECORD = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] (INFO|WARN|ERROR) ", re.M)
STATES = r"(?:Leader|ResignedState|CandidateState|FollowerState|ProspectiveState)\("
STORAGE = "org.apache.kafka.storage.internals.log."
# logger -> message forms (first line of the message); {v4}: only 4.x nodes, {v3}: only 3.x nodes
FORMS = {
    "org.apache.kafka.image.publisher.SnapshotGenerator": [
        r"\[SnapshotGenerator id=(\d+)\] Creating new KRaft snapshot file snapshot \d{20}-\d{10} because we have "
        r"waited at least 60 minute\(s\)\."],
    "org.apache.kafka.controller.EventPerformanceMonitor": [
        r"{v4}\[QuorumController id=(\d+)\] In the last 60000 ms period, \d+ controller events were completed, which "
        r"took an average of \d+\.\d\d ms each\. The slowest event was \w+, which took \d+\.\d\d ms\."],
    "org.apache.kafka.controller.QuorumController": [
        r"\[QuorumController id=(\d+)\] Renouncing the leadership due to a metadata log event\. We were the leader at "
        r"epoch \d+, but in the new epoch \d+, the leader is \d+\. Reverting to last stable offset \d+\.",
        r"\[QuorumController id=(\d+)\] Becoming the active controller at epoch \d+, next write offset \d+\.",
        r"\[QuorumController id=(\d+)\] In the new epoch \d+, the leader is \d+\."],
    "org.apache.kafka.controller.ReplicationControlManager": [
        r"\[QuorumController id=(\d+)\] Fencing broker \d+ because its session has timed out\.",
        r"\[QuorumController id=(\d+)\] handleBroker(?:Fenced|Unfenced): changing \d+ partition\(s\)"],
    "org.apache.kafka.controller.BrokerHeartbeatManager": [
        r"\[QuorumController id=(\d+)\] The request from broker \d+ to unfence has been granted because it has caught "
        r"up with the offset of its register broker record \d+\."],
    "org.apache.kafka.controller.ClusterControlManager": [
        r"\[QuorumController id=(\d+)\] Replayed BrokerRegistrationChangeRecord modifying the registration for broker "
        r"\d+: BrokerRegistrationChangeRecord\(brokerId=\d+, brokerEpoch=\d+, fenced=-?1, inControlledShutdown=0, "
        r"logDirs=\[\]\)"],
    "org.apache.kafka.raft.QuorumState": [
        rf"\[RaftManager id=(\d+)\] (?:Attempting durable|Completed) transition to {STATES}.* from {STATES}.*\)"],
    "org.apache.kafka.raft.KafkaRaftClient": [
        r"{v3}\[RaftManager id=(\d+)\] Become candidate due to fetch timeout",
        r"{v4}\[RaftManager id=(\d+)\] Transitioning to Prospective state due to fetch timeout",
        # a quorum loss: no majority at each election timeout (KafkaRaftClient.java, 3.9 :3009, 4.1 :3185)
        r"{v3}\[RaftManager id=(\d+)\] Election has timed out, backing off for \d+ms before becoming a candidate again",
        r"{v4}\[RaftManager id=(\d+)\] Election timed out before receiving sufficient vote responses to become "
        r"candidate\. Current epoch election state: EpochElection\(voterStates=\{.*\}\)"],
    "org.apache.kafka.raft.LeaderState": [
        r"\[RaftManager id=(\d+)\] Did not receive fetch request from the majority of the voters within 3000ms\. "
        r"Current fetched voters are \[\d+\], and voters are java\.util\.stream\.ReferencePipeline\$3@[0-9a-f]+"],
    "org.apache.kafka.clients.NetworkClient": [
        r"\[RaftManager id=(\d+)\] Connection to node \d+ \([\w.-]+/[\d.]+:9093\) could not be established\. Node may "
        r"not be available\."],
    "kafka.server.BrokerLifecycleManager": [
        r"\[BrokerLifecycleManager id=(\d+)\] Unable to send a heartbeat because the RPC got timed out before it could "
        r"be sent\.",
        r"\[BrokerLifecycleManager id=(\d+)\] Unable to send broker heartbeat for \d+\. Retrying\."],
    "kafka.server.NodeToControllerRequestThread": [
        r"{v3}\[broker-(\d+)-to-controller-heartbeat-channel-manager\]: Recorded new KRaft controller, from now on will "
        r"use node [\w.-]+:9093 \(id: \d+ rack: null\)",
        r"{v4}\[broker-(\d+)-to-controller-heartbeat-channel-manager\]: Recorded new KRaft controller, from now on will "
        r"use node [\w.-]+:9093 \(id: \d+ rack: null isFenced: false\)"],
    "state.change.logger": [
        r"\[Broker id=(\d+)\] Transitioning \d+ partition\(s\) to local (?:leaders|followers)\.",
        r"\[Broker id=(\d+)\] Leader [\w.-]+-\d+ with topic id Some\([\w-]{22}\) starts at leader epoch \d+ from offset "
        r"\d+ with partition epoch \d+, high watermark \d+, ISR \[[\d,]+\], adding replicas \[\] and removing replicas "
        r"\[\] \. Previous leader Some\(\d+\) and previous leader epoch was \d+\.",
        r"\[Broker id=(\d+)\] Follower [\w.-]+-\d+ starts at leader epoch \d+ from offset \d+ with partition epoch \d+ "
        r"and high watermark \d+\. Current leader is \d+\. Previous leader Some\(\d+\) and previous leader epoch was \d+\.",
        r"\[Broker id=(\d+)\] (?:Stopped|Started) fetchers as part of become-follower for \d+ partitions"],
    "org.apache.kafka.server.fault.LoggingFaultHandler": [
        r"Encountered metadata publishing fault: Unhandled error publishing the new metadata image ending at \d+ with "
        r"publisher BrokerMetadataPublisher",
        r"Encountered metadata loading fault: Error loading metadata log record from offset \d+"],
}
CLEANING = [r"Cleaner 0: Beginning cleaning of log __consumer_offsets-\d+",
            r"Cleaner 0: Building offset map for __consumer_offsets-\d+\.\.\.",
            r"Cleaner 0: Cleaning log __consumer_offsets-\d+ \(cleaning prior to .+, discarding tombstones prior to "
            r"upper bound deletion horizon .+\)\.\.\."]
THREAD = [r"\[kafka-log-cleaner-thread-0\]: Error due to", r"\[kafka-log-cleaner-thread-0\]: Stopped",
          r"\[kafka-log-cleaner-thread-0\]: \n\tLog cleaner thread 0 cleaned log __consumer_offsets-\d+ \(dirty section "
          r"= \[\d+, \d+\]\)\n(?:\t.*\n){7}"]
ROLL = [r"\[LocalLog partition=[\w.-]+-\d+, dir=/var/kafka-logs\] Rolled new log segment at offset \d+ in \d+ ms\."]
# (logger, file) of the log cleaner and segments, per broker version: 3.5 moved ShutdownableThread to Java
# (KAFKA-14706), whose logger is kafka.log.LogCleaner$CleanerThread, outside config/log4j.properties'
# kafka.log.LogCleaner; 4.1 moved the cleaner to storage/.../internals/log/ (KAFKA-14485), routed by
# config/log4j2.yaml
CLEANER_ROUTES = {
    "3.9": {"kafka.log.LogCleaner": ("log-cleaner.log", CLEANING + THREAD[2:]),
            "kafka.log.LogCleaner$CleanerThread": ("server.log", THREAD[:2]),
            "kafka.log.LocalLog": ("server.log", ROLL)},
    "4.1": {f"{STORAGE}Cleaner": ("log-cleaner.log", CLEANING),
            f"{STORAGE}LogCleaner$CleanerThread": ("log-cleaner.log", THREAD),
            f"{STORAGE}LocalLog": ("server.log", ROLL)},
}
CONTROLLER_LOGGERS = ("org.apache.kafka.controller.",)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("kraft")
    simulate(out, "kraft", START, END, jmx_samples_per_broker_hour=0, bytes_per_broker_hour=30_000)
    return out


def hosts(fleet: Path):
    inv = load_inventory(fleet / "inventory.yaml")
    return [(c, h) for c in inv.clusters for h in c.hosts]


def records(folder: Path) -> list[tuple[str, str, str, str, str]]:
    """(file name, local time, level, logger, message) of every record of a host's Kafka logs."""
    out = []
    for f in sorted(folder.iterdir()):
        text = f.read_text()
        starts = [m.start() for m in RECORD.finditer(text)]
        assert not text or starts[0] == 0, f
        for a, b in zip(starts, starts[1:] + [len(text)]):
            rec = text[a:b]
            first, _, rest = rec.partition("\n")
            m = re.fullmatch(r"\[(.{23})\] (\w+) (.*) \(([\w.$]+)\)", first)
            if m is None:     # a message of several lines: the logger closes its last one
                m = re.fullmatch(r"\[(.{23})\] (\w+) (.*) \(([\w.$]+)\)\n", rec, re.S)
                assert m, (f, rec)
                out.append((f.name.rsplit(".", 1)[0], m[1], m[2], m[4], m[3]))
                continue
            assert all(line.startswith(("\tat ", "\t... ", "Caused by: ")) or re.match(r"^[\w.$]+(Exception|Error)", line)
                       for line in rest.splitlines()), (f, rec)
            out.append((f.name.rsplit(".", 1)[0], m[1], m[2], m[4], m[3]))
    return out


def test_kraft_clusters_have_controllers_and_no_zookeeper(fleet):
    inv = load_inventory(fleet / "inventory.yaml")
    assert [c.name for c in inv.clusters] == list(KRAFT_SCENARIOS)
    assert not set(KRAFT_SCENARIOS) & set(SCENARIOS)
    for c in inv.clusters:
        assert c.mode == "kraft"
        assert [(h.host, h.role, h.broker_id, h.kafka_version, h.controller, h.processes) for h in c.hosts] == [
            (f"{c.name}-kafka-1", "kafka", 1, "3.9.1", False, ("kraft_broker",)),
            (f"{c.name}-kafka-2", "kafka", 2, "3.9.1", False, ("kraft_broker",)),
            (f"{c.name}-kafka-3", "kafka", 3, "4.1.0", False, ("kraft_broker",)),
            *[(f"{c.name}-controller-{n}", "controller", n, "4.1.0", True, ("controller",)) for n in (3000, 3001, 3002)]]
        for h in c.hosts:
            sources = sorted(p.name for p in (fleet / "fleet" / c.name / h.host).iterdir())
            assert sources == (["jmx", "kafka", "logdirs"] if h.broker_id == 1 else ["jmx", "kafka"]), h.host
            jmx = (fleet / "fleet" / c.name / h.host / "jmx").iterdir()   # one file per local hour
            assert sum(len(f.read_text().splitlines()) for f in jmx) == 36


def test_every_record_is_a_kraft_form_of_its_version_in_its_file(fleet):
    seen = defaultdict(int)
    for c, h in hosts(fleet):
        v = version_tuple(h.kafka_version)
        routes = CLEANER_ROUTES["4.1" if v >= (4, 1) else "3.9"] if h.role == "kafka" else {}
        for name, _, level, logger, msg in records(fleet / "fleet" / c.name / h.host / "kafka"):
            if logger in routes:
                where, forms = routes[logger]
                assert name == where, (h.host, name, logger, msg)
            else:
                forms = FORMS[logger]
                assert name == ("controller.log" if logger.startswith(CONTROLLER_LOGGERS) else
                                "state-change.log" if logger == "state.change.logger" else "server.log"), (logger, msg)
            usable = [f for f in forms if not f.startswith("{v4}" if v < (4, 0) else "{v3}")]
            hit = [f for f in usable if re.fullmatch(f.removeprefix("{v4}").removeprefix("{v3}"), msg, re.S)]
            assert len(hit) == 1, (h.host, h.kafka_version, logger, msg)
            m = re.fullmatch(hit[0].removeprefix("{v4}").removeprefix("{v3}"), msg, re.S)
            if m.groups() and m[1] is not None:   # a node's prefix names that node
                assert int(m[1]) == h.broker_id, (h.host, msg)
            seen[(c.name, logger, level)] += 1
    # the healthy cluster: no error, no Raft transition, no fencing
    healthy = {k[1:]: n for k, n in seen.items() if k[0] == "kraft-healthy"}
    assert {lv for _, lv in healthy} == {"INFO"}
    assert {lg for lg, _ in healthy} == {"org.apache.kafka.image.publisher.SnapshotGenerator",
                                         "org.apache.kafka.controller.EventPerformanceMonitor", "kafka.log.LogCleaner",
                                         f"{STORAGE}Cleaner", f"{STORAGE}LogCleaner$CleanerThread", "kafka.log.LocalLog",
                                         f"{STORAGE}LocalLog"}


def _utc(local: str, tz: str) -> str:
    t = datetime.strptime(local, "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=ZoneInfo(tz)).astimezone(UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%f")[:23] + "Z"


def _lines(fleet, cluster: str, pattern: str) -> list[tuple[str, str, str]]:
    """(host, UTC time, message) of the records of `cluster` whose message matches `pattern`, in time order."""
    tz = next(c.timezone for c, _ in hosts(fleet) if c.name == cluster)
    out = [(h.host, _utc(t, tz), msg) for c, h in hosts(fleet) if c.name == cluster
           for _, t, _, _, msg in records(fleet / "fleet" / cluster / h.host / "kafka") if re.search(pattern, msg)]
    return sorted(out, key=lambda x: x[1])


def truth(fleet, cluster: str) -> list[tuple[str, str, str]]:
    rows = json.loads((fleet / "expected_incidents.json").read_text())
    return sorted((t["kind"], t["entity"], t["first_seen"]) for t in rows if t["cluster"] == cluster)


def test_fenced_broker_three_times_with_leaders_away_and_back(fleet):
    c = "kraft-broker-fenced"
    fences = _lines(fleet, c, r"Fencing broker 2 because")
    unfences = _lines(fleet, c, r"The request from broker 2 to unfence has been granted")
    assert [h for h, _, _ in fences + unfences] == [f"{c}-controller-3000"] * 6
    # the fencing and the leader moves it causes (the KRaft form of post-mortem 4's storm), from the first fence;
    # the leaders of audit-events (replication factor 2) under min ISR from their first scrape after it
    under = {b: min(r["timestamp"] for s in _reads(fleet, c, f"{c}-kafka-{b}") for r in s
                    if r["request"]["mbean"].endswith("UnderMinIsrPartitionCount") and r["value"] > 0) for b in (1, 3)}
    assert not [r for s in _reads(fleet, c, f"{c}-kafka-2") for r in s
                if r["request"]["mbean"].endswith("UnderMinIsrPartitionCount") and r["value"] > 0]
    first_fence = datetime.fromisoformat(fences[0][1].replace("Z", "+00:00")).timestamp()
    assert all(first_fence < t < first_fence + 300 for t in under.values()), (under, first_fence)
    assert truth(fleet, c) == sorted([
        ("broker_fenced", "broker-2", fences[0][1]), ("leader_election_storm", "broker-2", fences[0][1]),
        *[("partitions_under_min_isr", f"broker-{b}", _iso(t)) for b, t in under.items()]])
    replays = _lines(fleet, c, r"Replayed BrokerRegistrationChangeRecord .* broker 2: .*fenced=1,")
    assert sorted({h for h, _, _ in replays}) == [f"{c}-controller-{n}" for n in (3000, 3001, 3002)] and len(replays) == 9
    misses = _lines(fleet, c, r"^\[BrokerLifecycleManager id=2\] Unable to send")
    assert len(misses) == 9 and {h for h, _, _ in misses} == {f"{c}-kafka-2"}
    # broker 2's leaders go to their second replica at each fencing and come back at the next balance check
    to_leaders = _lines(fleet, c, r"^\[Broker id=2\] Transitioning \d+ partition\(s\) to local leaders")
    to_followers = _lines(fleet, c, r"^\[Broker id=2\] Transitioning \d+ partition\(s\) to local followers")
    assert len(to_followers) == 3 and len(to_leaders) == 3
    assert all(f[1] < b[1] for f, b in zip(to_followers, to_leaders))
    away = _lines(fleet, c, r"^\[Broker id=[13]\] Leader .* Previous leader Some\(2\)")
    back = _lines(fleet, c, r"^\[Broker id=2\] Leader .*")
    assert len(away) == len(back) > 0 and len(back) % 3 == 0


@pytest.mark.parametrize("version", ["3.9.1", "4.1.0"])
def test_quorum_elections_per_version(tmp_path, version):
    """Five leader changes, epoch + 1 each; 3.x voters become candidates, 4.x ones go through Pre-Vote."""
    cluster = kr.kraft_cluster("q", "UTC", 3, KRAFT_GROUPS, user_topics(3), broker_versions=(version,),
                               controller_version=version)
    start, end = int(START.timestamp() * 1000), int(END.timestamp() * 1000)
    state = ClusterState(cluster, kr.quorum_events(cluster, start, end), 7)
    write_cluster(state, tmp_path, start, end, 0, 0)
    text = {n: "".join(p.read_text() for p in sorted((tmp_path / f"q-controller-{n}" / "kafka").glob("server.log.*")))
            for n in cluster.controller_ids}
    ctl = {n: "".join(p.read_text() for p in sorted((tmp_path / f"q-controller-{n}" / "kafka").glob("controller.log.*")))
           for n in cluster.controller_ids}
    leaders = [int(m[1]) for n in cluster.controller_ids
               for m in re.finditer(r"\[QuorumController id=(\d+)\] Becoming the active controller", ctl[n])]
    assert sorted(leaders) == sorted(new for _, new in kr.ELECTIONS)
    epochs = sorted(int(m[1]) for t in text.values()
                    for m in re.finditer(r"Completed transition to Leader\(.*?, epoch=(\d+), epochStartOffset", t))
    assert epochs == list(range(epochs[0], epochs[0] + 5))
    everything = "".join(text.values())
    if version.startswith("4."):
        assert everything.count("Transitioning to Prospective state due to fetch timeout") == 5
        assert everything.count("Completed transition to ProspectiveState(") == 5
        assert "Become candidate" not in everything and "retries=" not in everything
    else:
        assert everything.count("Become candidate due to fetch timeout") == 5
        assert "Prospective" not in everything and re.search(r"CandidateState\(localId=\d+, localDirectoryId=[\w-]+,epoch=", everything)
    assert everything.count("Did not receive fetch request from the majority of the voters") == 5
    assert sum(t.count("Renouncing the leadership") for t in ctl.values()) == 5
    assert "could not be established. Node may not be available." in text[kr.UNREACHABLE_VOTER]


def test_quorum_truth_is_the_first_fetch_timeout(fleet):
    c = "kraft-quorum-unstable"
    timeouts = _lines(fleet, c, r"due to fetch timeout")
    assert len(timeouts) == 5
    # and the quorum loss before the last election: the first scrape slot where no controller is active
    none = min(slot for slot, n in _active_controllers(fleet, c).items() if n == 0) * 300 + 1
    assert truth(fleet, c) == [
        ("controller_quorum_unstable", kr.QUORUM_ENTITY, timeouts[0][1]), ("no_active_controller", "controller", _iso(none))]


def test_metadata_lag_faults_and_stalled_offset(fleet):
    c = "kraft-metadata-lag"
    faults = _lines(fleet, c, r"^Encountered metadata (publishing|loading) fault")
    assert [h for h, _, _ in faults] == [f"{c}-kafka-3"] * 2
    assert truth(fleet, c) == [("metadata_lag", "broker-3", faults[0][1])]
    stalled = int(re.search(r"ending at (\d+)", faults[0][2])[1])
    snapshots = Counter(h for h, t, _ in _lines(fleet, c, r"^\[SnapshotGenerator id=\d+\] Creating new KRaft snapshot")
                        if t > faults[0][1])   # broker 3 publishes nothing more: it takes no snapshot either
    assert f"{c}-kafka-3" not in snapshots and snapshots[f"{c}-kafka-1"] >= 2
    applied, hw = [], []
    for f in sorted((fleet / "fleet" / c / f"{c}-kafka-3" / "jmx").iterdir()):
        for line in f.read_text().splitlines():
            reads = {r["request"]["mbean"]: r for r in json.loads(line) if r["status"] == 200}
            ts = reads["kafka.server:type=raft-metrics"]["timestamp"] * 1000
            applied.append((ts, reads["kafka.server:type=broker-metadata-metrics"]["value"]["last-applied-record-offset"]))
            hw.append(reads["kafka.server:type=raft-metrics"]["value"]["high-watermark"])
    fault_ms = datetime.fromisoformat(faults[0][1].replace("Z", "+00:00")).timestamp() * 1000
    assert {a for ts, a in applied if ts > fault_ms} == {stalled}
    assert hw[-1] - stalled > 10_000 and all(a >= h - 1 for (ts, a), h in zip(applied, hw) if ts < fault_ms)


def test_dead_cleaners_per_version(fleet):
    c = "kraft-dead-cleaner"
    deaths = {h: t for h, t, _ in _lines(fleet, c, r"^\[kafka-log-cleaner-thread-0\]: Error due to")}
    assert set(deaths) == {f"{c}-kafka-1", f"{c}-kafka-3"}
    kinds = truth(fleet, c)
    assert [k for k in kinds if k[0] == "log_cleaner_dead"] == [("log_cleaner_dead", f"broker-{b}", deaths[f"{c}-kafka-{b}"])
                                                               for b in (1, 3)]
    assert [k[:2] for k in kinds if k[0] == "offsets_partition_bloat"] == [("offsets_partition_bloat",
                                                                           "__consumer_offsets-38@broker-3")]
    k1 = fleet / "fleet" / c / f"{c}-kafka-1" / "kafka"
    k3 = fleet / "fleet" / c / f"{c}-kafka-3" / "kafka"
    assert "Error due to (kafka.log.LogCleaner$CleanerThread)\njava.io.IOException: Map failed\n" in \
        "".join(p.read_text() for p in k1.glob("server.log.*"))
    assert ("Error due to (org.apache.kafka.storage.internals.log.LogCleaner$CleanerThread)\njava.io.IOException: Map "
            "failed\n") in "".join(p.read_text() for p in k3.glob("log-cleaner.log.*"))


def _reads(fleet, cluster: str, host: str) -> list[list[dict]]:
    return [json.loads(line) for f in sorted((fleet / "fleet" / cluster / host / "jmx").iterdir())
            for line in f.read_text().splitlines()]


def _pairs(scrape: list[dict]) -> set[tuple[str, str]]:
    """(ObjectName as catalogued, attribute) of every value of a scrape."""
    out = set()
    for r in scrape:
        if r["status"] != 200:
            continue
        bean, attr = r["request"]["mbean"], r["request"].get("attribute")
        if bean.endswith(",partition=*"):
            out.add((bean.removesuffix(",partition=*"), attr or "Value"))
        elif attr is None:
            out |= {(bean, a) for a in r["value"]}
        else:
            out |= {(bean, a) for a in ([attr] if isinstance(attr, str) else attr)}
    return out


def test_jmx_exports_the_catalogued_beans_of_each_process(fleet):
    for c, h in hosts(fleet):
        process = h.processes[0]
        v = version_tuple(h.kafka_version)
        want = {(m.object_name, m.attribute) for m in mbeans.ALL if process in m.processes and v >= version_tuple(m.since)}
        assert want and not [m for m in mbeans.ALL if process in m.processes and v < version_tuple(m.since)]
        scrapes = _reads(fleet, c.name, h.host)
        assert len(scrapes) == 36
        extra = {("kafka.server:type=KafkaRequestHandlerPool,name=RequestHandlerAvgIdlePercent", a)
                 for a in ("Count", "EventType", "FifteenMinuteRate", "FiveMinuteRate", "MeanRate", "RateUnit")}
        extra |= {("kafka.controller:type=ControllerEventManager,name=EventQueueTimeMs", a)
                  for a in ("50thPercentile", "75thPercentile", "95thPercentile", "98thPercentile", "999thPercentile",
                            "Count", "Max", "Mean", "Min", "StdDev")}
        for scrape in scrapes:
            got = _pairs(scrape)
            assert want <= got and got - want <= extra, (h.host, got ^ want)
        assert all(r["status"] == 200 for s in scrapes for r in s)   # no failed read: nothing to quarantine
    # one active controller at every scrape slot but during the quorum loss (from 3000's resignation at 27:44
    # to the last election at 38:52: the slots of 30 and 35 minutes)
    for cluster in KRAFT_SCENARIOS:
        active = _active_controllers(fleet, cluster)
        none = sorted(slot * 300 - START.timestamp() for slot, n in active.items() if n == 0)
        assert set(active.values()) - {0} == {1} and none == ([1800, 2100] if cluster == "kraft-quorum-unstable" else []), cluster


def _active_controllers(fleet, cluster: str) -> dict[int, int]:
    """Scrape slot (epoch s // 300) -> ActiveControllerCount summed over the cluster's controllers."""
    active = defaultdict(int)
    for n in (3000, 3001, 3002):
        for scrape in _reads(fleet, cluster, f"{cluster}-controller-{n}"):
            for r in scrape:
                if r["request"]["mbean"].endswith("name=ActiveControllerCount"):
                    active[r["timestamp"] // 300] += r["value"]
    return active


def _iso(epoch_s: float) -> str:
    return datetime.fromtimestamp(epoch_s, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def test_fenced_broker_count_and_raft_epochs(fleet):
    fenced = [r["value"] for s in _reads(fleet, "kraft-broker-fenced", "kraft-broker-fenced-controller-3001") for r in s
              if r["request"]["mbean"].endswith("FencedBrokerCount")]
    assert set(fenced) <= {0, 1} and len(fenced) == 36
    c = "kraft-quorum-unstable"
    epochs = {}
    for _, h in [x for x in hosts(fleet) if x[0].name == c]:
        for s in _reads(fleet, c, h.host):
            for r in s:
                if r["request"]["mbean"] == "kafka.server:type=raft-metrics":
                    epochs.setdefault(h.host, []).append((r["value"]["current-epoch"], r["value"]["current-leader"]))
    assert len(epochs) == 6
    for series in epochs.values():
        assert series == sorted(series, key=lambda e: e[0]) and series[-1][0] - series[0][0] == 5
        assert series[-1][1] == kr.ELECTIONS[-1][1]


def test_straddling_shifts_move_every_episode_across_the_hour_end(tmp_path):
    shifts = kr.STRADDLING_SHIFTS
    simulate(tmp_path, list(shifts), START, START + timedelta(hours=2), jmx_samples_per_broker_hour=0,
             bytes_per_broker_hour=0, shifts=shifts)
    hour_end = START + timedelta(hours=1)
    rows = [t for t in json.loads((tmp_path / "expected_incidents.json").read_text())   # not those of a later scrape
            if t["kind"] not in ("offsets_partition_bloat", "partitions_under_min_isr", "no_active_controller")]
    assert {t["cluster"] for t in rows} == set(shifts) == set(KRAFT_SCENARIOS) - {"kraft-healthy"}
    for t in rows:
        seen = datetime.fromisoformat(t["first_seen"].replace("Z", "+00:00"))
        assert hour_end - timedelta(minutes=2) < seen < hour_end, t


def test_the_demos_fleet_has_a_zookeeper_and_a_kraft_cluster_each_with_incidents(tmp_path):
    from fleethealth.cli import demo

    inv = load_inventory(simulate(tmp_path, demo.SCENARIOS, START, END, jmx_samples_per_broker_hour=0,
                                  bytes_per_broker_hour=0))
    assert sorted(c.mode for c in inv.clusters) == ["kraft", "zookeeper"]
    kinds = {(t["cluster"], t["kind"]) for t in json.loads((tmp_path / "expected_incidents.json").read_text())}
    assert ("pm3-dead-cleaner", "log_cleaner_dead") in kinds and ("kraft-broker-fenced", "broker_fenced") in kinds
    with pytest.raises(ValueError, match="unknown scenario"):
        simulate(tmp_path, "kraft,nope", START, END)
