"""What the hourly and the backfill DAG share: the deployment's fixed paths (their `inventory` and
`lakehouse` params), their Spark step (one spark-submit of the layers) and the bodies of their
tasks (the inventory's hosts, a host's pull of the hours, notify, the HTML report). A DAG file is
then its docstring, its own params and its task graph.

Imported while a DAG file is parsed: nothing here reads a file or imports Spark or Airflow at import
(Airflow's classes are imported by the functions that build a param or an operator, themselves
called while the DAG is parsed; a task body imports what it runs).
"""
from __future__ import annotations

import functools
from datetime import timedelta

from fleethealth.lake import tables as lake
from fleethealth.lake.catalog import Lakehouse
from fleethealth.runtime import config
from fleethealth.runtime.spark_conf import SecretsInFile, spark_conf

# every hour of a run, and each of its retries: the pull of one host
PULL_RETRIES = config.pull_retries()
PULL_RETRY_DELAY = timedelta(seconds=config.pull_retry_delay_s())
PULL_MAX_RETRY_DELAY = timedelta(minutes=10)
# notify returns within FLEETHEALTH_NOTIFY_TIMEOUT_S (the lock's wait and every channel, sent concurrently,
# inside it); the task would be stopped a minute after that
NOTIFY_TIMEOUT = timedelta(seconds=config.notify_timeout_s() + 60)
LAYERS_TASK = "bronze_silver_gold"
HOST_MAP_INDEX = "{{ task.op_kwargs['host'] }}"


def catalog() -> Lakehouse:
    """The deployment's lakehouse (FLEETHEALTH_LAKEHOUSE)."""
    return Lakehouse.from_settings()


def fixed_params(lakehouse: Lakehouse) -> dict:
    """The params `inventory` and `lakehouse`: the deployment's (FLEETHEALTH_INVENTORY / _LAKEHOUSE),
    never a run's choice: whoever may trigger a run must not choose which files are read or where
    writes and deletes happen."""
    from airflow.sdk import Param

    inventory, root = config.inventory_path(), str(lakehouse)
    return {"inventory": Param(inventory, type="string", const=inventory,
                               description="fleet inventory YAML (FLEETHEALTH_INVENTORY; fixed per deployment)"),
            "lakehouse": Param(root, type="string", const=root,
                               description="the lakehouse folder (FLEETHEALTH_LAKEHOUSE; fixed per deployment)")}


def layers_step(lakehouse: Lakehouse, application: str, name: str, window_args: list[str], trigger_rule: str):
    """The Spark step: spark/<application> on spark_default (bronze, silver, gold, each gated, in one
    JVM) with the window's arguments, the run's lakehouse and inventory; its outlets gold's tables.
    Settings that may hold secrets reach spark-submit in a file only its owner reads (SecretsInFile)."""
    from airflow.sdk import Asset

    return _spark_submit()(
        task_id=LAYERS_TASK,
        application=str(config.spark_dir() / application),
        conn_id=config.SPARK_CONN_ID,
        name=name,
        conf=spark_conf(lakehouse.warehouse, tables=lakehouse.tables, short_lived=True, deployment=False),
        application_args=[*window_args, "--lakehouse", "{{ params.lakehouse }}",
                          "--inventory", "{{ params.inventory }}"],
        trigger_rule=trigger_rule,
        outlets=[Asset(f"fleethealth.{q}") for q in lake.layer_tables("gold")],
    )


@functools.cache
def _spark_submit() -> type:
    from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

    class SparkSubmit(SecretsInFile, SparkSubmitOperator):
        """Settings that may hold secrets reach spark-submit in a file only its owner reads."""

    return SparkSubmit


