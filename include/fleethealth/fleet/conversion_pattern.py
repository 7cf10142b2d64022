"""A log4j ConversionPattern (the inventory's `log_pattern:`) compiled once into what reads its records.

`compile_pattern("%d{yyyy-MM-dd'T'HH:mm:ss.SSS} [%t] %-5p %c:%L - %m%n")` gives a `Compiled`:
- `regex`: a Java regex over a record's first line, named groups ts, level, thread, logger, message
  (the engine's `pattern_log`, io.fleethealth.engine.RegexLayout, reads it in silver);
- `start`: a Java regex a record's first line opens with (the pattern up to its timestamp and the
  literal after it; `pattern_start`): a line opening so is a record of its own, never a continuation;
- `time_format`: the timestamp's java.time.format.DateTimeFormatter pattern.
`python_regex` is the same regex for Python's re (`check` shows the first line it reads with it).
It lives in fleet, under silver: the inventory compiles a `log_pattern:` to tell its mistakes.

A conversion the compiler does not know, a pattern without `%d` and `%m`, a date without year, month
and day, or with a time zone of its own, is a `PatternError` saying which.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


class PatternError(ValueError):
    """A ConversionPattern that cannot be compiled; str() says why."""


@dataclass(frozen=True)
class Compiled:
    pattern: str
    regex: str          # Java: (?<name>...) groups
    start: str
    time_format: str

    @property
    def python_regex(self) -> str:
        return _python(self.regex)


# log4j 1 and 2's named date formats (log4j 1's ISO8601 has a space where log4j 2's has a T: both read)
NAMED_DATES = {
    "ISO8601": "yyyy-MM-dd[ T]HH:mm:ss,SSS",
    "ISO8601_BASIC": "yyyyMMdd'T'HHmmss,SSS",
    "ISO8601_OFFSET_DATE_TIME_HHMM": "yyyy-MM-dd'T'HH:mm:ss,SSSXX",
    "ISO8601_OFFSET_DATE_TIME_HHCMM": "yyyy-MM-dd'T'HH:mm:ss,SSSXXX",
    "DEFAULT": "yyyy-MM-dd HH:mm:ss,SSS",
    "DATE": "dd MMM yyyy HH:mm:ss,SSS",
    "ABSOLUTE": "HH:mm:ss,SSS",
    "COMPACT": "yyyyMMddHHmmssSSS",
}
DEFAULT_DATE = "yyyy-MM-dd HH:mm:ss,SSS"   # %d without a format, in log4j 1 and 2

# conversion name (log4j 1 and 2 spellings) -> the field it is, or a regex of what it writes
FIELDS = {"d": "ts", "date": "ts", "p": "level", "level": "level", "m": "message", "msg": "message",
          "message": "message", "c": "logger", "logger": "logger", "t": "thread", "thread": "thread",
          "C": "class", "class": "class"}
OTHERS = {"L": r"(?:\d+|\?)", "line": r"(?:\d+|\?)", "F": r"\S+?", "file": r"\S+?", "M": r"\S+?",
          "method": r"\S+?", "X": r".*?", "mdc": r".*?", "MDC": r".*?", "x": r".*?", "NDC": r".*?",
          "r": r"\d+", "relative": r"\d+", "l": r"\S+?", "location": r"\S+?"}
# a logger or class name: Java identifiers and dots (a thread name may hold anything, `:` and `[` too)
FIELD_REGEX = {"level": r"[A-Z]+", "thread": r".*?", "logger": r"[\w$.-]+?", "class": r"[\w$.-]+?", "message": r".*"}

_CONVERSION = re.compile(r"%(-?)(\d*)(?:\.(\d+))?([A-Za-z]+)((?:\{[^}]*\})*)")


def compile_pattern(pattern: str) -> Compiled:
    if not isinstance(pattern, str) or not pattern.strip():
        raise PatternError("expected a log4j ConversionPattern such as %d{ISO8601} %p %m (%c)%n")
    parts: list[str] = []
    named: set[str] = set()
    time_format = None
    start = None
    has_logger = "%c" in pattern or "%logger" in pattern
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch != "%":
            j = pattern.find("%", i)
            j = len(pattern) if j < 0 else j
            parts.append(re.escape(pattern[i:j]))
            if time_format is not None and start is None:
                start = "".join(parts)
            i = j
            continue
        if pattern.startswith("%%", i):
            parts.append("%")
            i += 2
            continue
        if pattern.startswith("%n", i):
            i += 2
            continue
        m = _CONVERSION.match(pattern, i)
        if not m:
            raise PatternError(f"unknown conversion at {pattern[i:i + 12]!r} (a % must start one such as %d, "
                               "%p, %m, %c; %% is a literal %)")
        left, width, _, name, options = m.groups()
        i = m.end()
        field = FIELDS.get(name)
        if field is None and name not in OTHERS:
            raise PatternError(f"unknown conversion %{name} (known: %d %p %m %c %C %t %L %F %M %X %x %r %n %%)")
        if field == "class" and not has_logger:
            field = "logger"          # a layout without %c names records by class (ZooKeeper's %C{1})
        if field == "ts":
            if time_format is not None:
                raise PatternError("more than one %d")
            regex, time_format = _date(options)
        elif field is not None:
            regex = FIELD_REGEX[field]
        else:
            regex = OTHERS[name]
        if field in ("ts", "level", "thread", "logger", "message") and field not in named:
            named.add(field)
            regex = f"(?<{field}>{regex})"
        else:
            regex = f"(?:{regex})"
        if width and field != "ts":      # padded to a width: spaces after (%-5p) or before (%5p)
            regex = f"{regex} *" if left else f" *{regex}"
        parts.append(regex)
        if field == "ts" and i >= len(pattern):
            start = "".join(parts)
    if time_format is None or "message" not in named:
        raise PatternError("a pattern needs %d (the time) and %m (the message): records cannot be read without both")
    return Compiled(pattern, "^" + "".join(parts) + "$", "^" + (start or "".join(parts)), time_format)


def _date(options: str) -> tuple[str, str]:
    """(regex, DateTimeFormatter pattern) of %d's options: `{format}` or `{NAME}`, maybe `{zone}` after."""
    braces = re.findall(r"\{([^}]*)\}", options)
    if len(braces) > 1:
        raise PatternError(f"%d{{{braces[0]}}}{{{braces[1]}}} writes times in a zone of its own: write %d without "
                           "it and set the cluster's timezone: to that zone")
    fmt = braces[0] if braces else DEFAULT_DATE
    fmt = NAMED_DATES.get(fmt, fmt)
    regex, java, letters = _date_format(fmt)
    if not {"y", "M", "d"} <= letters:
        raise PatternError(f"%d{{{braces[0] if braces else ''}}} writes no date (year, month and day): the day of a "
                           "record cannot be known; use a pattern with the date, e.g. %d{ISO8601}")
    return regex, java


