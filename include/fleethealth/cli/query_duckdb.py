"""`fleethealth query` on DuckDB, the default engine: an answer in well under a second, no JVM.

DuckDB (in memory, nothing persisted) reads the lakehouse's Delta tables through delta-rs
(`lake.tables.arrow_dataset`: no DuckDB extension, so nothing is downloaded
on an air-gapped host). Each table of the catalog (fleethealth.lake.tables) found in the lakehouse
is the view `<layer>.<table>` (schemas bronze, silver, gold). Only the tables the statement names
are opened (their Delta logs read); a statement that names none (SHOW ALL TABLES, a query of
information_schema) gets them all.

Read-only, and nothing outside the lakehouse's tables, by two locks:
* the statement must be one read, judged from DuckDB's own parser (`extract_statements`: its
  statement type): SELECT (WITH, VALUES, FROM-first, DESCRIBE, SHOW, SUMMARIZE parse as SELECT) or
  EXPLAIN of a SELECT; every table it names (`json_serialize_sql`: the parser's tree, nothing
  bound) must be `<layer>.<table>` of the lakehouse, a CTE or one of DuckDB's own catalog views
  (a file path as a table name is refused);
* before it runs, the connection is sandboxed and the sandbox locked: no file system access
  (`enable_external_access=false`: read_csv/read_text/read_parquet/glob of a path, COPY, ATTACH,
  INSTALL fail), no extension installed or loaded, no Python object scanned by name, and
  `lock_configuration=true` so no SET/RESET undoes any of it.
A query takes a bounded share of the host (`resources`): memory, spill to its own folder, threads.
"""
from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import tempfile
import threading
import uuid
from pathlib import Path

from fleethealth.cli.query import OUT_FORMATS, Refused, _emitter, did_you_mean
from fleethealth.lake.catalog import Lakehouse
from fleethealth.lake.tables import LAYERS, TABLES, arrow_dataset, present

READS = "SELECT/WITH/VALUES/FROM, SHOW, DESCRIBE, SUMMARIZE, EXPLAIN"
BATCH = 1000               # rows fetched at a time
# levels of subqueries or expressions the parser takes (DuckDB's default, 1000, is deeper than Python's
# JSON reader follows when the tables a statement names are listed)
MAX_DEPTH = 100

# what each statement type (duckdb.StatementType) would do: the refusal's words
_WHAT = {
    "INSERT": "INSERT writes rows", "UPDATE": "UPDATE changes rows", "DELETE": "DELETE/TRUNCATE removes rows",
    "MERGE_INTO": "MERGE changes rows", "DROP": "DROP removes tables", "CREATE": "CREATE makes tables, views or secrets",
    "CREATE_FUNC": "CREATE makes functions", "ALTER": "ALTER changes tables",
    "SET": "SET, RESET and USE change the session", "VARIABLE_SET": "SET VARIABLE changes the session",
    "PRAGMA": "PRAGMA changes or reads the database's settings", "CALL": "CALL runs a procedure",
    "COPY": "COPY writes or reads files", "COPY_DATABASE": "COPY FROM DATABASE writes a database",
    "EXPORT": "EXPORT DATABASE writes files", "ATTACH": "ATTACH opens a database file",
    "DETACH": "DETACH closes a database", "LOAD": "INSTALL and LOAD add extensions",
    "EXTENSION": "an extension's statement", "TRANSACTION": "transactions are for writes",
    "PREPARE": "PREPARE keeps a statement to run later", "EXECUTE": "EXECUTE runs another statement",
    "VACUUM": "VACUUM rewrites storage", "ANALYZE": "ANALYZE changes statistics",
    "MULTI": "it runs several statements (a PIVOT without IN (...))",
}

# what SHOW TABLES and SHOW ALL TABLES (DuckDB's SHOW_REF names) run instead: the names `query` takes,
# not the Arrow datasets behind the views (_delta_gold_incidents, temporary)
SHOWN_TABLES = {
    '"tables"': "SELECT schema_name || '.' || view_name AS name FROM duckdb_views() "
                "WHERE NOT internal AND NOT temporary ORDER BY name",
    "__show_tables_expanded": "SELECT * FROM (SHOW ALL TABLES) WHERE NOT temporary",
}
# the lines of DuckDB's error kept after its first: its hints (candidate columns, "Did you mean")
# and the statement's line with the caret under the error; a longer list of candidates is cut
MAX_HINT_LINES = 4

