"""The rest of a broker's JMX: the MBeans it exposes besides the ones fleethealth reads, for a
realistic volume (`simulate(jmx_samples_per_broker_hour=N)`, default 20,000).

Each scrape of a broker (every 5 minutes, `jolokia.SAMPLE_EVERY_MS`) reads the same MBeans: first
`jolokia.bulk_response`'s own reads (the values the detectors use, unchanged), then, in this order, as
many of the reads below as fit N / 12 samples (a read that does not fit is left out, a later smaller one
may fit):

1. broker-wide gauges, meters and timers: ReplicaManager partition count, controller and purgatory
   gauges, BrokerTopicMetrics, log flush, network processors, socket-server metrics, app-info, and the
   JVM (Memory and MemoryPool usage are composite values: one sample per item);
2. per hosted partition, one pattern read per topic and metric: kafka.log Log Size (user topics; the
   `__consumer_offsets` sizes are a base read), LogEndOffset, LogStartOffset, NumLogSegments and
   kafka.cluster Partition ReplicasCount;
3. per hosted user topic, BrokerTopicMetrics (topic=...);
4. request metrics per request type: `kafka.network:type=RequestMetrics,name=RequestsPerSec` (meter)
   and the six time histograms (TotalTimeMs, RequestQueueTimeMs, LocalTimeMs, RemoteTimeMs,
   ResponseQueueTimeMs, ResponseSendTimeMs);
5. per-client quota metrics (`kafka.server:type=Fetch|Produce|Request,client-id=...`) of as many clients
   as it takes: the only open-ended family, so any N is reached.

So N samples per broker-hour within one sample per scrape, counted as silver counts them
(`fleethealth.silver.parsers.jolokia`, `samples_in` below): one attribute value is one sample, a composite one
sample per item. Below what the base reads give (~66 per scrape) nothing is added (N = 0: only the
MBeans fleethealth reads). A broker that is down part of an hour is scraped less, so it has fewer.

Nothing here is read by a detector: no MBean of `fleethealth.fleet.mbeans`, and none whose value a scenario
would contradict (ISR, fetcher lag, cleaner, ZooKeeper session, leader counts are left out). Values
follow the fleet model where it has them (sizes, offsets as the log-dir snapshots and logs say),
counters grow from the broker's start, and the rest is jitter from `state.rng`: deterministic for a seed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .fleet import OFFSETS_TOPIC
from .model import OFFSETS_ORIGIN_MS, OFFSETS_SEGMENT_BYTES, ClusterState

HISTOGRAM_KEYS = ("50thPercentile", "75thPercentile", "95thPercentile", "98thPercentile", "999thPercentile",
                  "99thPercentile", "Count", "Max", "Mean", "Min", "StdDev")
# percentile / max / stddev as a multiple of the mean
_SHAPE = (("50thPercentile", 0.8), ("75thPercentile", 1.1), ("95thPercentile", 2.0), ("98thPercentile", 2.6),
          ("999thPercentile", 6.5), ("99thPercentile", 3.2), ("Max", 9.0), ("StdDev", 0.7))

# (request name, Kafka version that has it, requests/s on a broker, mean total time ms, share of it
# spent waiting on other brokers/purgatory); the order is how they are added when N grows
REQUESTS = (
    ("Produce", (0,), 300.0, 3.0, 0.3), ("FetchConsumer", (0,), 400.0, 480.0, 0.95),
    ("FetchFollower", (0,), 200.0, 495.0, 0.97), ("Metadata", (0,), 5.0, 0.6, 0.0),
    ("OffsetCommit", (0,), 20.0, 2.0, 0.3), ("OffsetFetch", (0,), 2.0, 0.8, 0.0),
    ("FindCoordinator", (0,), 0.5, 0.4, 0.0),
    ("JoinGroup", (0,), 0.05, 3_000.0, 0.99), ("SyncGroup", (0,), 0.05, 5.0, 0.5),
    ("Heartbeat", (0,), 10.0, 0.3, 0.0), ("LeaveGroup", (0,), 0.01, 0.5, 0.0),
    ("ListOffsets", (0,), 1.0, 0.7, 0.0), ("ApiVersions", (0,), 0.5, 0.2, 0.0),
    ("LeaderAndIsr", (0,), 0.001, 12.0, 0.0),
    ("UpdateMetadata", (0,), 0.01, 1.5, 0.0), ("StopReplica", (0,), 0.0, 1.0, 0.0),
    ("ControlledShutdown", (0,), 0.0, 1.0, 0.0), ("DescribeGroups", (0,), 0.02, 0.5, 0.0),
    ("ListGroups", (0,), 0.01, 0.4, 0.0), ("CreateTopics", (0,), 0.0, 20.0, 0.8),
    ("DeleteTopics", (0,), 0.0, 20.0, 0.8), ("SaslHandshake", (0,), 0.0, 0.2, 0.0),
    ("InitProducerId", (0, 11), 0.01, 2.0, 0.5), ("AddPartitionsToTxn", (0, 11), 0.0, 3.0, 0.5),
    ("AddOffsetsToTxn", (0, 11), 0.0, 3.0, 0.5), ("EndTxn", (0, 11), 0.0, 5.0, 0.5),
    ("WriteTxnMarkers", (0, 11), 0.0, 4.0, 0.5), ("TxnOffsetCommit", (0, 11), 0.0, 2.0, 0.3),
    ("OffsetForLeaderEpoch", (0, 11), 0.01, 0.5, 0.0), ("DescribeConfigs", (0, 11), 0.01, 0.8, 0.0),
    ("AlterConfigs", (0, 11), 0.0, 3.0, 0.0), ("DescribeAcls", (0, 11), 0.0, 0.5, 0.0),
    ("CreateAcls", (0, 11), 0.0, 3.0, 0.0), ("DeleteAcls", (0, 11), 0.0, 3.0, 0.0),
    ("DeleteRecords", (0, 11), 0.0, 5.0, 0.5), ("DescribeLogDirs", (1, 0), 0.0003, 4.0, 0.0),
    ("AlterReplicaLogDirs", (1, 0), 0.0, 3.0, 0.0), ("CreatePartitions", (1, 0), 0.0, 20.0, 0.8),
    ("SaslAuthenticate", (1, 0), 0.0, 0.5, 0.0), ("DeleteGroups", (1, 1), 0.0, 2.0, 0.0),
    ("CreateDelegationToken", (1, 1), 0.0, 2.0, 0.0), ("DescribeDelegationToken", (1, 1), 0.0, 0.5, 0.0),
    ("ElectLeaders", (2, 4), 0.0, 10.0, 0.5), ("IncrementalAlterConfigs", (2, 3), 0.0, 3.0, 0.0),
    ("AlterPartitionReassignments", (2, 4), 0.0, 5.0, 0.0), ("ListPartitionReassignments", (2, 4), 0.0, 0.5, 0.0),
    ("OffsetDelete", (2, 4), 0.0, 2.0, 0.0),
)
RENAMED_IN_0_11 = {"FindCoordinator": "GroupCoordinator", "ListOffsets": "Offsets"}   # their 0.10 names
# (name, share of the total time); RemoteTimeMs takes the request's remote share
TIME_PARTS = (("TotalTimeMs", 1.0), ("RequestQueueTimeMs", 0.02), ("LocalTimeMs", None), ("RemoteTimeMs", None),
              ("ResponseQueueTimeMs", 0.01), ("ResponseSendTimeMs", 0.03))
# BrokerTopicMetrics meters: (name, event type, Kafka version, per-second rate per message in)
TOPIC_METERS = (("MessagesInPerSec", "messages", (0,), 1.0), ("BytesInPerSec", "bytes", (0,), 520.0),
                ("BytesOutPerSec", "bytes", (0,), 1_400.0), ("BytesRejectedPerSec", "bytes", (0,), 0.0),
                ("FailedProduceRequestsPerSec", "requests", (0,), 0.0),
                ("FailedFetchRequestsPerSec", "requests", (0,), 0.0),
                ("TotalProduceRequestsPerSec", "requests", (0,), 0.05),
                ("TotalFetchRequestsPerSec", "requests", (0,), 0.08))
BROKER_METERS = TOPIC_METERS + (("ReplicationBytesInPerSec", "bytes", (1, 0), 1_040.0),
                                ("ReplicationBytesOutPerSec", "bytes", (1, 0), 1_040.0))
JVM_POOLS = ("G1 Eden Space", "G1 Old Gen", "G1 Survivor Space", "Metaspace", "Compressed Class Space", "Code Cache")
SOCKET_SERVER_ATTRS = ("connection-count", "connection-creation-rate", "connection-close-rate", "incoming-byte-rate",
                       "outgoing-byte-rate", "request-rate", "response-rate", "network-io-rate", "select-rate",
                       "io-wait-ratio", "io-ratio")
NETWORK_THREADS = 3
CLIENT_KINDS = (("Fetch", ("byte-rate", "throttle-time")), ("Produce", ("byte-rate", "throttle-time")),
                ("Request", ("request-time", "throttle-time")))


def samples_in(response: dict) -> int:
    """Samples silver makes of one Jolokia read response (as `fleethealth.silver.parsers.jolokia.parse`): a
    failed read none; a pattern read one per attribute of each MBean, a read of one named attribute
    one, a read of several (or all) attributes one per attribute; a composite value one per item."""
    if response.get("status") != 200:
        return 0
    req, value = response["request"], response.get("value")
    attribute = req.get("attribute")
    if any(ch in req["mbean"] for ch in "*?") and isinstance(value, dict):
        values = [v for bean in value.values() if isinstance(bean, dict) for v in bean.values()]
    elif attribute is not None and not isinstance(attribute, list):
        values = [value]
    else:
        values = list(value.values()) if isinstance(value, dict) else []
    return sum(len(v) if isinstance(v, dict) else 1 for v in values)


@dataclass(frozen=True)
class Read:
    """One read of a bulk request: its request, how many samples it gives, its value at a scrape."""
    request: dict
    samples: int
    value: Callable      # (ms, uptime seconds, random.Random) -> the response's value


def _meter(count: int, rate: float, event: str, r) -> dict:
    j = 1 + (r.random() - 0.5) * 0.1
    return {"Count": count, "EventType": event, "FifteenMinuteRate": round(rate * 0.998, 6),
            "FiveMinuteRate": round(rate * j * 1.001, 6), "MeanRate": round(rate * 0.97, 6),
            "OneMinuteRate": round(rate * j, 6), "RateUnit": "SECONDS"}


def _histogram(count: int, mean: float, r) -> dict:
    m = mean * (0.85 + 0.3 * r.random())
    out = {k: round(m * f, 3) for k, f in _SHAPE}
    out.update(Count=count, Mean=round(m, 3), Min=0.0)
    return {k: out[k] for k in HISTOGRAM_KEYS}


def _timer(count: int, rate: float, mean: float, event: str, r) -> dict:
    out = _meter(count, rate, event, r)
    out.update(_histogram(count, mean, r))
    out["DurationUnit"] = "MILLISECONDS"
    return out


def _whole(mbean: str, value: Callable, samples: int) -> Read:
    return Read({"mbean": mbean, "type": "read"}, samples, value)


def _one(mbean: str, value: Callable) -> Read:
    return Read({"mbean": mbean, "attribute": "Value", "type": "read"}, 1, value)


def _attrs(mbean: str, attrs: tuple, value: Callable, items: int = 1) -> Read:
    """A read of named attributes; `items`: of each one's composite value (1: a plain value)."""
    return Read({"mbean": mbean, "attribute": list(attrs), "type": "read"}, len(attrs) * items, value)


