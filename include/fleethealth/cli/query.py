"""`fleethealth query`: SQL over the lakehouse's tables that can only read, streamed and bounded.

Whether a statement may run is decided from Spark's own plan of it, never from its text, and before
anything runs: the parsed plan (Spark runs commands, and EXECUTE IMMEDIATE's statement, while it
analyses them) may hold only the query operators of QUERY_NODES over the lakehouse's own tables
(`<layer>.<table>`: no file read by path such as text.`/etc/hostname`), and `range()` of the table
functions; an IDENTIFIER(...) plan is built from its identifier first and then judged. A read-only
command (SHOW, DESCRIBE, EXPLAIN of such a query) may be the root, if what it shows or describes is
a lakehouse table or schema (no path, no delta.`/p`: DESCRIBE HISTORY reads that log). Anything else
is refused: every command (DML, DDL, SET, ADD JAR, CACHE, VACUUM, OPTIMIZE, ...), INSERT ...
DIRECTORY, EXECUTE IMMEDIATE, SQL scripts, TRANSFORM (runs an external command). The analysed plan
is checked again before any row is read (views expanded): no command, no reflect()/java_method()
(calls Java methods).
Writes and maintenance belong to the DAGs.
"""
from __future__ import annotations

import csv
import difflib
import json
import shutil
import sys
import uuid
from datetime import datetime, timezone
from pathlib import Path

from fleethealth.lake.tables import LAYERS as DATABASES   # every table is <layer>.<table>

READ_ONLY_COMMANDS = frozenset({
    "ShowTables", "ShowTablesExtended", "ShowNamespaces", "ShowColumns", "ShowCreateTable",
    "ShowTableProperties", "ShowFunctions", "ShowPartitions", "ShowViews", "ShowCatalogs",
    "ShowCurrentNamespace", "DescribeRelation", "DescribeColumn", "DescribeNamespace", "DescribeFunction",
    "DescribeDeltaDetailCommand", "DescribeDeltaHistory", "DescribeDeltaHistoryCommand",
})
# the parsed plan of a query may hold these operators only (an allow-list: what may appear)
QUERY_NODES = frozenset({
    "Project", "Filter", "Aggregate", "UnresolvedHaving", "Sort", "GlobalLimit", "LocalLimit", "Offset",
    "Tail", "Distinct", "Deduplicate", "Join", "LateralJoin", "Union", "Intersect", "Except",
    "SubqueryAlias", "UnresolvedRelation", "RelationTimeTravel", "UnresolvedTableValuedFunction",
    "OneRowRelation", "LocalRelation", "UnresolvedInlineTable", "UnresolvedWith", "CTERelationDef",
    "CTERelationRef", "WithCTE", "Generate", "Sample", "Window", "WithWindowDefinition", "UnresolvedHint",
    "Pivot", "Unpivot", "Expand", "RepartitionByExpression", "Repartition", "RebalancePartitions",
    "UnresolvedSubqueryColumnAliases", "UnresolvedTVFAliases", "Subquery",
})
TABLE_FUNCTIONS = frozenset({"range"})
READS = "SELECT/WITH/VALUES, SHOW, DESCRIBE, EXPLAIN"
OUT_FORMATS = {".parquet": "parquet", ".csv": "csv", ".json": "json", ".jsonl": "json"}
TABLE_CHUNK = 1000       # rows per printed table when everything is asked for (--limit 0)
CELL_WIDTH = 80          # characters of a cell the table format shows (--wide: every one)

_CATALYST = "org.apache.spark.sql.catalyst."


class Refused(Exception):
    """The statement would do more than read: one line saying what and why."""


def check_parsed(spark, sql: str) -> None:
    """Raise Refused unless `sql` parses to a plan that only reads the lakehouse's tables (nothing
    runs here); a syntax error raises Spark's ParseException."""
    parser = spark._jsparkSession.sessionState().sqlParser()
    _check_query(spark, parser, parser.parsePlan(sql))


def check_analysed(spark, df) -> None:
    """What Spark resolved the statement to (views expanded, functions resolved): no command, no
    call of a Java method."""
    _check(spark, df._jdf.queryExecution().analyzed())


def _name(x) -> str:
    return x.getClass().getName().rsplit(".", 1)[-1]


def _check_query(spark, parser, plan) -> None:
    root = _name(plan)
    if root == "ExplainCommand":
        return _check_query(spark, parser, plan.logicalPlan())
    if root in READ_ONLY_COMMANDS:
        return _check_named(plan)

    def judge(node):
        name = _name(node)
        if name == "PlanWithUnresolvedIdentifier":
            return _built(parser, node)
        if name not in QUERY_NODES:
            if "ExecuteImmediate" in name:
                raise Refused(f"EXECUTE IMMEDIATE runs another statement ({name})")
            if "ScriptTransformation" in name:
                raise Refused(f"TRANSFORM runs an external command ({name})")
            raise Refused(f"{_what(name)} ({name})")
        if name == "UnresolvedRelation":
            _check_table(_seq(node.multipartIdentifier()))
        if name == "UnresolvedTableValuedFunction":
            function = _seq(node.name())[-1].lower()
            if function not in TABLE_FUNCTIONS:
                raise Refused(f"the table function {function}() is not one `query` runs (only "
                              f"{', '.join(sorted(TABLE_FUNCTIONS))}())")
        return None
    _walk(spark, plan, judge)


