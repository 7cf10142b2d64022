"""`kafka-log-dirs.sh --describe` snapshots: `logdirs/logdirs-<local ISO time>.json` under broker 1."""
from __future__ import annotations

import json
from pathlib import Path

from .clock import HOUR_MS, LocalClock
from .fleet import LOG_DIR, OFFSETS_TOPIC
from .model import ClusterState


def snapshot_time(state: ClusterState, h0: int) -> int:
    """About :45 past each UTC hour, with a few seconds of tool start-up."""
    return h0 + 45 * 60_000 + state.rng("logdirs", h0).randint(2_000, 9_000)


def describe(state: ClusterState, ms: int) -> str:
    c = state.c
    brokers = []
    for b in c.broker_ids:
        if not state.is_up(b, ms):
            continue
        parts = []
        for p in c.offsets_partitions(b):
            parts.append({"partition": f"{OFFSETS_TOPIC}-{p}", "size": state.offsets_size(b, p, ms),
                          "offsetLag": 0, "isFuture": False})
        for t in c.topics:
            for p in c.hosted(b, t.name):
                parts.append({"partition": f"{t.name}-{p}", "size": state.topic_size(b, t.name, p, ms),
                              "offsetLag": 0, "isFuture": False})
        brokers.append({"broker": b, "logDirs": [{"logDir": LOG_DIR, "error": None, "partitions": parts}]})
    doc = {"version": 1, "brokers": brokers}
    ids = ",".join(str(x["broker"]) for x in brokers)
    return ("Querying brokers for log directories information\n"
            f"Received log directory information from brokers {ids}\n"
            + json.dumps(doc, separators=(",", ":")) + "\n")


def write_hour(state: ClusterState, clock: LocalClock, folder: Path, h0: int) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    ms = snapshot_time(state, h0)
    data = describe(state, ms)
    (folder / f"logdirs-{clock.name_stamp(ms)}.json").write_text(data, encoding="utf-8")
    return len(data)
