"""docs/architecture.md against the code, for what can be read from the code (no Spark): every file,
module and table the page names exists; the table of owners names each table of lake.tables.TABLES
once, the layers' tables in their layer's row and the fact tables of gold.facts.registry.BUILDERS as
the registry's; each DAG file of dags/ is described with its DAG id, its tasks and its Spark
application, and the DAG files' parse-time imports are those the page lists; each spark/ entry point
and each folder of the repository is named; the allowed-value sets are those the suites name.
(tests/test_architecture.py keeps the page's tree of packages equal to their docstrings.)

A change to the code that the page describes fails here with what to write: a new table, DAG, task,
entry point or folder, a module moved or renamed.
"""
from __future__ import annotations

import ast
import json
import re
import subprocess
from pathlib import Path

import pytest

from fleethealth.gold.facts.registry import BUILDERS
from fleethealth.lake.tables import TABLES
from fleethealth.pipeline import dag_tasks
from fleethealth.runtime import config

PROJECT = Path(__file__).resolve().parents[1]
LIBRARY = PROJECT / "include" / "fleethealth"
DOC = PROJECT / "docs" / "architecture.md"
JAVA = PROJECT / "engine" / "src" / "main" / "java"
# the heading of the table of owners, and of the section of the DAGs
OWNERS = "## Who owns which table"
WAYS_IN = "## One driver,"
LAYOUT = "## Layout of the repository"


def text() -> str:
    return DOC.read_text()


def section(heading: str) -> str:
    doc = text()
    assert heading in doc, f"{DOC.name} has no section {heading!r}"
    return doc.split(heading, 1)[1].split("\n## ", 1)[0]


def quoted() -> list[str]:
    """Every `…` of the page (fenced blocks left out: the tree, the figure)."""
    prose = re.sub(r"^```.*?^```", "", text(), flags=re.M | re.S)
    return re.findall(r"`([^`\n]+)`", prose)


def suite_names() -> set[str]:
    """The tables and audits with a suite (expectations/<name>.json), e.g. gold.completeness."""
    return {p.stem for p in (PROJECT / "expectations").glob("*.json")}


# ------------------------------------------------------------------------ files, modules, tables
FILE = re.compile(r"[\w./-]+\.(py|yaml|json|md|java|xml)|[\w./-]+/")
PACKAGES = {p.name for p in LIBRARY.iterdir() if (p / "__init__.py").is_file()}


def file_exists(name: str) -> bool:
    """A path as the page writes it: from the repository, the library or (shortened) from one of its
    packages (`facts/core.py`, `transports/jolokia.py`, `fields.yaml`)."""
    name = name.split(":")[0]
    if (PROJECT / name).exists() or (LIBRARY / name).exists():
        return True
    tail = name.rstrip("/")
    return any(p.as_posix().endswith("/" + tail) for p in LIBRARY.rglob(tail.rsplit("/", 1)[-1]))


def module_exists(dotted: str) -> bool:
    """A library module, or a name a module defines (`fleet.channels.ChannelType`), as the page writes
    it, without `fleethealth.`; a class of the engine (`io.fleethealth.engine.LineFiles`)."""
    if dotted.startswith("io.fleethealth."):
        return (JAVA / (dotted.replace(".", "/") + ".java")).is_file()
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        path = LIBRARY.joinpath(*parts[:i])
        source = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        if source.is_file():
            rest = parts[i:]
            return not rest or (len(rest) == 1 and re.search(
                rf"^(class|def) {rest[0]}\b|^{rest[0]}\b.*=", source.read_text(), re.M) is not None)
    return False


def test_every_file_the_page_names_exists():
    names = [q for q in quoted() if FILE.fullmatch(q) and "<" not in q and not q.startswith(("_", "."))]
    assert len(names) > 40
    assert [n for n in dict.fromkeys(names) if not file_exists(n)] == []


