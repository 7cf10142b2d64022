"""The gold fact tables built from the Facts of a window of hours
: qualified name -> builder(facts, thresholds).

Each builder is a pure DataFrame function with an `hour` column (the processed hour). run_gold
materializes every table once (concurrently: builders read silver, not each other), stages it, and
the detectors read the same frames through `facts.table(name, thresholds)`: one place for each fact. The three facts every detector family shares (offsets partitions, cleaner status, broker
health) are Facts fields of their own (fleethealth.gold.facts).
"""
from __future__ import annotations

from fleethealth.gold import coordinators, isr_churn, zk_quorum
from fleethealth.gold.detectors import (broker_deadlock, leader_election_storm, metadata_divergence,
                                        request_queue_saturation, zk_session_expired)

BUILDERS = {
    "gold.group_coordinators": lambda facts, thresholds: coordinators.group_coordinators(
        facts.kafka_events, facts.hosts),
    "gold.deadlocks": lambda facts, thresholds: broker_deadlock.deadlock_facts(facts),
    "gold.isr_churn": isr_churn.isr_churn,
    "gold.zk_sessions": zk_session_expired.zk_sessions,
    "gold.zk_quorum": zk_quorum.zk_quorum,
    "gold.leader_elections": leader_election_storm.leader_elections,
    "gold.metadata_divergence": metadata_divergence.divergence,
    "gold.request_saturation": request_queue_saturation.saturation,
}
