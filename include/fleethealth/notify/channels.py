"""Delivery of one message to one channel through the Airflow providers' hooks, which raise when the
receiver does not accept it (Airflow's notifiers log and swallow that, and the outbox must know).

Connections (smtp_conn_id, slack_conn_id) resolve as any Airflow connection does: inside a task from
Airflow's secrets backends and metadata database, and outside one (`fleethealth run`) from an
AIRFLOW_CONN_<ID> environment variable (URI or JSON) first.
"""
from __future__ import annotations

import os
import socket

from fleethealth.notify import messages
from fleethealth.fleet.channels import Channel

TIMEOUT_S = 10.0


def send(channel: Channel, msg: dict) -> None:
    """Deliver `msg` (messages.message) to a webhook, e-mail or Slack channel; raises on failure."""
    os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
    if channel.type == "webhook":
        _webhook(channel.target, msg)
    elif channel.type == "smtp":
        _email(channel, msg)
    elif channel.type == "slack":
        _slack(channel.target, msg)
    else:
        raise ValueError(f"channel {channel.name}: {channel.type} channels are not sent one message at a time")


def _webhook(url: str, msg: dict) -> None:
    """POST the message as JSON to `url`: HttpHook, its connection built from the URL the inventory
    names (no Airflow connection to define); a status outside 2xx/3xx raises AirflowException."""
    from airflow.providers.http.hooks.http import HttpHook
    from airflow.sdk import Connection

    class UrlHook(HttpHook):
        def get_connection(self, conn_id):   # the URL, not a connection id, says where to post
            return Connection(conn_id=conn_id, conn_type="http", host=url)

    UrlHook(method="POST", http_conn_id="fleethealth_webhook").run(
        json=msg, extra_options={"timeout": TIMEOUT_S, "allow_redirects": False})


def _email(channel: Channel, msg: dict) -> None:
    from airflow.providers.smtp.hooks.smtp import SmtpHook

    subject, body = messages.email(msg)
    with SmtpHook(smtp_conn_id=channel.target) as hook:
        hook.send_email_smtp(to=list(channel.to), subject=subject, html_content=body,
                             from_email=hook.from_email or f"fleethealth@{socket.getfqdn()}")


def _slack(conn_id: str, msg: dict) -> None:
    from airflow.providers.slack.hooks.slack_webhook import SlackWebhookHook

    SlackWebhookHook(slack_webhook_conn_id=conn_id, timeout=int(TIMEOUT_S)).send(text=messages.slack_text(msg))