def _walk(spark, plan, judge) -> None:
    """Call judge(node) on every plan node of `plan`, its CTE definitions and subqueries (a node it
    returns a plan for is replaced by that plan), and refuse reflect() anywhere in its expressions."""
    cls = spark._jvm.java.lang.Class.forName
    subquery = cls(_CATALYST + "expressions.SubqueryExpression")
    plan_class = cls(_CATALYST + "plans.QueryPlan")
    plans, expressions = [plan], []
    while plans or expressions:
        if expressions:
            expr = expressions.pop()
            if _name(expr) == "CallMethodViaReflection":
                raise Refused("reflect()/java_method() call Java methods")
            if subquery.isInstance(expr):
                plans.append(expr.plan())
            expressions.extend(_seq(expr.children()))
            continue
        node = plans.pop()
        instead = judge(node)
        if instead is not None:
            plans.append(instead)
            continue
        plans.extend(_seq(node.children()))
        plans.extend(x for x in _seq(node.innerChildren()) if plan_class.isInstance(x))   # CTE definitions
        expressions.extend(_seq(node.expressions()))


def _check_named(command) -> None:
    """What a read-only command shows or describes (its children) must be a lakehouse table, one of
    its schemas, the current one or a function: DESCRIBE HISTORY/DETAIL of a path or of delta.`/p`
    would read any Delta log the process reaches."""
    for child in _seq(command.children()):
        name = _name(child)
        if name in ("UnresolvedTableOrView", "UnresolvedTable", "UnresolvedView"):
            _check_table(_seq(child.multipartIdentifier()), cte=False)
        elif name == "UnresolvedNamespace":
            parts = [p.lower() for p in _seq(child.multipartIdentifier())]
            if len(parts) > 1 or parts and parts[0] not in DATABASES:
                raise Refused(f"{'.'.join(parts)} is not a schema of the lakehouse ({', '.join(DATABASES)})")
        elif name in ("UnresolvedPathBasedDeltaTable", "UnresolvedPathBasedTable"):
            _check_table([child.path()], cte=False)
        elif name not in ("CurrentNamespace$", "UnresolvedFunctionName"):
            raise Refused(f"{_name(command)} of {name}: only the lakehouse's tables are shown or described")


def did_you_mean(name: str, tables: list[str]) -> list[str]:
    """The lakehouse tables an unknown table name most likely means: those of its table name in any
    layer (`incidents` -> gold.incidents), else the closest spelling (`gold.incidnts`)."""
    name = name.lower()
    same = [t for t in tables if t.split(".")[-1] == name.rsplit(".", 1)[-1]]
    return same or difflib.get_close_matches(name, tables, n=1, cutoff=0.85)


def _check_table(parts: list[str], cte: bool = True) -> None:
    """A table name must be a lakehouse table's (`<layer>.<table>`, or a CTE's one-part name): a
    data source and a path (text.`/etc/hostname`) would read any file the user can."""
    if (cte and len(parts) == 1) or (len(parts) == 2 and parts[0].lower() in DATABASES) or (
            len(parts) == 3 and parts[0].lower() == "spark_catalog" and parts[1].lower() in DATABASES):
        return
    raise Refused(f"{'.'.join(parts)} is not a table of the lakehouse ({', '.join(DATABASES)}.<table>): "
                  "files are not read by path")


def _built(parser, node):
    """The plan IDENTIFIER(...) stands for, built from its (constant) identifier, to be judged itself."""
    expr = node.identifierExpr()
    if not expr.foldable():
        raise Refused("IDENTIFIER(...) of something that is not a constant")
    parts = parser.parseMultipartIdentifier(str(expr.eval(None)))
    return node.planBuilder().apply(parts, node.children())


def _check(spark, plan) -> None:
    root = _name(plan)
    if root in READ_ONLY_COMMANDS or root == "ExplainCommand":
        return
    cls = spark._jvm.java.lang.Class.forName
    command = cls(_CATALYST + "plans.logical.Command")
    statement = cls(_CATALYST + "plans.logical.ParsedStatement")

    def judge(node):
        name = _name(node)
        if command.isInstance(node) or statement.isInstance(node) or name.endswith("Statement"):
            raise Refused(f"{_what(name)} ({name})")
        if "ScriptTransformation" in name:
            raise Refused(f"TRANSFORM runs an external command ({name})")
        return None
    _walk(spark, plan, judge)


