"""The library's shape, read from its source: no import cycle, the simulator kept out of the pipeline,
the DAG file's imports free of Spark and set-up code, and the tree that
docs/architecture.md shows equal to the packages and their docstrings.

An edge is an import (at any level), a module imported by name (importlib.import_module, __import__,
importlib.resources.files with a literal or f-string naming fleethealth.X) and a data file read from
another package (a literal path such as "gold/runbooks.yaml"): each counts as the import of that
module or package. A name computed at run time is allowed only where BY_NAME_ALLOWED says why.

`python tests/test_architecture.py` prints the tree as the docs must show it.
"""
from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]
LIBRARY = PROJECT / "include" / "fleethealth"
# who may import the simulator: the command line and its demo, set-up, and the simulator itself
MAY_IMPORT_SIMULATE = ("fleethealth.cli.", "fleethealth.setup.", "fleethealth.simulate")
# the packages from the ground floor up (the tree lists them so): each imports only packages listed
# before it, a sub-package counting as part of its package (tests below). The ground floor, runtime,
# holds the vocabulary every floor shares (settings, severities, printable text).
ORDER = ("runtime", "lake", "fleet", "quality", "pull", "pull/transports", "bronze", "silver", "silver/parsers",
         "silver/rules", "gold", "gold/facts", "gold/detectors", "report", "report/html", "notify", "pipeline",
         "simulate", "cli", "setup")
# imports of a package above it, each with why it cannot go (none today)
UPWARD_ALLOWED: dict[tuple[str, str], str] = {}
# modules that import a module whose name is computed at run time (not a literal), each with why
BY_NAME_ALLOWED = {
    "fleethealth.notify.inventory": "FLEETHEALTH_NOTIFY_CHANNEL_MODULES: a deployment's channel types, the "
                                    "documented extension point (docs/development.md)",
    "fleethealth.cli.query_duckdb": "the query engine's third-party modules (pyarrow, deltalake, duckdb)",
}
# what a data file beside the code is (a literal path ending so, naming a file of the library, is a read of it)
DATA_SUFFIXES = (".yaml", ".yml", ".json", ".csv", ".properties", ".txt", ".html", ".j2", ".sql", ".css", ".js")
# functions whose first argument names a module: importlib.import_module, __import__, (importlib.)resources.files
BY_NAME = ("import_module", "__import__", "files")
# the line before the tree's block in docs/architecture.md (the docs' marker of a drawing)
TREE_START = "<!-- readme-test: figure tree -->"


def module_name(path: Path) -> str:
    rel = path.relative_to(LIBRARY.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(LIBRARY.rglob("*.py"))}


def imports_of(name: str, path: Path, known: set[str], library: Path = LIBRARY) -> set[str]:
    """The fleethealth modules `name` imports anywhere in its file (function-level imports included):
    `from a.b import c` is a.b.c when that is a module, else a.b; and those it reaches otherwise
    (by_name: a module named by a literal, a data file of another package)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    found |= by_name(name, tree, known, library)[0]
    return {m for m in found if m in known and m != name}


def _literal(node: ast.AST, module: str) -> str | None:
    """The text of a literal string, or of an f-string's leading literal part (`{__name__}` read as
    the module's name); None for a name computed otherwise."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        text = ""
        for part in node.values:
            if isinstance(part, ast.Constant):
                text += str(part.value)
            elif isinstance(part.value, ast.Name) and part.value.id == "__name__":
                text += module
            else:
                break
        return text
    return None


def _owner(dotted: str, known: set[str]) -> str | None:
    """The longest known module that `dotted` (a module name, or the start of one) names or is in."""
    parts = dotted.rstrip(".").split(".")
    for i in range(len(parts), 0, -1):
        if ".".join(parts[:i]) in known:
            return ".".join(parts[:i])
    return None


def _data_file(text: str, library: Path, known: set[str]) -> str | None:
    """The package (module name) holding the library's data file that a literal path names
    ("gold/runbooks.yaml", "fleethealth/gold/runbooks.yaml"), else None."""
    if "/" not in text or not text.endswith(DATA_SUFFIXES):
        return None
    rel = text.split("fleethealth/", 1)[1] if "fleethealth/" in text else text.lstrip("./")
    target = library / rel
    if not target.is_file():
        return None
    return _owner(".".join(("fleethealth", *target.parent.relative_to(library).parts)), known)


