"""What the commands share: a user mistake (`UsageError`: one line, exit 2) and a Spark session for
a lakehouse's tables."""
from __future__ import annotations

from fleethealth.lake.catalog import Lakehouse

EXIT_USAGE = 2


class UsageError(Exception):
    """A user mistake: printed as one line, exit 2."""


def session(app: str, lakehouse: Lakehouse | None, cores: str = "local[*]", short_lived: bool = False,
             warehouse: str | None = None):
    """A session for `lakehouse`'s tables (its warehouse folder, unless `warehouse`)."""
    from fleethealth.runtime.session import build_session, jvm_stderr_filtered

    try:
        with jvm_stderr_filtered():
            return build_session(app, warehouse or (lakehouse and lakehouse.warehouse),
                                 tables=lakehouse.tables if lakehouse else "", master=cores, short_lived=short_lived)
    except FileNotFoundError as exc:
        raise UsageError(str(exc)) from None


def _java_error(exc: Exception) -> str:
    """The innermost Java exception's class and message, else the first line of `exc`."""
    java = getattr(exc, "java_exception", None)
    while java is not None and java.getCause() is not None:
        java = java.getCause()
    if java is not None:
        return f"{java.getClass().getName()}: {java.getMessage()}".splitlines()[0]
    return _first_line(exc)


def _first_line(exc: Exception) -> str:
    """Spark's messages often start with an empty line: the first line that says something."""
    return next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
