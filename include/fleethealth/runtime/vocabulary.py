"""Words every layer shares: the incident severities (the inventory's channel filters, gold's
thresholds and incidents, the reports and notifications all rank by them)."""
from __future__ import annotations

# incident severities, most severe first (each kind's `<kind>.severity` is one of them)
SEVERITY_RANK = {"critical": 4, "major": 3, "minor": 2, "info": 1}