def _meter_read(mbean: str, rate: float, event: str) -> Read:
    return _whole(mbean, lambda ms, up, r: _meter(int(rate * up), rate, event, r), 7)


def _histogram_read(mbean: str, rate: float, mean: float) -> Read:
    return _whole(mbean, lambda ms, up, r: _histogram(int(rate * up), mean, r), 11)


def _gauge(lo: float, hi: float, digits: int | None = None) -> Callable:
    if digits is None:
        return lambda ms, up, r: int(lo + (hi - lo) * r.random())
    return lambda ms, up, r: round(lo + (hi - lo) * r.random(), digits)


def _const(v) -> Callable:
    return lambda ms, up, r: v


def _usage(init: int, lo: int, hi: int, mx: int) -> Callable:
    def value(ms, up, r):
        used = int(lo + (hi - lo) * r.random())
        return {"committed": max(used, hi), "init": init, "max": mx, "used": used}
    return value


class BrokerJmx:
    """The extra reads of one broker, chosen once for a per-scrape sample target."""

    def __init__(self, state: ClusterState, broker: int, samples_per_scrape: int, base_samples: int):
        self.s, self.b = state, broker
        self.reads: list[Read] = []
        room = samples_per_scrape - base_samples
        for read in self._catalogue():
            if read.samples <= room:
                self.reads.append(read)
                room -= read.samples
        self.reads += self._clients(max(0, room))

    def responses(self, ms: int) -> list[dict]:
        """The extra read responses of a scrape at `ms` (epoch ms)."""
        if not self.reads:
            return []
        r = self.s.rng("jmx-volume", self.b, ms)
        rs = self.s.restart_of(self.b)
        started = rs.start_ms if rs is not None and ms >= rs.start_ms else OFFSETS_ORIGIN_MS
        up = (ms - started) / 1000
        ts = ms // 1000
        return [{"request": x.request, "value": x.value(ms, up, r), "timestamp": ts, "status": 200} for x in self.reads]

    # --- the catalogue, in the order reads are added ----------------------------------------------
    def _catalogue(self):
        """Every family but the open-ended one (clients), in the order they are added."""
        yield from self._broker_wide()
        yield from self._partitions()
        yield from self._topics()
        yield from self._requests()

    def _broker_wide(self):
        c, b, v = self.s.c, self.b, self.s.c.version
        hosted = sum(len(c.hosted(b, t.name)) for t in c.all_topics)
        msgs_in = sum(t.msgs_per_sec * len(c.hosted(b, t.name)) / max(1, min(t.replication, c.brokers))
                      for t in c.topics)
        yield _one("kafka.server:type=ReplicaManager,name=PartitionCount", _const(hosted))
        yield _one("kafka.server:type=ReplicaManager,name=OfflineReplicaCount", _const(0))
        # (UnderMinIsrPartitionCount and OfflinePartitionsCount are base reads: fleethealth reads them)
        yield _one("kafka.server:type=KafkaServer,name=BrokerState", _const(3))
        yield _one("kafka.controller:type=KafkaController,name=PreferredReplicaImbalanceCount", _const(0))
        if v >= (1, 0):   # the controller's view; 0 on the other brokers
            ctl = b == c.controller_id
            yield _one("kafka.controller:type=KafkaController,name=GlobalTopicCount", _const(len(c.all_topics) if ctl else 0))
            yield _one("kafka.controller:type=KafkaController,name=GlobalPartitionCount",
                       _const(sum(t.partitions for t in c.all_topics) if ctl else 0))
        yield _meter_read("kafka.controller:type=ControllerStats,name=UncleanLeaderElectionsPerSec", 0.0, "elections")
        yield _whole("kafka.controller:type=ControllerStats,name=LeaderElectionRateAndTimeMs",
                     lambda ms, up, r: _timer(int(0.0001 * up), 0.0001, 15.0, "calls", r), 18)
        yield _one("kafka.network:type=RequestChannel,name=ResponseQueueSize", _gauge(0, 3))
        for p in range(NETWORK_THREADS):
            yield _one(f"kafka.network:type=RequestChannel,name=ResponseQueueSize,processor={p}", _gauge(0, 2))
            yield _one(f"kafka.network:type=Processor,name=IdlePercent,networkProcessor={p}", _gauge(0.85, 0.99, 4))
        purgatories = ("Produce", "Fetch", "Heartbeat", "Topic") + (("DeleteRecords",) if v >= (0, 11) else ())
        for op in purgatories:
            yield _one(f"kafka.server:type=DelayedOperationPurgatory,name=PurgatorySize,delayedOperation={op}",
                       _gauge(0, 40 if op == "Fetch" else 5))
            yield _one(f"kafka.server:type=DelayedOperationPurgatory,name=NumDelayedOperations,delayedOperation={op}",
                       _gauge(0, 40 if op == "Fetch" else 5))
        for q in ("Fetch", "Produce") + (("Request",) if v >= (0, 11) else ()):
            yield _attrs(f"kafka.server:type={q}", ("queue-size",), _const({"queue-size": 0}))
        for name, event, since, per_msg in BROKER_METERS:
            if v >= since:
                yield _meter_read(f"kafka.server:type=BrokerTopicMetrics,name={name}", msgs_in * per_msg, event)
        for fetcher in ("consumer", "follower"):
            yield _meter_read(f"kafka.server:type=DelayedFetchMetrics,name=ExpiresPerSec,fetcherType={fetcher}",
                              30.0, "expires")
        yield _whole("kafka.log:type=LogFlushStats,name=LogFlushRateAndTimeMs",
                     lambda ms, up, r: _timer(int(0.2 * up), 0.2, 4.0, "flushes", r), 18)
        if v >= (1, 0):
            yield _one("kafka.log:type=LogManager,name=OfflineLogDirectoryCount", _const(0))
        if v >= (1, 1):
            yield _histogram_read("kafka.server:type=ZooKeeperClientMetrics,name=ZooKeeperRequestLatencyMs", 2.0, 1.2)
        listener = "listener=PLAINTEXT," if v >= (1, 0) else ""
        for p in range(NETWORK_THREADS):
            yield _attrs(f"kafka.server:type=socket-server-metrics,{listener}networkProcessor={p}", SOCKET_SERVER_ATTRS,
                         lambda ms, up, r: {a: round(50 * r.random(), 4) if a != "connection-count" else 40 + int(20 * r.random())
                                            for a in SOCKET_SERVER_ATTRS})
        version = self.s.c.kafka_version
        commit = f"{self.s.rng('commit-id').getrandbits(64):016x}"
        yield _attrs(f"kafka.server:type=app-info,id={b}", ("version", "commit-id"),
                     _const({"version": version, "commit-id": commit}))
        # the JVM: composite usages (one sample per item), collectors, threads, classes, buffers
        heap = 6 * 1024 ** 3
        yield _attrs("java.lang:type=Memory", ("HeapMemoryUsage", "NonHeapMemoryUsage"),
                     lambda ms, up, r: {"HeapMemoryUsage": _usage(heap, heap // 8, heap // 2, heap)(ms, up, r),
                                        "NonHeapMemoryUsage": _usage(2_555_904, 90 << 20, 140 << 20, -1)(ms, up, r)},
                     items=4)
        for gc, rate in (("G1 Young Generation", 0.05), ("G1 Old Generation", 0.0)):
            yield _attrs(f"java.lang:type=GarbageCollector,name={gc}", ("CollectionCount", "CollectionTime"),
                         lambda ms, up, r, rate=rate: {"CollectionCount": int(rate * up), "CollectionTime": int(rate * up * 11)})
        yield _attrs("java.lang:type=Threading", ("ThreadCount", "PeakThreadCount", "DaemonThreadCount"),
                     lambda ms, up, r: dict(zip(("ThreadCount", "PeakThreadCount", "DaemonThreadCount"),
                                                (110 + int(8 * r.random()), 131, 64 + int(4 * r.random())))))
        yield _attrs("java.lang:type=Runtime", ("Uptime",), lambda ms, up, r: {"Uptime": int(up * 1000)})
        yield _attrs("java.lang:type=ClassLoading", ("LoadedClassCount", "TotalLoadedClassCount", "UnloadedClassCount"),
                     _const({"LoadedClassCount": 7_412, "TotalLoadedClassCount": 7_431, "UnloadedClassCount": 19}))
        for pool in ("direct", "mapped"):
            yield _attrs(f"java.nio:type=BufferPool,name={pool}", ("Count", "MemoryUsed", "TotalCapacity"),
                         lambda ms, up, r, n=(40 if pool == "direct" else hosted * 2): {
                             "Count": n, "MemoryUsed": n * 1_048_576, "TotalCapacity": n * 1_048_576})
        for pool in JVM_POOLS:
            yield _attrs(f"java.lang:type=MemoryPool,name={pool}", ("Usage", "PeakUsage"),
                         lambda ms, up, r: {"Usage": _usage(0, 16 << 20, 512 << 20, -1)(ms, up, r),
                                            "PeakUsage": _usage(0, 512 << 20, 640 << 20, -1)(ms, up, r)},
                         items=4)

    def _partitions(self):
        c, b = self.s.c, self.b
        metrics = (("kafka.log", "Log", "Size"), ("kafka.log", "Log", "LogEndOffset"), ("kafka.log", "Log", "LogStartOffset"),
                   ("kafka.log", "Log", "NumLogSegments"), ("kafka.cluster", "Partition", "ReplicasCount"))
        for domain, type_, name in metrics:
            for t in c.all_topics:
                parts = c.hosted(b, t.name)
                if not parts or (t.name == OFFSETS_TOPIC and name == "Size"):   # a base read already
                    continue
                keys = {p: f"{domain}:name={name},partition={p},topic={t.name},type={type_}" for p in parts}
                fn = self._partition_value(t, name)
                yield Read({"mbean": f"{domain}:type={type_},name={name},topic={t.name},partition=*",
                            "attribute": "Value", "type": "read"}, len(parts),
                           lambda ms, up, r, keys=keys, fn=fn: {k: {"Value": fn(p, ms)} for p, k in keys.items()})

    def _partition_value(self, t, name: str) -> Callable:
        s, b = self.s, self.b
        rf = min(t.replication, s.c.brokers)
        if t.name == OFFSETS_TOPIC:
            return {"LogEndOffset": lambda p, ms: s.offsets_end_offset(b, p, ms),
                    "LogStartOffset": lambda p, ms: 0,
                    "NumLogSegments": lambda p, ms: 1 + s.offsets_size(b, p, ms) // OFFSETS_SEGMENT_BYTES,
                    "ReplicasCount": lambda p, ms: rf}[name]

        def start(p, ms):
            off = s.topic_offset(t.name, ms)
            return max(0, off - off % 2_000_000 - 14_000_000)
        return {"Size": lambda p, ms: s.topic_size(b, t.name, p, ms),
                "LogEndOffset": lambda p, ms: s.topic_offset(t.name, ms),
                "LogStartOffset": start,
                "NumLogSegments": lambda p, ms: 1 + s.topic_size(b, t.name, p, ms) // t.segment_bytes,
                "ReplicasCount": lambda p, ms: rf}[name]

    def _topics(self):
        c, b, v = self.s.c, self.b, self.s.c.version
        for t in c.topics:
            n = len(c.hosted(b, t.name))
            if not n:
                continue
            msgs = t.msgs_per_sec * n / max(1, min(t.replication, c.brokers))
            for name, event, since, per_msg in TOPIC_METERS:
                if v >= since:
                    yield _meter_read(f"kafka.server:type=BrokerTopicMetrics,name={name},topic={t.name}", msgs * per_msg, event)

    def _requests(self):
        v = self.s.c.version
        for req, since, rate, total, remote in REQUESTS:
            if v < since:
                continue
            if v < (0, 11):
                req = RENAMED_IN_0_11.get(req, req)
            yield _meter_read(f"kafka.network:type=RequestMetrics,name=RequestsPerSec,request={req}", rate, "requests")
            for name, share in TIME_PARTS:
                if share is None:
                    share = remote if name == "RemoteTimeMs" else max(0.0, 1 - remote - 0.06)
                yield _histogram_read(f"kafka.network:type=RequestMetrics,name={name},request={req}", rate, total * share)

    def _clients(self, room: int) -> list[Read]:
        """Quota metrics of the broker's clients (consumers named after the groups, producers): reads of
        two attributes, and one of a single attribute if `room` is odd."""
        groups = self.s.c.groups or ("app",)
        out, k = [], 0
        while room > 0:
            kind, attrs = CLIENT_KINDS[k % len(CLIENT_KINDS)]
            n = k // len(CLIENT_KINDS)
            who = f"producer-{n + 1}" if kind == "Produce" else f"{groups[n % len(groups)]}-{n // len(groups) + 1}"
            attrs = attrs[:room]
            out.append(_attrs(f"kafka.server:type={kind},client-id={who}", attrs,
                              lambda ms, up, r, attrs=attrs: {a: 0.0 if a == "throttle-time" else round(5_000 * r.random(), 3)
                                                              for a in attrs}))
            room -= len(attrs)
            k += 1
        return out
