"""The repository stands alone: no file cites a specification or a folder outside it, and every
library path the docs name exists (files moved when the library became packages; docs must follow).

No Spark: plain file reads.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]
# where a reference outside the repository must never appear (tests/fixtures is data: skipped)
SCANNED = ("README.md", "SECURITY.md", "docs", "include", "dags", "spark", "bench", "tests", "scripts",
           "expectations")
SKIPPED = (PROJECT / "tests" / "fixtures",)
# (spelled in parts, so that this file does not hold them itself)
CITE, SHARED = "S" + "PEC", "../" + "shared"   # the specification's name, a folder beside the clone
OUTSIDE = (f"{CITE} §", f"{CITE} section", SHARED)
# the docs whose `include/fleethealth/...` paths must exist
DOCS = ("README.md", "SECURITY.md", "bench/README.md", *(f"docs/{p.name}" for p in sorted((PROJECT / "docs").glob("*.md"))))
LIBRARY_PATH = re.compile(r"(?<![\w/.-])(?:include/)?fleethealth/[\w./-]*[\w/]")


def scanned_files() -> list[Path]:
    files = []
    for name in SCANNED:
        path = PROJECT / name
        candidates = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        files += [p for p in candidates if not any(p.is_relative_to(s) for s in SKIPPED)
                  and "__pycache__" not in p.parts and ".pytest_cache" not in p.parts and p.suffix not in (".pyc", ".gz", ".jsa", ".jar")]
    return files


def outside_references(text: str) -> list[str]:
    return [marker for marker in OUTSIDE if marker in text]


def test_the_scan_sees_the_repository():
    names = {str(p.relative_to(PROJECT)) for p in scanned_files()}
    assert {"README.md", "docs/architecture.md", "tests/test_docs.py", "dags/fleet_health_hourly.py",
            "include/fleethealth/pipeline/window.py", "bench/README.md"} <= names
    assert not any(n.startswith("tests/fixtures/") for n in names)


def test_no_file_points_outside_the_repository():
    found = []
    for path in scanned_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if outside_references(line):
                found.append(f"{path.relative_to(PROJECT)}:{n}: {line.strip()[:100]}")
    assert found == [], "references outside the repository (point at docs/ instead):\n" + "\n".join(found)


def test_the_check_catches_a_citation_and_a_path():
    assert outside_references(f"thresholds ({CITE} §5)") == [f"{CITE} §"]
    assert outside_references(f"see `{SHARED}/{CITE}.md`") == [SHARED]
    assert outside_references("see docs/postmortems.md, post-mortem 3") == []


def library_paths(text: str) -> set[str]:
    """The include/fleethealth paths a text names (`fleethealth/x` counts as include/fleethealth/x)."""
    out = set()
    for match in LIBRARY_PATH.findall(text):
        path = match if match.startswith("include/") else f"include/{match}"
        if "<" not in path and "*" not in path:
            out.add(path.rstrip("."))
    return out


def test_the_path_finder_reads_both_spellings_and_skips_other_folders():
    text = ("`include/fleethealth/gold/thresholds.yaml`, `fleethealth/silver/tables.py` `_log_events`, "
            "`/etc/fleethealth/id_ed25519`, `include/fleethealth/silver/rules/`.")
    assert library_paths(text) == {"include/fleethealth/gold/thresholds.yaml", "include/fleethealth/silver/tables.py",
                                   "include/fleethealth/silver/rules/"}


@pytest.mark.parametrize("doc", DOCS)
def test_every_library_path_the_docs_name_exists(doc):
    missing = sorted(p for p in library_paths((PROJECT / doc).read_text(encoding="utf-8"))
                     if not (PROJECT / p).exists())
    assert missing == [], f"{doc} names files that do not exist (moved?): {missing}"


@pytest.mark.parametrize("doc", DOCS)
def test_every_test_file_the_docs_name_exists(doc):
    named = set(re.findall(r"(?<![\w/.-])tests/[\w/]+\.py", (PROJECT / doc).read_text(encoding="utf-8")))
    assert sorted(p for p in named if not (PROJECT / p).exists()) == [], f"{doc} names test files that do not exist"


def test_the_docs_link_each_other():
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    docs = sorted(f"docs/{p.name}" for p in (PROJECT / "docs").glob("*.md"))
    assert len(docs) >= 15, docs
    for doc in docs:
        assert f"]({doc})" in readme, f"README.md does not link {doc}"
        assert (PROJECT / doc).is_file()
    for n in range(1, 6):
        assert re.search(rf"^## {n}\. ", (PROJECT / "docs/postmortems.md").read_text(), re.M), f"post-mortem {n}"


def anchors(markdown: str) -> set[str]:
    """The #anchors of a Markdown file's headings, as GitHub makes them."""
    out = set()
    for heading in re.findall(r"^#+ (.+)$", markdown, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        out.add(slug)
    return out


def broken_links(doc: Path) -> list[str]:
    text = doc.read_text(encoding="utf-8")
    bad = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"\w+://", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (doc.parent / path).resolve() if path else doc
        if not linked.exists():
            bad.append(target)
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked.read_text(encoding="utf-8")):
            bad.append(target)
    return bad


@pytest.mark.parametrize("doc", ["README.md", *(f"docs/{p.name}" for p in sorted((PROJECT / "docs").glob("*.md")))])
def test_every_link_of_the_docs_reaches_a_file_and_heading(doc):
    assert broken_links(PROJECT / doc) == [], doc


def test_the_link_check_sees_a_missing_file_and_heading(tmp_path):
    (tmp_path / "a.md").write_text("# Run a scheduler\n\n[x](b.md) [y](#run-a-scheduler) [z](#gone) [w](https://e.x/#q)\n")
    assert broken_links(tmp_path / "a.md") == ["b.md", "#gone"]
