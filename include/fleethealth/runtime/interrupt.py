"""Stopping a run cleanly on Ctrl-C (SIGINT) or SIGTERM: `fleethealth run` runs in `signals_stop_the_run`.

The handler only records the signal and cancels the running Spark jobs from a thread of its own: it
never raises inside a Py4J call (that leaves the main thread's connection mid-answer: PySpark's own
SIGINT handler, which calls the JVM from the handler, fails with "reentrant call" there) and never
calls the JVM on the main thread's connection. The main thread then meets either a cancelled job (a
Py4J/Spark error, which `check` turns into `Interrupted` wherever such errors are caught) or a
`check` between steps, and unwinds: the hour locks and staged files are released by their context
managers and `finally` blocks.

Publishing a layer (several tables, one Delta commit each) is never cut in half: a signal during
`publishing()` waits for it to finish (the hours are then published), and `publishing()` does not
start once a signal came (nothing of the layer is published).
"""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

SIGNALS = (signal.SIGINT, signal.SIGTERM)
CANCEL_EVERY_S = 0.5


class Interrupted(BaseException):
    """The run was asked to stop. A BaseException, as KeyboardInterrupt: `except Exception` paths
    that record a failed hour do not take it."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum          # as a shell reports a process the signal ended: 130, 143


_state = {"signum": None, "publishing": 0, "cancelling": False, "cancel": None, "done": threading.Event()}


@contextmanager
def signals_stop_the_run():
    """A block (a run) that SIGINT and SIGTERM stop as the module says: errors raised in it after a
    signal (a cancelled job, a closed connection) leave it as Interrupted. The signals' handlers from
    before are back after it."""
    if threading.current_thread() is not threading.main_thread():   # only the main thread gets signals
        yield
        return
    before = {signum: signal.getsignal(signum) for signum in SIGNALS}
    _state.update(signum=None, publishing=0, cancelling=False, cancel=None, done=threading.Event())
    handle_signals()
    try:
        yield
    except Exception:
        check()
        raise
    finally:
        _state["done"].set()                  # the canceller stops
        for signum, handler in before.items():
            signal.signal(signum, handler)


def handle_signals(cancel=None) -> None:
    """(Re)install the handlers; `cancel()` cancels the running Spark jobs (called from another
    thread, again every CANCEL_EVERY_S so that jobs started before the main thread notices fail too).
    Call it again once the SparkSession is built: PySpark installs its own SIGINT handler then."""
    if cancel is not None:
        _state["cancel"] = cancel
    for signum in SIGNALS:
        signal.signal(signum, _on_signal)
    if requested() and not _state["publishing"]:
        _start_cancelling()


def _on_signal(signum, _frame) -> None:
    if _state["signum"] is None:
        _state["signum"] = signum
    if not _state["publishing"]:
        _start_cancelling()


def _start_cancelling() -> None:
    cancel, done = _state["cancel"], _state["done"]
    if _state["cancelling"] or cancel is None:
        return
    _state["cancelling"] = True

    def cancel_until_done() -> None:
        while not done.is_set():
            try:
                if not _state["publishing"]:     # a finishing() block that began after the signal
                    cancel()
            except Exception:  # noqa: BLE001 - the JVM going away as the run ends
                return
            done.wait(CANCEL_EVERY_S)

    threading.Thread(target=cancel_until_done, name="cancel-spark-jobs", daemon=True).start()


def requested() -> bool:
    """Whether a signal asked the run to stop."""
    return _state["signum"] is not None


def check() -> None:
    """Raise Interrupted if a signal asked the run to stop. Call it where a Spark error is caught as
    an hour's failure: after a signal, that error is the cancellation."""
    if _state["signum"] is not None:
        raise Interrupted(_state["signum"])


@contextmanager
def publishing():
    """A block that publishes (Delta commits of several tables): not started after a signal
    (Interrupted), finished whatever signal comes while it runs (jobs are cancelled after it)."""
    _state["publishing"] += 1         # first: a signal from here on waits for the block
    try:
        check()
        yield
    finally:
        _state["publishing"] -= 1
        if requested() and not _state["publishing"]:
            _start_cancelling()


@contextmanager
def finishing():
    """A block that records what was published before a signal (the gates' results of published
    layers): it runs even after a signal, and its jobs are not cancelled while it runs."""
    _state["publishing"] += 1
    try:
        yield
    finally:
        _state["publishing"] -= 1
        if requested() and not _state["publishing"]:
            _start_cancelling()
