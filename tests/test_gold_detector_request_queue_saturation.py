"""request_queue_saturation at both sides of each threshold: queue vs queued.max.requests, handler and network idle."""
from __future__ import annotations

import pytest
from detector_frames import at, event, events, facts, findings, jmx, jmx_sample

from fleethealth.fleet import mbeans
from fleethealth.gold import detectors, thresholds
from fleethealth.gold.detectors import request_queue_saturation

pytestmark = pytest.mark.spark

QUEUE, HANDLER, NETWORK = mbeans.REQUEST_QUEUE_SIZE, mbeans.REQUEST_HANDLER_IDLE, mbeans.NETWORK_PROCESSOR_IDLE


def run(spark, samples, kafka_rows=(), **overrides):
    limits = {**thresholds.load(), **{f"request_queue_saturation.{k}": v for k, v in overrides.items()}}
    f = facts(spark, events(spark, list(kafka_rows)), jmx(spark, samples))
    return findings(detectors.run(request_queue_saturation, f, limits))


def test_queue_at_queued_max_requests_and_busy_handlers(spark):
    samples = []
    for m, queue, idle in ((0, 2, 0.93), (5, 1, 0.91), (15, 500, 0.012), (20, 500, 0.027), (25, 3, 0.9)):
        samples += [jmx_sample(3, at(m, 1), QUEUE, queue), jmx_sample(3, at(m, 1), HANDLER, idle),
                    jmx_sample(1, at(m, 2), QUEUE, 0), jmx_sample(1, at(m, 2), HANDLER, 0.95)]
    [f] = run(spark, samples)
    assert (f["kind"], f["entity"], f["first_seen"], f["last_seen"], f["severity"]) == (
        "request_queue_saturation", "broker-3", at(15, 1), at(20, 1), "major")
    assert f["evidence"] == ("RequestQueueSize up to 500 >= 0.90 x queued.max.requests=500 (default); "
                             "RequestHandlerAvgIdlePercent down to 0.012 < 0.100; 2 of 5 samples saturated, "
                             "06:15:01Z - 06:20:01Z")


def test_queue_threshold_from_the_default_and_from_kafka_config(spark):
    samples = [jmx_sample(3, at(10, 1), QUEUE, 450)]
    assert [f["first_seen"] for f in run(spark, samples)] == [at(10, 1)]          # 450 >= 0.9 x 500
    assert run(spark, samples, queue_full_ratio=0.91) == []                        # 450 < 455
    assert run(spark, samples, queued_max_requests=501) == []                       # 450 < 450.9
    # the broker logged its KafkaConfig (restart) with queued.max.requests = 1000: 450 is not near it
    config = event(3, at(2), "kafka_config", message="KafkaConfig values: ",
                   detail="\tqueue.max.bytes = -1\n\tqueued.max.requests = 1000\n\treplica.fetch.max.bytes = 1048576")
    assert run(spark, samples, [config]) == []
    [f] = run(spark, [jmx_sample(3, at(10, 1), QUEUE, 900)], [config])
    assert f["evidence"].startswith("RequestQueueSize up to 900 >= 0.90 x queued.max.requests=1000 (KafkaConfig); ")


def test_handler_and_network_idle_at_both_sides(spark):
    assert run(spark, [jmx_sample(2, at(30, 1), HANDLER, 0.1)]) == []
    [f] = run(spark, [jmx_sample(2, at(30, 1), HANDLER, 0.099)])
    assert f["evidence"] == ("RequestHandlerAvgIdlePercent down to 0.099 < 0.100; 1 of 1 samples saturated, "
                             "06:30:01Z - 06:30:01Z")
    assert run(spark, [jmx_sample(2, at(30, 1), NETWORK, 0.1)]) == []
    [f] = run(spark, [jmx_sample(2, at(30, 1), NETWORK, 0.05)], min_network_idle=0.06)
    assert (f["entity"], f["evidence"]) == ("broker-2", "NetworkProcessorAvgIdlePercent down to 0.050 < 0.060; "
                                                        "1 of 1 samples saturated, 06:30:01Z - 06:30:01Z")
