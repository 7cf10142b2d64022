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
`validate_<layer> ... nothing published` names the failed expectation and offending rows; that
layer's and the higher layers' published tables are unchanged and the rejected tables are in
`<lakehouse>/_staging/<hour>/<layer>/`. gold publishes health facts, `gold.incidents` (open /
resolved) and `gold.incident_history`; then `notify` sends each new state change of an incident
that is still news to the inventory's `notifications:` channels (webhook, e-mail, Slack,
Alertmanager), at least once with an idempotency key, and
`report` refreshes the offline HTML report of the last 24 hours, `<lakehouse>/report/index.html`.

The processed hour is explicit: the data interval of `CronDataIntervalTimetable` (Airflow 3
cron schedules have zero-width intervals), or the `hour` param (ISO-8601 UTC) for a manual run; an
hour after the current one fails `resolve_hour` (it has no data yet).
Backfill a window with `airflow backfill create --dag-id fleet_health_hourly --from-date ...
--to-date ...` (needs a scheduler) or `fleethealth run --from ... --to ...`.
"""
from __future__ import annotations

from datetime import timedelta, timezone

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import DAG, Asset, Param, task
from airflow.timetables.interval import CronDataIntervalTimetable

from fleethealth.lake import tables as lake
from fleethealth.lake.catalog import Lakehouse
from fleethealth.runtime import config
from fleethealth.runtime.spark_conf import SecretsInFile, spark_conf

CATALOG = Lakehouse.from_settings()
LAKEHOUSE = str(CATALOG)
INVENTORY = config.inventory_path()
START = config.dag_start_date()
CATCHUP = config.dag_catchup()
PULL_RETRIES = config.pull_retries()
PULL_RETRY_DELAY = timedelta(seconds=config.pull_retry_delay_s())
# a host that accepts the connection and then stalls must not hold its slot (and the hour) for ever
PULL_TIMEOUT = timedelta(seconds=config.pull_timeout_s())
# notify returns within FLEETHEALTH_NOTIFY_TIMEOUT_S (the lock's wait and every channel, sent concurrently,
# inside it); the task would be stopped a minute after that
NOTIFY_TIMEOUT = timedelta(seconds=config.notify_timeout_s() + 60)

HOUR = "{{ ti.xcom_pull(task_ids='resolve_hour') }}"
LAYERS_TASK = "bronze_silver_gold"


class SparkSubmit(SecretsInFile, SparkSubmitOperator):
    """Settings that may hold secrets reach spark-submit in a file only its owner reads."""


with DAG(
    dag_id=config.DAG_ID,
    doc_md=__doc__,
    schedule=CronDataIntervalTimetable("0 * * * *", timezone="UTC"),
    start_date=START.astimezone(timezone.utc),
    catchup=CATCHUP,
    max_active_runs=1,
    tags=["fleethealth", "kafka", "hourly"],
    default_args={"retries": 2, "retry_delay": timedelta(minutes=2), "retry_exponential_backoff": True},
    params={
        "hour": Param(None, type=["null", "string"], description="hour to process (ISO-8601 UTC); default: the data interval"),
        # paths are the deployment's (FLEETHEALTH_INVENTORY / _LAKEHOUSE), never a run's choice: whoever
        # may trigger a run must not choose which files are read or where writes and deletes happen
        "inventory": Param(INVENTORY, type="string", const=INVENTORY,
                           description="fleet inventory YAML (FLEETHEALTH_INVENTORY; fixed per deployment)"),
        "lakehouse": Param(LAKEHOUSE, type="string", const=LAKEHOUSE,
                           description="the lakehouse folder (FLEETHEALTH_LAKEHOUSE; fixed per deployment)"),
    },
) as dag:

    @task
    def resolve_hour(params=None, data_interval_start=None, data_interval_end=None, logical_date=None) -> str:
        from fleethealth.lake.hours import processed_hour

        return processed_hour((params or {}).get("hour"), data_interval_start, data_interval_end,
                              logical_date).isoformat()

    @task
    def list_hosts(params=None) -> list[str]:
        from fleethealth.notify.inventory import load_inventory

        return [h.host for h in load_inventory(params["inventory"]).hosts]

    # One task per host: an unreachable host fails alone and retries (30 s, 60 s, 120 s, ...) while
    # the others land; bronze runs anyway and gold marks the missing host-hour data_missing.
    @task(retries=PULL_RETRIES, retry_delay=PULL_RETRY_DELAY, retry_exponential_backoff=True,
          execution_timeout=PULL_TIMEOUT,
          max_retry_delay=timedelta(minutes=10), map_index_template="{{ task.op_kwargs['host'] }}")
    def pull(host: str, hour: str, params=None) -> int:
        from fleethealth.notify.inventory import load_inventory
        from fleethealth.lake.hours import parse_hour
        from fleethealth.pull.hour import pull_host

        inventory = load_inventory(params["inventory"])
        h = inventory.host(host)
        landed = pull_host(h, inventory.cluster(h.cluster).timezone, parse_hour(hour), Lakehouse.at(params["lakehouse"]))
        return len(landed)

    hour = resolve_hour()
    pulled = pull.partial(hour=hour).expand(host=list_hosts())
    # a host whose pull failed is marked data_missing by gold, the others go on; an hour resolve_hour
    # refused (after the current one) runs nothing after it
    layers = SparkSubmit(
        task_id=LAYERS_TASK,
        application=str(config.spark_dir() / "layers.py"),
        conn_id=config.SPARK_CONN_ID,
        name="fleethealth-hour",
        conf=spark_conf(CATALOG.warehouse, tables=CATALOG.tables, short_lived=True, deployment=False),
        application_args=["--hour", HOUR, "--lakehouse", "{{ params.lakehouse }}",
                          "--inventory", "{{ params.inventory }}"],
        trigger_rule="all_done_min_one_success",
        outlets=[Asset(f"fleethealth.{q}") for q in lake.layer_tables("gold")],
    )

    # after the gold gate: each state change of an incident (opened, escalated, resolved, retracted)
    # that is news to the inventory's notifications: channels, at least once with a key; whatever the
    # run type (a backfill's old hours are not news: recorded skipped). A failed delivery is retried
    # by the next run and never fails the hour; channels are sent concurrently, every send has a
    # deadline and each channel the run's budget (FLEETHEALTH_NOTIFY_TIMEOUT_S, the wait for another
    # run's notify included), and the task a timeout a minute longer, which it never reaches: a slow
    # receiver delays only its own channel and never holds the next hour (max_active_runs=1).
    # Alertmanager is kept equal to the open incidents at every run (state, not news).
    @task(execution_timeout=NOTIFY_TIMEOUT)
    def notify(params=None) -> str:
        from fleethealth.notify.inventory import load_inventory
        from fleethealth.notify import notify as send

        channels = load_inventory(params["inventory"]).notifications
        summary = send(Lakehouse.at(params["lakehouse"]), channels).summary() if channels else "notifications: none configured"
        print(summary)
        return summary

    # after the gold gate too: the offline HTML report of the last 24 hours (a few seconds, no Spark);
    # each page is replaced whole, so a browser never reads half of one
    @task
    def report(hour: str, params=None) -> str:
        from fleethealth.lake.hours import parse_hour
        from fleethealth.report import html

        start, end = html.last_hours(parse_hour(hour))
        index = html.write_report(Lakehouse.at(params["lakehouse"]), start, end)
        print(f"HTML report: {index}")
        return str(index)

    hour >> pulled >> layers >> [notify(), report(hour)]
    hour >> layers
