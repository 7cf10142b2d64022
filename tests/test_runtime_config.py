"""fleethealth.runtime.config: every FLEETHEALTH_* variable declared once with what it accepts; a bad
value fails with one line naming the variable and what it accepts."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from fleethealth.runtime import config


@pytest.fixture(autouse=True)
def no_settings(monkeypatch):
    for env in config.SETTINGS:
        monkeypatch.delenv(env, raising=False)


def test_the_defaults_are_valid_and_typed():
    assert config.lock_wait_s() == 600.0
    assert config.data_docs_enabled() is True
    assert config.run_window() == (24, 256.0)
    assert config.dag_start_date() == datetime(2026, 1, 1, tzinfo=timezone.utc)
    assert config.dag_catchup() is False
    assert (config.pull_retries(), config.pull_retry_delay_s(), config.pull_timeout_s()) == (3, 30.0, 900.0)
    assert config.thresholds_path() is None and config.spark_conf_file() is None
    assert config.window_max_hours() == 8760


def test_a_value_as_written_and_an_empty_one_as_unset(monkeypatch):
    monkeypatch.setenv("FLEETHEALTH_LOCK_WAIT_S", "0.5")
    monkeypatch.setenv("FLEETHEALTH_DATA_DOCS", "0")
    monkeypatch.setenv("FLEETHEALTH_CATCHUP", "true")
    monkeypatch.setenv("FLEETHEALTH_PULL_RETRIES", "")
    assert (config.lock_wait_s(), config.data_docs_enabled(), config.dag_catchup()) == (0.5, False, True)
    assert config.pull_retries() == 3


@pytest.mark.parametrize("env, value, accepts", [
    ("FLEETHEALTH_LOCK_WAIT_S", "abc", "expected a number of seconds >= 0, got 'abc'"),
    ("FLEETHEALTH_LOCK_WAIT_S", "-1", "expected a number of seconds >= 0, got '-1'"),
    ("FLEETHEALTH_RUN_WINDOW_HOURS", "1.5", "expected a whole number of hours >= 1, got '1.5'"),
    ("FLEETHEALTH_CATCHUP", "maybe", "expected true or false (1 or 0), got 'maybe'"),
    ("FLEETHEALTH_START_DATE", "yesterday", "expected an ISO-8601 date and time"),
    ("FLEETHEALTH_NOTIFY_MAX_AGE_HOURS", "0", "expected a whole number of hours >= 1, got '0'"),
    ("FLEETHEALTH_NOTIFY_MAX_AGE_HOURS", "6h", "expected a whole number of hours >= 1, got '6h'"),
    ("FLEETHEALTH_NOTIFY_SEND_TIMEOUT_S", "0", "expected a number of seconds > 0, got '0'"),
])
def test_a_bad_value_is_one_line_naming_the_variable(monkeypatch, env, value, accepts):
    monkeypatch.setenv(env, value)
    with pytest.raises(config.SettingError) as err:
        config.settings()
    [line] = str(err.value).splitlines()
    assert line.startswith(f"{env}: {accepts}")
