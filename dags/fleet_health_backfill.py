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

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import DAG, Asset, Param, task

from fleethealth.lake import tables as lake
from fleethealth.lake.catalog import Lakehouse
from fleethealth.pipeline.submit import BACKFILL_MAX_HOURS as MAX_HOURS
from fleethealth.runtime import config
from fleethealth.runtime.spark_conf import SecretsInFile, spark_conf

CATALOG = Lakehouse.from_settings()
LAKEHOUSE = str(CATALOG)
INVENTORY = config.inventory_path()
PULL_RETRIES = config.pull_retries()
PULL_RETRY_DELAY = timedelta(seconds=config.pull_retry_delay_s())
NOTIFY_TIMEOUT = timedelta(seconds=config.notify_timeout_s() + 60)   # notify returns within the former
FROM, TO = "{{ params['from'] }}", "{{ params['to'] }}"
# every task after `window`: once all upstream tasks are done, if at least one succeeded (`window` does)
AFTER_WINDOW = "all_done_min_one_success"


class SparkSubmit(SecretsInFile, SparkSubmitOperator):
    """Settings that may hold secrets reach spark-submit in a file only its owner reads."""


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
        "inventory": Param(INVENTORY, type="string", const=INVENTORY,
                           description="fleet inventory YAML (FLEETHEALTH_INVENTORY; fixed per deployment)"),
        "lakehouse": Param(LAKEHOUSE, type="string", const=LAKEHOUSE,
                           description="the lakehouse folder (FLEETHEALTH_LAKEHOUSE; fixed per deployment)"),
    },
) as dag:

    @task
    def window(params=None) -> list[str]:
        from fleethealth.pipeline.submit import backfill_window

        return [hour.isoformat() for hour in backfill_window(params["from"], params["to"], names=("from", "to"))]

    @task
    def list_hosts(params=None) -> list[str]:
        from fleethealth.notify.inventory import load_inventory

        return [h.host for h in load_inventory(params["inventory"]).hosts]

    @task(retries=PULL_RETRIES, retry_delay=PULL_RETRY_DELAY, retry_exponential_backoff=True,
          execution_timeout=timedelta(seconds=config.pull_timeout_s() * MAX_HOURS),
          max_retry_delay=timedelta(minutes=10), map_index_template="{{ task.op_kwargs['host'] }}")
    def pull(host: str, hours: list[str], params=None) -> int:
        """Every hour of the window from one host; an hour that fails does not stop the next ones, and
        the task fails at the end naming them (a retry pulls what is still new)."""
        from fleethealth.notify.inventory import load_inventory
        from fleethealth.lake.hours import parse_hour
        from fleethealth.pull.hour import pull_host
        from fleethealth.pull.landing import PullError

        inventory = load_inventory(params["inventory"])
        h = inventory.host(host)
        lakehouse = Lakehouse.at(params["lakehouse"])
        landed, errors = 0, []
        for hour in hours:
            try:
                landed += len(pull_host(h, inventory.cluster(h.cluster).timezone, parse_hour(hour), lakehouse))
            except PullError as exc:
                errors.append(f"{hour}: {exc}")
        if errors:
            raise PullError(f"{len(errors)} of {len(hours)} hours failed:\n" + "\n".join(errors))
        return landed

    hours = window()
    pulled = pull.partial(hours=hours).expand(host=list_hosts())
    # AFTER_WINDOW, with `window` upstream of every later task: a host whose pull failed is marked
    # data_missing by gold and the layers, notify and report run; a window that `window` refused (more
    # than a week, or after the current hour) runs none of them. spark/backfill.py checks the window
    # again (a window the first task refused never reaches a session)
    layers = SparkSubmit(
        task_id="bronze_silver_gold",
        application=str(config.spark_dir() / "backfill.py"),
        conn_id=config.SPARK_CONN_ID,
        name="fleethealth-backfill",
        conf=spark_conf(CATALOG.warehouse, tables=CATALOG.tables, short_lived=True, deployment=False),
        application_args=["--from", FROM, "--to", TO, "--lakehouse", "{{ params.lakehouse }}",
                          "--inventory", "{{ params.inventory }}"],
        trigger_rule=AFTER_WINDOW,
        outlets=[Asset(f"fleethealth.{q}") for q in lake.layer_tables("gold")],
    )

    @task(execution_timeout=NOTIFY_TIMEOUT, trigger_rule=AFTER_WINDOW)
    def notify(params=None) -> str:
        from fleethealth.notify.inventory import load_inventory
        from fleethealth.notify import notify as send

        channels = load_inventory(params["inventory"]).notifications
        summary = send(Lakehouse.at(params["lakehouse"]), channels).summary() if channels else "notifications: none configured"
        print(summary)
        return summary

    @task(trigger_rule=AFTER_WINDOW)
    def report(params=None) -> str:
        from fleethealth.lake.hours import parse_window
        from fleethealth.report import html

        hours = parse_window(params["from"], params["to"], names=("from", "to"))
        index = html.write_report(Lakehouse.at(params["lakehouse"]), hours[0], hours[-1] + timedelta(hours=1))
        print(f"HTML report: {index}")
        return str(index)

    after = [notify(), report()]
    hours >> pulled >> layers >> after
    hours >> [layers, *after]
