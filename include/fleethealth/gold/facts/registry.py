"""The gold fact tables built from the Facts of a window of hours: qualified name -> builder(facts, thresholds).

Each builder is a pure DataFrame function with an `hour` column (the processed hour). The gold job
materializes every table once (concurrently: builders read silver, not each other), and the
detectors read the same frames through `facts.table(name, thresholds)`: one place for each fact. The
three facts every detector family shares (offsets partitions, cleaner status, broker health) are
Facts fields of their own (fleethealth.gold.facts.core).
"""
from __future__ import annotations

from fleethealth.gold.facts import (availability, coordinators, deadlocks, exposure, isr_churn, kraft_quorum,
                                    leader_elections, metadata_divergence, request_saturation, zk_quorum, zk_sessions)

BUILDERS = {
    "gold.group_coordinators": lambda facts, thresholds: coordinators.group_coordinators(
        facts.kafka_events, facts.hosts),
    "gold.deadlocks": lambda facts, thresholds: deadlocks.deadlock_facts(facts),
    "gold.isr_churn": isr_churn.isr_churn,
    "gold.zk_sessions": zk_sessions.zk_sessions,
    "gold.zk_quorum": zk_quorum.zk_quorum,
    "gold.kraft_quorum": kraft_quorum.kraft_quorum,
    "gold.leader_elections": leader_elections.leader_elections,
    "gold.metadata_divergence": metadata_divergence.divergence,
    "gold.request_saturation": request_saturation.saturation,
    "gold.known_bug_exposure": exposure.known_bug_exposure,
    "gold.cluster_availability_hourly": availability.availability,
}