def by_name(name: str, tree: ast.AST, known: set[str], library: Path = LIBRARY) -> tuple[set[str], list[int]]:
    """(the modules `name` reaches without an import statement: a call of BY_NAME naming fleethealth.X
    by a literal or f-string, a data file of the library named by a literal path; the lines of a
    BY_NAME call whose name is computed at run time)."""
    found, computed = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            func = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            of = node.func.value if isinstance(node.func, ast.Attribute) else None
            if func in BY_NAME and (func != "files" or getattr(of, "id", getattr(of, "attr", "")) == "resources"):
                text = _literal(node.args[0], name)
                owner = _owner(text, known) if text and text.startswith("fleethealth") else None
                if text is None or (owner == "fleethealth" and text.rstrip(".") != "fleethealth"):
                    computed.append(node.lineno)        # f"fleethealth.{package}": which one is computed
                # the root's files are its packages'; a module's own package's files are its own data
                elif owner and owner not in ("fleethealth", name.rpartition(".")[0]):
                    found.add(owner)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if owner := _data_file(node.value, library, known):
                found.add(owner)
    return found, computed


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: imports_of(name, path, set(mods)) for name, path in mods.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_the_library_has_no_import_cycle():
    assert cycles(graph()) == []


def test_the_cycle_finder_finds_one():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_relative_and_function_level_imports_are_read(tmp_path):
    pkg = tmp_path / "fleethealth" / "sim"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from ..gold import known_bugs\n    from . import b\n")
    known = {"fleethealth.gold.known_bugs", "fleethealth.sim.b", "fleethealth.gold"}
    assert imports_of("fleethealth.sim.a", pkg / "a.py", known) == {"fleethealth.gold.known_bugs", "fleethealth.sim.b"}


def test_a_module_named_by_a_literal_and_a_data_file_of_another_package_are_edges(tmp_path):
    """A module imported by name (a literal or f-string) and a data file read across packages are
    imports: the layering test fails on fleet importing notify by name or reading gold's runbooks."""
    lib = tmp_path / "fleethealth"
    for package in ("fleet", "notify", "gold"):
        (lib / package).mkdir(parents=True)
        (lib / package / "__init__.py").write_text("")
    (lib / "notify" / "webhook.py").write_text("")
    (lib / "gold" / "runbooks.yaml").write_text("kinds: {}\n")
    (lib / "gold" / "detectors").mkdir()
    (lib / "gold" / "detectors" / "__init__.py").write_text(
        "import importlib\ndef f(n):\n    return importlib.import_module(f'{__name__}.{n}')\n")
    sources = {
        "literal": "import importlib\ndef f():\n    return importlib.import_module('fleethealth.notify.webhook')\n",
        "fstring": "import importlib\ndef f(t):\n    return importlib.import_module(f'fleethealth.notify.{t}')\n",
        "dunder": "def f():\n    return __import__('fleethealth.notify.webhook')\n",
        "resources": "from importlib import resources\nT = resources.files('fleethealth.gold').joinpath('x')\n",
        "datafile": "from importlib import resources\n"
                    "T = resources.files('fleethealth').joinpath('gold/runbooks.yaml').read_text()\n",
        "computed": "import importlib, os\ndef f():\n    return importlib.import_module(os.environ['M'])\n",
    }
    for stem, text in sources.items():
        (lib / "fleet" / f"{stem}.py").write_text(text)
    known = {"fleethealth", "fleethealth.fleet", "fleethealth.notify", "fleethealth.notify.webhook", "fleethealth.gold",
             "fleethealth.gold.detectors", *(f"fleethealth.fleet.{stem}" for stem in sources)}
    edges = {f"fleethealth.fleet.{stem}": imports_of(f"fleethealth.fleet.{stem}", lib / "fleet" / f"{stem}.py",
                                                     known, lib) for stem in sources}
    assert edges == {"fleethealth.fleet.literal": {"fleethealth.notify.webhook"},
                     "fleethealth.fleet.fstring": {"fleethealth.notify"},
                     "fleethealth.fleet.dunder": {"fleethealth.notify.webhook"},
                     "fleethealth.fleet.resources": {"fleethealth.gold"},
                     "fleethealth.fleet.datafile": {"fleethealth.gold"},
                     "fleethealth.fleet.computed": set()}
    order = ["fleet", "gold", "notify"]
    assert upward(package_graph(edges), order) == ["fleet -> gold", "fleet -> notify"]
    # a computed name is seen, to be allowed or not (BY_NAME_ALLOWED); a package's own f-string is its own
    assert by_name("fleethealth.fleet.computed", ast.parse(sources["computed"]), known, lib)[1] == [3]
    detectors = lib / "gold" / "detectors" / "__init__.py"
    assert imports_of("fleethealth.gold.detectors", detectors, known, lib) == set()


