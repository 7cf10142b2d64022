"""ZooKeeper 3.5+ server logs: size-rolled `zookeeper/zookeeper.log.<k>`, one file per UTC hour here.

Layout `%d{ISO8601} [myid:%X{myid}] - %-5p [%t:%C{1}@%L] - %m%n`. Each file's mtime is set to its last
record (UTC epoch), as the collector assigns size-rolled files to an hour by mtime.
"""
from __future__ import annotations

import os
from operator import itemgetter
from pathlib import Path

from .clock import HOUR_MS, LocalClock
from .model import ClusterState

ACCEPT = "NIOServerCxnFactory.AcceptThread:0.0.0.0/0.0.0.0:2181:NIOServerCnxnFactory$AcceptThread@296"
WORKER = "NIOWorkerThread-{w}:ZooKeeperServer@{line}"
COMMIT = "CommitProcWorkThread-{w}:ZooKeeperServer@{line}"
CNXN = "NIOWorkerThread-{w}:NIOServerCnxn@{line}"
PREP = "ProcessThread(sid:{myid} cport:2181)::PrepRequestProcessor@{line}"
SYNC = "SyncThread:{myid}:FileTxnLog@{line}"
SNAP = "Snapshot Thread:FileTxnSnapLog@{line}"


class ZkLog:
    def __init__(self, state: ClusterState, clock: LocalClock, folder: Path, myid: int = 1):
        self.s = state
        self.c = state.c
        self.clock = clock
        self.folder = folder
        self.myid = myid
        folder.mkdir(parents=True, exist_ok=True)

    def rec(self, ms, level, thread, msg):
        return ms, f"{self.clock.stamp(ms)} [myid:{self.myid}] - {level:<5} [{thread}] - {msg}\n"

    def _session(self, r, t, client_ip, timeout, sid, out, close_after_ms=None):
        port = r.randint(32768, 60999)
        w = r.randint(1, 8)
        out.append(self.rec(t, "INFO", ACCEPT, f"Accepted socket connection from /{client_ip}:{port}"))
        out.append(self.rec(t + 3, "INFO", WORKER.format(w=w, line=1040),
                            f"Client attempting to establish new session at /{client_ip}:{port}"))
        out.append(self.rec(t + 7, "INFO", COMMIT.format(w=r.randint(1, 4), line=748),
                            f"Established session {sid} with negotiated timeout {timeout} for client /{client_ip}:{port}"))
        if close_after_ms is not None:
            tc = t + close_after_ms
            out.append(self.rec(tc, "INFO", PREP.format(myid=self.myid, line=486),
                                f"Processed session termination for sessionid: {sid}"))
            out.append(self.rec(tc + 2, "INFO", CNXN.format(w=w, line=627),
                                f"Closed socket connection for client /{client_ip}:{port} which had sessionid {sid}"))

    def hour_records(self, h0: int) -> list:
        # the brokers' server (myid 1) keeps its historical random stream; the others get their own
        r = self.s.rng("zk", h0) if self.myid == 1 else self.s.rng("zk", self.myid, h0)
        h1 = h0 + HOUR_MS
        out = []
        # short-lived admin clients (kafka-topics.sh / kafka-configs.sh with --zookeeper)
        t = h0 + r.randint(20_000, 400_000)
        while t < h1 - 5_000:
            ip = f"10.{r.randint(0, 255)}.3.{r.randint(2, 250)}"
            sid = f"0x1{r.getrandbits(56):014x}"
            self._session(r, t, ip, 30000, sid, out, close_after_ms=r.randint(600, 2_500))
            t += r.randint(240_000, 720_000)
        # transaction log roll and snapshot about every 20 minutes
        t = h0 + r.randint(60_000, 900_000)
        while t < h1 - 1_000:
            zxid = f"{(t // 1000) & 0xFFFFFFF:x}"
            out.append(self.rec(t, "INFO", SNAP.format(line=404),
                                f"Snapshotting: 0x{zxid} to /var/lib/zookeeper/version-2/snapshot.{zxid}"))
            out.append(self.rec(t + 1, "INFO", SYNC.format(myid=self.myid, line=218),
                                f"Creating new log file: log.{zxid}"))
            t += r.randint(900_000, 1_500_000)
        if self.s.ev.script is not None:
            out.extend(self.s.ev.script.zk_records(self, h0, h1))
        # broker restarts: the old session is closed cleanly, a new one is established
        for rs in (self.s.ev.restarts if self.myid == 1 else ()):
            ip = self.c.broker_ip(rs.broker)
            old_sid = self.s.zk_session_id(rs.broker, 0)
            new_sid = self.s.zk_session_id(rs.broker, 1)
            rr = self.s.rng("zk-restart", rs.broker)
            tc = rs.shutdown_ms + 2_970
            if h0 <= tc < h1:
                port = rr.randint(32768, 60999)
                out.append(self.rec(tc, "INFO", PREP.format(myid=self.myid, line=486),
                                    f"Processed session termination for sessionid: {old_sid}"))
                out.append(self.rec(tc + 3, "INFO", CNXN.format(w=3, line=627),
                                    f"Closed socket connection for client /{ip}:{port} which had sessionid {old_sid}"))
            ts = rs.start_ms + 100
            if h0 <= ts < h1:
                self._session(rr, ts, ip, self.c.zk_session_timeout_ms, new_sid, out)
        out.sort(key=itemgetter(0))
        return out

    def write_hour(self, h0: int, index: int) -> int:
        recs = self.hour_records(h0)
        path = self.folder / f"zookeeper.log.{index}"
        data = "".join(t for _, t in recs)
        path.write_text(data, encoding="utf-8")
        last = recs[-1][0] if recs else h0 + HOUR_MS - 1
        os.utime(path, (last / 1000, last / 1000))
        return len(data)
