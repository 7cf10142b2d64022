"""`fleethealth query`: SQL over the lakehouse's tables that can only read, streamed and bounded.

Whether a statement may run is decided from Spark's own plan of it, never from its text: the parsed
plan (before anything runs: Spark runs commands while it analyses them, Delta's RESTORE included)
and, for queries, the analysed plan again before any row is read. A plan may hold only query
operators, or be one of the read-only commands in READ_ONLY_COMMANDS at its root. Anything else is
refused: every Catalyst `Command` (DML, DDL, SET, ADD JAR, CACHE, VACUUM, OPTIMIZE, ...), every parsed
statement (INSERT, Delta's RESTORE), SQL scripts (BEGIN ... END), TRANSFORM (runs an external
command) and reflect()/java_method() (call Java methods). Writes and maintenance belong to the DAGs.
"""
from __future__ import annotations

import csv
import json
import shutil
import sys
import uuid
from pathlib import Path

READ_ONLY_COMMANDS = frozenset({
    "ShowTables", "ShowTablesExtended", "ShowNamespaces", "ShowColumns", "ShowCreateTable",
    "ShowTableProperties", "ShowFunctions", "ShowPartitions", "ShowViews", "ShowCatalogs",
    "ShowCurrentNamespace", "DescribeRelation", "DescribeColumn", "DescribeNamespace", "DescribeFunction",
    "ExplainCommand", "DescribeDeltaDetailCommand", "DescribeDeltaHistory", "DescribeDeltaHistoryCommand",
})
READS = "SELECT/WITH/VALUES, SHOW, DESCRIBE, EXPLAIN"
OUT_FORMATS = {".parquet": "parquet", ".csv": "csv", ".json": "json", ".jsonl": "json"}
TABLE_CHUNK = 1000       # rows per printed table when everything is asked for (--limit 0)

_CATALYST = "org.apache.spark.sql.catalyst."


class Refused(Exception):
    """The statement would do more than read: one line saying what and why."""


def check_parsed(spark, sql: str) -> None:
    """Raise Refused unless `sql` parses to a plan that only reads (nothing runs here); a syntax error
    raises Spark's ParseException."""
    _check(spark, spark._jsparkSession.sessionState().sqlParser().parsePlan(sql))


def check_analysed(spark, df) -> None:
    """The same check on what Spark resolved the statement to (views expanded, functions resolved)."""
    _check(spark, df._jdf.queryExecution().analyzed())


def _check(spark, plan) -> None:
    jvm = spark._jvm
    cls = jvm.java.lang.Class.forName
    command = cls(_CATALYST + "plans.logical.Command")
    statement = cls(_CATALYST + "plans.logical.ParsedStatement")
    subquery = cls(_CATALYST + "expressions.SubqueryExpression")
    plan_class = cls(_CATALYST + "plans.QueryPlan")
    name_of = lambda x: x.getClass().getName().rsplit(".", 1)[-1]  # noqa: E731
    root = name_of(plan)
    if root in READ_ONLY_COMMANDS:
        return                      # its children are the names it shows or describes
    plans, expressions = [plan], []
    while plans or expressions:
        if expressions:
            expr = expressions.pop()
            if name_of(expr) == "CallMethodViaReflection":
                raise Refused("reflect()/java_method() call Java methods")
            if subquery.isInstance(expr):
                plans.append(expr.plan())
            expressions.extend(_seq(expr.children()))
            continue
        node = plans.pop()
        name = name_of(node)
        if command.isInstance(node) or statement.isInstance(node) or name.endswith("Statement"):
            raise Refused(f"{_what(name)} ({name})")
        if "ScriptTransformation" in name:
            raise Refused(f"TRANSFORM runs an external command ({name})")
        plans.extend(_seq(node.children()))
        plans.extend(x for x in _seq(node.innerChildren()) if plan_class.isInstance(x))   # CTE definitions
        expressions.extend(_seq(node.expressions()))


def _what(name: str) -> str:
    words = [("Insert", "INSERT writes rows"), ("AppendData", "INSERT writes rows"),
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


def write(df, fmt: str, limit: int, out: Path | None) -> int:
    """Print `df` (table, csv or json lines), at most `limit` rows (0: all), row by row from the
    executors (`toLocalIterator`, never every row in the driver); or, with `out`, write it as one
    Parquet/CSV/JSON file. Returns the rows printed, -1 when the limit cut them short."""
    if out is not None:
        _write_file(df if not limit else df.limit(limit), out)
        return 0
    rows = (df.limit(limit + 1) if limit else df).toLocalIterator()
    columns, shown, cut = df.columns, 0, False
    emit = _emitter(fmt, columns)
    for row in rows:
        if limit and shown == limit:
            cut = True
            break
        emit(row.asDict(recursive=True))
        shown += 1
    emit(None)
    return -1 if cut else shown


def _emitter(fmt: str, columns: list[str]):
    """A function taking each row (a dict), then None at the end."""
    if fmt == "json":
        return lambda r: r is not None and print(json.dumps(r, default=str))
    if fmt == "csv":
        w = csv.writer(sys.stdout, lineterminator="\n")
        w.writerow(columns)
        return lambda r: r is not None and w.writerow([r[c] for c in columns])
    from fleethealth.report import text as report

    chunk: list[dict] = []
    printed = [False]

    def table(r):
        if r is not None:
            chunk.append(r)
        if (r is None and (chunk or not printed[0])) or len(chunk) == TABLE_CHUNK:
            print(report.table(chunk, columns, fmt="psql"))
            chunk.clear()
            printed[0] = True
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
