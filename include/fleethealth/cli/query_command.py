"""`fleethealth query`: read-only SQL over the lakehouse's tables, by DuckDB over delta-rs (the
default: cli.query_duckdb) or Spark SQL (cli.query), printed or written to a file."""
from __future__ import annotations

import atexit
import math
import shutil
import sys
import tempfile
import threading
from pathlib import Path

from fleethealth.cli.usage import UsageError, _first_line, _java_error, session
from fleethealth.lake import tables as lake_tables
from fleethealth.lake.catalog import Lakehouse
from fleethealth.runtime import config

DEFAULT_QUERY_LIMIT = 1000
DEFAULT_QUERY_TIMEOUT_S = 300


def cmd_query(args) -> int:
    root = args.lakehouse
    if not root.root.is_dir():
        raise UsageError(f"no lakehouse at {root} (give --lakehouse, or set ${config.ENV_LAKEHOUSE})")
    out = _query_out(args.out, root, args.overwrite) if args.out else None
    if not (math.isfinite(args.timeout) and args.timeout > 0):
        raise UsageError(f"--timeout {args.timeout:g}: a number of seconds > 0")
    limit = args.limit if args.limit is not None else (0 if out else DEFAULT_QUERY_LIMIT)
    if limit < 0:
        raise UsageError(f"--limit {limit}: a number of rows (0 for all)")
    if args.engine == "spark":
        return _query_spark(args, root, out, limit)
    return _query_duckdb(args, root, out, limit)


def _query_out(given: str, root: Lakehouse, overwrite: bool) -> Path:
    """The file --out names, if `query` may write it (nothing is created here): outside the lakehouse
    and its tables (links followed), in a folder that exists, and not a link to nothing (writing
    through it would create whatever it points to)."""
    from fleethealth.cli import query

    out = Path(given).resolve()
    if out.suffix.lower() not in query.OUT_FORMATS:
        raise UsageError(f"--out {given}: name it .parquet, .csv or .json")
    if Path(given).is_symlink() and not Path(given).exists():
        raise UsageError(f"--out {given}: a link to nothing; `query` does not follow it")
    if out.is_relative_to(root.root):
        raise UsageError(f"--out {given}: inside the lakehouse; `query` never writes there")
    if lake_tables.holds_tables(root, out):
        raise UsageError(f"--out {given}: inside the lakehouse's tables; `query` never writes there")
    if near := lake_tables.delta_table_near(out):
        raise UsageError(f"--out {given}: {near[0]} a Delta table ({near[1]}); `query` never writes there")
    if not out.parent.is_dir():
        raise UsageError(f"--out {given}: no folder {out.parent}; `query` creates none")
    if out.is_dir():
        raise UsageError(f"--out {given}: a folder; name a file")
    if out.exists() and not overwrite:
        raise UsageError(f"--out {given}: exists (--overwrite to replace it)")
    return out


def _query_duckdb(args, root: Lakehouse, out: Path | None, limit: int) -> int:
    """The default engine: DuckDB over delta-rs, no JVM (fleethealth.cli.query_duckdb)."""
    from fleethealth.cli import query_duckdb as q
    from fleethealth.cli.query import Refused

    duckdb = q.import_engine()

    con = None
    try:
        con, sql = q.connect(root, args.sql)
        shown, stopped = q.run(con, sql, args.format, limit, out, args.timeout, args.wide)
    except Refused as exc:
        raise UsageError(f"query refused: {exc}; `query` only reads ({q.READS}). Writes and maintenance "
                         "run in the DAGs (spark/maintenance.py)") from None
    except q.UnknownTable as exc:
        raise _unknown_table(exc.name, root, exc.present) from None
    except duckdb.PermissionException as exc:   # the sandbox: a file, an extension, a locked setting
        raise UsageError(f"query refused: {_first_line(exc)}; `query` reads the lakehouse's tables only") from None
    except (duckdb.ParserException, duckdb.BinderException, duckdb.CatalogException,
            duckdb.InvalidInputException) as exc:
        hint = q.keyword_hint(root, args.sql) if isinstance(exc, duckdb.ParserException) else None
        raise UsageError("query error: " + "\n".join(q.error_lines(exc) + ([f"hint: {hint}"] if hint else []))) from None
    except duckdb.Error as exc:    # while running (a conversion, out of memory): one line, exit 1
        print(f"fleethealth: query failed: {_first_line(exc)}", file=sys.stderr)
        return 1
    finally:
        if con is not None:     # closed here, not at the interpreter's exit (DuckDB's threads may abort it)
            con.close()
    if stopped:
        print(f"fleethealth: query stopped after {args.timeout:g} s (--timeout)", file=sys.stderr)
        return 1
    return _query_done(shown, limit, out)


