"""A notification channel as the inventory declares it (validated in fleethealth.fleet.inventory,
the one place that reads inventory YAML): where to send, and which incidents it wants."""
from __future__ import annotations

from dataclasses import dataclass

from fleethealth.gold.thresholds import SEVERITY_RANK

# how a channel is reached: the inventory key naming its target -> the channel's type
TARGETS = {"webhook": "webhook", "smtp_conn_id": "smtp", "slack_conn_id": "slack", "alertmanager": "alertmanager"}
KEYS = ("name", *TARGETS, "to", "ends_after_seconds", "clusters", "kinds", "min_severity")
# Alertmanager forgets an alert not re-posted by its endsAt: 4 hourly runs may be missed first
DEFAULT_ENDS_AFTER_S = 4 * 3600


@dataclass(frozen=True)
class Channel:
    name: str                   # the channel's key in gold.notifications
    type: str                   # webhook | smtp | slack | alertmanager
    target: str                 # the URL (webhook, alertmanager) or the Airflow connection id
    to: tuple[str, ...] = ()    # smtp: the recipients
    ends_after_seconds: int = DEFAULT_ENDS_AFTER_S
    clusters: tuple[str, ...] = ()      # empty: every cluster
    kinds: tuple[str, ...] = ()         # empty: every kind
    min_severity: str | None = None

    def wants(self, cluster: str, kind: str, severity: str) -> bool:
        """Whether an incident (in its severity after the transition) passes the channel's filters."""
        return ((not self.clusters or cluster in self.clusters)
                and (not self.kinds or kind in self.kinds)
                and (self.min_severity is None
                     or SEVERITY_RANK.get(severity, 0) >= SEVERITY_RANK[self.min_severity]))
