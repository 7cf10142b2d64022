"""`jstack` thread dumps: `threaddumps/jstack-YYYY-MM-DDTHH-MM-SS.txt` (local time), one per broker-hour."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .clock import LocalClock
from .model import ClusterState

PARK_TIMED = ["sun.misc.Unsafe.park(Native Method)",
              "- parking to wait for  <{lock}> (a java.util.concurrent.CountDownLatch$Sync)",
              "java.util.concurrent.locks.LockSupport.parkNanos(LockSupport.java:215)",
              "java.util.concurrent.locks.AbstractQueuedSynchronizer.doAcquireSharedNanos(AbstractQueuedSynchronizer.java:1037)",
              "java.util.concurrent.locks.AbstractQueuedSynchronizer.tryAcquireSharedNanos(AbstractQueuedSynchronizer.java:1328)",
              "java.util.concurrent.CountDownLatch.await(CountDownLatch.java:277)"]
QUEUE_POLL = ["sun.misc.Unsafe.park(Native Method)",
              "- parking to wait for  <{lock}> (a java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject)",
              "java.util.concurrent.locks.LockSupport.parkNanos(LockSupport.java:215)",
              "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject.awaitNanos(AbstractQueuedSynchronizer.java:2078)",
              "java.util.concurrent.ArrayBlockingQueue.poll(ArrayBlockingQueue.java:418)"]
SCHED_TAKE = ["sun.misc.Unsafe.park(Native Method)",
              "- parking to wait for  <{lock}> (a java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject)",
              "java.util.concurrent.locks.LockSupport.parkNanos(LockSupport.java:215)",
              "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject.awaitNanos(AbstractQueuedSynchronizer.java:2078)",
              "java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue.take(ScheduledThreadPoolExecutor.java:1093)",
              "java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue.take(ScheduledThreadPoolExecutor.java:809)",
              "java.util.concurrent.ThreadPoolExecutor.getTask(ThreadPoolExecutor.java:1074)",
              "java.util.concurrent.ThreadPoolExecutor.runWorker(ThreadPoolExecutor.java:1134)",
              "java.util.concurrent.ThreadPoolExecutor$Worker.run(ThreadPoolExecutor.java:624)",
              "java.lang.Thread.run(Thread.java:748)"]
EPOLL = ["sun.nio.ch.EPollArrayWrapper.epollWait(Native Method)",
         "sun.nio.ch.EPollArrayWrapper.poll(EPollArrayWrapper.java:269)",
         "sun.nio.ch.EPollSelectorImpl.doSelect(EPollSelectorImpl.java:93)",
         "sun.nio.ch.SelectorImpl.lockAndDoSelect(SelectorImpl.java:86)",
         "- locked <{lock}> (a sun.nio.ch.Util$3)",
         "sun.nio.ch.SelectorImpl.select(SelectorImpl.java:97)"]


@dataclass(frozen=True)
class DeadlockedThread:
    name: str
    frames: tuple[str, ...]   # may hold "- locked <{L:key}> (a class)" / "- waiting to lock <{L:key}> (a class)"
    waits_for: str            # lock key it waits to lock
    holder: str               # thread holding that lock


@dataclass(frozen=True)
class Deadlock:
    """A Java-level deadlock cycle: the threads (in cycle order) and the class of each lock key."""
    threads: tuple[DeadlockedThread, ...]
    lock_classes: dict


def _thread_specs(state: ClusterState, broker: int, ms: int) -> list[tuple[str, bool, str, str, list[str]]]:
    """(name, daemon, header state, Thread.State line, frames) of the broker's Kafka threads."""
    c = state.c
    T, W, R = "TIMED_WAITING (parking)", "WAITING (parking)", "RUNNABLE"
    specs = [("main", False, "waiting on condition", W,
              ["sun.misc.Unsafe.park(Native Method)",
               "- parking to wait for  <{lock}> (a java.util.concurrent.CountDownLatch$Sync)",
               "java.util.concurrent.locks.LockSupport.park(LockSupport.java:175)",
               "java.util.concurrent.locks.AbstractQueuedSynchronizer.parkAndCheckInterrupt(AbstractQueuedSynchronizer.java:836)",
               "java.util.concurrent.locks.AbstractQueuedSynchronizer.doAcquireSharedInterruptibly(AbstractQueuedSynchronizer.java:997)",
               "java.util.concurrent.locks.AbstractQueuedSynchronizer.acquireSharedInterruptibly(AbstractQueuedSynchronizer.java:1304)",
               "java.util.concurrent.CountDownLatch.await(CountDownLatch.java:231)",
               "kafka.server.KafkaServer.awaitShutdown(KafkaServer.scala:643)",
               "kafka.server.KafkaServerStartable.awaitShutdown(KafkaServerStartable.scala:70)",
               "kafka.Kafka$.main(Kafka.scala:92)",
               "kafka.Kafka.main(Kafka.scala)"])]
    specs.append((f"main-SendThread({c.zk_host.name}:2181)", True, "runnable", R,
                  ["sun.nio.ch.EPollArrayWrapper.epollWait(Native Method)",
                   "sun.nio.ch.EPollArrayWrapper.poll(EPollArrayWrapper.java:269)",
                   "sun.nio.ch.EPollSelectorImpl.doSelect(EPollSelectorImpl.java:93)",
                   "sun.nio.ch.SelectorImpl.lockAndDoSelect(SelectorImpl.java:86)",
                   "- locked <{lock}> (a sun.nio.ch.EPollSelectorImpl)",
                   "sun.nio.ch.SelectorImpl.select(SelectorImpl.java:97)",
                   "org.apache.zookeeper.ClientCnxnSocketNIO.doTransport(ClientCnxnSocketNIO.java:349)",
                   "org.apache.zookeeper.ClientCnxn$SendThread.run(ClientCnxn.java:1141)"]))
    specs.append(("main-EventThread", True, "waiting on condition", W,
                  ["sun.misc.Unsafe.park(Native Method)",
                   "- parking to wait for  <{lock}> (a java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject)",
                   "java.util.concurrent.locks.LockSupport.park(LockSupport.java:175)",
                   "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject.await(AbstractQueuedSynchronizer.java:2039)",
                   "java.util.concurrent.LinkedBlockingQueue.take(LinkedBlockingQueue.java:442)",
                   "org.apache.zookeeper.ClientCnxn$EventThread.run(ClientCnxn.java:501)"]))
    specs.append(("controller-event-thread", False, "waiting on condition", W,
                  ["sun.misc.Unsafe.park(Native Method)",
                   "- parking to wait for  <{lock}> (a java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject)",
                   "java.util.concurrent.locks.LockSupport.park(LockSupport.java:175)",
                   "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject.await(AbstractQueuedSynchronizer.java:2039)",
                   "java.util.concurrent.LinkedBlockingQueue.take(LinkedBlockingQueue.java:442)",
                   "kafka.controller.ControllerEventManager$ControllerEventThread.doWork(ControllerEventManager.scala:72)",
                   "kafka.utils.ShutdownableThread.run(ShutdownableThread.scala:82)"]))
    specs.append(("kafka-socket-acceptor-ListenerName(PLAINTEXT)-PLAINTEXT-9092", False, "runnable", R,
                  EPOLL + ["kafka.network.Acceptor.run(SocketServer.scala:354)", "java.lang.Thread.run(Thread.java:748)"]))
    for i in range(3):
        specs.append((f"kafka-network-thread-{broker}-ListenerName(PLAINTEXT)-PLAINTEXT-{i}", False, "runnable", R,
                      EPOLL + ["org.apache.kafka.common.network.Selector.select(Selector.java:689)",
                               "org.apache.kafka.common.network.Selector.poll(Selector.java:409)",
                               "kafka.network.Processor.poll(SocketServer.scala:617)",
                               "kafka.network.Processor.run(SocketServer.scala:534)",
                               "java.lang.Thread.run(Thread.java:748)"]))
    for i in range(8):
        specs.append((f"kafka-request-handler-{i}", True, "waiting on condition", T,
                      QUEUE_POLL + ["kafka.network.RequestChannel.receiveRequest(RequestChannel.scala:302)",
                                    "kafka.server.KafkaRequestHandler.run(KafkaRequestHandler.scala:60)",
                                    "java.lang.Thread.run(Thread.java:748)"]))
    for peer in c.broker_ids:
        if peer != broker:
            specs.append((f"ReplicaFetcherThread-0-{peer}", False, "runnable", R,
                          EPOLL + ["org.apache.kafka.common.network.Selector.select(Selector.java:689)",
                                   "org.apache.kafka.common.network.Selector.poll(Selector.java:409)",
                                   "org.apache.kafka.clients.NetworkClient.poll(NetworkClient.java:460)",
                                   "org.apache.kafka.clients.NetworkClientUtils.sendAndReceive(NetworkClientUtils.java:93)",
                                   "kafka.server.ReplicaFetcherBlockingSend.sendRequest(ReplicaFetcherBlockingSend.scala:97)",
                                   "kafka.server.ReplicaFetcherThread.fetch(ReplicaFetcherThread.scala:190)",
                                   "kafka.server.AbstractFetcherThread.processFetchRequest(AbstractFetcherThread.scala:152)",
                                   "kafka.server.AbstractFetcherThread.doWork(AbstractFetcherThread.scala:117)",
                                   "kafka.utils.ShutdownableThread.run(ShutdownableThread.scala:82)"]))
    if state.cleaner_thread_exists(broker, ms):
        specs.append(("kafka-log-cleaner-thread-0", False, "waiting on condition", T,
                      PARK_TIMED + ["kafka.utils.ShutdownableThread.pause(ShutdownableThread.scala:69)",
                                    "kafka.log.LogCleaner$CleanerThread.cleanOrSleep(LogCleaner.scala:269)",
                                    "kafka.log.LogCleaner$CleanerThread.doWork(LogCleaner.scala:236)",
                                    "kafka.utils.ShutdownableThread.run(ShutdownableThread.scala:82)"]))
    specs.append(("group-metadata-manager-0", True, "waiting on condition", T, SCHED_TAKE))
    for i in range(10):
        specs.append((f"kafka-scheduler-{i}", True, "waiting on condition", T if i < 4 else W, SCHED_TAKE))
    for op in ("Heartbeat", "Rebalance", "Produce", "Fetch", "DeleteRecords"):
        specs.append((f"ExpirationReaper-{broker}-{op}", False, "waiting on condition", T,
                      ["sun.misc.Unsafe.park(Native Method)",
                       "- parking to wait for  <{lock}> (a java.util.concurrent.CountDownLatch$Sync)",
                       "java.util.concurrent.locks.LockSupport.parkNanos(LockSupport.java:215)",
                       "java.util.concurrent.DelayQueue.poll(DelayQueue.java:259)",
                       "kafka.utils.timer.SystemTimer.advanceClock(Timer.scala:106)",
                       "kafka.server.DelayedOperationPurgatory.advanceClock(DelayedOperation.scala:343)",
                       "kafka.server.DelayedOperationPurgatory$ExpiredOperationReaper.doWork(DelayedOperation.scala:373)",
                       "kafka.utils.ShutdownableThread.run(ShutdownableThread.scala:82)"]))
        specs.append((f"executor-{op}", False, "waiting on condition", T,
                      ["sun.misc.Unsafe.park(Native Method)",
                       "- parking to wait for  <{lock}> (a java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject)",
                       "java.util.concurrent.locks.LockSupport.parkNanos(LockSupport.java:215)",
                       "java.util.concurrent.DelayQueue.poll(DelayQueue.java:259)",
                       "kafka.utils.timer.SystemTimer.advanceClock(Timer.scala:106)"]))
    specs.append(("metrics-meter-tick-thread-1", True, "waiting on condition", T, SCHED_TAKE))
    specs.append(("kafka-log-retention", True, "waiting on condition", T, SCHED_TAKE))
    return specs


