"""Incidents as the pages show them: most severe first, the entity an incident names, and the fact rows
(and chart) behind it."""
from __future__ import annotations

import re

import pandas as pd

from fleethealth.runtime.vocabulary import SEVERITY_RANK
from fleethealth.lake.hours import HOUR, floor_hour
from fleethealth.report.html.read import Gold, records


def most_severe_first(incidents: pd.DataFrame) -> pd.DataFrame:
    """Incidents in the order both pages list them: most severe first, then the earliest first seen."""
    rank = incidents["severity"].map(lambda s: -SEVERITY_RANK.get(s, 0))
    keys = [k for k in ("first_seen", "cluster", "kind", "entity") if k in incidents]
    return incidents.assign(rank=rank).sort_values(["rank", *keys]).drop(columns="rank")


def entity_keys(entity: str) -> dict:
    """broker-2 -> {broker: 2}; __consumer_offsets-38@broker-2 -> {topic, partition, broker}; zk-3 -> {zk: 3};
    host:source -> {host}."""
    m = re.fullmatch(r"(?:(.+)-(\d+)@)?broker-(\d+)", entity)
    if m:
        partition = {"topic": m.group(1), "partition": int(m.group(2))} if m.group(1) else {}
        return {"broker": int(m.group(3)), **partition}
    m = re.fullmatch(r"zk-(\d+)", entity)
    if m:
        return {"zk": int(m.group(1))}
    return {"host": entity.split(":", 1)[0]}


# kind -> (chart id, table, columns shown); the rows are those of the incident's entity and hours
FACTS = {
    "offsets_partition_bloat": ("chart-offsets", "consumer_offsets_partitions",
                                ["hour", "broker_id", "partition", "size_bytes", "growth_bytes", "compaction_seen",
                                 "size_source"]),
    "slow_group_load": ("chart-offsets", "consumer_offsets_partitions",
                        ["hour", "broker_id", "partition", "size_bytes", "growth_bytes", "groups"]),
    "log_cleaner_dead": ("chart-cleaner", "log_cleaner_status",
                         ["hour", "broker_id", "status", "dead_since", "time_since_last_run_ms", "cleaner_error_ts",
                          "evidence"]),
    "zk_session_expired": ("chart-zk", "zk_sessions",
                           ["hour", "broker_id", "expiries", "sessions", "log_expired_ts", "server_expired_ts",
                            "jmx_expiries"]),
    "broker_flapping": ("chart-zk", "zk_sessions",
                        ["hour", "broker_id", "expiries", "registrations", "log_expired_ts"]),
    "zk_follower_disconnect": ("chart-zk", "zk_quorum",
                               ["hour", "host", "zk_myid", "state", "elections", "follower_disconnects",
                                "transaction_timeouts"]),
    "leader_election_storm": ("chart-leaders", "leader_elections",
                              ["hour", "trigger_ts", "trigger", "controller", "lost_broker", "partitions", "offsets_partitions", "storm"]),
    "broker_isolated": ("chart-isr", "isr_churn",
                        ["hour", "topic", "partition", "broker", "shrinks", "isr_first", "isr_last", "dropped_brokers"]),
    "metadata_divergence": ("chart-isr", "metadata_divergence",
                            ["hour", "topic", "partition", "broker", "stuck_epoch", "epochs_not_taken", "lag_ms"]),
    "request_queue_saturation": ("chart-requests", "request_saturation",
                                 ["hour", "broker_id", "saturated_samples", "samples", "max_queue", "queue_limit",
                                  "min_handler_idle", "min_network_idle"]),
    "fd_exhaustion": ("chart-fd", "fd", ["minute", "broker_id", "open_fds", "max_fds"]),
    "broker_deadlock": (None, "deadlocks", ["hour", "broker_id", "cycle_threads", "lock_classes", "first_seen"]),
    "host_silent": ("chart-completeness", "broker_health_hourly", ["hour", "host", "sources_expected", "sources_missing"]),
    "data_missing": ("chart-completeness", "broker_health_hourly", ["hour", "host", "sources_expected", "sources_missing"]),
}


def chart_of(kind: str) -> str | None:
    """The id of the chart (on its cluster's page) that shows the facts of an incident of `kind`."""
    return FACTS.get(kind, (None,))[0]


def fact_rows(gold: Gold, incident) -> tuple[str | None, str | None, list[dict]]:
    """(chart id, table, rows) of the facts behind an incident: its entity's rows in its hours."""
    chart, table, columns = FACTS.get(incident.kind, (None, None, []))
    df = gold.get(table, incident.cluster) if table else None
    if df is None or df.empty:
        return chart, table, []
    e = entity_keys(incident.entity)
    keep = pd.Series(True, index=df.index)
    for key, columns_of_key in (("broker", ("broker_id", "broker", "lost_broker")), ("partition", ("partition",)),
                                ("topic", ("topic",)), ("zk", ("zk_myid",)), ("host", ("host",))):
        col = next((c for c in columns_of_key if c in df), None)
        if key in e and col:
            keep &= df[col] == e[key]
    when = "minute" if "minute" in df else "hour"
    first = pd.Timestamp(floor_hour(incident.first_hour.to_pydatetime() if not pd.isna(incident.first_hour)
                                    else incident.first_seen.to_pydatetime()))
    last = incident.last_hour if not pd.isna(incident.last_hour) else incident.last_seen
    keep &= (df[when] >= first) & (df[when] < pd.Timestamp(last) + pd.Timedelta(HOUR))
    return chart, table, records(df[keep].sort_values(when).head(48), columns)

