"""The incident lifecycle (fleethealth.gold.incidents.lifecycle) on small frames: open while findings
go on and while the host sends nothing, resolved after resolve_after_hours clean hours with data,
reopened as a new incident after that, escalations in the history, ids stable and deterministic."""
from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from pyspark.sql.types import (ArrayType, IntegerType, StringType, StructField, StructType, TimestampType)

from fleethealth.gold.detectors.base import FINDING_COLUMNS
from fleethealth.gold.incidents import lifecycle
from fleethealth.runtime.frames import local_frame

H0 = datetime(2026, 11, 21, 0)
FINDINGS = StructType([StructField(c, TimestampType() if c in ("first_seen", "last_seen", "hour") else StringType())
                       for c in FINDING_COLUMNS])
HEALTH = StructType([StructField("cluster", StringType()), StructField("host", StringType()),
                     StructField("role", StringType()), StructField("broker_id", IntegerType()),
                     StructField("zk_myid", IntegerType()), StructField("hour", TimestampType()),
                     StructField("sources_arrived", ArrayType(StringType()))])


def h(n: int) -> datetime:
    return H0 + timedelta(hours=n)


def finding(n: int, severity: str = "major", kind: str = "log_cleaner_dead", entity: str = "broker-1",
            evidence: str | None = None) -> tuple:
    return ("c1", kind, severity, entity, h(n) + timedelta(minutes=10), h(n) + timedelta(minutes=50),
            evidence or f"evidence of hour {n}", None, h(n))


def health(hours_with_data, hours_silent=(), host: str = "kafka-1", broker_id: int = 1) -> list[tuple]:
    rows = [("c1", host, "kafka", broker_id, None, h(n), ["jmx", "kafka"]) for n in hours_with_data]
    return rows + [("c1", host, "kafka", broker_id, None, h(n), []) for n in hours_silent]


def run(spark, findings, health_rows, after: int = 1):
    incidents, history, _ = lifecycle(local_frame(spark, findings, FINDINGS),
                                      local_frame(spark, health_rows, HEALTH), after)
    return ([r.asDict() for r in incidents.orderBy("first_hour").collect()],
            [r.asDict() for r in history.orderBy("hour", "transition").collect()])


def test_open_while_findings_go_on_then_resolved_by_the_first_clean_hour(spark):
    incidents, history = run(spark, [finding(0), finding(1), finding(2, "critical")], health(range(5)))
    assert len(incidents) == 1
    i = incidents[0]
    assert (i["status"], i["resolved_at"], i["hours"], i["severity"]) == ("resolved", h(3), 3, "critical")
    assert (i["first_hour"], i["last_hour"], i["first_evidence"], i["evidence"]) == (
        h(0), h(2), "evidence of hour 0", "evidence of hour 2")
    assert [(x["transition"], x["severity"], x["hour"], x["at"]) for x in history] == [
        ("opened", "major", h(0), h(0) + timedelta(minutes=10)),
        ("escalated", "critical", h(2), h(2) + timedelta(minutes=10)),
        ("resolved", "critical", h(3), h(3))]
    assert {x["incident_id"] for x in history} == {i["incident_id"]}


def test_still_open_at_the_last_hour_with_a_finding(spark):
    incidents, history = run(spark, [finding(0), finding(1)], health(range(2)))
    assert [(i["status"], i["resolved_at"]) for i in incidents] == [("open", None)]
    assert [x["transition"] for x in history] == ["opened"]


def test_no_data_is_not_healthy_a_silent_host_never_resolves_it(spark):
    """Hours 1-3 the host sent nothing (rows with no source, and hour 4 not processed at all)."""
    incidents, _ = run(spark, [finding(0)], health([0], hours_silent=[1, 2, 3]))
    assert [(i["status"], i["hours"]) for i in incidents] == [("open", 1)]
    # data again in hour 5 without a finding: resolved then, and the silent hours did not split it
    incidents, _ = run(spark, [finding(0), finding(2)], health([0, 2, 5], hours_silent=[1, 3]))
    assert [(i["status"], i["hours"], i["resolved_at"]) for i in incidents] == [("resolved", 2, h(5))]


def test_a_finding_after_the_resolution_opens_a_new_incident(spark):
    incidents, history = run(spark, [finding(0), finding(3)], health(range(5)))
    assert [(i["first_hour"], i["status"], i["resolved_at"]) for i in incidents] == [
        (h(0), "resolved", h(1)), (h(3), "resolved", h(4))]
    assert len({i["incident_id"] for i in incidents}) == 2
    assert [x["transition"] for x in history] == ["opened", "resolved", "opened", "resolved"]


def test_resolve_after_hours_bridges_short_gaps(spark):
    findings = [finding(0), finding(2), finding(6)]
    incidents, history = run(spark, findings, health(range(8)), after=3)
    # hour 1 alone is not 3 clean hours: 0 and 2 are one incident; 3, 4, 5 resolve it at 3 (known at 5)
    assert [(i["first_hour"], i["last_hour"], i["status"], i["resolved_at"]) for i in incidents] == [
        (h(0), h(2), "resolved", h(3)), (h(6), h(6), "open", None)]
    assert [(x["transition"], x["hour"], x["at"]) for x in history if x["transition"] == "resolved"] == [
        ("resolved", h(5), h(3))]


def test_the_entity_is_resolved_by_its_own_host_not_the_clusters(spark):
    """Broker 2's host sends nothing after hour 0 while broker 1's does: broker 2's incident stays
    open; an entity naming a partition on a broker (`…@broker-2`) follows that broker too."""
    rows = health(range(4)) + health([0], hours_silent=[1, 2, 3], host="kafka-2", broker_id=2)
    findings = [finding(0, entity="broker-2"), finding(0, kind="offsets_partition_bloat",
                                                        entity="__consumer_offsets-3@broker-2"),
                finding(0, kind="data_missing", entity="kafka-2:jmx")]
    incidents, _ = run(spark, findings, rows)
    assert {(i["kind"], i["status"]) for i in incidents} == {
        ("log_cleaner_dead", "open"), ("offsets_partition_bloat", "open"), ("data_missing", "open")}
    incidents, _ = run(spark, findings, rows + health([4], host="kafka-2", broker_id=2))
    assert {(i["kind"], i["status"], i["resolved_at"]) for i in incidents} == {
        ("log_cleaner_dead", "resolved", h(4)), ("offsets_partition_bloat", "resolved", h(4)),
        ("data_missing", "resolved", h(4))}


def test_ids_are_deterministic_and_survive_later_hours(spark):
    first, _ = run(spark, [finding(0)], health([0]))
    later, _ = run(spark, [finding(0), finding(1)], health(range(3)))
    again, _ = run(spark, [finding(0), finding(1)], health(range(3)))
    assert first[0]["incident_id"] == later[0]["incident_id"] == again[0]["incident_id"]
    assert later == again


@pytest.mark.parametrize("after", [1, 2])
def test_a_broker_unknown_to_the_inventory_is_resolved_by_its_clusters_data(spark, after):
    incidents, _ = run(spark, [finding(0, entity="broker-99")], health(range(1 + after)), after=after)
    assert [(i["status"], i["resolved_at"]) for i in incidents] == [("resolved", h(1))]
