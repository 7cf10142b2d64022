"""A KRaft node's log files (a dedicated controller or a broker), one UTC hour at a time.

Same files and layout as a ZooKeeper-mode broker (`[%d] %p %m (%c)%n`, hourly `<name>.YYYY-MM-DD-HH`;
4.x writes it with log4j2's RollingFile, same pattern and names), with the routing of Kafka's default
config/log4j.properties (3.x) and config/log4j2.yaml (4.x): QuorumController & co. in controller.log; Raft, MetadataLoader, SnapshotGenerator, fault
handlers and BrokerLifecycleManager in server.log; the cleaner thread's "Error due to"/"Stopped" in
server.log on 3.5 - 4.0 (logger kafka.log.LogCleaner$CleanerThread) and in log-cleaner.log on 4.1
(org.apache.kafka.storage.internals.log.LogCleaner$CleanerThread).

The healthy background: every node's hourly metadata snapshot, 4.x controllers' EventPerformanceMonitor
summary every minute, brokers' log cleaner passes and segment rolls (the byte budget). At steady state
Raft and the controllers log nothing else at INFO; the episodes (kraft_episodes.py) and the scenario's
script add the rest.
"""
from __future__ import annotations

from operator import itemgetter
from pathlib import Path

from . import kraft_episodes as ep
from . import kraft_model as km
from .clock import HOUR_MS, LocalClock
from .fleet import LOG_DIR, OFFSETS_TOPIC, version_tuple
from .kafka_logs import FILES, PAD_MS, append_hour
from .kraft_raft import RaftText
from .model import MB, OFFSETS_ORIGIN_MS, OFFSETS_SEGMENT_BYTES, ClusterState

SNAPSHOTS = "org.apache.kafka.image.publisher.SnapshotGenerator"
PERF = "org.apache.kafka.controller.EventPerformanceMonitor"
CONTROLLER_EVENTS = ("processBrokerHeartbeat", "handleCommit", "writeNoOpRecord", "maybeFenceReplicas")