def _what(name: str) -> str:
    words = [("IntoDir", "INSERT ... DIRECTORY writes files"), ("Insert", "INSERT writes rows"), ("AppendData", "INSERT writes rows"),
             ("Overwrite", "INSERT OVERWRITE replaces rows"), ("Delete", "DELETE removes rows"),
             ("Update", "UPDATE changes rows"), ("Merge", "MERGE changes rows"), ("Drop", "DROP removes tables"),
             ("Truncate", "TRUNCATE removes rows"), ("Restore", "RESTORE rewrites a table's history"),
             ("Vacuum", "VACUUM deletes files"), ("Optimize", "OPTIMIZE rewrites files"),
             ("Create", "CREATE makes tables or views"), ("Alter", "ALTER changes tables"),
             ("SetTable", "ALTER changes tables"), ("Compound", "a SQL script runs statements"),
             ("Cache", "CACHE changes the session"), ("Set", "SET changes the session"),
             ("Add", "ADD loads code or files")]
    return next((what for word, what in words if word in name), "it does more than read")


def _seq(scala_seq) -> list:
    out, it = [], scala_seq.iterator()
    while it.hasNext():
        out.append(it.next())
    return out


def write(df, fmt: str, limit: int, out: Path | None, wide: bool = False) -> int:
    """Print `df` (table, csv or json lines), at most `limit` rows (0: all), row by row from the
    executors (`toLocalIterator`, never every row in the driver); or, with `out`, write it as one
    Parquet/CSV/JSON file. Returns the rows printed, -1 when the limit cut them short."""
    if out is not None:
        _write_file(df if not limit else df.limit(limit), out)
        return 0
    from fleethealth.cli.parse import utc_text

    # timestamps formatted by Spark in its UTC session: collected, they would be in this process's zone
    rows = utc_text(df.limit(limit + 1) if limit else df).toLocalIterator()
    columns, shown, cut = df.columns, 0, False
    emit = _emitter(fmt, columns, wide=wide)
    for row in rows:
        if limit and shown == limit:
            cut = True
            break
        emit(row.asDict(recursive=True))
        shown += 1
    emit(None)
    return -1 if cut else shown


def timestamp_text(v: datetime) -> str:
    """A timestamp as every output of `query` (and `parse`) prints it: ISO-8601 UTC to the millisecond,
    `2026-11-20T10:20:00.000Z`; a naive one is UTC already (the sessions' zone)."""
    v = v.astimezone(timezone.utc) if v.tzinfo else v
    return f"{v:%Y-%m-%dT%H:%M:%S}.{v.microsecond // 1000:03d}Z"


def _json_default(v):
    return timestamp_text(v) if isinstance(v, datetime) else str(v)


def _emitter(fmt: str, columns: list[str], raw: bool = False, wide: bool = False):
    """A function taking each row (a dict), then None at the end. What it prints has its control and
    bidirectional characters escaped (JSON's own escapes: every one but ASCII's printable), unless
    `raw` (a file of --out keeps the data as it is); timestamps in one format (`timestamp_text`).
    The table cuts a cell at CELL_WIDTH characters unless `wide`, and says so on stderr at the end."""
    from fleethealth.runtime.text import printable

    def value(v):
        return timestamp_text(v) if isinstance(v, datetime) else v

    if fmt == "json":
        return lambda r: r is not None and print(json.dumps(r, default=_json_default))
    if fmt == "csv":
        text = (lambda v: value(v)) if raw else (lambda v: printable(value(v)))
        w = csv.writer(sys.stdout, lineterminator="\n")
        w.writerow(map(text, columns))
        return lambda r: r is not None and w.writerow([text(r[c]) for c in columns])
    from fleethealth.report import text as report

    chunk: list[dict] = []
    printed, cut = [False], [0]

    def cell(v):
        v = value(v)
        if wide or v is None or isinstance(v, (bool, int, float)):
            return v
        shown = printable(v if isinstance(v, str) else str(v))
        if len(shown) <= CELL_WIDTH:
            return shown
        cut[0] += 1
        return shown[:CELL_WIDTH - 1] + "…"

    def table(r):
        if r is not None:
            chunk.append({c: cell(r[c]) for c in columns})
        if (r is None and (chunk or not printed[0])) or len(chunk) == TABLE_CHUNK:
            print(report.table(chunk, columns, fmt="psql"))
            chunk.clear()
            printed[0] = True
        if r is None and cut[0]:
            print(f"fleethealth: {cut[0]} cell(s) cut at {CELL_WIDTH} characters (--wide to show them whole)",
                  file=sys.stderr)
    return table


def _write_file(df, out: Path) -> None:
    fmt = OUT_FORMATS[out.suffix.lower()]
    tmp = out.with_name(f".{out.name}.{uuid.uuid4().hex[:8]}")
    try:
        writer = df.coalesce(1).write.format(fmt)
        if fmt == "csv":
            writer = writer.option("header", "true")
        writer.save(str(tmp))
        [part] = [p for p in tmp.iterdir() if p.name.startswith("part-")]
        part.replace(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
