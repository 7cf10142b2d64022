"""Text that is safe to show: what a log line or a file name holds must not forge a terminal's lines."""
from __future__ import annotations

import re

# control characters (C0 but tab, DEL, C1): a file name or a log line holding a newline or an ESC
# must not forge lines or colours in what a terminal shows
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def printable(value):
    """`value` with its control characters escaped (\\n, \\x1b, ...), when it is text."""
    if not isinstance(value, str):
        return value
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode(), value)
