"""Text that is safe to show: what a log line or a file name holds must not forge a terminal's lines."""
from __future__ import annotations

import re

# control characters (C0 but tab, DEL, C1), line separators and bidirectional controls: a file name or a
# log line holding a newline, an ESC or a U+202E must not forge lines, colours or reordered text in
# what a terminal shows
CONTROL_CHARACTERS = r"\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[{CONTROL_CHARACTERS}]")
# the same class in RE2's syntax (Arrow's compute functions: a column is searched without Python)
CONTROL_RE2 = "[" + re.sub(r"\\u([0-9a-f]{4})", r"\\x{\1}", CONTROL_CHARACTERS) + "]"


def printable(value):
    """`value` with its control and bidirectional characters escaped (\\n, \\x1b, \\u202e, ...), when
    it is text."""
    if not isinstance(value, str):
        return value
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode(), value)
