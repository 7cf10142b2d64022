"""Kafka broker log4j files: server.log, controller.log, state-change.log, log-cleaner.log.

Layout `[%d] %p %m (%c)%n`, hourly-rolled (`<name>.YYYY-MM-DD-HH`, local hour); a throwable follows
its record on the next lines. Message texts follow Kafka 1.x/2.x (`[Component id=N] ...` prefixes);
before 1.0 the periodic lines take 0.10's texts (`[Thread], msg`, `[Group Metadata Manager on Broker N]:`,
`Rolled new log segment for 't-0'`, `[Controller N]:`, `Broker N cached leader info ...`).
"""
from __future__ import annotations

from collections import Counter
from operator import itemgetter
from pathlib import Path

from . import stacktraces
from .clock import HOUR_MS, LocalClock
from .fleet import LOG_DIR, OFFSETS_TOPIC
from .kafka_config import kafka_config_block
from .model import MB, OFFSETS_ORIGIN_MS, OFFSETS_SEGMENT_BYTES, ClusterState

FILES = ("server.log", "controller.log", "state-change.log", "log-cleaner.log")
CLEANER = "kafka.log.LogCleaner"
GMM = "kafka.coordinator.group.GroupMetadataManager"
GC = "kafka.coordinator.group.GroupCoordinator"
CTRL = "kafka.controller.KafkaController"
SC = "state.change.logger"
LOG = "kafka.log.Log"
PAD_MS = 15 * 60_000


def append_hour(folder: Path, clock: LocalClock, name: str, h0: int, lst: list) -> int:
    """Append (ms, text) records of the UTC hour h0 to `<name>.<local hour>`; a UTC hour may span two
    local hours (:30 zones)."""
    split = clock.hour_start(h0) + HOUR_MS
    chunks = [(h0, [t for ms, t in lst if ms < split])]
    if split < h0 + HOUR_MS:
        chunks.append((split, [t for ms, t in lst if ms >= split]))
    n = 0
    for start, texts in chunks:
        path = folder / f"{name}.{clock.hour_label(start)}"
        data = "".join(texts)
        with open(path, "a", encoding="utf-8", newline="\n") as fh:
            fh.write(data)
        n += len(data)
    return n