def test_every_module_and_table_the_page_names_exists():
    """A dotted name that starts with a library package or a layer is a table (lake.tables.TABLES, or an
    audit with a suite, e.g. gold.completeness), a module or a name a module defines."""
    tables = set(TABLES) | suite_names()
    dotted = [q for q in quoted() if re.fullmatch(r"[a-z_]+(\.[A-Za-z_]+)+", q)
              and q.split(".")[0] in PACKAGES | {t.layer for t in TABLES.values()} | {"io"}]
    assert len(dotted) > 30
    assert [q for q in dict.fromkeys(dotted) if q not in tables and not module_exists(q)] == []


# -------------------------------------------------------------------------------- table of owners
def owners() -> dict[str, str]:
    """The table of owners: its first cell (a package, or several) -> what it says they own."""
    rows = [line for line in section(OWNERS).splitlines() if line.startswith("| `")]
    return {line.split("|")[1].strip(): line.split("|")[2] for line in rows}


def tables_in(cell: str) -> list[str]:
    return [q for q in re.findall(r"`([^`]+)`", cell) if q in TABLES]


def test_the_table_of_owners_names_each_table_once():
    named = [q for cell in owners().values() for q in tables_in(cell)]
    missing = [q for q in TABLES if q not in named]
    assert missing == [], f"{DOC.name}, {OWNERS!r}: no package owns {missing}"
    assert sorted(q for q in set(named) if named.count(q) > 1) == []


@pytest.mark.parametrize("layer", ["bronze", "silver"])
def test_a_layer_owns_its_tables(layer):
    """bronze/ and silver/ own every table of their layer, in the order of lake.tables."""
    want = [q for q, t in TABLES.items() if t.layer == layer]
    assert tables_in(owners()[f"`{layer}/`"]) == want, f"{DOC.name}, {OWNERS!r}: the row of {layer}/"


def test_the_fact_tables_the_registry_builds_are_the_registrys():
    """gold/facts/: the tables of gold.facts.registry.BUILDERS, named as the registry's, and the
    ones gold.facts.core builds, named as its; no other table."""
    cell = owners()["`gold/facts/`"]
    parts = {m.group(2): tables_in(m.group(1)) for m in re.finditer(r"([^;]*?)\(`facts/(\w+)\.py`[^)]*\)", cell)}
    assert set(parts) == {"core", "registry"}, cell
    assert parts["registry"] == list(BUILDERS), f"{DOC.name}: gold/facts/registry.py builds {list(BUILDERS)}"
    assert parts["core"] and set(parts["core"]).isdisjoint(BUILDERS)
    gold = section("## One hour through it")
    assert "`gold/facts/registry.py` (`BUILDERS`" in gold and "`gold/facts/core.py`" in gold


# ------------------------------------------------------------------------------------------- DAGs
def dag_files() -> list[Path]:
    return sorted((PROJECT / "dags").glob("*.py"))


def module_strings(tree: ast.Module) -> dict[str, str]:
    """The module's top-level NAME = "string" assignments."""
    return {target.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
            for target in node.targets if isinstance(target, ast.Name)}


