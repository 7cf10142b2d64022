"""Gold fact tables: one builder per table, DataFrame → DataFrame (no paths, no I/O).

In: `core.Facts`, the silver frames of a window of hours and the inventory hosts. Out: every gold
fact table (`registry.BUILDERS`: gold.group_coordinators, gold.deadlocks, gold.isr_churn,
gold.zk_sessions, gold.zk_quorum, gold.kraft_quorum, gold.leader_elections, gold.metadata_divergence,
gold.request_saturation) and the three every detector family shares (`core`:
gold.consumer_offsets_partitions, gold.log_cleaner_status, gold.broker_health_hourly).
"""
