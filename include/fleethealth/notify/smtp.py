"""The e-mail channel type (`smtp_conn_id: <Airflow connection>`, `to: [addresses]`): one mail per
message through the SMTP provider's SmtpHook (which raises when the server refuses), its Message-ID
the message's idempotency key.

Connections resolve as any Airflow connection does: inside a task from Airflow's secrets backends and
metadata database, and outside one (`fleethealth run`) from an AIRFLOW_CONN_<ID> environment variable.
"""
from __future__ import annotations

import os
import socket
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Annotated

from pydantic import Field

from fleethealth.fleet.channels import Channel
from fleethealth.notify.channels import ConnId, redact
from fleethealth.notify import messages as texts
from fleethealth.runtime.validation import Schema, holds, required, says

TYPE = "smtp"
KEY = "smtp_conn_id"
TO = "expected a non-empty list of e-mail addresses (required with smtp_conn_id)"


class Settings(Schema):
    smtp_conn_id: ConnId = required()
    to: Annotated[tuple[Annotated[str, holds(lambda a: "@" in a, "")], ...], Field(min_length=1),
                  says(TO)] = required()


class Failed(Exception):
    """A delivery's error, its text redacted (the original type first)."""


def connection_secrets(conn_id: str) -> list[str]:
    """What of an Airflow connection must not be printed: its password, and its URI."""
    try:
        from airflow.sdk.bases.hook import BaseHook

        conn = BaseHook.get_connection(conn_id)
        return [s for s in (conn.password, conn.get_uri()) if s]
    except Exception:  # noqa: BLE001 - an unknown connection fails the delivery itself, with its own error
        return []


def failed(exc: BaseException, secrets: list[str]) -> Failed:
    return Failed(redact(f"{type(exc).__name__}: {exc}", secrets))


def prepare() -> None:
    """Import the provider once, before channels deliver in threads (Airflow's first import
    configures its logging: two threads at once deadlock on the import or fail its configuration)."""
    os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
    from airflow.providers.smtp.hooks.smtp import SmtpHook  # noqa: F401
    from airflow.sdk.bases.hook import BaseHook  # noqa: F401


def deliver(channel: Channel, messages: Sequence[dict], now: datetime) -> Iterable[BaseException | None]:
    prepare()
    from airflow.providers.smtp.hooks.smtp import SmtpHook

    secrets = connection_secrets(channel.target)
    for msg in messages:
        subject, body = texts.email(msg)
        try:
            with SmtpHook(smtp_conn_id=channel.target) as hook:
                hook.send_email_smtp(to=list(channel.to), subject=subject, html_content=body,
                                     from_email=hook.from_email or f"fleethealth@{socket.getfqdn()}",
                                     custom_headers={"Message-ID": texts.message_id(msg)})
        except Exception as exc:  # noqa: BLE001 - the outcome: recorded by notify.run
            yield failed(exc, secrets)
        else:
            yield None