# ----------------------------------------------------------------------------------- the tasks' bodies
def list_hosts(params: dict) -> list[str]:
    """The inventory's hosts (a bad inventory, a bad channel included, fails here, and so does a bad
    $FLEETHEALTH_THRESHOLDS file: before any pull, not in gold after every host was pulled)."""
    from fleethealth.gold import thresholds
    from fleethealth.notify.inventory import load_inventory

    inventory = load_inventory(params["inventory"])
    thresholds.load(clusters=[c.name for c in inventory.clusters])
    return [h.host for h in inventory.hosts]


def pull_hour(host: str, hour: str, params: dict) -> int:
    """One hour from one host: the files landed (a failure raises its PullError)."""
    from fleethealth.lake.hours import parse_hour
    from fleethealth.pull.hour import pull_host

    h, timezone = _host(params, host)
    return len(pull_host(h, timezone, parse_hour(hour), Lakehouse.at(params["lakehouse"])))


def pull_hours(host: str, hours: list[str], params: dict) -> int:
    """Every hour of a window from one host: the files landed. An hour that fails does not stop the
    next ones, and the task fails at the end naming them (a retry pulls what is still new)."""
    from fleethealth.lake.hours import parse_hour
    from fleethealth.pull.hour import pull_host
    from fleethealth.pull.landing import PullError

    h, timezone = _host(params, host)
    lakehouse = Lakehouse.at(params["lakehouse"])
    landed, errors = 0, []
    for hour in hours:
        try:
            landed += len(pull_host(h, timezone, parse_hour(hour), lakehouse))
        except PullError as exc:
            errors.append(f"{hour}: {exc}")
    if errors:
        raise PullError(f"{len(errors)} of {len(hours)} hours failed:\n" + "\n".join(errors))
    return landed


def _host(params: dict, host: str):
    """The inventory's host of that name and its cluster's timezone."""
    from fleethealth.notify.inventory import load_inventory

    inventory = load_inventory(params["inventory"])
    h = inventory.host(host)
    return h, inventory.cluster(h.cluster).timezone


def hour_failed(params: dict, hour: str) -> str:
    """Tell every channel that `hour` failed (the layers' task failed, after its retries, or had nothing to
    run): why, as far as the lakehouse shows it (a quality gate's staged tables); its summary, printed."""
    from pathlib import Path

    from fleethealth.lake.hours import parse_hour
    from fleethealth.notify.inventory import load_inventory
    from fleethealth.notify.run import tell_failures

    inventory, lakehouse, h = load_inventory(params["inventory"]), Lakehouse.at(params["lakehouse"]), parse_hour(hour)
    staged = [layer for layer in ("bronze", "silver", "gold") if Path(lakehouse.staging(h, layer)).exists()]
    reason = (f"the quality gate validate_{staged[-1]} rejected it (its tables staged in {lakehouse.staging(h, staged[-1])}; "
              f"the {LAYERS_TASK} task's log names the expectation)" if staged
              else f"the {LAYERS_TASK} task failed or did not run (every pull failed): its log says why")
    errors = tell_failures(inventory.notifications, {h: reason})
    summary = (f"hour {h.isoformat()} failed: {reason}; told {len(inventory.notifications)} channel(s)"
               + "".join(f"\n  {e}" for e in errors))
    print(summary)
    return summary


def notify(params: dict) -> str:
    """fleethealth.notify of the inventory's channels; its summary, printed."""
    from fleethealth.notify import notify as send
    from fleethealth.notify.inventory import host_names, load_inventory

    inventory = load_inventory(params["inventory"])
    channels = inventory.notifications
    summary = (send(Lakehouse.at(params["lakehouse"]), channels, hosts=host_names(inventory),
                    maintenance=inventory.maintenance).summary() if channels
               else "notifications: none configured")
    print(summary)
    return summary


def report(params: dict, start, end) -> str:
    """The offline HTML report of [start, end) into the lakehouse's report folder; its index, printed."""
    from fleethealth.report import html

    index = html.write_report(Lakehouse.at(params["lakehouse"]), start, end)
    print(f"HTML report: {index}")
    return str(index)
