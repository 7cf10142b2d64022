"""
### fleet_health_hourly

Every hour: pull each host's files of the **previous hour** into landing (one mapped task per
host, so an unreachable host fails alone), then one Spark application for the three layers:
bronze -> silver -> gold (`SparkSubmitOperator` on `spark_default`, `spark/layers.py`; one JVM an
hour instead of three).

Write-audit-publish: each layer computes its hour, runs the layer's Great Expectations suites
(`expectations/`) on it, records the results in `gold.quality_results` and the Data Docs
(`<lakehouse>/quality/data_docs/index.html`), and only then publishes the hour (one commit per
table) and the next layer starts. A red `bronze_silver_gold` task whose log says
`<hour>: FAILED quality gate validate_<layer>, nothing of the layer published` names the failed
expectation and offending rows; that layer's and the higher layers' published tables are unchanged
and the rejected tables are in `<lakehouse>/_staging/<hour>/<layer>/`. gold publishes health
facts, `gold.incidents` (open / resolved) and `gold.incident_history`; then `notify` sends each
new state change of an incident that is still news to the inventory's `notifications:` channels
(webhook, e-mail, Slack, Alertmanager), at least once with an idempotency key, and `report`
refreshes the offline HTML report of the last 24 hours, `<lakehouse>/report/index.html`.

The processed hour is explicit: the data interval of `CronDataIntervalTimetable` (Airflow 3
cron schedules have zero-width intervals), or the `hour` param (ISO-8601 UTC) for a manual run; an
hour after the current one fails `resolve_hour` (it has no data yet).
Backfill a window with `airflow backfill create --dag-id fleet_health_hourly --from-date ...
--to-date ...` (needs a scheduler) or `fleethealth run --from ... --to ...`.
"""
from __future__ import annotations

from datetime import timedelta, timezone

from airflow.sdk import DAG, Param, task
from airflow.timetables.interval import CronDataIntervalTimetable

from fleethealth.pipeline import dag_tasks as glue
from fleethealth.runtime import config

CATALOG = glue.catalog()
HOUR = "{{ ti.xcom_pull(task_ids='resolve_hour') }}"


with DAG(
    dag_id=config.DAG_ID,
    doc_md=__doc__,
    schedule=CronDataIntervalTimetable("0 * * * *", timezone="UTC"),
    start_date=config.dag_start_date().astimezone(timezone.utc),
    catchup=config.dag_catchup(),
    max_active_runs=1,
    tags=["fleethealth", "kafka", "hourly"],
    default_args={"retries": 2, "retry_delay": timedelta(minutes=2), "retry_exponential_backoff": True},
    params={
        "hour": Param(None, type=["null", "string"], description="hour to process (ISO-8601 UTC); default: the data interval"),
        **glue.fixed_params(CATALOG),
    },
) as dag:

    @task
    def resolve_hour(params=None, data_interval_start=None, data_interval_end=None, logical_date=None) -> str:
        from fleethealth.lake.hours import processed_hour

        return processed_hour((params or {}).get("hour"), data_interval_start, data_interval_end,
                              logical_date).isoformat()

    @task
    def list_hosts(params=None) -> list[str]:
        return glue.list_hosts(params)

    # One task per host: an unreachable host fails alone and retries (30 s, 60 s, 120 s, ...) while
    # the others land; bronze runs anyway and gold marks the missing host-hour data_missing. A host
    # that accepts the connection and then stalls must not hold its slot (and the hour) for ever.
    @task(retries=glue.PULL_RETRIES, retry_delay=glue.PULL_RETRY_DELAY, retry_exponential_backoff=True,
          execution_timeout=timedelta(seconds=config.pull_timeout_s()),
          max_retry_delay=glue.PULL_MAX_RETRY_DELAY, map_index_template=glue.HOST_MAP_INDEX)
    def pull(host: str, hour: str, params=None) -> int:
        return glue.pull_hour(host, hour, params)

    hour = resolve_hour()
    pulled = pull.partial(hour=hour).expand(host=list_hosts())
    # a host whose pull failed is marked data_missing by gold, the others go on; an hour resolve_hour
    # refused (after the current one) runs nothing after it
    layers = glue.layers_step(CATALOG, "layers.py", "fleethealth-hour", ["--hour", HOUR],
                              trigger_rule="all_done_min_one_success")

    # after the gold gate: each state change of an incident (opened, escalated, resolved, retracted)
    # that is news to the inventory's notifications: channels, at least once with a key; whatever the
    # run type (a backfill's old hours are not news: recorded skipped). A failed delivery is retried
    # by the next run and never fails the hour; channels are sent concurrently, every send has a
    # deadline and each channel the run's budget (FLEETHEALTH_NOTIFY_TIMEOUT_S, the wait for another
    # run's notify included), and the task a timeout a minute longer, which it never reaches: a slow
    # receiver delays only its own channel and never holds the next hour (max_active_runs=1).
    # Alertmanager is kept equal to the open incidents at every run (state, not news).
    @task(execution_timeout=glue.NOTIFY_TIMEOUT)
    def notify(params=None) -> str:
        return glue.notify(params)

    # after the gold gate too: the offline HTML report of the last 24 hours (a few seconds, no Spark);
    # each page is replaced whole, so a browser never reads half of one
    @task
    def report(hour: str, params=None) -> str:
        from fleethealth.lake.hours import parse_hour
        from fleethealth.report import html

        return glue.report(params, *html.last_hours(parse_hour(hour)))

    # the layers failed after their retries (a quality gate rejected the hour, or an error), or had
    # nothing to run: every channel is told, since nothing of the hour is published past its last good
    # layer (its incidents may be missing)
    @task(trigger_rule="one_failed")
    def hour_failed(hour: str, params=None) -> str:
        return glue.hour_failed(params, hour)

    hour >> pulled >> layers >> [notify(), report(hour), hour_failed(hour)]
    hour >> layers
