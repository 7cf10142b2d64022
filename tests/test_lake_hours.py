"""Tests of fleethealth.lake.hours: the processed hour (explicit: Airflow 3 zero-width intervals) and
which UTC hour a fleet file covers (log timestamps are local to the cluster's timezone)."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from fleethealth.lake.hours import (file_span, hour_label, hours_between, in_hour, parse_hour, parse_instant,
                                    parse_window, processed_hour)

UTC = timezone.utc
H10 = datetime(2026, 11, 20, 10, tzinfo=UTC)
H11 = datetime(2026, 11, 20, 11, tzinfo=UTC)


def utc(hour: int, minute: int = 0, second: int = 0) -> datetime:
    return datetime(2026, 11, 20, hour, minute, second, tzinfo=UTC)


# --- parse_hour ------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["2026-11-20T10:00Z", "2026-11-20T10:00:00Z", "2026-11-20T10:00:00+00:00",
                                  "2026-11-20T10:00", " 2026-11-20T10:00:00 "])
def test_parse_hour_utc_forms(text):
    value = parse_hour(text)
    assert value == H10
    assert value.utcoffset() == timedelta(0)


def test_parse_hour_converts_other_offsets_to_utc():
    value = parse_hour("2026-11-20T11:00:00+01:00")
    assert value == H10
    assert value.tzinfo == UTC
    assert parse_hour("2026-11-20T15:30+05:30") == H10


def test_parse_hour_rejects_minutes():
    with pytest.raises(ValueError, match=r"not a whole hour: '2026-11-20T10:30Z'"):
        parse_hour("2026-11-20T10:30Z")


@pytest.mark.parametrize("text", ["yesterday", "2026-13-01T00:00Z", ""])
def test_parse_hour_rejects_garbage_with_clear_message(text):
    with pytest.raises(ValueError, match="not an ISO-8601 time") as err:
        parse_hour(text)
    assert repr(text) in str(err.value)


def test_parse_instant_keeps_minutes():
    assert parse_instant("2026-11-20T05:30:00-05:00") == utc(10, 30)


def test_hour_label():
    assert hour_label(utc(10, 42)) == "2026-11-20T10:00:00+00:00"


# --- hours_between ---------------------------------------------------------------------------------

def test_hours_between_half_open():
    assert hours_between(utc(10), utc(13)) == [utc(10), utc(11), utc(12)]
    assert hours_between(utc(10), utc(10)) == []


def test_hours_between_starts_at_next_whole_hour():
    assert hours_between(utc(9, 30), utc(12)) == [utc(10), utc(11)]
    assert hours_between(utc(10), utc(11, 1)) == [utc(10), utc(11)]


def test_hours_between_crosses_midnight():
    start = datetime(2026, 11, 20, 23, tzinfo=UTC)
    assert hours_between(start, start + timedelta(hours=2)) == [start, start + timedelta(hours=1)]


# --- processed_hour --------------------------------------------------------------------------------

def test_processed_hour_explicit_param_wins():
    assert processed_hour("2026-11-20T03:00Z", H10, H11, H11) == utc(3)


def test_processed_hour_explicit_param_is_validated():
    with pytest.raises(ValueError, match="not a whole hour"):
        processed_hour("2026-11-20T03:15Z", H10, H11, H11)


def test_processed_hour_real_data_interval_gives_its_start():
    """CronDataIntervalTimetable: the run after 11:00 has interval [10:00, 11:00) -> hour 10:00."""
    assert processed_hour(None, H10, H11, H11) == H10
    assert processed_hour("", H10, H11, None) == H10


def test_processed_hour_zero_width_interval_is_previous_hour():
    """Airflow 3 cron and manual runs: interval [11:00, 11:00) -> the last complete hour, 10:00."""
    assert processed_hour(None, H11, H11, H11) == H10
    assert processed_hour(None, H11, H11, None) == H10


def test_processed_hour_zero_width_interval_mid_hour():
    at = utc(11, 37, 12)
    assert processed_hour(None, at, at, at) == H10


def test_processed_hour_logical_date_only():
    assert processed_hour(None, None, None, utc(11)) == H10
    assert processed_hour(None, None, None, utc(11, 59)) == H10


def test_processed_hour_nothing_raises():
    with pytest.raises(ValueError, match="no hour"):
        processed_hour(None, None, None, None)


def test_processed_hour_is_never_after_the_current_hour():
    """The hourly DAG's hour: the current, still-live one is allowed (a manual run, the e2e test's live
    hour, a run whose logical date is an hour ahead); the next one is refused, whichever way it came."""
    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    if datetime.now(UTC) - now > timedelta(minutes=59):
        pytest.skip("too close to the hour's end to compare hours")
    assert processed_hour(now.isoformat(), None, None, None) == now
    assert processed_hour(None, None, None, now + timedelta(hours=1)) == now
    refused = f"hour {now + timedelta(hours=1):%Y-%m-%dT%H:%MZ}: after the current hour {now:%Y-%m-%dT%H:%MZ}"
    for args in [((now + timedelta(hours=1)).isoformat(), None, None, None),
                 (None, now + timedelta(hours=1), now + timedelta(hours=2), None),
                 (None, None, None, now + timedelta(hours=2))]:
        with pytest.raises(ValueError) as err:
            processed_hour(*args)
        assert str(err.value) == refused


def test_a_window_to_process_ends_with_the_current_hour_at_the_latest():
    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    if datetime.now(UTC) - now > timedelta(minutes=59):
        pytest.skip("too close to the hour's end to compare hours")
    start, end, later = (f"{now + timedelta(hours=n):%Y-%m-%dT%H:%MZ}" for n in (-2, 1, 2))
    assert parse_window(start, end, until_now=True)[-1] == now
    with pytest.raises(ValueError) as err:
        parse_window(start, later, until_now=True)
    assert str(err.value) == (f"--from {start} --to {later}: the window ends after the current hour "
                              f"{now:%Y-%m-%dT%H:%MZ}; --to is at most {end}")
    assert len(parse_window(start, later)) == 4       # simulate's and report's windows: any hours


# --- file_span / in_hour -----------------------------------------------------------------------

def test_hourly_rolled_log_in_new_york_covers_utc_hour():
    """05:00 local in America/New_York on 2026-11-20 (EST, -05:00) is 10:00Z."""
    span = file_span("server.log.2026-11-20-05", 0.0, "America/New_York")
    assert span == (utc(10), utc(11))
    assert in_hour(span, utc(10))
    assert not in_hour(span, utc(9))
    assert not in_hour(span, utc(11))


def test_hourly_rolled_gz_log():
    span = file_span("controller.log.2026-11-20-05.gz", 0.0, "America/New_York")
    assert span == (utc(10), utc(11))


def test_hourly_rolled_log_in_utc_cluster():
    assert file_span("state-change.log.2026-11-20-10", 0.0, "UTC") == (utc(10), utc(11))


def test_half_hour_offset_local_hour_overlaps_two_utc_hours():
    """Asia/Kolkata (+05:30): local 15:00-16:00 is 09:30Z-10:30Z, so it belongs to both 09:00Z and 10:00Z."""
    span = file_span("server.log.2026-11-20-15", 0.0, "Asia/Kolkata")
    assert span == (utc(9, 30), utc(10, 30))
    assert in_hour(span, utc(9))
    assert in_hour(span, utc(10))
    assert not in_hour(span, utc(8))
    assert not in_hour(span, utc(11))


def test_thread_dump_name_is_local_instant():
    span = file_span("jstack-2026-11-20T05-30-00.txt", 0.0, "America/New_York")
    assert span == (utc(10, 30), utc(10, 30))
    assert in_hour(span, utc(10))
    assert not in_hour(span, utc(9))
    assert not in_hour(span, utc(11))


def test_name_with_z_suffix_is_utc():
    span = file_span("logdirs-2026-11-20T10-30-00Z.json", 0.0, "America/New_York")
    assert span == (utc(10, 30), utc(10, 30))


def test_instant_on_hour_boundary_belongs_to_that_hour_only():
    span = file_span("jstack-2026-11-20T11-00-00Z.txt", 0.0, "UTC")
    assert in_hour(span, utc(11))
    assert not in_hour(span, utc(10))


def test_size_rolled_file_uses_mtime():
    """`zookeeper.log.3` has no time in its name: its mtime (an instant) decides, whatever the zone."""
    mtime = utc(10, 15).timestamp()
    span = file_span("zookeeper.log.3", mtime, "America/New_York")
    assert span == (utc(10, 15), utc(10, 15))
    assert in_hour(span, utc(10))
    assert not in_hour(span, utc(11))
    assert not in_hour(span, utc(9))