class KraftLogs:
    def __init__(self, state: ClusterState, node: int, clock: LocalClock, folder: Path, bytes_per_hour: int):
        self.s, self.c, self.node = state, state.c, node
        self.clock, self.folder, self.budget = clock, folder, bytes_per_hour
        self.is_controller = node in self.c.controller_ids
        self.version = (self.c.controller_version or self.c.kafka_version) if self.is_controller \
            else self.c.broker_version(node)
        self.v = version_tuple(self.version)
        self.v4 = self.v >= (4, 0)
        self.storage = self.v >= (4, 1)   # 4.1: the log cleaner in Java, in the storage module
        self.raft = RaftText(state, self.v)
        self.script = km.script(state)
        folder.mkdir(parents=True, exist_ok=True)

    def rec(self, ms: int, level: str, msg: str, logger: str, trace: str | None = None):
        text = f"[{self.clock.stamp(ms)}] {level} {msg} ({logger})\n"
        return ms, text + trace + "\n" if trace else text

    def hex(self, *key) -> str:
        """An identity hash code as Object.toString prints it."""
        return f"{self.s.rng('hash', self.node, *key).getrandbits(31):x}"

    # --- loggers of the version ---------------------------------------------------------------------
    @property
    def cleaner_logger(self) -> str:
        return "org.apache.kafka.storage.internals.log.Cleaner" if self.storage else "kafka.log.LogCleaner"

    @property
    def cleaner_thread(self) -> tuple[str, str]:
        """(file, logger) of the cleaner thread's own lines (Starting, Error due to, Stopped)."""
        if self.storage:
            return "log-cleaner.log", "org.apache.kafka.storage.internals.log.LogCleaner$CleanerThread"
        return "server.log", "kafka.log.LogCleaner$CleanerThread"

    @property
    def stats_logger(self) -> str:
        return "org.apache.kafka.storage.internals.log.LogCleaner$CleanerThread" if self.storage else "kafka.log.LogCleaner"

    @property
    def local_log(self) -> str:
        return "org.apache.kafka.storage.internals.log.LocalLog" if self.v4 else "kafka.log.LocalLog"

    # --- one hour -----------------------------------------------------------------------------------
    def write_hour(self, h0: int) -> int:
        h1 = h0 + HOUR_MS
        p0, p1 = h0 - PAD_MS, h1 + PAD_MS
        recs: dict[str, list] = {f: [] for f in FILES}
        self._snapshots(p0, p1, recs["server.log"])
        if self.is_controller:
            self._performance(p0, p1, recs["controller.log"])
        else:
            self._cleaner(p0, p1, recs)
            self._bloat_rolls(p0, p1, recs["server.log"])
        self._add(recs, self._episodes(p0, p1))
        self._add(recs, self.script.kraft_records(self, p0, p1))
        recs = {name: [x for x in lst if h0 <= x[0] < h1] for name, lst in recs.items()}
        if not self.is_controller:
            used = sum(len(t) for lst in recs.values() for _, t in lst)
            recs["server.log"].extend(self._filler(h0, self.budget - used))
        total = 0
        for name, lst in recs.items():
            lst.sort(key=itemgetter(0))
            total += append_hour(self.folder, self.clock, name, h0, lst)
        return total

    @staticmethod
    def _add(recs: dict[str, list], more: dict[str, list]) -> None:
        for name, lst in more.items():
            recs[name].extend(lst)

    def _episodes(self, t0: int, t1: int) -> dict[str, list]:
        out: dict[str, list] = {f: [] for f in FILES}
        epoch = km.base_epoch(self.s)
        old = self.c.controller_id
        for ms, new in self.script.elections(self.s):
            epoch += 1
            if km.lost_at(self.s, ms) - PAD_MS < t1 and ms + PAD_MS > t0:
                self._add(out, {k: [x for x in v if t0 <= x[0] < t1]
                                for k, v in ep.election(self, ms, old, new, epoch).items()})
            old = new
        for broker, spans in self.script.fenced(self.s).items():
            for i, (fenced, unfenced) in enumerate(spans):
                if fenced - PAD_MS < t1 and km.balance_back_ms(unfenced) + PAD_MS > t0:
                    self._add(out, {k: [x for x in v if t0 <= x[0] < t1]
                                    for k, v in ep.fencing(self, broker, i, fenced, unfenced).items()})
        return out

    # --- every node: the hourly metadata snapshot ------------------------------------------------------
    def snapshot_times(self, t0: int, t1: int) -> list[int]:
        phase = self.s.rng("snapshot", self.node).randrange(km.SNAPSHOT_EVERY_MS)
        t = t0 + (phase - t0) % km.SNAPSHOT_EVERY_MS
        return list(range(t, t1, km.SNAPSHOT_EVERY_MS))

    def _snapshots(self, t0, t1, out):
        """`snapshot <offset>-<epoch>` (MetadataProvenance.snapshotName); a broker whose metadata stopped
        applying publishes nothing, so it takes no snapshot either."""
        stall = self.script.stalled(self.s).get(self.node)
        sg = f"[SnapshotGenerator id={self.node}]"
        for t in self.snapshot_times(t0, t1):
            if stall is not None and t >= stall:
                break
            offset = km.high_watermark(self.s, t)
            if not self.is_controller:
                offset -= self.s.rng("snap-lag", self.node, t).randint(0, 1)
            name = f"snapshot {offset:020d}-{km.leader_at(self.s, t)[1]:010d}"
            out.append(self.rec(t, "INFO", f"{sg} Creating new KRaft snapshot file {name} because we have waited at "
                                           f"least {km.SNAPSHOT_EVERY_MS // 60_000} minute(s).", SNAPSHOTS))

    # --- 4.x controllers: EventPerformanceMonitor (controller.performance.sample.period.ms=60000) --------
    def _performance(self, t0, t1, out):
        if not self.v4:
            return
        qc = f"[QuorumController id={self.node}]"
        t = t0 + (self.s.rng("perf", self.node).randrange(60_000) - t0) % 60_000
        while t < t1:
            r = self.s.rng("perf", self.node, t)
            active = km.leader_at(self.s, t)[0] == self.node
            n = r.randint(190, 240) if active else r.randint(110, 130)
            slowest = CONTROLLER_EVENTS[r.randrange(len(CONTROLLER_EVENTS))] if active else "handleCommit"
            out.append(self.rec(t, "INFO", f"{qc} In the last 60000 ms period, {n} controller events were completed, "
                                           f"which took an average of {r.uniform(0.05, 0.6):.2f} ms each. The slowest "
                                           f"event was {slowest}, which took {r.uniform(2, 14):.2f} ms.", PERF))
            t += 60_000

    # --- brokers: the log cleaner -------------------------------------------------------------------
    def _cleaner(self, t0, t1, recs):
        for cl in self.s.cleanings(self.node, t0, t1):
            recs["log-cleaner.log"].extend(self._cleaning(cl))
        death = self.s.ev.cleaner_death_ms.get(self.node)
        if death is not None and t0 <= death < t1:
            self._add(recs, self._death(death))

    def _cleaning(self, cl) -> list:
        tp = f"{OFFSETS_TOPIC}-{cl.partition}"
        end, secs = cl.end_ms, cl.seconds
        start = end - int(secs * 1000) - 3
        lg = self.cleaner_logger
        mb_in, mb_out = cl.start_bytes / MB, cl.end_bytes / MB
        msgs_in, msgs_out = max(1, cl.start_bytes // 150), max(1, cl.end_bytes // 150)
        idx = secs * 0.62
        stats = (f"[kafka-log-cleaner-thread-0]: \n"
                 f"\tLog cleaner thread 0 cleaned log {tp} (dirty section = [{cl.first_offset}, {cl.end_offset}])\n"
                 f"\t{mb_in:,.1f} MB of log processed in {secs:,.1f} seconds ({mb_in / secs:,.1f} MB/sec).\n"
                 f"\tIndexed {mb_in:,.1f} MB in {idx:.1f} seconds ({mb_in / max(idx, 0.1):,.1f} Mb/sec, "
                 f"{100 * idx / secs:.1f}% of total time)\n"
                 f"\tBuffer utilization: {min(99.9, msgs_in / 1_700_000 * 100):.1f}%\n"
                 f"\tCleaned {mb_in:,.1f} MB in {secs - idx:.1f} seconds ({mb_in / max(secs - idx, 0.1):,.1f} Mb/sec, "
                 f"{100 * (secs - idx) / secs:.1f}% of total time)\n"
                 f"\tStart size: {mb_in:,.1f} MB ({msgs_in:,} messages)\n"
                 f"\tEnd size: {mb_out:,.1f} MB ({msgs_out:,} messages)\n"
                 f"\t{100.0 * (1 - cl.end_bytes / max(cl.start_bytes, 1)):.1f}% size reduction "
                 f"({100.0 * (1 - msgs_out / msgs_in):.1f}% fewer messages)\n")
        return [
            self.rec(start, "INFO", f"Cleaner 0: Beginning cleaning of log {tp}", lg),
            self.rec(start + 1, "INFO", f"Cleaner 0: Building offset map for {tp}...", lg),
            self.rec(start + 2 + int(secs * 850), "INFO",
                     f"Cleaner 0: Cleaning log {tp} (cleaning prior to {self.clock.java_date(end - 60_000)}, discarding "
                     f"tombstones prior to upper bound deletion horizon {self.clock.java_date(end - 86_400_000)})...", lg),
            self.rec(end, "INFO", stats, self.stats_logger),
        ]

    def _death(self, death: int) -> dict[str, list]:
        p = next((p for (b, p) in self.s.ev.bloat_bytes_per_s if b == self.node), self.c.offsets_partitions(self.node)[0])
        tp = f"{OFFSETS_TOPIC}-{p}"
        name, thread = self.cleaner_thread
        out: dict[str, list] = {"log-cleaner.log": [
            self.rec(death - 2_871, "INFO", f"Cleaner 0: Beginning cleaning of log {tp}", self.cleaner_logger),
            self.rec(death - 2_870, "INFO", f"Cleaner 0: Building offset map for {tp}...", self.cleaner_logger)]}
        out.setdefault(name, []).extend([
            self.rec(death, "ERROR", "[kafka-log-cleaner-thread-0]: Error due to", thread, self._map_failed()),
            self.rec(death + 2, "INFO", "[kafka-log-cleaner-thread-0]: Stopped", thread)])
        return out

    def _map_failed(self) -> str:
        """The cleaner thread dying on mmap of a new index (vm.max_map_count exhausted), JDK 17."""
        if self.storage:
            cleaner = ["org.apache.kafka.storage.internals.log.Cleaner.cleanSegments(Cleaner.java:279)",
                       "org.apache.kafka.storage.internals.log.Cleaner.doClean(Cleaner.java:201)",
                       "org.apache.kafka.storage.internals.log.Cleaner.clean(Cleaner.java:151)",
                       "org.apache.kafka.storage.internals.log.LogCleaner$CleanerThread.cleanLog(LogCleaner.java:596)",
                       "org.apache.kafka.storage.internals.log.LogCleaner$CleanerThread.cleanFilthiestLog(LogCleaner.java:561)",
                       "org.apache.kafka.storage.internals.log.LogCleaner$CleanerThread.doWork(LogCleaner.java:517)"]
        else:
            cleaner = ["kafka.log.Cleaner.cleanSegments(LogCleaner.scala:651)",
                       "kafka.log.Cleaner.doClean(LogCleaner.scala:620)",
                       "kafka.log.Cleaner.clean(LogCleaner.scala:594)",
                       "kafka.log.LogCleaner$CleanerThread.cleanLog(LogCleaner.scala:451)",
                       "kafka.log.LogCleaner$CleanerThread.cleanFilthiestLog(LogCleaner.scala:419)",
                       "kafka.log.LogCleaner$CleanerThread.doWork(LogCleaner.scala:383)"]
        frames = (["java.base/sun.nio.ch.FileChannelImpl.map(FileChannelImpl.java:1127)",
                   "org.apache.kafka.storage.internals.log.AbstractIndex.createMappedBuffer(AbstractIndex.java:466)",
                   "org.apache.kafka.storage.internals.log.OffsetIndex.<init>(OffsetIndex.java:69)",
                   "org.apache.kafka.storage.internals.log.LogSegment.open(LogSegment.java:781)"] + cleaner
                  + ["org.apache.kafka.server.util.ShutdownableThread.run(ShutdownableThread.java:136)"])
        return "\n".join(["java.io.IOException: Map failed", *(f"\tat {f}" for f in frames),
                          "Caused by: java.lang.OutOfMemoryError: Map failed",
                          "\tat java.base/sun.nio.ch.FileChannelImpl.map0(Native Method)",
                          "\tat java.base/sun.nio.ch.FileChannelImpl.map(FileChannelImpl.java:1124)",
                          f"\t... {len(frames) - 1} more"])

    def _bloat_rolls(self, t0, t1, out):
        """A partition growing without compaction rolls a 100 MiB segment every couple of minutes."""
        death = self.s.ev.cleaner_death_ms.get(self.node)
        for (b, p), rate in self.s.ev.bloat_bytes_per_s.items():
            if b != self.node or death is None:
                continue
            step = int(OFFSETS_SEGMENT_BYTES / rate * 1000)
            t = death + max(0, -(-(t0 - death) // step)) * step
            while t < t1:
                off = self.s.offsets_end_offset(self.node, p, t)
                out.append(self.rec(t, "INFO", f"[LocalLog partition={OFFSETS_TOPIC}-{p}, dir={LOG_DIR}] Rolled new log "
                                               f"segment at offset {off} in {1 + t % 7} ms.", self.local_log))
                t += step

    # --- brokers: segment rolls up to the byte budget ----------------------------------------------
    def _filler(self, h0: int, budget: int) -> list:
        parts = [(t, p) for t in self.c.topics for p in self.c.hosted(self.node, t.name)]
        if budget <= 0 or not parts:
            return []
        r = self.s.rng("kraft-filler", self.node, h0)
        hsec = (h0 - OFFSETS_ORIGIN_MS) / 1000
        out, used, lg = [], 0, self.local_log
        while used < budget:
            t, p = parts[int(r.random() * len(parts))]
            ms = h0 + int(r.random() * HOUR_MS)
            off = int((hsec + (ms - h0) / 1000) * t.msgs_per_sec)
            rec = self.rec(ms, "INFO", f"[LocalLog partition={t.name}-{p}, dir={LOG_DIR}] Rolled new log segment at "
                                       f"offset {off} in {1 + int(r.random() * 6)} ms.", lg)
            out.append(rec)
            used += len(rec[1])
        return out