_LETTER_REGEX = {"y": lambda n: r"\d{4}" if n != 2 else r"\d{2}", "u": lambda n: r"\d{4}",
                 "M": lambda n: r"\d{1,2}" if n == 1 else r"\d{2}" if n == 2 else r"[A-Za-z]{3}" if n == 3 else r"[A-Za-z]+",
                 "E": lambda n: r"[A-Za-z]{3}" if n <= 3 else r"[A-Za-z]+",
                 "a": lambda n: r"[AaPp][Mm]", "S": lambda n: rf"\d{{{n}}}",
                 "Z": lambda n: r"[+-]\d{4}", "X": lambda n: r"(?:Z|[+-]\d{2})" if n == 1 else
                 r"(?:Z|[+-]\d{4})" if n == 2 else r"(?:Z|[+-]\d{2}:\d{2})"}
_NUMBER = "dHhkKmsD"


def _date_format(fmt: str) -> tuple[str, str, set[str]]:
    """A SimpleDateFormat pattern -> (regex, DateTimeFormatter pattern, its letters). `[ T]` (ours, for
    ISO8601) is either character."""
    regex, java, letters = [], [], set()
    i = 0
    while i < len(fmt):
        ch = fmt[i]
        if fmt.startswith("[ T]", i):
            regex.append("[ T]")
            java.append("[ ]['T']")
            i += 4
        elif ch == "'":
            j = fmt.find("'", i + 1)
            if j < 0:
                raise PatternError(f"%d{{{fmt}}}: an unclosed quote")
            text = fmt[i + 1:j] or "'"
            regex.append(re.escape(text))
            java.append(fmt[i:j + 1])
            i = j + 1
        elif ch.isalpha():
            n = 1
            while i + n < len(fmt) and fmt[i + n] == ch:
                n += 1
            if ch in _LETTER_REGEX:
                regex.append(_LETTER_REGEX[ch](n))
            elif ch in _NUMBER:
                regex.append(rf"\d{{{n}}}" if n > 1 else r"\d{1,2}" if ch != "D" else r"\d{1,3}")
            else:
                raise PatternError(f"%d{{{fmt}}}: unknown date letter {ch!r}")
            letters.add({"u": "y"}.get(ch, ch))
            java.append(("u" if ch == "y" else ch) * n)
            i += n
        else:
            regex.append(re.escape(ch))
            java.append(ch if ch in " -:.,/" else f"'{ch}'")
            i += 1
    return "".join(regex), "".join(java), letters


def _python(java_regex: str) -> str:
    return java_regex.replace("(?<", "(?P<").replace("(?P<=", "(?<=").replace("(?P<!", "(?<!")


def first_parsed(pattern: Compiled, lines) -> dict | None:
    """The fields of the first of `lines` the pattern reads (ts as written), or None."""
    header = re.compile(pattern.python_regex)
    for line in lines:
        m = header.match(line.rstrip("\r\n"))
        if m:
            return {k: m.groupdict().get(k) for k in ("ts", "level", "thread", "logger", "message")}
    return None