def _jdk11_frame(frame: str) -> str:
    if frame.startswith("sun.misc.Unsafe.park"):
        return "jdk.internal.misc.Unsafe.park(java.base@11.0.20/Native Method)"
    if frame.startswith(("java.", "sun.")) and "(" in frame:
        head, _, rest = frame.partition("(")
        return f"{head}(java.base@11.0.20/{rest}"
    return frame


def render(state: ClusterState, broker: int, clock: LocalClock, ms: int) -> str:
    c = state.c
    r = state.rng("jstack", broker, ms)
    dl = state.ev.script.deadlock(state, broker, ms) if state.ev.script is not None else None
    locks = {k: f"0x00000000{r.getrandbits(32):08x}" for k in (dl.lock_classes if dl else ())}
    blocked = {t.name: t for t in (dl.threads if dl else ())}
    rs = state.restart_of(broker)
    jvm_start = rs.start_ms - 1_500 if rs and ms >= rs.start_ms else ms - 86_400_000 * 9 - 5_123_456
    elapsed = (ms - jvm_start) / 1000
    jdk11 = c.jdk11
    vm = "11.0.20+8 mixed mode" if jdk11 else "25.382-b05 mixed mode"
    lines = [clock.plain(ms), f"Full thread dump OpenJDK 64-Bit Server VM ({vm}):", ""]
    n = 0
    for name, daemon, hstate, tstate, frames in _thread_specs(state, broker, ms):
        if name in blocked:
            hstate, tstate = "waiting for monitor entry", "BLOCKED (on object monitor)"
            frames = [f.format(**{f"L{k}": v for k, v in locks.items()}) for f in blocked[name].frames]
        n = 1 if name == "main" else max(n + 1, 18) + r.randrange(3)
        tid = f"0x00007f{r.getrandbits(40):010x}"
        nid = f"0x{0x1a00 + n * 7:x}"
        d = " daemon" if daemon else ""
        addr = f"[0x00007f{r.getrandbits(40):010x}]"
        if jdk11:
            cpu = f"cpu={r.uniform(5, 900_000):.2f}ms elapsed={elapsed:.2f}s "
            lines.append(f'"{name}" #{n}{d} prio=5 os_prio=0 {cpu}tid={tid} nid={nid} {hstate}  {addr}')
        else:
            lines.append(f'"{name}" #{n}{d} prio=5 os_prio=0 tid={tid} nid={nid} {hstate} {addr}')
        lines.append(f"   java.lang.Thread.State: {tstate}")
        for f in frames:
            f = f.replace("{lock}", f"0x00000000{r.getrandbits(32):08x}")
            if f.startswith("- "):
                lines.append("\t" + f)
            else:
                lines.append("\tat " + (_jdk11_frame(f) if jdk11 else f))
        lines.append("")
    for name, st in [("VM Thread", "runnable"), ("GC task thread#0 (ParallelGC)", "runnable"),
                     ("GC task thread#1 (ParallelGC)", "runnable"), ("VM Periodic Task Thread", "waiting on condition")]:
        tid = f"0x00007f{r.getrandbits(40):010x}"
        n += 1
        cpu = f"cpu={r.uniform(1000, 90_000):.2f}ms elapsed={elapsed:.2f}s " if jdk11 else ""
        lines.append(f'"{name}" os_prio=0 {cpu}tid={tid} nid=0x{0x1900 + n:x} {st} ')
        lines.append("")
    lines.append(f"JNI global refs: {r.randint(20, 60)}" + (f", weak refs: {r.randint(0, 3)}" if jdk11 else ""))
    if dl:
        lines += _deadlock_report(dl, locks, r, jdk11)
    return "\n".join(lines) + "\n\n"


