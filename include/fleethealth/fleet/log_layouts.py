"""The first line of a log4j record in any layout silver reads without a `log_pattern:` (no Spark here:
`fleethealth check` tests files with it; silver.parsers.log4j builds its layouts' regexes on it)."""
from __future__ import annotations

import re

TS = r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}"
# `[%d] `, `%d{ISO8601} `, or `%d{yyyy-MM-dd HH:mm:ss} ` and a level (io.fleethealth.engine.Log4jLayouts.isStart;
# pull.linecut's _RECORD finds them)
START = rf"^(?:\[{TS},\d{{3}}\] |{TS},\d{{3}} |{TS} [A-Z])"
# log4j 2's JSON layout: a record per line (io.fleethealth.engine.JsonLayout.isStart)
JSON_START = '{"'
_START = re.compile(START)


def starts_record(line: str) -> bool:
    """Whether `line` starts a record in a built-in layout or the JSON layout."""
    return line.startswith(JSON_START) or _START.match(line) is not None