# the settings of the sandbox, in order; lock_configuration last (after it, no SET changes any)
SANDBOX = (
    ("autoinstall_known_extensions", False),
    ("autoload_known_extensions", False),
    ("allow_community_extensions", False),
    ("python_enable_replacements", False),     # `FROM some_python_variable`
    ("max_expression_depth", MAX_DEPTH),
    ("enable_external_access", False),
    ("lock_configuration", True),
)


def resources() -> dict[str, str | int]:
    """What one query may take of a shared host (DuckDB's defaults are 80 % of the memory, every core
    and 90 % of the disk): $FLEETHEALTH_QUERY_MEMORY of the memory, as much again spilled to its
    temporary folder, half the cores."""
    from fleethealth.runtime import config

    mib = int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") * config.query_memory() / 2**20)
    return {"memory_limit": f"{mib}MiB", "max_temp_directory_size": f"{mib}MiB",
            "threads": max(1, (os.cpu_count() or 1) // 2)}


def _type(statement) -> str:
    return str(statement.type).rsplit(".", 1)[-1]


def check_statement(con, sql: str):
    """The one statement of `sql` and the SELECT it is or explains, if it only reads; else raise
    Refused (nothing runs here; a syntax error raises DuckDB's ParserException)."""
    import duckdb

    try:
        statements = con.extract_statements(sql)
    except duckdb.ParserException as exc:
        if "max expression depth" in str(exc).lower():
            raise Refused(f"the statement nests more than {MAX_DEPTH} levels deep (subqueries or expressions)") from None
        raise
    if len(statements) != 1:
        raise Refused(f"one statement at a time ({len(statements)} given)" if statements else "no statement given")
    [statement] = statements
    kind, select = _type(statement), statement
    if kind == "EXPLAIN":
        select = _explained(duckdb, con, statement.query)
        if select is None or _type(select) != "SELECT":
            raise Refused(f"EXPLAIN of {_what(_type(select)) if select is not None else 'nothing'}")
    elif kind != "SELECT":
        raise Refused(_what(kind))
    return statement, select.query


def _what(kind: str) -> str:
    return f"{_WHAT.get(kind, 'it does more than read')} ({kind})"


def _explained(duckdb, con, sql: str):
    """The statement EXPLAIN [ANALYZE] [(options)] explains, found with DuckDB's own tokenizer."""
    tokens = duckdb.tokenize(sql)
    words = [sql[start:(tokens[i + 1][0] if i + 1 < len(tokens) else len(sql))].strip()
             for i, (start, _) in enumerate(tokens)]
    i = 1                                       # after EXPLAIN
    if i < len(words) and words[i].upper() == "ANALYZE":
        i += 1
    if i < len(words) and words[i] == "(":      # (FORMAT json, ...)
        depth = 0
        while i < len(words):
            depth += words[i].count("(") - words[i].count(")")
            i += 1
            if depth <= 0:
                break
    if i >= len(words):
        return None
    inner = con.extract_statements(sql[tokens[i][0]:])
    return inner[0] if len(inner) == 1 else None


def present_tables(root: Lakehouse) -> dict[str, str]:
    """The catalog's tables found in the lakehouse (or where $FLEETHEALTH_TABLES puts them),
    qualified name -> location."""
    return {t.qualified: t.path(root) for t in TABLES.values() if present(t.qualified, root)}


def named_tables(con, select: str) -> tuple[list[tuple[str, ...]] | None, str | None]:
    """The tables a SELECT names, from DuckDB's parser only (json_serialize_sql: nothing is bound),
    each as its lower-case parts ([catalog,] [schema,] table), CTEs left out (None when the parser
    cannot serialize the statement); and the name of what it shows when it is SHOW TABLES or SHOW
    ALL TABLES itself, not a query of them (SHOWN_TABLES)."""
    tree = json.loads(con.execute("SELECT json_serialize_sql(?)", [select]).fetchone()[0])
    if tree.get("error"):
        return None, None
    source = tree["statements"][0]["node"].get("from_table") or {}
    shown = source.get("table_name") if (source.get("type"), source.get("show_type")) == ("SHOW_REF", "SHOW_SPECIAL") else None
    refs, ctes, todo = [], set(), [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            if node.get("type") == "BASE_TABLE":
                refs.append(tuple(p.lower() for p in (node.get("catalog_name"), node.get("schema_name"),
                                                       node.get("table_name")) if p))
            if isinstance(node.get("cte_map"), dict):
                ctes.update(c["key"].lower() for c in node["cte_map"].get("map", []))
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    return [r for r in refs if not (len(r) == 1 and r[0] in ctes)], shown


def error_lines(exc: Exception) -> list[str]:
    """DuckDB's error as the lines worth showing: its message, its hints (MAX_HINT_LINES of them) and
    the statement's line with the caret under the error (`LINE 1: ...`, `^^^`), each escaped."""
    from fleethealth.runtime.text import printable

    lines = [printable(line.rstrip()) for line in str(exc).splitlines() if line.strip()]
    at = next((i for i, line in enumerate(lines) if line.startswith("LINE ")), len(lines))
    hints = lines[1:at]
    if len(hints) > MAX_HINT_LINES:
        hints = hints[:MAX_HINT_LINES - 1] + [f"\t… ({len(hints) - MAX_HINT_LINES + 1} more)"]
    return lines[:1] + hints + lines[at:]


def keyword_hint(root: Lakehouse, sql: str) -> str | None:
    """After a syntax error: the words of `sql` that DuckDB reserves (`at`) and that name a column of
    a lakehouse table (gold.incident_history.at), and how to write them."""
    import duckdb
    from deltalake import DeltaTable

    with duckdb.connect(":memory:") as con:
        reserved = {r[0] for r in con.execute("SELECT keyword_name FROM duckdb_keywords() WHERE "
                                              "keyword_category IN ('reserved', 'type_function')").fetchall()}
    tokens = duckdb.tokenize(sql)
    words = set()
    for i, (start, kind) in enumerate(tokens):
        end = tokens[i + 1][0] if i + 1 < len(tokens) else len(sql)
        word = sql[start:end].strip().lower()
        if kind == duckdb.token_type.keyword and word in reserved and not (i and sql[tokens[i - 1][0]] == "."):
            words.add(word)
    owners: dict[str, str] = {}
    for qualified, path in sorted(present_tables(root).items()) if words else ():
        for column in DeltaTable(path).schema().fields:
            if column.name.lower() in words:
                owners.setdefault(column.name.lower(), qualified)
    if not owners:
        return None
    return "; ".join(f"{w} is a keyword of DuckDB's: quote the column (\"{w}\") or qualify it with its table or alias "
                     f"({owners[w].split('.')[1]}.{w})" for w in sorted(owners))


class UnknownTable(Exception):
    def __init__(self, name: str, present: list[str]):
        super().__init__(name)
        self.name, self.present = name, present


class _Unavailable:
    """An import finder for which `names` do not exist."""

    def __init__(self, names: frozenset[str]):
        self.names = names

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


def import_engine():
    """DuckDB, delta-rs and pyarrow's datasets, imported without pandas and numpy: pyarrow probes
    both when it loads (its optional pandas and NumPy interop) and nothing here uses either, and they
    are half of the imports' time (~0.4 of ~0.7 s here, bench/README.md). Only while these load: a later
    `import numpy` works, and a process that already has them keeps them."""
    import importlib
    import sys

    blocker = _Unavailable(frozenset({"pandas", "numpy"}) - set(sys.modules))
    sys.meta_path.insert(0, blocker)
    try:
        for name in ("pyarrow.dataset", "deltalake", "duckdb"):
            module = importlib.import_module(name)
    finally:
        sys.meta_path.remove(blocker)
    return module


def connect(root: Lakehouse, sql: str):
    """A sandboxed, locked in-memory DuckDB connection with the lakehouse tables `sql` needs as
    `<layer>.<table>` views, and the SQL to run (the statement judged by check_statement)."""
    duckdb = import_engine()
    con = duckdb.connect(":memory:")
    try:
        return con, _prepare(con, root, sql)
    except BaseException:
        con.close()           # now, not at the interpreter's exit (where DuckDB's threads may abort it)
        raise


def _prepare(con, root: Lakehouse, sql: str):
    # the sandbox first, before anything of the statement is even parsed (binding a table function
    # such as read_json() opens its file: DuckDB's get_table_names binds). DuckDB spills to its temp directory, the one
    # folder the sandbox lets it use: a private one, removed at exit
    spill = tempfile.mkdtemp(prefix="fleethealth-query-")
    atexit.register(shutil.rmtree, spill, True)
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET temp_directory = ?", [spill])
    for key, value in resources().items():
        con.execute(f"SET {key} = ?", [value])
    for key, value in SANDBOX:
        con.execute(f"SET {key} = {str(value).lower()}")
    statement, select = check_statement(con, sql)
    present = present_tables(root)
    names, shown = named_tables(con, select)
    system = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE internal").fetchall()}
    wanted = set()
    for parts in names or ():
        if parts[0] == "memory" and len(parts) == 3:
            parts = parts[1:]
        name = ".".join(parts)
        if len(parts) == 2 and parts[0] in LAYERS:
            if name not in present:
                raise UnknownTable(name, sorted(present))
            wanted.add(name)
        elif not ((len(parts) == 1 and parts[0] in system)
                  or (len(parts) == 2 and parts[0] in ("information_schema", "pg_catalog"))):
            # a name (not a path) that means a lakehouse table (`incidents`): which one
            if re.fullmatch(r"[a-z][a-z0-9_]*", name) or did_you_mean(name, sorted(present)):
                raise UnknownTable(name, sorted(present))
            raise Refused(f"{name} is not a table of the lakehouse ({', '.join(LAYERS)}.<table>): "
                          "files are not read by path")
    # views over Arrow datasets (delta-rs reads the files, not DuckDB): no setting is needed for them
    _register(con, {q: p for q, p in present.items() if q in wanted or not wanted})
    return SHOWN_TABLES.get(shown, statement.query) if _type(statement) == "SELECT" else statement.query


def _register(con, tables: dict[str, str]) -> None:
    for layer in sorted({q.split(".")[0] for q in tables}):
        con.execute(f"CREATE SCHEMA {layer}")                      # names of the catalog: no quoting needed
    for qualified, path in tables.items():
        layer, name = qualified.split(".")
        hidden = f"_delta_{layer}_{name}"
        # the path goes to delta-rs as an argument, never into SQL text
        con.register(hidden, arrow_dataset(path))
        con.execute(f"CREATE VIEW {layer}.{name} AS SELECT * FROM {hidden}")


def run(con, sql: str, fmt: str, limit: int, out: Path | None, timeout: float,
        wide: bool = False) -> tuple[int, bool]:
    """Run `sql` (what `connect` returned): print its rows (at most `limit`, 0: all; cells cut unless
    `wide`) or write them to `out`. Returns (rows printed or -1 when the limit cut them short, whether
    the timeout stopped it)."""
    stopped = threading.Event()

    def stop() -> None:
        stopped.set()
        con.interrupt()

    timer = threading.Timer(timeout, stop)
    timer.daemon = True
    timer.start()
    try:
        if out is not None:
            _write_file(con, sql, limit, out)
            return 0, False
        return _print(con, sql, fmt, limit, wide=wide), False
    except Exception:
        if stopped.is_set():
            return 0, True
        raise
    finally:
        timer.cancel()


def _print(con, sql: str, fmt: str, limit: int, raw: bool = False, wide: bool = False) -> int:
    result = con.execute(sql)                    # streams: rows are computed as they are fetched
    columns = [d[0] for d in result.description]
    emit = _emitter(fmt, columns, raw, wide)
    shown = 0
    while rows := result.fetchmany(BATCH):
        for row in rows:
            if limit and shown == limit:
                emit(None)
                return -1
            emit(dict(zip(columns, row)))
            shown += 1
    emit(None)
    return shown


def _write_file(con, sql: str, limit: int, out: Path) -> None:
    """Every row (or the first `limit`) to one Parquet, CSV or JSON-lines file, written beside it
    and renamed into place (DuckDB itself may not write files: Python does)."""
    fmt = OUT_FORMATS[out.suffix.lower()]
    tmp = out.with_name(f".{out.name}.{uuid.uuid4().hex[:8]}")
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            rel = con.sql(sql)
            if limit:
                rel = rel.limit(limit)
            with rel.to_arrow_reader(batch_size=BATCH * 64) as reader:
                with pq.ParquetWriter(tmp, reader.schema) as writer:
                    for batch in reader:
                        writer.write_batch(batch)
        else:
            import contextlib

            with open(tmp, "w", newline="") as f, contextlib.redirect_stdout(f):
                _print(con, sql, fmt, limit, raw=True)
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            tmp.unlink()

