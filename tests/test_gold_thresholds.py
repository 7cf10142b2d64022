"""Tests of fleethealth.gold.thresholds: declared once in thresholds.yaml with defaults and bounds, validated
centrally; a bad value fails with one line naming the file and the key."""
from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest
import yaml

from fleethealth.gold import thresholds
from fleethealth.gold.thresholds import ThresholdError
from fleethealth.runtime import config

BLOAT = "offsets_partition_bloat.max_size_bytes"


@pytest.fixture(autouse=True)
def no_env_override(monkeypatch):
    monkeypatch.delenv(config.ENV_THRESHOLDS, raising=False)


def declared() -> dict:
    return yaml.safe_load(resources.files("fleethealth.gold").joinpath("thresholds.yaml").read_text())


def override(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "thresholds-override.yaml"
    path.write_text(text)
    return path


def test_defaults_match_thresholds_yaml():
    values = thresholds.load()
    assert values == {name: decl["value"] for name, decl in declared().items()}
    # pin a few documented defaults so an accidental edit of the YAML shows here
    assert values[BLOAT] == 1024**3
    assert values["log_cleaner_dead.stale_ms"] == 900_000
    assert values["log_cleaner_dead.severity"] == "critical"


def test_every_declaration_is_documented():
    for name, decl in declared().items():
        assert decl.get("doc"), name
        assert "value" in decl, name


def test_override_changes_one_value(tmp_path):
    path = override(tmp_path, f"{BLOAT}: 2147483648\n")
    values = thresholds.load(path)
    defaults = thresholds.load()
    assert values[BLOAT] == 2 * 1024**3
    assert {k: v for k, v in values.items() if k != BLOAT} == {k: v for k, v in defaults.items() if k != BLOAT}


def test_empty_override_file_keeps_defaults(tmp_path):
    assert thresholds.load(override(tmp_path, "")) == thresholds.load()


def test_unknown_key(tmp_path):
    path = override(tmp_path, "offsets_partition_bloat.max_size: 5\n")
    with pytest.raises(ThresholdError, match=r"unknown threshold") as err:
        thresholds.load(path)
    assert str(err.value).startswith(f"{path}: offsets_partition_bloat.max_size: ")


@pytest.mark.parametrize("value", ["'2GB'", "2147483648.0", "true"])
def test_wrong_type_for_int(tmp_path, value):
    path = override(tmp_path, f"{BLOAT}: {value}\n")
    with pytest.raises(ThresholdError, match=r"expected an integer, got ") as err:
        thresholds.load(path)
    assert str(err.value).startswith(f"{path}: {BLOAT}: ")


def test_below_minimum(tmp_path):
    path = override(tmp_path, "log_cleaner_dead.stale_ms: 1000\n")
    with pytest.raises(ThresholdError) as err:
        thresholds.load(path)
    assert str(err.value) == f"{path}: log_cleaner_dead.stale_ms: 1000 is below the minimum 60000"


def test_minimum_itself_is_accepted(tmp_path):
    assert thresholds.load(override(tmp_path, "log_cleaner_dead.stale_ms: 60000\n"))["log_cleaner_dead.stale_ms"] == 60000


def test_bad_severity_choice(tmp_path):
    path = override(tmp_path, "data_missing.severity: urgent\n")
    with pytest.raises(ThresholdError) as err:
        thresholds.load(path)
    assert str(err.value) == f"{path}: data_missing.severity: 'urgent' is not one of critical, major, minor, info"


def test_good_severity_choice(tmp_path):
    assert thresholds.load(override(tmp_path, "data_missing.severity: major\n"))["data_missing.severity"] == "major"


def test_not_a_mapping(tmp_path):
    path = override(tmp_path, "- a\n- b\n")
    with pytest.raises(ThresholdError, match="expected a mapping") as err:
        thresholds.load(path)
    assert str(err.value).startswith(f"{path}: ")


def test_missing_override_file(tmp_path):
    path = tmp_path / "absent.yaml"
    with pytest.raises(ThresholdError, match="cannot read thresholds") as err:
        thresholds.load(path)
    assert str(err.value).startswith(f"{path}: ")


def test_env_var_is_honoured(tmp_path, monkeypatch):
    path = override(tmp_path, "log_cleaner_dead.stale_ms: 120000\n")
    monkeypatch.setenv(config.ENV_THRESHOLDS, str(path))
    assert config.ENV_THRESHOLDS == "FLEETHEALTH_THRESHOLDS"
    assert thresholds.load()["log_cleaner_dead.stale_ms"] == 120_000


def test_env_var_errors_name_the_env_file(tmp_path, monkeypatch):
    path = override(tmp_path, "log_cleaner_dead.severity: loud\n")
    monkeypatch.setenv(config.ENV_THRESHOLDS, str(path))
    with pytest.raises(ThresholdError) as err:
        thresholds.load()
    assert str(err.value).startswith(f"{path}: log_cleaner_dead.severity: ")


def test_explicit_override_beats_env_var(tmp_path, monkeypatch):
    env_file = tmp_path / "env.yaml"
    env_file.write_text("log_cleaner_dead.stale_ms: 120000\n")
    monkeypatch.setenv(config.ENV_THRESHOLDS, str(env_file))
    values = thresholds.load(override(tmp_path, "log_cleaner_dead.stale_ms: 180000\n"))
    assert values["log_cleaner_dead.stale_ms"] == 180_000


def test_the_dags_first_task_refuses_a_bad_file_before_any_pull(tmp_path, monkeypatch):
    """The hourly and backfill DAGs list the hosts before they pull them: a bad $FLEETHEALTH_THRESHOLDS
    fails that task (issue 62 item 9), not gold after every host was pulled."""
    from fleethealth.pipeline import dag_tasks

    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(f"clusters:\n  - name: c\n    timezone: UTC\n    root: {tmp_path}\n"
                         "    hosts:\n      - {host: z1, role: zookeeper, zk_myid: 1}\n")
    assert dag_tasks.list_hosts({"inventory": str(inventory)}) == ["z1"]
    monkeypatch.setenv(config.ENV_THRESHOLDS, str(override(tmp_path, f"{BLOAT}: lots\n")))
    with pytest.raises(ThresholdError, match=rf"{BLOAT}: expected an integer, got 'lots'"):
        dag_tasks.list_hosts({"inventory": str(inventory)})


def test_a_cluster_has_values_of_its_own_over_the_fleets(tmp_path):
    """Issue 62 item 6: under `clusters:`, a cluster's own values; the rest of its values are the fleet's
    (the file's top level over the defaults), and the clusters of equal values are one group."""
    path = override(tmp_path, f"{BLOAT}: 2147483648\nclusters:\n"
                              "  payments: {log_cleaner_dead.severity: major}\n"
                              "  billing: {log_cleaner_dead.severity: major}\n"
                              f"  logs: {{{BLOAT}: 2147483648}}\n")
    fleet, per_cluster = thresholds.load_all(path, ["payments", "billing", "logs", "other"])
    assert fleet == thresholds.load(path) == {**thresholds.load(), BLOAT: 2 * 1024**3}
    assert per_cluster == {"payments": {**fleet, "log_cleaner_dead.severity": "major"},
                           "billing": {**fleet, "log_cleaner_dead.severity": "major"}, "logs": fleet}
    # logs' own value is the fleet's: it is computed with the fleet
    assert thresholds.groups(fleet, per_cluster) == [(per_cluster["billing"], ["billing", "payments"])]
    assert thresholds.groups(fleet, {}) == []


def test_a_clusters_mistakes_are_a_line_each(tmp_path):
    path = override(tmp_path, "log_cleaner_dead.severity: urgent\nclusters:\n"
                              "  payments:\n    log_cleaner_dead.stale: 5\n    incidents.lookback_minutes: 5\n"
                              f"    {BLOAT}: 1\n"
                              "  paymnets: {log_cleaner_dead.severity: major}\n  billing: 3\n")
    with pytest.raises(ThresholdError) as err:
        thresholds.load(path, ["payments", "billing"])
    assert str(err.value).splitlines() == [
        f"{path}: log_cleaner_dead.severity: 'urgent' is not one of critical, major, minor, info",
        f"{path}: clusters: payments: incidents.lookback_minutes: one value for the whole fleet (set it at the top level)",
        f"{path}: clusters: payments: log_cleaner_dead.stale: unknown threshold (did you mean log_cleaner_dead.stale_ms?)",
        f"{path}: clusters: payments: {BLOAT}: 1 is below the minimum 1048576",
        f"{path}: clusters: paymnets: no such cluster in the inventory (its clusters: billing, payments)",
        f"{path}: clusters: billing: expected a mapping of threshold names to values"]
    # without the inventory (a look at the file alone) the names are not checked
    with pytest.raises(ThresholdError) as err:
        thresholds.load(override(tmp_path, "clusters: [a, b]\n"))
    assert str(err.value).endswith(": clusters: expected a mapping of cluster names to their thresholds")


def test_only_the_hours_shape_is_the_fleets_alone():
    assert sorted(thresholds.fleet_only()) == ["incidents.lookback_minutes", "incidents.resolve_after_hours"]
