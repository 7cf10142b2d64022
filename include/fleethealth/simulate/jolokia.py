"""Jolokia JMX exports: `jmx/jolokia.jsonl.YYYY-MM-DD-HH`, one bulk read response per line every 5 min.

Each response holds the reads of the MBeans fleethealth uses (`bulk_response`; their names from
`fleethealth.fleet.mbeans`), then the broker's other MBeans up to the asked number of samples per
broker-hour (`jmx_volume`), then, once an hour, a failed read.
"""
from __future__ import annotations

import json
from pathlib import Path

from fleethealth.fleet import mbeans

from .clock import HOUR_MS, LocalClock
from .fleet import version_tuple
from .jmx_volume import BrokerJmx, samples_in
from .model import ClusterState

SAMPLE_EVERY_MS = 300_000
OFFSETS_SIZE_PATTERN = f"{mbeans.OFFSETS_LOG_SIZE.object_name},partition=*"
MISSING_MBEAN = "kafka.server:type=DelayedOperationPurgatory,name=PurgatorySize,delayedOperation=Rebalance"


def sample_times(state: ClusterState, broker: int, h0: int, h1: int) -> list[int]:
    """Epoch ms of the JMX samples of `broker` in [h0, h1): every 5 min + a small scrape delay, while up."""
    out = []
    t = h0 - h0 % SAMPLE_EVERY_MS
    while t < h1:
        ts = t + 1_000 * (1 + (broker + t // SAMPLE_EVERY_MS) % 2)
        if h0 <= ts < h1 and state.is_up(broker, ts):
            out.append(ts)
        t += SAMPLE_EVERY_MS
    return out


def _read(mbean: str, value, ts: int, attribute=None) -> dict:
    req = {"mbean": mbean, "type": "read"}
    if attribute is not None:
        req["attribute"] = attribute
    return {"request": req, "value": value, "timestamp": ts // 1000, "status": 200}


def _bean(bean: mbeans.MBean, value, ts: int) -> dict:
    """A read of the catalogued attribute of `bean`."""
    return _read(bean.object_name, value, ts, bean.attribute)


def _canonical(bean: mbeans.MBean, **more: str) -> str:
    """An instance's ObjectName as Jolokia answers a pattern read: key properties sorted."""
    keys = sorted({**dict(bean.keys), **more}.items())
    return f"{bean.domain}:{','.join(f'{k}={v}' for k, v in keys)}"


def _meter(count: int, rate: float, unit: str, event: str) -> dict:
    return {"Count": count, "EventType": event, "FifteenMinuteRate": round(rate * 0.998, 6),
            "FiveMinuteRate": round(rate * 1.001, 6), "MeanRate": round(rate * 0.97, 6),
            "OneMinuteRate": round(rate, 6), "RateUnit": unit}


def broker_jmx(state: ClusterState, broker: int, samples_per_hour: int, probe_ms: int) -> BrokerJmx:
    """The extra reads that bring each scrape of `broker` to samples_per_hour / 12 samples (as silver
    counts them); the base reads give the same number of samples at every scrape, `probe_ms` is any."""
    per_scrape = round(samples_per_hour * SAMPLE_EVERY_MS / HOUR_MS)
    base = sum(samples_in(x) for x in bulk_response(state, broker, probe_ms, False))
    return BrokerJmx(state, broker, per_scrape, base)


def bulk_response(state: ClusterState, broker: int, ms: int, with_error: bool,
                  extra: BrokerJmx | None = None) -> list[dict]:
    c = state.c
    r = state.rng("jmx", broker, ms)
    ts = ms
    uptime_s = (ms - 1_700_000_000_000) // 1000
    ov = state.ev.script.jmx(state, broker, ms) if state.ev.script is not None else {}
    queue, idle = r.randint(0, 3), r.uniform(0.86, 0.97)
    open_fds, max_fds = mbeans.OPEN_FDS, mbeans.MAX_FDS
    out = [
        _bean(mbeans.UNDER_REPLICATED, ov.get("UnderReplicatedPartitions", 0), ts),
        _read("kafka.controller:type=KafkaController,name=ActiveControllerCount",
              1 if broker == c.controller_id else 0, ts, "Value"),
        _bean(mbeans.REQUEST_QUEUE_SIZE, ov.get("RequestQueueSize", queue), ts),
        # a read without attribute: the whole meter
        _read(mbeans.REQUEST_HANDLER_IDLE.object_name,
              _meter(int(uptime_s * 7.1e8), ov.get("RequestHandlerAvgIdlePercent", idle), "NANOSECONDS", "percent"), ts),
        _bean(mbeans.ZK_EXPIRES, ov.get("ZooKeeperExpiresCount", 0), ts),
        # both file-descriptor attributes in one read of the bean they share
        _read(open_fds.object_name,
              {open_fds.attribute: ov.get("OpenFileDescriptorCount", state.open_fds(broker, ms)),
               max_fds.attribute: ov.get("MaxFileDescriptorCount", 100000)}, ts,
              [open_fds.attribute, max_fds.attribute]),
        _bean(mbeans.CLEANER_TIME_SINCE_LAST_RUN, state.time_since_last_run_ms(broker, ms), ts),
        _read("kafka.log:type=LogCleaner,name=max-clean-time-secs",
              {"Value": int(state.max_clean_time_secs(broker, ms))}, ts),
    ]
    if c.version >= version_tuple(mbeans.CLEANER_DEAD_THREADS.since):
        out.append(_bean(mbeans.CLEANER_DEAD_THREADS, 0 if state.cleaner_thread_exists(broker, ms) else 1, ts))
    offline = state.offline_partitions(ms) if broker == c.controller_id else 0    # the active controller counts
    out.append(_bean(mbeans.OFFLINE_PARTITIONS, ov.get("OfflinePartitionsCount", offline), ts))
    if c.version >= version_tuple(mbeans.UNDER_MIN_ISR.since):
        out.append(_bean(mbeans.UNDER_MIN_ISR, ov.get("UnderMinIsrPartitionCount", 0), ts))
    sizes = {_canonical(mbeans.OFFSETS_LOG_SIZE, partition=str(p)): {"Value": state.offsets_size(broker, p, ms)}
             for p in c.offsets_partitions(broker)}
    out.append(_read(OFFSETS_SIZE_PATTERN, sizes, ts))
    if extra is not None:
        out.extend(extra.responses(ms))
    if with_error:
        out.append({"request": {"mbean": MISSING_MBEAN, "type": "read"},
                    "error_type": "javax.management.InstanceNotFoundException",
                    "error": f"javax.management.InstanceNotFoundException : {MISSING_MBEAN}",
                    "status": 404})
    return out


def write_hour(state: ClusterState, broker: int, clock: LocalClock, folder: Path, h0: int,
               extra: BrokerJmx | None = None, bulk=None) -> int:
    """`bulk`: (state, node, ms, with_error, extra) -> the responses of a scrape (default: a
    ZooKeeper-mode broker's, bulk_response)."""
    folder.mkdir(parents=True, exist_ok=True)
    bulk = bulk or bulk_response
    times = sample_times(state, broker, h0, h0 + HOUR_MS)
    err_at = state.rng("jmx-err", broker, h0).randrange(len(times)) if times else -1
    n = 0
    by_file: dict[str, list[str]] = {}
    for i, ms in enumerate(times):
        line = json.dumps(bulk(state, broker, ms, i == err_at, extra), separators=(",", ":")) + "\n"
        by_file.setdefault(clock.hour_label(ms), []).append(line)
    for label, lines in by_file.items():
        with open(folder / f"jolokia.jsonl.{label}", "a", encoding="utf-8") as fh:
            data = "".join(lines)
            fh.write(data)
            n += len(data)
    return n
