"""Java stack traces as Kafka's log4j appenders print them after a WARN/ERROR record."""
from __future__ import annotations


def _frames(lines: list[str]) -> str:
    return "\n".join("\tat " + f for f in lines)


def map_failed_cleaner(jdk11: bool) -> str:
    """The log cleaner dying on mmap of a new index (vm.max_map_count exhausted)."""
    jb = "java.base@11.0.20/" if jdk11 else ""
    fc = "sun.nio.ch.FileChannelImpl"
    map_line = 1002 if jdk11 else 940
    return "\n".join([
        "java.io.IOException: Map failed",
        _frames([
            f"{fc}.map(FileChannelImpl.java:{map_line})",
            "kafka.log.AbstractIndex.<init>(AbstractIndex.scala:63)",
            "kafka.log.OffsetIndex.<init>(OffsetIndex.scala:52)",
            "kafka.log.LogSegment$.open(LogSegment.scala:560)",
            "kafka.log.Cleaner.cleanSegments(LogCleaner.scala:436)",
            "kafka.log.Cleaner$$anonfun$doClean$4.apply(LogCleaner.scala:403)",
            "kafka.log.Cleaner$$anonfun$doClean$4.apply(LogCleaner.scala:402)",
            "scala.collection.immutable.List.foreach(List.scala:392)",
            "kafka.log.Cleaner.doClean(LogCleaner.scala:402)",
            "kafka.log.Cleaner.clean(LogCleaner.scala:376)",
            "kafka.log.LogCleaner$CleanerThread.cleanOrSleep(LogCleaner.scala:257)",
            "kafka.log.LogCleaner$CleanerThread.doWork(LogCleaner.scala:236)",
            "kafka.utils.ShutdownableThread.run(ShutdownableThread.scala:82)",
        ]),
        "Caused by: java.lang.OutOfMemoryError: Map failed",
        _frames([
            f"{fc}.map0({jb}Native Method)",
            f"{fc}.map(FileChannelImpl.java:{map_line - 3})",
        ]),
        "\t... 12 more",
    ])


def map_failed_append(jdk11: bool) -> str:
    """Appending tombstones to a bloated offsets partition: rolling a segment cannot mmap its index."""
    jb = "java.base@11.0.20/" if jdk11 else ""
    map_line = 1002 if jdk11 else 940
    return "\n".join([
        "java.io.IOException: Map failed",
        _frames([
            f"sun.nio.ch.FileChannelImpl.map(FileChannelImpl.java:{map_line})",
            "kafka.log.AbstractIndex.<init>(AbstractIndex.scala:63)",
            "kafka.log.TimeIndex.<init>(TimeIndex.scala:55)",
            "kafka.log.LogSegment$.open(LogSegment.scala:561)",
            "kafka.log.Log$$anonfun$roll$2.apply(Log.scala:1357)",
            "kafka.log.Log$$anonfun$roll$2.apply(Log.scala:1318)",
            "kafka.log.Log.maybeHandleIOException(Log.scala:1679)",
            "kafka.log.Log.roll(Log.scala:1318)",
            "kafka.log.Log.kafka$log$Log$$maybeRoll(Log.scala:1304)",
            "kafka.log.Log$$anonfun$append$2.apply(Log.scala:710)",
            "kafka.log.Log.maybeHandleIOException(Log.scala:1679)",
            "kafka.log.Log.append(Log.scala:624)",
            "kafka.log.Log.appendAsLeader(Log.scala:597)",
            "kafka.cluster.Partition$$anonfun$13.apply(Partition.scala:533)",
            "kafka.cluster.Partition.appendRecordsToLeader(Partition.scala:521)",
            "kafka.server.ReplicaManager.appendToLocalLog(ReplicaManager.scala:719)",
            "kafka.server.ReplicaManager.appendRecords(ReplicaManager.scala:459)",
            "kafka.coordinator.group.GroupMetadataManager$$anonfun$cleanupGroupMetadata$1.apply(GroupMetadataManager.scala:744)",
            "kafka.coordinator.group.GroupMetadataManager.cleanupGroupMetadata(GroupMetadataManager.scala:716)",
            "kafka.coordinator.group.GroupMetadataManager.cleanupGroupMetadata(GroupMetadataManager.scala:703)",
            "kafka.utils.KafkaScheduler$$anonfun$1.apply$mcV$sp(KafkaScheduler.scala:110)",
            "kafka.utils.CoreUtils$$anon$1.run(CoreUtils.scala:62)",
            f"java.util.concurrent.Executors$RunnableAdapter.call({jb}Executors.java:{515 if jdk11 else 511})",
            f"java.util.concurrent.FutureTask.runAndReset({jb}FutureTask.java:{305 if jdk11 else 308})",
            f"java.lang.Thread.run({jb}Thread.java:{829 if jdk11 else 748})",
        ]),
        "Caused by: java.lang.OutOfMemoryError: Map failed",
        _frames([
            f"sun.nio.ch.FileChannelImpl.map0({jb}Native Method)",
            f"sun.nio.ch.FileChannelImpl.map(FileChannelImpl.java:{map_line - 3})",
        ]),
        "\t... 25 more",
    ])


def invalid_receive(size: int, jdk11: bool) -> str:
    """A non-Kafka client (HTTP probe, TLS on a plaintext port) hitting the broker port."""
    jb = "java.base@11.0.20/" if jdk11 else ""
    return "\n".join([
        f"org.apache.kafka.common.network.InvalidReceiveException: Invalid receive (size = {size} larger than 104857600)",
        _frames([
            "org.apache.kafka.common.network.NetworkReceive.readFromReadableChannel(NetworkReceive.java:132)",
            "org.apache.kafka.common.network.NetworkReceive.readFrom(NetworkReceive.java:93)",
            "org.apache.kafka.common.network.KafkaChannel.receive(KafkaChannel.java:235)",
            "org.apache.kafka.common.network.KafkaChannel.read(KafkaChannel.java:196)",
            "org.apache.kafka.common.network.Selector.attemptRead(Selector.java:557)",
            "org.apache.kafka.common.network.Selector.pollSelectionKeys(Selector.java:495)",
            "org.apache.kafka.common.network.Selector.poll(Selector.java:424)",
            "kafka.network.Processor.poll(SocketServer.scala:628)",
            "kafka.network.Processor.run(SocketServer.scala:545)",
            f"java.lang.Thread.run({jb}Thread.java:{829 if jdk11 else 748})",
        ]),
    ])
