"""The Slack channel type (`slack_conn_id: <Airflow connection of an incoming webhook>`): one chat
message per message through the Slack provider's SlackWebhookHook (which raises unless Slack answers
200), the idempotency key on its last line."""
from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from datetime import datetime

from fleethealth.fleet.channels import Channel
from fleethealth.notify.channels import ConnId
from fleethealth.notify import messages as texts
from fleethealth.notify.smtp import connection_secrets, failed
from fleethealth.runtime import config
from fleethealth.runtime.validation import Schema, required

TYPE = "slack"
KEY = "slack_conn_id"


class Settings(Schema):
    slack_conn_id: ConnId = required()


def prepare() -> None:
    """Import the provider once, before channels deliver in threads (see smtp.prepare)."""
    os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
    from airflow.providers.slack.hooks.slack_webhook import SlackWebhookHook  # noqa: F401
    from airflow.sdk.bases.hook import BaseHook  # noqa: F401


def deliver(channel: Channel, messages: Sequence[dict], now: datetime) -> Iterable[BaseException | None]:
    prepare()
    from airflow.providers.slack.hooks.slack_webhook import SlackWebhookHook

    secrets = connection_secrets(channel.target)
    # no retry handlers: slack_sdk's log the webhook URL (its token) at each retry; the next run retries
    hook = SlackWebhookHook(slack_webhook_conn_id=channel.target, timeout=max(1, int(config.notify_send_timeout_s())),
                            retry_handlers=[])
    try:
        secrets.append(hook._get_conn_params()["url"])     # the webhook URL: its path is the token
    except Exception:  # noqa: BLE001 - the send below fails with the reason
        pass
    for msg in messages:
        try:
            hook.send(text=texts.slack_text(msg))
        except Exception as exc:  # noqa: BLE001 - the outcome: recorded by notify.run
            yield failed(exc, secrets)
        else:
            yield None
