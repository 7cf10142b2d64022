"""A notification channel as the inventory declares it (`notifications:`): where to send, and which
incidents it wants, and the names the inventory gives clusters, hosts and channels. The channel
types that validate an entry and deliver (webhook, smtp, slack, alertmanager, a deployment's) are
fleethealth.notify's (notify.channels.ChannelType; notify.inventory validates `notifications:`)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any

from fleethealth.runtime.validation import holds, says
from fleethealth.runtime.vocabulary import SEVERITY_RANK

# Alertmanager forgets an alert not re-posted by its endsAt: 4 hourly runs may be missed first
DEFAULT_ENDS_AFTER_S = 4 * 3600
MAX_NAME = 100            # a cluster, host or channel name (they go into lock and landing file names)
NAME = re.compile(r"[A-Za-z0-9][\w.-]*")


def is_name(value: Any) -> bool:
    """A cluster, host or channel name: letters, digits, . _ -, at most MAX_NAME characters."""
    return isinstance(value, str) and bool(NAME.fullmatch(value)) and len(value) <= MAX_NAME


def name_of(what: str) -> Any:
    """The type of a cluster's or channel's name (required: a missing one is `got None`)."""
    return Annotated[str, holds(is_name, ""),
                     says(f"expected a {what} name (letters, digits, . _ -; at most {MAX_NAME}), got {{got}}")]


@dataclass(frozen=True)
class Channel:
    name: str                   # the channel's key in gold.notifications
    type: str                   # its ChannelType.TYPE: webhook | smtp | slack | alertmanager | ...
    target: str                 # the value of its type's KEY: a URL (webhook, alertmanager) or an Airflow connection id
    to: tuple[str, ...] = ()    # smtp: the recipients
    ends_after_seconds: int = DEFAULT_ENDS_AFTER_S
    clusters: tuple[str, ...] = ()      # empty: every cluster
    kinds: tuple[str, ...] = ()         # empty: every kind
    min_severity: str | None = None
    options: tuple[tuple[str, Any], ...] = ()   # a channel type's other keys (none for the built-in types)
    exclude_clusters: tuple[str, ...] = ()      # never these clusters
    exclude_kinds: tuple[str, ...] = ()         # never these kinds
    roots_only: bool = False                    # never an incident another explains (gold.incidents.caused_by)

    def option(self, name: str, default: Any = None) -> Any:
        return dict(self.options).get(name, default)

    def urls(self) -> list[str]:
        """The URLs among its settings: what `redact` must keep out of an error about it."""
        values = [self.target, *(v for _, v in self.options)]
        return [v for v in values if isinstance(v, str) and "://" in v]

    def wants(self, cluster: str, kind: str, severity: str) -> bool:
        """Whether an incident (in its severity after the transition) passes the channel's filters."""
        return ((not self.clusters or cluster in self.clusters) and cluster not in self.exclude_clusters
                and (not self.kinds or kind in self.kinds) and kind not in self.exclude_kinds
                and (self.min_severity is None
                     or SEVERITY_RANK.get(severity, 0) >= SEVERITY_RANK[self.min_severity]))
