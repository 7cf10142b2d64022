"""gold.request_saturation: request queue and handler/network idle samples per (cluster, broker_id, hour)."""
from __future__ import annotations

import pytest
from detector_frames import HOUR, at, event, events, facts, jmx, jmx_sample

from fleethealth.fleet import mbeans
from fleethealth.gold import thresholds
from fleethealth.quality import suites as quality

pytestmark = pytest.mark.spark

QUEUE, HANDLER, NETWORK = mbeans.REQUEST_QUEUE_SIZE, mbeans.REQUEST_HANDLER_IDLE, mbeans.NETWORK_PROCESSOR_IDLE
SCHEMA = [("cluster", "string"), ("broker_id", "int"), ("hour", "timestamp"), ("samples", "int"),
          ("saturated_samples", "int"), ("max_queue", "double"), ("queue_limit", "int"),
          ("limit_from_config", "boolean"), ("min_handler_idle", "double"), ("min_network_idle", "double"),
          ("first_saturated_ts", "timestamp"), ("last_saturated_ts", "timestamp")]
CONFIG = event(3, at(2), "kafka_config", message="KafkaConfig values: ",
               detail="\tqueue.max.bytes = -1\n\tqueued.max.requests = 1000\n\treplica.fetch.max.bytes = 1048576")


def build(spark, samples, kafka_rows=()):
    return facts(spark, events(spark, list(kafka_rows)), jmx(spark, samples)).table(
        "gold.request_saturation", thresholds.load())


def rows(df):
    return sorted(tuple(r) for r in df.collect())


def test_schema_and_no_sample(spark):
    other = [jmx_sample(1, at(5), mbeans.OPEN_FDS, 100)]   # no sample of the three MBeans
    df = build(spark, other, [CONFIG])
    assert df.dtypes == SCHEMA
    assert df.collect() == []


def test_brokers_queue_handler_network(spark):
    samples = []
    for m, queue, idle in ((0, 2, 0.93), (5, 1, 0.91), (15, 500, 0.012), (20, 460, 0.5), (25, 3, 0.9)):
        samples += [jmx_sample(3, at(m, 1), QUEUE, queue * 2), jmx_sample(3, at(m, 1), HANDLER, idle),
                    jmx_sample(1, at(m, 2), QUEUE, queue), jmx_sample(1, at(m, 2), HANDLER, 0.95),
                    jmx_sample(1, at(m, 2), NETWORK, 0.8)]
    samples += [jmx_sample(2, at(30, 1), NETWORK, 0.05), jmx_sample(2, at(31, 1), NETWORK, 0.2),
                jmx_sample(2, at(31, 1), HANDLER, 0.3),
                jmx_sample(1, at(7), QUEUE, 10, cluster="c2")]
    # broker 3 logged queued.max.requests = 1000 (0.9 x 1000 = 900): 1000 and 920 are saturated
    df = build(spark, samples, [CONFIG])
    assert rows(df) == [
        ("c1", 1, HOUR, 5, 2, 500.0, 500, False, 0.95, 0.8, at(15, 2), at(20, 2)),
        ("c1", 2, HOUR, 2, 1, None, 500, False, 0.3, 0.05, at(30, 1), at(30, 1)),
        ("c1", 3, HOUR, 5, 2, 1000.0, 1000, True, 0.012, None, at(15, 1), at(20, 1)),
        ("c2", 1, HOUR, 1, 0, 10.0, 500, False, None, None, None, None),
    ]


def test_quality_suite(spark):
    samples = [jmx_sample(3, at(15, 1), QUEUE, 500), jmx_sample(3, at(16, 1), QUEUE, 2),
               jmx_sample(4, at(15, 1), HANDLER, 0.5)]
    df = build(spark, samples, [CONFIG])
    results = quality.validate_tables({"gold.request_saturation": df}, hour=HOUR, data_docs_dir=None)
    quality.enforce(results)
    assert results and all(r.success for r in results)
