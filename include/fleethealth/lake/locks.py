"""One writer per hour: the DAG's tasks and `fleethealth run` take the hour's lock before they pull,
stage, validate or publish it, so two runs of the same hour never interleave their writes.

The lock is an exclusive `flock` on <lakehouse>/_locks/<YYYY-MM-DDTHH>.lock (released by the kernel
when its process dies, even by kill -9), re-entrant within one thread. Whoever holds it is written
into the file, so a run that waits longer than FLEETHEALTH_LOCK_WAIT_S (default 600 s) refuses with
a message naming the holder. A table written whole by runs of any hour (gold.notifications) has
its own lock, `table_lock`.
"""
from __future__ import annotations

import fcntl
import functools
import inspect
import json
import os
import socket
import sys
import threading
import time
from contextlib import ExitStack, contextmanager
from datetime import datetime, timezone
from pathlib import Path

from fleethealth.lake.catalog import Lakehouse
from fleethealth.runtime import config, interrupt

POLL_S = 0.5
_held = threading.local()


class HourBusy(RuntimeError):
    """The hour (or a host of it, or a table written by runs of any hour) is being processed by another run."""


def wait_seconds() -> float:
    return config.lock_wait_s()


@contextmanager
def hour_lock(hour: datetime, lakehouse: Lakehouse, what: str = "", wait_s: float | None = None, part: str = ""):
    """Hold the lock of `hour` (or of one `part` of it, such as a host's pull), waiting up to `wait_s`
    (default wait_seconds()); raises HourBusy."""
    with _flock(lakehouse.hour_lock(hour, part), f"{hour.isoformat()} is being processed", what, wait_s):
        yield


@contextmanager
def table_lock(qualified: str, lakehouse: Lakehouse, what: str = "", wait_s: float | None = None):
    """Hold the lock of a table written whole by runs of any hour (gold.notifications: two runs of
    different hours must not both read it, send, and overwrite each other's record of what was sent);
    <lakehouse>/_locks/<layer.table>.lock, waiting as hour_lock does; raises HourBusy."""
    with _flock(lakehouse.table_lock(qualified), f"{qualified} is being written", what, wait_s):
        yield


@contextmanager
def _flock(path: Path, busy: str, what: str, wait_s: float | None):
    """The exclusive flock of `path`, re-entrant in this thread; `busy` starts the refusal message."""
    held = getattr(_held, "paths", None)
    if held is None:
        held = _held.paths = {}
    if str(path) in held:                       # re-entrant in this thread
        held[str(path)] += 1
        try:
            yield
        finally:
            held[str(path)] -= 1
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + (wait_seconds() if wait_s is None else wait_s)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise HourBusy(f"{busy} by another run "
                                   f"({_holder(path)}); not starting {what or 'this run'} -- "
                                   f"try again when it has finished") from None
                interrupt.check()
                time.sleep(POLL_S)
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "what": what,
                                 "command": " ".join(sys.argv[:3]),
                                 "since": datetime.now(timezone.utc).isoformat(timespec="seconds")}).encode())
        held[str(path)] = 1
        try:
            yield
        finally:
            del held[str(path)]
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


@contextmanager
def hours_lock(hours, lakehouse: Lakehouse, what: str = ""):
    """Hold the locks of several hours, taken in time order (two runs of overlapping windows cannot
    each hold an hour the other waits for)."""
    with ExitStack() as stack:
        for hour in sorted(hours):
            stack.enter_context(hour_lock(hour, lakehouse, what))
        yield


def _holder(path: Path) -> str:
    try:
        info = json.loads(path.read_text() or "{}")
    except (OSError, ValueError):
        return "holder unknown"
    return (f"{info.get('what') or info.get('command', '?')}, pid {info.get('pid', '?')} on "
            f"{info.get('host', '?')} since {info.get('since', '?')}")


def holding_hour(what: str):
    """Decorate a job function taking `hour` and `lakehouse` so that it runs holding the hour's lock;
    `what` (formatted with the call's arguments) names it to a run that has to wait."""
    def decorate(fn):
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def locked(*args, **kwargs):
            call = signature.bind(*args, **kwargs)
            call.apply_defaults()
            with hour_lock(call.arguments["hour"], call.arguments["lakehouse"], what.format(**call.arguments)):
                return fn(*args, **kwargs)
        return locked
    return decorate
