"""log_cleaner_dead from the cleaner's own lines: a thread's "Error due to" / "Stopped" is a death, the
orderly stop of a broker shutting down ("Shutting down the log cleaner.", the thread's "Shutting down",
"Stopped", "Shutdown completed") is none."""
from __future__ import annotations

import pytest
from detector_frames import at, event, events, facts, findings, kraft_hosts

from fleethealth.gold import thresholds
from fleethealth.gold.detectors import log_cleaner_dead, run as run_detector
from fleethealth.gold.facts.core import cleaner_status
from fleethealth.runtime.frames import local_frame

pytestmark = pytest.mark.spark
THREAD = "kafka-log-cleaner-thread-0"
THREADS = "cluster string, host string, broker_id int, file string, captured_at timestamp, thread_name string"


def run(spark, rows):
    limits = thresholds.load()
    f = facts(spark, events(spark, rows), hosts=kraft_hosts(spark))
    f.threads = local_frame(spark, [], THREADS)
    f.__post_init__()
    f.cleaner_status = cleaner_status(f, limits["log_cleaner_dead.stale_ms"])
    return findings(run_detector(log_cleaner_dead, f, limits))


def orderly_stop(minute: int, cluster: str = "z1") -> list[tuple]:
    return [event(1, at(minute, 0.001), "cleaner_shutting_down", cluster),
            event(1, at(minute, 0.002), "cleaner_shutting_down", cluster),
            event(1, at(minute, 0.002), "cleaner_stopped", cluster),
            event(1, at(minute, 0.003), "cleaner_shutdown_completed", cluster)]


def test_an_orderly_stop_is_not_a_death(spark):
    rows = [event(1, at(2), "cleaner_starting", "z1"),
            event(1, at(10), "cleaner_summary", "z1", topic="__consumer_offsets", partition=3),
            *orderly_stop(40), event(1, at(41), "cleaner_starting", "z1")]
    assert run(spark, rows) == []


def test_a_death_before_the_orderly_stop_is_still_a_death(spark):
    rows = [event(1, at(20), "cleaner_error", "z1"),
            event(1, at(20), "cleaner_stopped", "z1"), *orderly_stop(40)]
    [f] = run(spark, rows)
    assert (f["kind"], f["entity"], f["first_seen"]) == ("log_cleaner_dead", "broker-1", at(20))
    assert f["evidence"] == "cleaner 'Error due to' at 06:20:00Z; cleaner 'Stopped' at 06:20:00Z"


def test_a_death_quotes_the_exception_under_its_error_line_whichever_file_it_is_in(spark):
    """The first line of the exception under "Error due to" (0.10's log-cleaner.log, tests/fixtures/golden/kafka/
    0.10.1_log-cleaner.log; 4.1's log-cleaner.log under the storage module's logger: the same record)."""
    trace = ("java.lang.IllegalArgumentException: requirement failed: 9730197928 messages in segment "
             "__consumer_offsets-38/00000000000000000000.log but offset map can fit only 5033164. You can increase "
             "log.cleaner.dedupe.buffer.size or decrease log.cleaner.threads\n\tat scala.Predef$.require(Predef.scala:219)")
    rows = [event(1, at(20), "cleaner_error", "z1", message="[kafka-log-cleaner-thread-0], Error due to ", detail=trace),
            event(1, at(20, 0.002), "cleaner_stopped", "z1"),
            event(2, at(30), "cleaner_error", message="[kafka-log-cleaner-thread-0]: Error due to",
                  detail="java.io.IOException: Map failed\n\tat sun.nio.ch.FileChannelImpl.map(FileChannelImpl.java:938)")]
    got = {(f["cluster"], f["entity"]): f["evidence"] for f in run(spark, rows)}
    assert got == {("z1", "broker-1"): f"cleaner 'Error due to' at 06:20:00Z: {trace.splitlines()[0]}; "
                                       "cleaner 'Stopped' at 06:20:00Z",
                   ("c1", "broker-2"): "cleaner 'Error due to' at 06:30:00Z: java.io.IOException: Map failed"}


def test_a_stop_long_after_a_shutdown_began_is_a_death(spark):
    rows = [event(1, at(10), "cleaner_shutting_down", "z1"),
            event(1, at(30), "cleaner_stopped", "z1")]
    [f] = run(spark, rows)
    assert f["first_seen"] == at(30)