def _unknown_table(name: str, root: Lakehouse, tables: list[str]) -> UsageError:
    from fleethealth.cli.query import did_you_mean

    meant = did_you_mean(name, tables)
    return UsageError(f"unknown table {name} in query"
                      + (f": did you mean {' or '.join(meant)}? Tables" if meant else "; tables")
                      + f" in {root}: {', '.join(tables) or 'none'}")


def _query_spark(args, root: Lakehouse, out: Path | None, limit: int) -> int:
    """--engine spark: Spark SQL (Delta's own reader, Spark's dialect) in a local JVM."""
    import logging

    from pyspark.errors import AnalysisException, ParseException

    from fleethealth.cli import query
    from fleethealth.lake import tables as lake

    # PySpark logs every failed SQL statement on its own; we print the one line the user needs.
    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)
    # the catalog's databases (bronze, silver, gold: names, nothing else) in a folder of its own:
    # `query` writes nothing into the lakehouse, nor anywhere that outlives it
    warehouse = tempfile.mkdtemp(prefix="fleethealth-query-")
    atexit.register(shutil.rmtree, warehouse, True)
    spark = session("fleethealth-query", args.lakehouse, cores="local[2]", warehouse=warehouse)
    registered = lake.register_all(spark, args.lakehouse)
    stopped = threading.Event()

    def stop() -> None:
        stopped.set()
        spark.sparkContext.cancelAllJobs()

    timer = threading.Timer(args.timeout, stop)
    timer.daemon = True
    try:
        timer.start()       # spark.sql() runs a command (DESCRIBE HISTORY reads a Delta log) as it analyses it
        query.check_parsed(spark, args.sql)          # before anything runs
        df = spark.sql(args.sql)
        query.check_analysed(spark, df)
        shown = query.write(df, args.format, limit, out, args.wide)
    except query.Refused as exc:
        raise UsageError(f"query refused: {exc}; `query` only reads ({query.READS}). Writes and maintenance "
                         "run in the DAGs (spark/maintenance.py)") from None
    except ParseException as exc:
        raise UsageError(f"query error: {_first_line(exc)}") from None
    except AnalysisException as exc:
        if getattr(exc, "getCondition", lambda: None)() == "TABLE_OR_VIEW_NOT_FOUND" or "TABLE_OR_VIEW_NOT_FOUND" in str(exc):
            name = str(exc).split("`")[1:6:2] if "`" in str(exc) else []
            raise _unknown_table(".".join(name), root, registered) from None
        raise UsageError(f"query error: {_first_line(exc)}") from None
    except Exception as exc:  # noqa: BLE001 - the JVM's failures (out of memory, a cancelled job): one line
        why = (f"stopped after {args.timeout:g} s (--timeout)" if stopped.is_set()
               else f"failed: {_java_error(exc)}")
        print(f"fleethealth: query {why}", file=sys.stderr)
        return 1
    finally:
        timer.cancel()
    return _query_done(shown, limit, out)


def _query_done(shown: int, limit: int, out: Path | None) -> int:
    if shown < 0:
        print(f"fleethealth: showing the first {limit} rows (--limit N for more, --limit 0 for all, "
              "--out FILE for a file)", file=sys.stderr)
    elif out is not None:
        print(f"fleethealth: wrote {out}", file=sys.stderr)
    return 0
