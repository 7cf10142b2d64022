"""A small hand-written lakehouse for the HTML report's tests (deltalake, no Spark): post-mortem 3, the
dead log cleaner (broker 2's cleaner dead from 10:20, `__consumer_offsets-38` on broker 2 growing past
offsets_partition_bloat.max_size_bytes over 10:00-13:00, both incidents open; ZooKeeper mode), and a healthy
cluster in KRaft mode (three controllers; gold.kraft_quorum: one election at 10:00, the quorum leader moving
from 3000 to 3001 and broker 2 fenced twice, unfenced once, in 11:00, no quorum line in 12:00; no incident).
gold.known_bug_exposure: both clusters' brokers' versions against the catalogue (1.1.0: four cleaner bugs, the
dead cleaner's incident naming KAFKA-7215). gold.metadata_divergence and gold.deadlocks are left out, as in an
older lakehouse."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow as pa

START = datetime(2026, 11, 20, 10, tzinfo=timezone.utc)
HOURS = [START + timedelta(hours=i) for i in range(3)]
END = START + timedelta(hours=3)
DEAD = "pm3-dead-cleaner"
HEALTHY = "healthy"
GIB = 2**30
# __consumer_offsets-38 on broker 2 at the end of each hour: below the 1 GiB threshold, then above it
P38_SIZES = [int(0.55 * GIB), int(1.79 * GIB), int(4.2 * GIB)]
TS = pa.timestamp("us", tz="UTC")
NULL_TYPES = {"resolved_at": TS, "dead_since": TS, "cleaner_error_ts": TS, "cleaner_stopped_ts": TS,
              "first_saturated_ts": TS, "last_saturated_ts": TS, "server_expired_ts": TS, "log_expired_ts": TS,
              "lost_broker": pa.int32(), "known_bug": pa.string(), "time_since_last_run_ms": pa.int64(),
              "state": pa.string(), "last_change_ts": TS, "epoch": pa.int32(), "leader": pa.int32(),
              "fenced_broker_count_max": pa.int64(), "active_controller_count_max": pa.int32()}
VERSIONS = {DEAD: "1.1.0", HEALTHY: "3.9.0"}
CONTROLLERS = (3000, 3001, 3002)
# gold.kraft_quorum of HEALTHY, by hour: (log_lines, epoch, leader, elections, leaders, fences, fenced_brokers,
# unfences, fenced_at_end, fenced_broker_count_max, active_controller_count_max)
QUORUM = [(6, 7, 3000, 1, [3000], 0, [], 0, [], 0, 1),
          (31, 9, 3001, 2, [3000, 3001], 2, [2], 1, [2], 1, 2),
          (0, None, None, 0, [], 0, [], 0, [], 1, 1)]


def _table(rows: list[dict]) -> pa.Table:
    columns = {k: [r.get(k) for r in rows] for k in rows[0]}
    arrays = {}
    for name, values in columns.items():
        typ = NULL_TYPES.get(name) if all(v is None for v in values) else None
        arrays[name] = pa.array(values, type=typ or (pa.string() if all(v is None for v in values) else None))
    return pa.table(arrays)


def _write(root: Path, name: str, rows: list[dict], hourly: bool = True) -> None:
    from deltalake import write_deltalake

    layer, table = name.split(".")
    write_deltalake(str(root / layer / table), _table(rows), partition_by=["hour"] if hourly else None)


def _hosts():
    for cluster in (DEAD, HEALTHY):
        for b in (1, 2, 3):
            yield cluster, f"{cluster}-kafka-{b}", "kafka", b, None
    yield DEAD, f"{DEAD}-zk-1", "zookeeper", None, 1
    for n in CONTROLLERS:
        yield HEALTHY, f"{HEALTHY}-controller-{n}", "controller", n, None


def _kraft_quorum() -> list[dict]:
    columns = ("log_lines", "epoch", "leader", "elections", "leaders", "fences", "fenced_brokers", "unfences",
               "fenced_at_end", "fenced_broker_count_max", "active_controller_count_max")
    return [dict(cluster=HEALTHY, hour=hour, **dict(zip(columns, values, strict=True)), controllers_listed=len(CONTROLLERS))
            for hour, values in zip(HOURS, QUORUM, strict=True)]


def build(root: Path, with_jmx: bool = True) -> Path:
    root = Path(root)
    health, offsets, cleaner, isr, zk_sessions, zk_quorum, saturation, jmx = [], [], [], [], [], [], [], []
    for i, hour in enumerate(HOURS):
        end_of_hour = hour + timedelta(minutes=59, seconds=30)
        for cluster, host, role, broker, myid in _hosts():
            sources = {"kafka": ["kafka", "jmx", "jstack", "logdirs"], "controller": ["kafka", "jmx"]}.get(role, ["zookeeper"])
            health.append(dict(cluster=cluster, broker_id=broker, host=host, role=role, zk_myid=myid,
                               kafka_version=VERSIONS[cluster] if broker else None, hour=hour, sources_expected=sources, sources_arrived=sources,
                               sources_missing=[], bronze_records=12000, silver_records=11990, quarantined_records=10,
                               files_listed=len(sources), files_rejected=0, file_problems=[],
                               log_cleaner=("dead" if (cluster, broker) == (DEAD, 2) else "alive") if role == "kafka" else None,
                               max_offsets_partition_bytes=(P38_SIZES[i] if (cluster, broker) == (DEAD, 2) else 31_000_000)
                               if role == "kafka" else None))
            if role == "zookeeper":
                zk_quorum.append(dict(cluster=cluster, host=host, zk_myid=myid, hour=hour, log_lines=120, state="LEADING",
                                      state_ts=hour + timedelta(minutes=1), elections=0, max_election_ms=None,
                                      last_election_ms=None, follower_disconnects=0, transaction_timeouts=0,
                                      learner_handler_errors=0, peer_connection_errors=0, session_expiries=0,
                                      slow_fsyncs=0, max_fsync_ms=None, first_event_ts=hour, last_event_ts=end_of_hour))
                continue
            if role == "controller":
                continue
            dead = (cluster, broker) == (DEAD, 2)
            cleaner.append(dict(cluster=cluster, host=host, broker_id=broker, kafka_version="1.1.0", hour=hour,
                                status="dead" if dead else "alive",
                                dead_since=START + timedelta(minutes=20) if dead else None,
                                last_dead_evidence_ts=end_of_hour if dead else None, dead_thread_count=None,
                                time_since_last_run_ms=(2_101_588 + i * 3_600_000) if dead else 14_000,
                                cleaner_error_ts=START + timedelta(minutes=20) if dead else None, cleaner_stopped_ts=None,
                                cleanings=0 if dead else 40, last_cleaning_ts=None if dead else end_of_hour,
                                thread_dumps=1, dumps_with_cleaner=0 if dead else 1,
                                evidence=(f"time-since-last-run-ms={2_101_588 + i * 3_600_000} > 900000; "
                                          "cleaner 'Error due to' at 10:20:00Z") if dead else None))
            for partition in (12, 38):
                size = P38_SIZES[i] if dead and partition == 38 else 30_000_000 + 1_000_000 * broker
                offsets.append(dict(cluster=cluster, broker_id=broker, partition=partition, hour=hour, size_bytes=size,
                                    max_size_bytes=size, growth_bytes=(P38_SIZES[i] - (P38_SIZES[i - 1] if i else int(0.3 * GIB)))
                                    if dead and partition == 38 else 0,
                                    compaction_logged=not dead, compaction_seen=not dead, samples=60,
                                    first_ts=hour, last_ts=end_of_hour, size_source="jmx",
                                    groups=["consumer-group"] if partition == 38 else []))
            saturation.append(dict(cluster=cluster, broker_id=broker, hour=hour, samples=60, saturated_samples=0,
                                   max_queue=12.0 + broker, queue_limit=500, limit_from_config=False,
                                   min_handler_idle=0.82, min_network_idle=0.9, first_saturated_ts=None,
                                   last_saturated_ts=None))
            if cluster == DEAD:
                zk_sessions.append(dict(cluster=cluster, broker_id=broker, host=host, hour=hour, expiries=0, expiry_lines=0,
                                        sessions=[], log_expired_ts=None, server_expired_ts=None, client_timeouts=0,
                                        not_heard_ms=None, registrations=0, jmx_expiries=0))
            for minute in range(0, 60, 10):
                ts = hour + timedelta(minutes=minute)
                for attribute, value in (("OpenFileDescriptorCount", 900 + 10 * broker + minute),
                                         ("MaxFileDescriptorCount", 100_000)):
                    jmx.append(dict(cluster=cluster, host=host, broker_id=broker, ts=ts,
                                    mbean="java.lang:type=OperatingSystem", domain="java.lang",
                                    props=[("type", "OperatingSystem")], attribute=attribute, value=float(value),
                                    value_text=None, hour=hour))
        isr.append(dict(cluster=DEAD, topic="orders", partition=3, broker=1, hour=hour, shrinks=1, expands=1, updates=0,
                        skipped_updates=0, first_change_ts=hour + timedelta(minutes=5),
                        last_change_ts=hour + timedelta(minutes=6), isr_first=[1, 2, 3], isr_last=[1, 2, 3],
                        min_isr_size=2, max_isr_size=3, shrunk_to_leader=False, under_replicated_at_end=False,
                        dropped_brokers=[2]))
    for name, rows in (("gold.broker_health_hourly", health), ("gold.consumer_offsets_partitions", offsets),
                       ("gold.log_cleaner_status", cleaner), ("gold.isr_churn", isr), ("gold.zk_sessions", zk_sessions),
                       ("gold.zk_quorum", zk_quorum), ("gold.kraft_quorum", _kraft_quorum()),
                       ("gold.request_saturation", saturation)):
        _write(root, name, rows)
    _write(root, "gold.known_bug_exposure", _exposure())
    _write(root, "gold.leader_elections", [dict(
        cluster=DEAD, hour=HOURS[1], trigger_ts=HOURS[1] + timedelta(minutes=12, seconds=3), trigger="partition Online -> Offline",
        controller=1, lost_broker=None, partitions=3, offsets_partitions=1, offsets_partition_list=[38],
        groups=["consumer-group"], signals=["leader_epoch_start"], offline=1, epochs=3,
        last_change_ts=HOURS[1] + timedelta(minutes=12, seconds=9), window_ms=300000, storm=False)])
    if with_jmx:
        schema = pa.schema([("cluster", pa.string()), ("host", pa.string()), ("broker_id", pa.int32()), ("ts", TS),
                            ("mbean", pa.string()), ("domain", pa.string()), ("props", pa.map_(pa.string(), pa.string())),
                            ("attribute", pa.string()), ("value", pa.float64()), ("value_text", pa.string()), ("hour", TS)])
        from deltalake import write_deltalake

        write_deltalake(str(root / "silver" / "jmx_samples"), pa.Table.from_pylist(jmx, schema), partition_by=["hour"])
    _incidents(root)
    return root


def _exposure() -> list[dict]:
    """gold.known_bug_exposure as gold writes it: each cluster's brokers' version against the catalogue."""
    from fleethealth.gold import known_bugs

    rows = []
    for hour in HOURS:
        for cluster, version in VERSIONS.items():
            process = "zk_broker" if cluster == DEAD else "kraft_broker"
            hosts = [f"{cluster}-kafka-{b}" for b in (1, 2, 3)]
            for bug in known_bugs.bugs_affecting(version, processes=(process,)):
                affected = next(str(r) for r in bug.affected if r.contains(version))
                rows.append(dict(cluster=cluster, kafka_version=version, bug_id=bug.id, title=bug.title,
                                 component=bug.component, affected=affected, fixed_in=list(bug.fixed_in), hosts=hosts,
                                 host_count=len(hosts), hour=hour))
    return rows


def _incidents(root: Path) -> None:
    cleaner_first, bloat_first = START + timedelta(minutes=20), HOURS[1] + timedelta(minutes=59, seconds=30)
    last = END - timedelta(seconds=30)
    incidents = [
        dict(incident_id="a1b2c3d4e5f60001", cluster=DEAD, kind="log_cleaner_dead", severity="critical", severity_rank=4,
             entity="broker-2",
             status="open", first_seen=cleaner_first, last_seen=last, resolved_at=None,
             evidence="time-since-last-run-ms=9301588 > 900000 (last run 2026-11-20 10:20:00Z)", known_bug="KAFKA-7215",
             first_hour=HOURS[0], last_hour=HOURS[2], hours=3,
             first_evidence="time-since-last-run-ms=2101588 > 900000 (last run 2026-11-20 10:20:00Z); cleaner 'Error due to' at 10:20:00Z",
             caused_by=[]),
        dict(incident_id="a1b2c3d4e5f60002", cluster=DEAD, kind="offsets_partition_bloat", severity="major",
             severity_rank=3, entity="__consumer_offsets-38@broker-2", status="open", first_seen=bloat_first, last_seen=last,
             resolved_at=None, evidence=f"size {P38_SIZES[2] / GIB:.2f} GiB > 1.00 GiB (jmx)", known_bug=None,
             first_hour=HOURS[1], last_hour=HOURS[2], hours=2,
             first_evidence=f"size {P38_SIZES[1] / GIB:.2f} GiB > 1.00 GiB (jmx)",
             caused_by=[dict(kind="log_cleaner_dead", entity="broker-2", first_seen=cleaner_first)]),
    ]
    _write(root, "gold.incidents", incidents, hourly=False)
    _write(root, "gold.incident_history", [
        dict(incident_id=r["incident_id"], cluster=r["cluster"], kind=r["kind"], entity=r["entity"], transition="opened",
             severity=r["severity"], hour=r["first_hour"], at=r["first_seen"], evidence=r["first_evidence"])
        for r in incidents], hourly=False)
    _write(root, "gold.incident_findings", [
        dict(cluster=r["cluster"], kind=r["kind"], severity=r["severity"], entity=r["entity"],
             first_seen=max(r["first_seen"], h), last_seen=h + timedelta(minutes=59, seconds=30), evidence=r["evidence"],
             known_bug=None, hour=h)
        for r in incidents for h in HOURS if h >= r["first_hour"]])
