"""
### fleet_health_backfill

A window of hours at once, after an incident or an outage of the pipeline: trigger it with the window,
`airflow dags trigger fleet_health_backfill --conf '{"from": "2026-11-20T00:00Z", "to": "2026-11-21T00:00Z"}'`
(whole UTC hours, `to` excluded, at most a week a run, ending at the latest with the current hour).
A window refused by the `window` task fails it and nothing after it runs.

Pull each host's files of every hour of the window (one mapped task per host: an unreachable host
fails alone, its hours are marked data_missing), then one Spark application for the whole window
(`spark/backfill.py`, as `fleethealth backfill` runs it: windows of consecutive hours, each hour's
bronze, silver and gold validated by its gate and published, the same tables as the hourly DAG's).
A failed hour fails the task and names the hour; the others are published. Then `notify`, with the
hourly DAG's rule: the window's old hours are not news to people (recorded skipped, retractions
included), an incident still open now pages, and Alertmanager is kept equal to the open incidents;
and `report` writes the window's HTML report. The hourly DAG's own backfill
(`airflow backfill create`) works too, one Spark application per hour: several times slower.
"""
from __future__ import annotations

from datetime import timedelta

from airflow.sdk import DAG, Param, task

from fleethealth.pipeline import dag_tasks as glue
from fleethealth.pipeline.submit import BACKFILL_MAX_HOURS as MAX_HOURS
from fleethealth.runtime import config

CATALOG = glue.catalog()
FROM, TO = "{{ params['from'] }}", "{{ params['to'] }}"
# every task after `window`: once all upstream tasks are done, if at least one succeeded (`window` does)
AFTER_WINDOW = "all_done_min_one_success"


with DAG(
    dag_id=config.BACKFILL_DAG_ID,
    doc_md=__doc__,
    schedule=None,
    catchup=False,
    max_active_runs=1,
    tags=["fleethealth", "kafka", "backfill"],
    default_args={"retries": 0},
    params={
        "from": Param(type="string", description="first hour of the window (ISO-8601 UTC, on the hour)"),
        "to": Param(type="string", description="end of the window, excluded (ISO-8601 UTC, on the hour)"),
        **glue.fixed_params(CATALOG),
    },
) as dag:

    @task
    def window(params=None) -> list[str]:
        from fleethealth.pipeline.submit import backfill_window

        return [hour.isoformat() for hour in backfill_window(params["from"], params["to"], names=("from", "to"))]

    @task
    def list_hosts(params=None) -> list[str]:
        return glue.list_hosts(params)

    # every hour of the window from one host (the hourly pull's deadline for each hour)
    @task(retries=glue.PULL_RETRIES, retry_delay=glue.PULL_RETRY_DELAY, retry_exponential_backoff=True,
          execution_timeout=timedelta(seconds=config.pull_timeout_s() * MAX_HOURS),
          max_retry_delay=glue.PULL_MAX_RETRY_DELAY, map_index_template=glue.HOST_MAP_INDEX)
    def pull(host: str, hours: list[str], params=None) -> int:
        return glue.pull_hours(host, hours, params)

    hours = window()
    pulled = pull.partial(hours=hours).expand(host=list_hosts())
    # AFTER_WINDOW, with `window` upstream of every later task: a host whose pull failed is marked
    # data_missing by gold and the layers, notify and report run; a window that `window` refused (more
    # than a week, or after the current hour) runs none of them. spark/backfill.py checks the window
    # again (a window the first task refused never reaches a session)
    layers = glue.layers_step(CATALOG, "backfill.py", "fleethealth-backfill", ["--from", FROM, "--to", TO],
                              trigger_rule=AFTER_WINDOW)

    @task(execution_timeout=glue.NOTIFY_TIMEOUT, trigger_rule=AFTER_WINDOW)
    def notify(params=None) -> str:
        return glue.notify(params)

    @task(trigger_rule=AFTER_WINDOW)
    def report(params=None) -> str:
        from fleethealth.lake.hours import parse_window

        hours = parse_window(params["from"], params["to"], names=("from", "to"))
        return glue.report(params, hours[0], hours[-1] + timedelta(hours=1))

    after = [notify(), report()]
    hours >> pulled >> layers >> after
    hours >> [layers, *after]
