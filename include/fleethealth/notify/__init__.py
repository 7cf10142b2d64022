"""Notify: incident transitions → gold.notifications (the outbox) → webhook, e-mail, Slack, Alertmanager.

In: gold.incident_history and gold.incidents (read with delta-rs, no Spark) and the inventory's
`notifications:` channels. Out: one message per transition and channel while it is news, at least
once with an idempotency key, and a `retracted` one for an announced incident that is gone
(`run.notify`). One module per channel type (webhook, smtp, slack, alertmanager: the
notify.channels.ChannelType seam; `notify.inventory` validates the inventory's `notifications:`).
Owns gold.notifications.
"""
from __future__ import annotations


def __getattr__(name: str):
    # notify() and its result, without importing delta-rs and the hooks with the package (a
    # module such as notify.messages stays light)
    if name in ("notify", "NotifyResult"):
        from fleethealth.notify import run

        return getattr(run, name)
    raise AttributeError(name)
