"""The webhook channel type (`webhook: <URL>`): each message POSTed as JSON, with its idempotency key
in the body (`idempotency_key`) and the `Idempotency-Key` header. Delivered only on a 2xx answer: a
redirect (3xx, not followed: the message would arrive nowhere) or an error status is a failure.

Also the HTTP post the Alertmanager and a deployment's channel types may use (`post_json`).
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime

from fleethealth.fleet.channels import Channel
from fleethealth.notify.channels import Url
from fleethealth.runtime import config
from fleethealth.runtime.validation import Schema, required

TYPE = "webhook"
KEY = "webhook"


class Settings(Schema):
    webhook: Url = required()


class Refused(Exception):
    """The receiver answered, but not 2xx."""


def post_json(url: str, payload, headers: dict | None = None, timeout: float | None = None) -> None:
    """POST `payload` as JSON to `url`; raises unless the answer is 2xx (Refused), or the requests
    error. `timeout` bounds the connect and each read (the caller bounds the whole: notify.run)."""
    import requests

    timeout = timeout or config.notify_send_timeout_s()
    answer = requests.post(url, data=json.dumps(payload), timeout=(timeout, timeout), allow_redirects=False,
                           headers={"Content-Type": "application/json", **(headers or {})})
    if not 200 <= answer.status_code < 300:
        raise Refused(f"{answer.status_code} {answer.reason or ''}".strip()
                      + (" (a redirect is not followed: fix the URL)" if 300 <= answer.status_code < 400 else ""))


def deliver(channel: Channel, messages: Sequence[dict], now: datetime) -> Iterable[BaseException | None]:
    for msg in messages:
        try:
            post_json(channel.target, msg, {"Idempotency-Key": msg["idempotency_key"]})
        except Exception as exc:  # noqa: BLE001 - the outcome: recorded by notify.run
            yield exc
        else:
            yield None