class BrokerLogs:
    """Generates one broker's four log files, one UTC hour at a time."""

    def __init__(self, state: ClusterState, broker: int, clock: LocalClock, folder: Path,
                 bytes_per_hour: int):
        self.s = state
        self.c = state.c
        self.b = broker
        self.clock = clock
        self.folder = folder
        self.budget = bytes_per_hour
        self.v = self.c.version
        self.jdk11 = self.c.jdk11
        self.legacy = self.v < (1, 0)   # 0.10.x message texts
        self.gmm = f"[Group Metadata Manager on Broker {broker}]:" if self.legacy else f"[GroupMetadataManager brokerId={broker}]"
        self.tsep = ", " if self.legacy else ": "    # thread-name prefix separator
        # the group coordinator moved from kafka.coordinator to kafka.coordinator.group in 0.11
        self.gmm_logger = GMM.replace(".group.", ".") if self.legacy else GMM
        self.gc_logger = GC.replace(".group.", ".") if self.legacy else GC
        folder.mkdir(parents=True, exist_ok=True)
        self._user_parts = [(t, p) for t in self.c.topics for p in self.c.hosted(broker, t.name)]

    # --- rendering --------------------------------------------------------------------------------
    def rec(self, ms: int, level: str, msg: str, logger: str, trace: str | None = None):
        text = f"[{self.clock.stamp(ms)}] {level} {msg} ({logger})\n"
        if trace:
            text += trace + "\n"
        return ms, text

    # --- one hour ---------------------------------------------------------------------------------
    def write_hour(self, h0: int) -> int:
        h1 = h0 + HOUR_MS
        recs: dict[str, list] = {f: [] for f in FILES}
        # Events are generated on a padded range and cut to [h0, h1) by their own time, so a
        # multi-record event straddling the hour lands in the right file with increasing times.
        p0, p1 = h0 - PAD_MS, h1 + PAD_MS
        self._group_metadata(p0, p1, recs["server.log"])
        self._rebalances(p0, p1, recs["server.log"])
        self._bloat_rolls(p0, p1, recs["server.log"])
        self._cleaner(p0, p1, recs["log-cleaner.log"])
        self._controller(p0, p1, recs["controller.log"])
        for r in self.s.ev.restarts:
            self._restart(r, p0, p1, recs)
        if self.s.ev.script is not None:
            for name, lst in self.s.ev.script.kafka_records(self, p0, p1).items():
                recs[name].extend(lst)
        for name in FILES:
            recs[name] = [x for x in recs[name] if h0 <= x[0] < h1]
        self._warnings(h0, h1, recs["server.log"])
        self._metadata_updates(h0, h1, recs["state-change.log"])
        used = sum(len(t) for lst in recs.values() for _, t in lst)
        recs["server.log"].extend(self._filler(h0, self.budget - used))
        if self.s.ev.script is not None:
            drops = self.s.ev.script.drops
            recs = {name: [x for x in lst if not drops(self.b, *x)] for name, lst in recs.items()}
        total = 0
        stopped = not self.s.is_up(self.b, h0) and not self.s.is_up(self.b, h1 - 1)
        for name, lst in recs.items():
            if stopped and not lst:
                continue        # no JVM, no appender: no file of the hour
            lst.sort(key=itemgetter(0))
            total += self._write(name, h0, lst)
        return total

    def _write(self, name: str, h0: int, lst: list) -> int:
        return append_hour(self.folder, self.clock, name, h0, lst)

    # --- server.log: periodic ---------------------------------------------------------------------
    def _group_metadata(self, h0, h1, out):
        """offsets.retention.check.interval.ms = 600000: one cleanup every 10 minutes."""
        phase = self.s.rng("gmm-phase", self.b).randrange(600_000)
        fail = self.s.ev.tombstone_failures_from_ms.get(self.b)
        t = h0 + (phase - h0) % 600_000
        while t < h1:
            r = self.s.rng("gmm", self.b, t)
            t_run, t = t + r.randint(0, 40), t
            if self.s.is_up(self.b, t):
                if fail and t >= fail[0] and self._leads_now(self.c.group_partition(fail[1]), t):
                    _, group, n = fail
                    p = self.c.group_partition(group)
                    out.append(self.rec(t_run, "ERROR",
                                        f"{self.gmm} Failed to append {n} tombstones to {OFFSETS_TOPIC}-{p} for "
                                        f"expired/deleted offsets and/or metadata for group {group}.", self.gmm_logger,
                                        stacktraces.map_failed_append(self.jdk11)))
                    out.append(self.rec(t_run + r.randint(2, 9), "INFO",
                                        f"{self.gmm} Removed {n} expired offsets in {r.randint(5, 40)} milliseconds.", self.gmm_logger))
                else:
                    out.append(self.rec(t_run, "INFO",
                                        f"{self.gmm} Removed 0 expired offsets in {r.randint(0, 2)} milliseconds.", self.gmm_logger))
            t += 600_000

    def _leads_now(self, p: int, ms: int) -> bool:
        return self.s.offsets_leader(p, ms) == self.b

    def _rebalances(self, h0, h1, out):
        new_style = self.v >= (2, 0)
        for g in self.c.coordinated_groups(self.b):
            p = self.c.group_partition(g)
            r0 = self.s.rng("rebalance-sched", g)
            period = r0.randint(25, 55) * 60_000
            t = h0 + (r0.randrange(period) - h0) % period
            while t < h1:
                if self.s.is_up(self.b, t) and self._leads_now(p, t):
                    r = self.s.rng("rebalance", g, t)
                    gen = (t // period) % 10_000
                    member = f"consumer-{r.randint(1, 9)}-{r.getrandbits(128):032x}"
                    member = f"{member[:19]}-{member[19:23]}-{member[23:27]}-{member[27:31]}-{member[31:43]}"
                    state = " in state PreparingRebalance" if new_style else ""
                    reason = f" (reason: Adding new member {member} with group instance id None)" if self.v >= (2, 4) else ""
                    part = "" if self.legacy else f" ({OFFSETS_TOPIC}-{p})"
                    verb = "restabilize" if self.legacy else "rebalance"
                    out.append(self.rec(t, "INFO", f"[GroupCoordinator {self.b}]: Preparing to {verb} group {g}{state} "
                                                   f"with old generation {gen}{part}{reason}", self.gc_logger))
                    t2 = t + r.randint(3_000, 9_000)
                    out.append(self.rec(t2, "INFO", f"[GroupCoordinator {self.b}]: Stabilized group {g} generation {gen + 1}"
                                                    f"{part}", self.gc_logger))
                    out.append(self.rec(t2 + r.randint(5, 60), "INFO",
                                        f"[GroupCoordinator {self.b}]: Assignment received from leader for group {g} "
                                        f"for generation {gen + 1}", self.gc_logger))
                t += period

    def _warnings(self, h0, h1, out):
        """A health-check probe speaking HTTP to the Kafka port: WARN + stack trace, about once an hour."""
        r = self.s.rng("probe", self.b, h0)
        t = h0 + r.randrange(HOUR_MS)
        if self.s.is_up(self.b, t):
            ip = f"10.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(2, 250)}"
            out.append(self.rec(t, "WARN", f"[SocketServer brokerId={self.b}] Unexpected error from /{ip}; closing connection",
                                "org.apache.kafka.common.network.Selector",
                                stacktraces.invalid_receive(1195725856, self.jdk11)))

    def _bloat_rolls(self, h0, h1, out):
        """A partition growing without compaction rolls a 100 MiB segment every couple of minutes."""
        death = self.s.ev.cleaner_death_ms.get(self.b)
        for (b, p), rate in self.s.ev.bloat_bytes_per_s.items():
            if b != self.b or death is None:
                continue
            step = int(OFFSETS_SEGMENT_BYTES / rate * 1000)
            k = max(0, -(-(h0 - death) // step))
            t = death + k * step
            tp = f"{OFFSETS_TOPIC}-{p}"
            while t < h1:
                if self.s.is_up(self.b, t):
                    off = self.s.offsets_end_offset(self.b, p, t)
                    out.append(self.rec(t, "INFO", f"[Log partition={tp}, dir={LOG_DIR}] Rolled new log segment at "
                                                   f"offset {off} in {1 + t % 7} ms.", LOG))
                t += step

    # --- log-cleaner.log --------------------------------------------------------------------------
    def _cleaner(self, h0, h1, out):
        for cl in self.s.cleanings(self.b, h0, h1):
            out.extend(self._cleaning_records(cl))
        death = self.s.ev.cleaner_death_ms.get(self.b)
        if death is not None and h0 <= death < h1:
            out.extend(self._cleaner_death(death, self._dying_partition()))

    def _dying_partition(self) -> int:
        for (b, p) in self.s.ev.bloat_bytes_per_s:
            if b == self.b:
                return p
        return self.c.offsets_partitions(self.b)[0]

    def _cleaner_death(self, death: int, p: int) -> list:
        tp = f"{OFFSETS_TOPIC}-{p}"
        first = self.s.offsets_end_offset(self.b, p, death - 3_600_000)
        last = self.s.offsets_end_offset(self.b, p, death)
        return [
            self.rec(death - 2_871, "INFO", f"Cleaner 0: Beginning cleaning of log {tp}.", CLEANER),
            self.rec(death - 2_870, "INFO", f"Cleaner 0: Building offset map for {tp}...", CLEANER),
            self.rec(death - 2_811, "INFO", f"Cleaner 0: Building offset map for log {tp} for 3 segments in offset "
                                            f"range [{first}, {last}).", CLEANER),
            self.rec(death - 905, "INFO", f"Cleaner 0: Offset map for log {tp} complete.", CLEANER),
            self.rec(death - 903, "INFO", f"Cleaner 0: Cleaning log {tp} (cleaning prior to "
                                          f"{self.clock.java_date(death - 60_000)}, discarding tombstones prior to "
                                          f"{self.clock.java_date(death - 86_400_000)})...", CLEANER),
            self.rec(death - 902, "INFO", f"Cleaner 0: Cleaning segment 0 in log {tp} (largest timestamp "
                                          f"{self.clock.java_date(death - 4_000_000)}) into 0, retaining deletes.", CLEANER),
            self.rec(death, "ERROR", f"[kafka-log-cleaner-thread-0]{self.tsep}Error due to", CLEANER,
                     stacktraces.map_failed_cleaner(self.jdk11)),
            self.rec(death + 1, "INFO", f"[kafka-log-cleaner-thread-0]{self.tsep}Stopped", CLEANER),
        ]

    def _cleaning_records(self, cl) -> list:
        tp = f"{OFFSETS_TOPIC}-{cl.partition}"
        end, secs = cl.end_ms, cl.seconds
        start = end - int(secs * 1000) - 3
        mid = start + int(secs * 1000 * 0.85)
        mb_in = cl.start_bytes / MB
        mb_out = cl.end_bytes / MB
        msgs_in = max(1, cl.start_bytes // 150)
        msgs_out = max(1, cl.end_bytes // 150)
        red = 100.0 * (1 - cl.end_bytes / max(cl.start_bytes, 1))
        red_msgs = 100.0 * (1 - msgs_out / msgs_in)
        idx_s = secs * 0.62
        cln_s = secs - idx_s
        rate = mb_in / secs if secs else 0.0
        base = cl.first_offset
        stats = (f"[kafka-log-cleaner-thread-0]{self.tsep}\n"
                 f"\tLog cleaner thread 0 cleaned log {tp} (dirty section = [{cl.first_offset}, {cl.end_offset}])\n"
                 f"\t{mb_in:.1f} MB of log processed in {secs:.1f} seconds ({rate:.1f} MB/sec).\n"
                 f"\tIndexed {mb_in:.1f} MB in {idx_s:.1f} seconds ({mb_in / max(idx_s, 0.1):.1f} Mb/sec, "
                 f"{100 * idx_s / secs:.1f}% of total time)\n"
                 f"\tBuffer utilization: {min(99.9, msgs_in / 1_700_000 * 100):.1f}%\n"
                 f"\tCleaned {mb_in:.1f} MB in {cln_s:.1f} seconds ({mb_in / max(cln_s, 0.1):.1f} Mb/sec, "
                 f"{100 * cln_s / secs:.1f}% of total time)\n"
                 f"\tStart size: {mb_in:.1f} MB ({msgs_in} messages)\n"
                 f"\tEnd size: {mb_out:.1f} MB ({msgs_out} messages)\n"
                 f"\t{red:.1f}% size reduction ({red_msgs:.1f}% fewer messages)\n")
        return [
            self.rec(start, "INFO", f"Cleaner 0: Beginning cleaning of log {tp}.", CLEANER),
            self.rec(start + 1, "INFO", f"Cleaner 0: Building offset map for {tp}...", CLEANER),
            self.rec(start + 2, "INFO", f"Cleaner 0: Building offset map for log {tp} for 1 segments in offset range "
                                        f"[{cl.first_offset}, {cl.end_offset}).", CLEANER),
            self.rec(mid, "INFO", f"Cleaner 0: Offset map for log {tp} complete.", CLEANER),
            self.rec(mid + 1, "INFO", f"Cleaner 0: Cleaning log {tp} (cleaning prior to {self.clock.java_date(end - 60_000)}, "
                                      f"discarding tombstones prior to {self.clock.java_date(end - 86_400_000)})...", CLEANER),
            self.rec(mid + 2, "INFO", f"Cleaner 0: Cleaning segment {base} in log {tp} (largest timestamp "
                                      f"{self.clock.java_date(end - 120_000)}) into {base}, retaining deletes.", CLEANER),
            self.rec(end - 1, "INFO", f"Cleaner 0: Swapping in cleaned segment {base} for segment(s) {base} in log {tp}.",
                     CLEANER),
            self.rec(end, "INFO", stats, CLEANER),
        ]

    # --- controller.log ---------------------------------------------------------------------------
    def _preferred_map(self) -> str:
        per = {b: [] for b in self.c.broker_ids}
        for t in self.c.all_topics:
            for p in range(t.partitions):
                reps = self.c.replicas(t.name, p)
                per[reps[0]].append(f"{t.name}-{p} -> List({', '.join(map(str, reps))})")
        return "Map(" + ", ".join(f"{b} -> Map({', '.join(v)})" for b, v in per.items()) + ")"

    def _controller(self, h0, h1, out):
        if self.b != self.c.controller_id:
            return
        if self.legacy:
            return self._controller_legacy(h0, h1, out)
        cid = f"[Controller id={self.b}]"
        prefmap = None
        preferred = Counter(self.c.leader(t.name, p) for t in self.c.all_topics for p in range(t.partitions))
        t = h0 + (self.s.controller_check_phase - h0) % 300_000
        while t < h1:
            prefmap = prefmap or self._preferred_map()
            out.append(self.rec(t, "INFO", f"{cid} Processing automatic preferred replica leader election", CTRL))
            out.append(self.rec(t, "TRACE", f"{cid} Checking need to trigger auto leader balancing", CTRL))
            out.append(self.rec(t + 1, "DEBUG", f"{cid} Preferred replicas by broker {prefmap}", CTRL))
            moved = self.s.partitions_away_from_preferred(t)
            for b in self.c.broker_ids:
                mine = [tp for tp, reps in moved if reps[0] == b]
                body = ", ".join(f"{tp} -> List({', '.join(map(str, reps))})" for tp, reps in moved if reps[0] == b)
                out.append(self.rec(t + 1, "DEBUG", f"{cid} Topics not in preferred replica for broker {b} Map({body})", CTRL))
                total = preferred.get(b) or 1
                out.append(self.rec(t + 1, "TRACE", f"{cid} Leader imbalance ratio for broker {b} is {len(mine) / total}", CTRL))
                if mine and self.s.is_up(b, t):      # only partitions whose preferred leader is online are candidates
                    out.append(self.rec(t + 2, "INFO", f"{cid} Starting preferred replica leader election for partitions "
                                                       f"{','.join(mine)}", CTRL))
            t += 300_000

    def _controller_legacy(self, h0, h1, out):
        """0.10 KafkaController.checkAndTriggerPartitionRebalance: TRACE/DEBUG lines every 300 s."""
        cid = f"[Controller {self.b}]:"
        prefmap = None
        t = h0 + (self.s.controller_check_phase - h0) % 300_000
        while t < h1:
            prefmap = prefmap or self._preferred_map()
            out.append(self.rec(t, "TRACE", f"{cid} checking need to trigger partition rebalance", CTRL))
            out.append(self.rec(t + 1, "DEBUG", f"{cid} preferred replicas by broker {prefmap}", CTRL))
            for b in self.c.broker_ids:
                out.append(self.rec(t + 1, "DEBUG", f"{cid} topics not in preferred replica Map()", CTRL))
                out.append(self.rec(t + 1, "TRACE", f"{cid} leader imbalance ratio for broker {b} is 0.000000", CTRL))
            t += 300_000

    # --- state-change.log -------------------------------------------------------------------------
    def _metadata_updates(self, h0, h1, out):
        """A topic config change once an hour: the controller sends UpdateMetadata for that topic."""
        if not self.c.topics:
            return
        r = self.s.rng("updmeta", h0)
        t = h0 + r.randrange(HOUR_MS - 10_000) + 5 + self.b
        topic = self.c.topics[r.randrange(len(self.c.topics))]
        if not self.s.is_up(self.b, t):
            return
        ctl = self.c.controller_id
        epoch = self.s.controller_epoch
        corr = (t // 1000) % 100_000
        if self.legacy:
            for p in range(topic.partitions):
                reps = self.c.replicas(topic.name, p)
                le = self.s.leader_epoch(topic.name, p)
                info = (f"(LeaderAndIsrInfo:(Leader:{reps[0]},ISR:{','.join(map(str, reps))},LeaderEpoch:{le},"
                        f"ControllerEpoch:{epoch}),ReplicationFactor:{len(reps)}),AllReplicas:{','.join(map(str, reps))})")
                out.append(self.rec(t, "TRACE", f"Broker {self.b} cached leader info {info} for partition "
                                                f"[{topic.name},{p}] in response to UpdateMetadata request sent by "
                                                f"controller {ctl} epoch {epoch} with correlation id {corr}", SC))
            return
        if self.v >= (2, 4):
            n = sum(tt.partitions for tt in self.c.all_topics)
            out.append(self.rec(t, "INFO", f"[Broker id={self.b}] Add {topic.partitions} partitions and deleted 0 "
                                           f"partitions from metadata cache in response to UpdateMetadata request sent "
                                           f"by controller {ctl} epoch {epoch} with correlation id {corr}", SC))
            return
        for p in range(topic.partitions):
            reps = self.c.replicas(topic.name, p)
            le = self.s.leader_epoch(topic.name, p)
            st = (f"PartitionState(controllerEpoch={epoch}, leader={reps[0]}, leaderEpoch={le}, "
                  f"isr={'[' + ', '.join(map(str, reps)) + ']'}, zkVersion={le + 3}, "
                  f"replicas={'[' + ', '.join(map(str, reps)) + ']'}, offlineReplicas=[])")
            if self.b == ctl:
                out.append(self.rec(t - 3, "TRACE", f"[Controller id={ctl} epoch={epoch}] Sending UpdateMetadata request "
                                                    f"{st} to brokers Set({', '.join(map(str, self.c.broker_ids))}) "
                                                    f"for partition {topic.name}-{p}", SC))
            out.append(self.rec(t, "TRACE", f"[Broker id={self.b}] Cached leader info {st} for partition {topic.name}-{p} "
                                            f"in response to UpdateMetadata request sent by controller {ctl} epoch "
                                            f"{epoch} with correlation id {corr}", SC))

    # --- restarts ---------------------------------------------------------------------------------
    def _restart(self, rs, h0, h1, recs):
        rows: dict[str, list] = {f: [] for f in FILES}
        if rs.broker == self.b:
            self._restart_self(rs, rows)
        else:
            self._restart_peer(rs, rows)
        for name, lst in rows.items():
            recs[name].extend(x for x in lst if h0 <= x[0] < h1)

    def _restart_self(self, rs, rows):
        b = self.b
        srv, lc = rows["server.log"], rows["log-cleaner.log"]
        KS = "kafka.server.KafkaServer"
        t = rs.shutdown_ms
        ks = f"[KafkaServer id={b}]"
        zk = f"{self.c.zk_host.name}:2181"
        old_sid = self.s.zk_session_id(b, 0)
        new_sid = self.s.zk_session_id(b, 1)
        for dt, msg, lg in [
            (0, f"{ks} shutting down", KS),
            (3, f"{ks} Starting controlled shutdown", KS),
            (1_204, f"{ks} Controlled shutdown succeeded", KS),
            (1_210, f"[SocketServer brokerId={b}] Stopping socket server request processors", "kafka.network.SocketServer"),
            (1_262, f"[SocketServer brokerId={b}] Stopped socket server request processors", "kafka.network.SocketServer"),
            (1_270, f"[Kafka Request Handler on Broker {b}], shutting down", "kafka.server.KafkaRequestHandlerPool"),
            (1_281, f"[Kafka Request Handler on Broker {b}], shut down completely", "kafka.server.KafkaRequestHandlerPool"),
            (1_350, f"[ReplicaManager broker={b}] Shutting down", "kafka.server.ReplicaManager"),
            (1_351, f"[ReplicaFetcherManager on broker {b}] shutting down", "kafka.server.ReplicaFetcherManager"),
            (1_402, f"[ReplicaFetcherManager on broker {b}] shutdown completed", "kafka.server.ReplicaFetcherManager"),
            (1_530, f"[ReplicaManager broker={b}] Shut down completely", "kafka.server.ReplicaManager"),
            (1_541, f"[GroupCoordinator {b}]: Shutting down.", GC),
            (1_557, f"[GroupCoordinator {b}]: Shutdown complete.", GC),
            (1_602, "Shutting down.", "kafka.log.LogManager"),
            (2_950, "Shutdown complete.", "kafka.log.LogManager"),
            (2_961, "[ZooKeeperClient] Closing.", "kafka.zookeeper.ZooKeeperClient"),
            (2_975, f"Session: {old_sid} closed", "org.apache.zookeeper.ZooKeeper"),
            (2_975, f"EventThread shut down for session: {old_sid}", "org.apache.zookeeper.ClientCnxn"),
            (2_977, "[ZooKeeperClient] Closed.", "kafka.zookeeper.ZooKeeperClient"),
            (3_020, f"{ks} shut down completed", KS),
        ]:
            srv.append(self.rec(t + dt, "INFO", msg, lg))
        lc.append(self.rec(t + 1_605, "INFO", "Shutting down the log cleaner.", CLEANER))
        if self.s.cleaner_alive(b, t):
            lc.append(self.rec(t + 1_606, "INFO", "[kafka-log-cleaner-thread-0]: Shutting down", CLEANER))
            lc.append(self.rec(t + 1_607, "INFO", "[kafka-log-cleaner-thread-0]: Stopped", CLEANER))
            lc.append(self.rec(t + 1_608, "INFO", "[kafka-log-cleaner-thread-0]: Shutdown completed", CLEANER))

        t = rs.start_ms
        zk_ip = self.c.zk_ip
        srv.append(self.rec(t - 812, "INFO", "Registered kafka:type=kafka.Log4jController MBean",
                            "kafka.utils.Log4jControllerRegistration$"))
        srv.append(self.rec(t, "INFO", "KafkaConfig values: \n" + kafka_config_block(self.c, b), "kafka.server.KafkaConfig"))
        seq = [
            (41, "starting", KS),
            (44, f"Connecting to zookeeper on {zk}", KS),
            (61, f"[ZooKeeperClient] Initializing a new session to {zk}.", "kafka.zookeeper.ZooKeeperClient"),
            (75, f"Initiating client connection, connectString={zk} sessionTimeout={self.c.zk_session_timeout_ms} "
                 f"watcher=kafka.zookeeper.ZooKeeperClient$ZooKeeperClientWatcher$@5a4041cc", "org.apache.zookeeper.ZooKeeper"),
            (90, "[ZooKeeperClient] Waiting until connected.", "kafka.zookeeper.ZooKeeperClient"),
            (95, f"Opening socket connection to server {zk.split(':')[0]}/{zk_ip}:2181. Will not attempt to authenticate "
                 f"using SASL (unknown error)", "org.apache.zookeeper.ClientCnxn"),
            (101, f"Socket connection established to {zk.split(':')[0]}/{zk_ip}:2181, initiating session",
             "org.apache.zookeeper.ClientCnxn"),
            (132, f"Session establishment complete on server {zk.split(':')[0]}/{zk_ip}:2181, sessionid = {new_sid}, "
                  f"negotiated timeout = {self.c.zk_session_timeout_ms}", "org.apache.zookeeper.ClientCnxn"),
            (135, "[ZooKeeperClient] Connected.", "kafka.zookeeper.ZooKeeperClient"),
            (402, f"Cluster ID = {self.s.cluster_id}", KS),
            (520, "Loading logs.", "kafka.log.LogManager"),
        ]
        for dt, msg, lg in seq:
            srv.append(self.rec(t + dt, "INFO", msg, lg))
        # log loading: the bloated partition takes seconds
        tl = t + 530
        loads = [(p, 1 + self.s.offsets_size(b, p, rs.shutdown_ms) // OFFSETS_SEGMENT_BYTES)
                 for p in self.c.offsets_partitions(b)[:60]]
        # a partition bloated for days would load past the broker's start: squeezed into the time there is
        budget = rs.up_ms - 1_000 - 6 - tl
        scale = min(1.0, budget / sum(2 + segs * 20 for _, segs in loads))
        for p, segs in loads:
            tp = f"{OFFSETS_TOPIC}-{p}"
            dur = max(1, int((2 + segs * 20) * scale))
            off = self.s.offsets_end_offset(b, p, rs.shutdown_ms)
            srv.append(self.rec(tl, "INFO", f"[Log partition={tp}, dir={LOG_DIR}] Loading producer state from offset {off} "
                                            f"with message format version 2", LOG))
            tl += dur
            srv.append(self.rec(tl, "INFO", f"[Log partition={tp}, dir={LOG_DIR}] Completed load of log with {segs} segments, "
                                            f"log start offset 0 and log end offset {off} in {dur} ms", LOG))
        srv.append(self.rec(tl + 5, "INFO", f"Logs loading complete in {tl + 5 - t - 520} ms.", "kafka.log.LogManager"))
        assert tl + 5 < rs.up_ms - 1_000, "log loading must finish before the broker is up"
        u = rs.up_ms - 1_000
        lc.append(self.rec(u, "INFO", "Starting the log cleaner", CLEANER))
        lc.append(self.rec(u + 2, "INFO", "[kafka-log-cleaner-thread-0]: Starting", CLEANER))
        for dt, msg, lg in [
            (0, "Starting log cleanup with a period of 300000 ms.", "kafka.log.LogManager"),
            (1, "Starting log flusher with a default period of 9223372036854775807 ms.", "kafka.log.LogManager"),
            (180, "Awaiting socket connections on 0.0.0.0:9092.", "kafka.network.Acceptor"),
            (190, f"[SocketServer brokerId={b}] Started 1 acceptor threads", "kafka.network.SocketServer"),
            (420, f"[GroupCoordinator {b}]: Starting up.", GC),
            (422, f"[GroupCoordinator {b}]: Startup complete.", GC),
            (700, f"Creating /brokers/ids/{b} (is it secure? false)", "kafka.zk.KafkaZkClient"),
            (716, f"Result of znode creation at /brokers/ids/{b} is: OK", "kafka.zk.KafkaZkClient"),
            (717, f"Registered broker {b} at path /brokers/ids/{b} with addresses: ArrayBuffer(EndPoint("
                  f"{self.c.broker_host(b).name},9092,ListenerName(PLAINTEXT),PLAINTEXT))", "kafka.zk.KafkaZkClient"),
            (1_000, f"{ks} started", KS),
        ]:
            srv.append(self.rec(u + dt, "INFO", msg, lg))
        if rs.cleaner_redeath_ms:
            lc.extend(self._cleaner_death(rs.cleaner_redeath_ms, self._dying_partition()))
        # leadership comes back with the controller's preferred replica election
        back = self.s.leadership_back_ms(rs)
        led = [(t_.name, p) for t_ in self.c.all_topics for p in range(t_.partitions) if self.c.leader(t_.name, p) == b]
        for i, (tn, p) in enumerate(led):
            le = self.s.leader_epoch(tn, p) + 2
            off = self.s.offsets_end_offset(b, p, back) if tn == OFFSETS_TOPIC else self.s.topic_offset(tn, back)
            srv.append(self.rec(back + 40 + i, "INFO", f"[Partition {tn}-{p} broker={b}] {tn}-{p} starts at Leader Epoch {le} "
                                                       f"from offset {off}. Previous Leader Epoch was: {le - 1}",
                                "kafka.cluster.Partition"))
        tl = back + 60 + len(led)
        for tn, p in led:
            if tn != OFFSETS_TOPIC:
                continue
            tp = f"{OFFSETS_TOPIC}-{p}"
            srv.append(self.rec(tl, "INFO", f"{self.gmm} Scheduling loading of offsets and group metadata from {tp}", GMM))
            load = rs.slow_loads.get(p) or (1 + p % 9)
            done = self.s.load_finished_ms(rs, p) if p in rs.slow_loads else tl + load
            srv.append(self.rec(done, "INFO", f"{self.gmm} Finished loading offsets and group metadata from {tp} "
                                              f"in {load} milliseconds.", GMM))
            tl += 1

    def _restart_peer(self, rs, rows):
        """The controller and the temporary leaders see a broker leave and come back."""
        b, gone = self.b, rs.broker
        srv, ctl = rows["server.log"], rows["controller.log"]
        live = [x for x in self.c.broker_ids]
        if b == self.c.controller_id:
            cid = f"[Controller id={b}]"
            t = rs.shutdown_ms + 9
            ctl.append(self.rec(t, "INFO", f"{cid} Shutting down broker {gone}", CTRL))
            t = rs.shutdown_ms + 3_100
            ctl.append(self.rec(t, "INFO", f"{cid} Newly added brokers: , deleted brokers: {gone}, all live brokers: "
                                           f"{','.join(str(x) for x in live if x != gone)}", CTRL))
            ctl.append(self.rec(t + 2, "INFO", f"{cid} Broker failure callback for {gone}", CTRL))
            t = rs.up_ms - 280
            ctl.append(self.rec(t, "INFO", f"{cid} Newly added brokers: {gone}, deleted brokers: , all live brokers: "
                                           f"{','.join(map(str, live))}", CTRL))
            ctl.append(self.rec(t + 1, "INFO", f"{cid} New broker startup callback for {gone}", CTRL))
        # partitions the departing broker led move to this broker while it is away
        back = self.s.leadership_back_ms(rs)
        for tn, p in self.s.moved_partitions(gone):
            if self.s.temp_leader(tn, p, gone) != b:
                continue
            le = self.s.leader_epoch(tn, p) + 1
            srv.append(self.rec(rs.shutdown_ms + 1_100, "INFO", f"[Partition {tn}-{p} broker={b}] {tn}-{p} starts at Leader "
                                                                f"Epoch {le} from offset 0. Previous Leader Epoch was: {le - 1}",
                                "kafka.cluster.Partition"))
            if tn == OFFSETS_TOPIC:
                tp = f"{tn}-{p}"
                srv.append(self.rec(rs.shutdown_ms + 1_120, "INFO",
                                    f"{self.gmm} Scheduling loading of offsets and group metadata from {tp}", GMM))
                srv.append(self.rec(rs.shutdown_ms + 1_161 + p % 13, "INFO",
                                    f"{self.gmm} Finished loading offsets and group metadata from {tp} in "
                                    f"{41 + p % 13} milliseconds.", GMM))
                srv.append(self.rec(back + 30, "INFO",
                                    f"{self.gmm} Scheduling unloading of offsets and group metadata from {tp}", GMM))
                srv.append(self.rec(back + 31, "INFO", f"{self.gmm} Finished unloading {tp}. Removed 0 cached offsets and "
                                                       f"{len([g for g in self.c.groups if self.c.group_partition(g) == p])} "
                                                       f"cached groups.", GMM))

    # --- filler -----------------------------------------------------------------------------------
    @staticmethod
    def _legacy_filler(x: float, tp: str, off: int, rnd) -> tuple[str, str]:
        """0.10.x kafka.log texts for segment roll / retention."""
        base = max(0, off - off % 2_000_000 - 14_000_000)
        if x < 0.5:
            return f"Rolled new log segment for '{tp}' in {1 + int(rnd() * 6)} ms.", LOG
        if x < 0.65:
            return f"Scheduling log segment {base} for log {tp} for deletion.", LOG
        if x < 0.8:
            return f"Deleting segment {base} from log {tp}.", LOG
        if x < 0.9:
            return f"Deleting index {LOG_DIR}/{tp}/{base:020d}.index.deleted", "kafka.log.OffsetIndex"
        return f"Deleting index {LOG_DIR}/{tp}/{base:020d}.timeindex.deleted", "kafka.log.TimeIndex"

    def _filler(self, h0: int, budget: int) -> list:
        """Periodic INFO lines (segment rolls/deletions, producer snapshots, fetcher) up to `budget` bytes."""
        if budget <= 0 or not self._user_parts:
            return []
        r = self.s.rng("filler", self.b, h0)
        parts = self._user_parts
        b = self.b
        leaders = {(t.name, p): self.c.leader(t.name, p) for t, p in parts}
        msgs = []
        used = 0
        npart = len(parts)
        rnd = r.random
        hsec = (h0 - OFFSETS_ORIGIN_MS) / 1000
        while used < budget:
            t, p = parts[int(rnd() * npart)]
            tp = f"{t.name}-{p}"
            off = int((hsec + rnd() * 3600) * t.msgs_per_sec)
            x = rnd()
            if self.legacy:
                m = self._legacy_filler(x, tp, off, rnd)
            elif x < 0.22:
                m = (f"[Log partition={tp}, dir={LOG_DIR}] Rolled new log segment at offset {off} in {1 + int(rnd() * 6)} ms.", LOG)
            elif x < 0.42:
                m = (f"[ProducerStateManager partition={tp}] Writing producer snapshot at offset {off}",
                     "kafka.log.ProducerStateManager")
            elif x < 0.52:
                base = max(0, off - off % 2_000_000 - 14_000_000)
                m = (f"[Log partition={tp}, dir={LOG_DIR}] Found deletable segments with base offsets [{base}] due to "
                     f"retention time 604800000ms breach", LOG)
            elif x < 0.60:
                base = max(0, off - off % 2_000_000 - 14_000_000)
                m = (f"[Log partition={tp}, dir={LOG_DIR}] Scheduling log segment [baseOffset {base}, size "
                     f"{t.segment_bytes - int(rnd() * 4096)}] for deletion.", LOG)
            elif x < 0.66:
                base = max(0, off - off % 2_000_000 - 14_000_000)
                m = (f"[Log partition={tp}, dir={LOG_DIR}] Incrementing log start offset to {base + 2_000_000}", LOG)
            elif x < 0.72:
                base = max(0, off - off % 2_000_000 - 14_000_000)
                m = (f"[Log partition={tp}, dir={LOG_DIR}] Deleting segment {base}", LOG)
            elif x < 0.78:
                base = max(0, off - off % 2_000_000 - 14_000_000)
                m = (f"Deleted log {LOG_DIR}/{tp}/{base:020d}.log.deleted.", "kafka.log.LogSegment")
            elif x < 0.84:
                base = max(0, off - off % 2_000_000 - 14_000_000)
                m = (f"Deleted offset index {LOG_DIR}/{tp}/{base:020d}.index.deleted.", "kafka.log.LogSegment")
            elif x < 0.90:
                base = max(0, off - off % 2_000_000 - 14_000_000)
                m = (f"Deleted time index {LOG_DIR}/{tp}/{base:020d}.timeindex.deleted.", "kafka.log.LogSegment")
            else:
                ld = leaders[(t.name, p)]
                if ld == b:
                    m = (f"[Log partition={tp}, dir={LOG_DIR}] Rolled new log segment at offset {off} in "
                         f"{1 + int(rnd() * 6)} ms.", LOG)
                else:
                    m = (f"[ReplicaFetcher replicaId={b}, leaderId={ld}, fetcherId=0] Based on follower's leader epoch, "
                         f"leader replied with an offset {off} >= the follower's log end offset {off - int(rnd() * 50)} in "
                         f"{tp}. No truncation needed.", "kafka.server.ReplicaFetcherThread")
            msgs.append(m)
            used += len(m[0]) + len(m[1]) + 35   # "[" stamp "] INFO " msg " (" logger ")\n"
        times = sorted(int(rnd() * HOUR_MS) for _ in msgs)
        stamp = self.clock.stamp
        rs = self.s.restart_of(b)
        down = (rs.shutdown_ms, rs.up_ms) if rs else (0, 0)
        out = []
        append = out.append
        last_sec, pre = -1, ""
        for dt, (msg, lg) in zip(times, msgs):
            ms = h0 + dt
            if down[0] <= ms < down[1]:
                continue
            sec = ms // 1000
            if sec != last_sec:  # the per-second prefix is shared by many records at high volume
                last_sec, pre = sec, "[" + stamp(sec * 1000)[:-3]
            append((ms, f"{pre}{ms % 1000:03d}] INFO {msg} ({lg})\n"))
        return out