def test_the_real_tree_fails_with_fleet_importing_notify_by_name_or_reading_gold_data():
    """The checks above on the library as it is, with one module of fleet changed in memory."""
    mods = modules()
    known = set(mods)
    for line in ('importlib.import_module("fleethealth.notify.webhook")',
                 'resources.files("fleethealth").joinpath("gold/runbooks.yaml").read_text()'):
        edges = graph()
        edges["fleethealth.fleet.inventory"] = edges["fleethealth.fleet.inventory"] | by_name(
            "fleethealth.fleet.inventory", ast.parse(line), known)[0]
        found = upward(package_graph(edges), floors())
        assert [x for x in found if tuple(x.split(" -> ")) not in UPWARD_ALLOWED] != [], line


def test_a_module_named_at_run_time_is_allowed_only_with_a_reason():
    found = {name for name, path in modules().items()
             if by_name(name, ast.parse(path.read_text()), set(modules()))[1]}
    assert found == set(BY_NAME_ALLOWED)


def package_of(module: str) -> str:
    """The package a module belongs to for layering: its top-level package (fleethealth.gold.facts.core ->
    gold), a module at the root its own name."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "fleethealth"


def package_graph(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """Which packages import which (the library's root package, fleethealth itself, left out)."""
    out: dict[str, set[str]] = {}
    for module, deps in edges.items():
        a = package_of(module)
        out.setdefault(a, set())
        out[a] |= {b for b in map(package_of, deps) if b not in (a, "fleethealth")}
    out.pop("fleethealth", None)
    return out


def floors() -> list[str]:
    """The packages from the ground floor up."""
    return list(dict.fromkeys(p.split("/")[0] for p in ORDER))


def upward(edges: dict[str, set[str]], order: list[str]) -> list[str]:
    """The imports of a package listed at or after it in `order` (a floor above it, or unlisted)."""
    rank = {name: i for i, name in enumerate(order)}
    return sorted(f"{a} -> {b}" for a, deps in edges.items() for b in deps
                  if rank.get(b, len(order)) >= rank.get(a, -1))


def test_no_cycle_between_packages():
    assert cycles(package_graph(graph())) == []


def test_a_package_imports_only_packages_below_it():
    found = upward(package_graph(graph()), floors())
    assert [x for x in found if tuple(x.split(" -> ")) not in UPWARD_ALLOWED] == []


def test_the_library_is_its_packages():
    """No module beside the packages at the library's root: each belongs to a floor."""
    assert sorted(p.name for p in LIBRARY.glob("*.py")) == ["__init__.py"]


def test_an_upward_import_and_a_cycle_between_packages_are_found():
    edges = {"fleethealth.fleet.inventory": {"fleethealth.notify.config"}, "fleethealth.notify.config": set(),
             "fleethealth.notify.run": {"fleethealth.lake.tables", "fleethealth.fleet.inventory"},
             "fleethealth.lake.tables": set()}
    packages = package_graph(edges)
    assert packages == {"fleet": {"notify"}, "notify": {"lake", "fleet"}, "lake": set()}
    assert upward(packages, ["lake", "fleet", "notify"]) == ["fleet -> notify"]
    assert cycles(packages) == [["fleet", "notify"]]


def test_no_pipeline_module_imports_the_simulator():
    offenders = sorted(f"{name} -> {dep}" for name, deps in graph().items() for dep in deps
                       if dep.startswith("fleethealth.simulate") and not name.startswith(MAY_IMPORT_SIMULATE))
    assert offenders == []


def dag_imports() -> set[str]:
    """The fleethealth modules the DAG files import at parse time (module level)."""
    found = set()
    for dag in sorted((PROJECT / "dags").glob("*.py")):
        for node in ast.parse(dag.read_text()).body:
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("fleethealth"):
                found |= {f"{node.module}.{a.name}" if (LIBRARY.parent / node.module.replace(".", "/") / a.name).exists()
                          or (LIBRARY.parent / f"{node.module.replace('.', '/')}/{a.name}.py").exists()
                          else node.module for a in node.names}
    return found


def test_what_the_dag_files_import_pulls_in_no_spark_simulator_or_set_up():
    wanted = sorted(dag_imports())
    assert "fleethealth.runtime.config" in wanted
    code = ("import importlib, json, sys, time\nt = time.perf_counter()\n"
            f"for m in {wanted!r}: importlib.import_module(m)\n"
            "print(json.dumps({'seconds': time.perf_counter() - t, 'modules': sorted(sys.modules)}))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(LIBRARY.parent)))
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    heavy = [m for m in result["modules"] if m.split(".")[0] in ("pyspark", "delta", "great_expectations", "py4j")
             or m.startswith(("fleethealth.simulate", "fleethealth.setup"))]
    assert heavy == []
    assert result["seconds"] < 1, result


def test_every_fleethealth_variable_is_read_through_the_runtime_config():
    """One place for each setting: config.SETTINGS declares every FLEETHEALTH_* variable the Python code
    names (with its default and doc), and no other module reads the environment for one."""
    from fleethealth.runtime import config

    named, readers = set(), []
    for path in sorted([*LIBRARY.rglob("*.py"), *(PROJECT / "dags").glob("*.py"), *(PROJECT / "spark").glob("*.py")]):
        text = path.read_text()
        named |= set(re.findall(r"FLEETHEALTH_[A-Z_]+[A-Z]", text))
        if path.name != "config.py" or path.parent.name != "runtime":
            readers += [f"{path.relative_to(PROJECT)}: {line.strip()}" for line in text.splitlines()
                        if re.search(r"os\.environ|getenv", line) and "FLEETHEALTH_" in line]
    assert named <= set(config.SETTINGS), sorted(named - set(config.SETTINGS))
    assert readers == []
    assert all(s.doc for s in config.SETTINGS.values())


# --------------------------------------------------------------------------------------- the tree
def summary(package: str) -> str:
    """The first line of a package's (or module's) docstring, without its leading 'Name: '."""
    path = LIBRARY / package if package.endswith(".py") else LIBRARY / package / "__init__.py"
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    first = doc.strip().split("\n")[0].rstrip(".")
    return re.sub(r"^[A-Z][\w ]*: ", "", first)


def tree() -> str:
    lines = ["include/fleethealth/"]
    for package in ORDER:
        depth = package.count("/")
        name = package.rsplit("/", 1)[-1] + "/"
        lines.append(f"{'  ' * (depth + 1)}{name:<{16 - 2 * depth}}{summary(package)}")
    return "\n".join(lines)


def packages() -> set[str]:
    return {str(p.parent.relative_to(LIBRARY)) for p in LIBRARY.rglob("__init__.py") if p.parent != LIBRARY}


def test_the_tree_lists_every_package_and_each_says_what_it_is():
    assert set(ORDER) == packages()
    for package in ORDER:
        assert summary(package), f"{package}/__init__.py has no docstring"


def shown_tree(doc: Path) -> str:
    text = doc.read_text()
    assert TREE_START in text, f"{doc.name} shows no tree (a line {TREE_START!r} before its block)"
    block = text.split(TREE_START + "\n", 1)[1]
    assert block.startswith("```"), f"{doc.name}: the tree's block must follow {TREE_START!r}"
    return block.split("\n", 1)[1].split("```", 1)[0].rstrip()


@pytest.mark.parametrize("doc", ["docs/architecture.md"])
def test_the_docs_show_the_tree_as_the_packages_say(doc):
    assert shown_tree(PROJECT / doc) == tree(), f"{doc}: the tree is now\n{tree()}"


if __name__ == "__main__":
    print(tree())