def value_of(node: ast.expr, strings: dict[str, str]) -> str:
    """A string given as a literal, a module constant or `config.NAME`."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return strings[node.id]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "config":
        return getattr(config, node.attr)
    raise AssertionError(f"not a string the test can read: {ast.dump(node)}")


def is_task(decorator: ast.expr) -> bool:
    """`@task` or `@task(...)`."""
    name = decorator.func if isinstance(decorator, ast.Call) else decorator
    return isinstance(name, ast.Name) and name.id == "task"


def dag_of(path: Path) -> dict:
    """A DAG file's DAG id, task ids (`@task` functions, operators' task_id) and Spark applications."""
    tree = ast.parse(path.read_text())
    strings = module_strings(tree)
    out = {"dag_id": None, "tasks": [], "applications": []}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and any(is_task(d) for d in node.decorator_list):
            out["tasks"].append(node.name)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "layers_step":
            # the shared Spark step (pipeline.dag_tasks): its task id is the module's, the application
            # the call's second argument
            out["tasks"].append(dag_tasks.LAYERS_TASK)
            out["applications"].append(f"spark/{value_of(node.args[1], strings)}")
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg == "dag_id":
                    out["dag_id"] = value_of(kw.value, strings)
                elif kw.arg == "task_id":
                    out["tasks"].append(value_of(kw.value, strings))
                elif kw.arg == "application":
                    out["applications"] += [f"spark/{c.value}" for c in ast.walk(kw.value)
                                            if isinstance(c, ast.Constant) and str(c.value).endswith(".py")]
    return out


def paragraph_of(name: str) -> str:
    """The bullet or paragraph of the section of the DAGs that names `name` first."""
    body = section(WAYS_IN)
    for part in re.split(r"\n\s*\n|\n(?=\* )", body):
        if f"`{name}`" in part:
            return part
    raise AssertionError(f"{DOC.name}, {WAYS_IN!r}: nothing describes `{name}`")


@pytest.mark.parametrize("dag", [p.name for p in dag_files()])
def test_each_dag_is_described_with_its_id_tasks_and_application(dag):
    found = dag_of(PROJECT / "dags" / dag)
    assert found["dag_id"] and found["tasks"] and found["applications"], found
    about = paragraph_of(f"dags/{dag}")
    shown = set(re.findall(r"`([^`]+)`", about))
    missing = [n for n in [found["dag_id"], *found["tasks"], *found["applications"]] if n not in shown]
    assert missing == [], f"{DOC.name}: the paragraph of dags/{dag} does not name {missing}"


def test_the_page_names_no_dag_that_is_not_there():
    named = set(re.findall(r"`dags/(\w+\.py)`", text()))
    assert named == {p.name for p in dag_files()}


def dag_imports() -> list[str]:
    """The library modules the DAG files import at parse time (module level), without `fleethealth.`:
    `from fleethealth.lake import tables` is lake.tables, `from fleethealth.lake.catalog import
    Lakehouse` lake.catalog."""
    found = set()
    for path in dag_files():
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("fleethealth."):
                package = node.module.removeprefix("fleethealth.")
                for alias in node.names:
                    module = f"{package}.{alias.name}"
                    found.add(module if (LIBRARY / f"{module.replace('.', '/')}.py").is_file() else package)
    return sorted(found)


def test_the_dag_files_parse_time_imports_are_those_the_page_lists():
    [sentence] = [s for s in re.split(r"(?<=\.)\s", section(WAYS_IN)) if "at parse time" in s]
    listed = sorted(re.findall(r"`([a-z_]+\.[a-z_]+)`", sentence))
    assert listed == dag_imports(), f"{DOC.name}: the DAG files import {dag_imports()} at parse time"


# ------------------------------------------------------------------- entry points, folders, values
def test_each_spark_entry_point_is_named():
    named = set(re.findall(r"`(?:spark/)?(\w+\.py)`", section(LAYOUT)))
    assert sorted(p.name for p in (PROJECT / "spark").glob("*.py") if p.name not in named) == []


def test_each_folder_of_the_repository_is_named():
    """Each top-level folder git tracks (not hidden) is in the layout."""
    files = subprocess.run(["git", "ls-files"], cwd=PROJECT, capture_output=True, text=True, check=True).stdout
    folders = sorted({f.split("/")[0] for f in files.splitlines() if "/" in f and not f.startswith(".")})
    layout = section(LAYOUT)
    assert [f for f in folders if f"`{f}/" not in layout] == []


def test_the_value_sets_are_those_the_suites_name():
    """The allowed-value sets the code owns, as the page lists them: those the suites name."""
    used = set()
    for path in (PROJECT / "expectations").glob("*.json"):
        used |= set(re.findall(r'"\$values:(\w+)"', json.dumps(json.loads(path.read_text()))))
    gates = section("## Hours, nothing lost, quality gates")
    sentence = gates.split("Allowed values the code owns", 1)[1].split("Every result", 1)[0]
    listed = {q.removeprefix('"$values:').rstrip('"') for q in re.findall(r"`([^`]+)`", sentence)
              if not q.endswith((".py", ".yaml"))}
    assert listed == used
