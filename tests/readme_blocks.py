"""The fenced blocks of README and docs/*.md and what each is: the line before a block is a comment
`<!-- readme-test: KIND [NAME] -->` (KIND one of KINDS), so no block escapes the tests that keep the
docs true (tests/test_readme.py, tests/test_docs_sql.py for every `sql` block, and the tests that need
what a block needs: test_scenarios.py for the demo's output, test_readers.py, test_compose.py,
test_scheduler.py). A block is found by its kind and name wherever it is, so text moves between the
files without its test."""
from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
README = PROJECT / "README.md"
# every file whose blocks are marked and checked
DOCS = (README, *sorted((PROJECT / "docs").glob("*.md")))

KINDS = {
    "run": "a command block a test runs as written (exit 0; its NAME says which test checks more)",
    "output": "what a command prints (NAME: the command); a test compares it, `…` standing for any text",
    "inventory": "an inventory (or part of one) that must load",
    "spark-conf": "a FLEETHEALTH_SPARK_CONF file that must load (runtime.spark_conf.deployment_conf)",
    "thresholds": "a thresholds file (--thresholds) that must load beside README's inventory",
    "synopsis": "the command line's synopsis, checked against the parser",
    "figure": "a drawing, not text to run",
    "sql": "a query tests/test_docs_sql.py runs on the default engine (DuckDB) against a small lakehouse",
    "alertmanager": "a part of alertmanager.yml a test gives a real Alertmanager (NAME: which rule)",
    "not-run": "a command no test runs as written (NAME says why and what tests it instead)",
}
MARKER = re.compile(r"^\s*<!-- readme-test: (\S+)(?: (.*?))? -->\s*$")
FENCE = re.compile(r"^(\s*)```(\w*)\s*$")


@dataclass(frozen=True)
class Block:
    kind: str
    name: str
    lang: str
    text: str
    line: int       # the line of the opening fence
    path: str = ""  # the file, relative to the project

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


def blocks(path: Path | None = None) -> list[Block]:
    """Every fenced block of README and docs/*.md (or of `path`) with its marker (kind "" when the line
    before has none)."""
    if path is None:
        return [b for doc in DOCS for b in blocks(doc)]
    lines = path.read_text().splitlines()
    out, i = [], 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        indent, lang = fence.groups()
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"
                   and lines[j].startswith(indent))
        before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        marker = MARKER.match(before)
        kind, name = (marker.group(1), marker.group(2) or "") if marker else ("", "")
        text = textwrap.dedent("\n".join(lines[i + 1:end])) + "\n"
        where = str(path.relative_to(PROJECT)) if path.is_relative_to(PROJECT) else path.name
        out.append(Block(kind, name, lang, text, i + 1, where))
        i = end + 1
    return out


def block(kind: str, name: str) -> Block:
    """The one block of this kind and name, in whichever file it is."""
    [found] = [b for b in blocks() if (b.kind, b.name) == (kind, name)]
    return found


def matches_shown(shown: str, printed: str) -> list[str]:
    """The lines of `shown` (README, `…` for any text) that `printed` does not match, line by line;
    [] when it matches (the same number of lines)."""
    shown_lines, printed_lines = shown.rstrip("\n").splitlines(), printed.rstrip("\n").splitlines()
    bad = [s for s, p in zip(shown_lines, printed_lines)
           if not re.fullmatch(".*?".join(re.escape(part) for part in s.split("…")), p)]
    if len(shown_lines) != len(printed_lines):
        bad.append(f"README shows {len(shown_lines)} lines, the command printed {len(printed_lines)}")
    return bad
