"""Pipeline: the one driver of the layers — a window of hours through bronze, silver and gold, gated.

In: pulled hours, the lakehouse (lake.catalog) and the inventory. Out: each hour's layers run in order
in one Spark session by one error policy (`window`: the DAG's Spark step, `fleethealth run` and
`backfill`), the one run loop of hours into windows with one failure text (`run`: `fleethealth
run`/`backfill` and spark/backfill.py), the spark-submit entry points' arguments and body (`submit`)
and what the two DAG files share (`dag_tasks`). Owns no table.
"""