def _deadlock_report(dl: Deadlock, locks: dict, r, jdk11: bool) -> list[str]:
    """jstack's report after the thread list: the cycle, then the threads' stacks."""
    monitors = {k: f"0x00007f{r.getrandbits(40):010x}" for k in locks}
    out = ["", "", "Found one Java-level deadlock:", "============================="]
    for t in dl.threads:
        out += [f'"{t.name}":',
                f"  waiting to lock monitor {monitors[t.waits_for]} (object {locks[t.waits_for]}, a "
                f"{dl.lock_classes[t.waits_for]}),",
                f'  which is held by "{t.holder}"']
    out += ["", "Java stack information for the threads listed above:",
            "==================================================="]
    for t in dl.threads:
        out.append(f'"{t.name}":')
        for f in t.frames:
            f = f.format(**{f"L{k}": v for k, v in locks.items()})
            out.append("\t" + f if f.startswith("- ") else "\tat " + (_jdk11_frame(f) if jdk11 else f))
    out += ["", "Found 1 deadlock."]
    return out


def capture_time(state: ClusterState, broker: int, h0: int) -> int:
    return h0 + 30 * 60_000 + state.rng("jstack-at", broker, h0).randint(0, 20_000)


def write_hour(state: ClusterState, broker: int, clock: LocalClock, folder: Path, h0: int) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    ms = capture_time(state, broker, h0)
    if not state.is_up(broker, ms):
        return 0
    ms -= ms % 1000
    data = render(state, broker, clock, ms)
    (folder / f"jstack-{clock.name_stamp(ms)}.txt").write_text(data, encoding="utf-8")
    return len(data)
