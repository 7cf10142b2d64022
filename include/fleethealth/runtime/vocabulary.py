"""Words every floor shares: the incident severities."""
from __future__ import annotations

# incident severities, most severe first (each kind's `<kind>.severity` threshold is one of them)
SEVERITY_RANK = {"critical": 4, "major": 3, "minor": 2, "info": 1}
