"""A deployment's own Spark settings (FLEETHEALTH_SPARK_CONF) reach every fleethealth Spark application
(the jobs' sessions and the DAG's spark-submit) and win over fleethealth's defaults. No Spark: the
settings are a dict every session builder and SparkSubmitOperator is given."""
from __future__ import annotations

import pytest

from fleethealth.lake.catalog import Lakehouse
from fleethealth.runtime.spark_conf import spark_conf


def test_the_deployment_file_adds_and_overrides_settings(tmp_path, monkeypatch):
    conf = tmp_path / "spark-defaults.conf"
    conf.write_text("# the cluster's executors\n"
                    "spark.executor.memory   16g\n"
                    "spark.executor.cores=4\n"
                    "\n"
                    "spark.driver.memory: 8g\n"
                    "spark.hadoop.fs.s3a.aws.credentials.provider software.amazon.awssdk.auth.credentials.InstanceProfileCredentialsProvider\n")
    before = spark_conf("/lake", short_lived=True)
    assert before["spark.driver.memory"] == "4g" and "spark.executor.memory" not in before

    monkeypatch.setenv("FLEETHEALTH_SPARK_CONF", str(conf))
    after = spark_conf("/lake", short_lived=True)
    assert after["spark.executor.memory"] == "16g"
    assert after["spark.executor.cores"] == "4"
    assert after["spark.driver.memory"] == "8g"
    assert after["spark.hadoop.fs.s3a.aws.credentials.provider"].endswith(".InstanceProfileCredentialsProvider")
    # everything else is fleethealth's
    assert {k: v for k, v in after.items() if k in before and k != "spark.driver.memory"} == \
        {k: v for k, v in before.items() if k != "spark.driver.memory"}


def test_a_line_that_is_not_a_spark_setting_is_refused_with_its_place(tmp_path, monkeypatch):
    conf = tmp_path / "spark.conf"
    conf.write_text("spark.executor.memory 16g\nexecutor.memory 16g\n")
    monkeypatch.setenv("FLEETHEALTH_SPARK_CONF", str(conf))
    with pytest.raises(ValueError, match=r"spark\.conf:2: not a Spark setting .*'executor\.memory 16g'"):
        spark_conf("/lake")

    conf.write_text("spark.executor.memory\n")
    with pytest.raises(ValueError, match=r"spark\.conf:1: "):
        spark_conf("/lake")


def test_an_empty_setting_is_no_file(monkeypatch):
    monkeypatch.setenv("FLEETHEALTH_SPARK_CONF", "")
    assert spark_conf("/lake")["spark.driver.memory"] == "4g"


S3_ENV = {"AWS_ENDPOINT_URL": "http://127.0.0.1:9000", "AWS_REGION": "eu-west-1",
          "AWS_ACCESS_KEY_ID": "fleet", "AWS_SECRET_ACCESS_KEY": "s3cr3t"}


def test_tables_on_s3_get_s3a_settings_from_the_aws_variables(monkeypatch):
    from datetime import datetime

    from fleethealth.lake import tables as lake

    for key, value in S3_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("FLEETHEALTH_LAKEHOUSE", "/lake")
    folder = Lakehouse.from_settings()
    assert not any(k.startswith("spark.hadoop.fs.s3a.") for k in spark_conf(folder.warehouse, tables=folder.tables))
    monkeypatch.setenv("FLEETHEALTH_TABLES", "s3a://fleet/prod/tables/")
    s3 = Lakehouse.from_settings()
    assert lake.table("gold.incidents").path(s3) == "s3a://fleet/prod/tables/gold/incidents"
    assert lake.staging_path("silver.kafka_events", datetime(2026, 11, 20, 10), s3) == \
        "s3a://fleet/prod/tables/_staging/2026-11-20T10/silver/kafka_events"
    local = spark_conf(s3.warehouse, tables=s3.tables)
    assert local["spark.sql.warehouse.dir"] == "/lake/_warehouse"
    assert {k: v for k, v in local.items() if k.startswith("spark.hadoop.fs.s3a.")} == {
        "spark.hadoop.fs.s3a.endpoint": "http://127.0.0.1:9000", "spark.hadoop.fs.s3a.path.style.access": "true",
        "spark.hadoop.fs.s3a.endpoint.region": "eu-west-1"}
    assert not any(k.startswith("spark.executorEnv.") for k in local)    # S3A's chain reads the driver's own
    cluster = spark_conf(s3.warehouse, tables=s3.tables, master="spark://127.0.0.1:7077")
    assert {k: v for k, v in cluster.items() if k.startswith("spark.executorEnv.")} == {
        "spark.executorEnv.AWS_ACCESS_KEY_ID": "fleet", "spark.executorEnv.AWS_SECRET_ACCESS_KEY": "s3cr3t"}
    monkeypatch.setenv("AWS_VIRTUAL_HOSTED_STYLE_REQUEST", "true")
    assert spark_conf(s3.warehouse, tables=s3.tables)["spark.hadoop.fs.s3a.path.style.access"] == "false"


def test_a_tables_folder_is_a_path_and_a_lakehouse_without_it_holds_the_tables(monkeypatch, tmp_path):
    from fleethealth.lake import tables as lake

    assert lake.table("bronze.records").path(Lakehouse.at(tmp_path)) == f"{tmp_path}/bronze/records"
    monkeypatch.setenv("FLEETHEALTH_LAKEHOUSE", str(tmp_path))
    monkeypatch.setenv("FLEETHEALTH_TABLES", str(tmp_path / "tables"))
    assert lake.table("bronze.records").path(Lakehouse.at(tmp_path)) == f"{tmp_path}/tables/bronze/records"


def test_an_explicit_lakehouse_that_is_not_the_tables_one_is_refused_in_one_line(monkeypatch, tmp_path, capsys):
    """FLEETHEALTH_TABLES belongs to FLEETHEALTH_LAKEHOUSE: another --lakehouse beside it is a mistake
    named in one line (which tables it meant would be a guess), never a silent override."""
    from fleethealth.cli import main as cli
    from fleethealth.lake.catalog import LakehouseError

    monkeypatch.setenv("FLEETHEALTH_LAKEHOUSE", str(tmp_path / "prod"))
    monkeypatch.setenv("FLEETHEALTH_TABLES", "s3a://fleet/prod")
    assert Lakehouse.from_settings(tmp_path / "prod").tables == "s3a://fleet/prod"      # the same folder: agreed
    with pytest.raises(LakehouseError, match=r"--lakehouse .*/other is not \$FLEETHEALTH_LAKEHOUSE"):
        Lakehouse.from_settings(tmp_path / "other")
    assert cli.main(["query", "--lakehouse", str(tmp_path / "other"), "SELECT 1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"fleethealth: --lakehouse {tmp_path / 'other'} is not $FLEETHEALTH_LAKEHOUSE")
    assert err.count("\n") == 1 and "unset FLEETHEALTH_TABLES" in err
    monkeypatch.delenv("FLEETHEALTH_TABLES")
    assert Lakehouse.from_settings(tmp_path / "other").tables == str(tmp_path / "other")   # no tables elsewhere


def test_every_sub_path_is_the_catalogs_with_one_hour_stamp(tmp_path):
    from datetime import datetime

    lh = Lakehouse(tmp_path, "s3a://b/t")
    hour = datetime(2026, 11, 20, 10)
    assert (lh.landing(hour), lh.hour_lock(hour, "c.k1"), lh.staging(hour, "gold")) == (
        tmp_path / "landing" / "2026-11-20T10", tmp_path / "_locks" / "2026-11-20T10.c.k1.lock",
        "s3a://b/t/_staging/2026-11-20T10/gold")
    assert (lh.pull_state("c", "k1"), lh.table_lock("gold.notifications")) == (
        tmp_path / "landing" / "_state" / "c" / "k1.json", tmp_path / "_locks" / "gold.notifications.lock")
    assert (lh.data_docs, lh.report, lh.warehouse, lh.table("gold", "incidents")) == (
        tmp_path / "quality" / "data_docs", tmp_path / "report", tmp_path / "_warehouse", "s3a://b/t/gold/incidents")


def test_a_clusters_executors_get_the_drivers_collector_and_a_short_applications_jit_tier():
    """Executors on a cluster are JVMs of the application's lifetime: a DAG hour's (short_lived) stop
    at the first JIT tier as its driver does; none gets the driver's class-sharing archive or log
    configuration (paths of this machine); local executors are the driver's JVM (no setting)."""
    master = "spark://127.0.0.1:7077"
    short = spark_conf("/lake", short_lived=True, master=master)["spark.executor.extraJavaOptions"]
    assert short == '"-XX:+UseParallelGC" "-XX:TieredStopAtLevel=1" "-XX:ReservedCodeCacheSize=256m"'
    assert spark_conf("/lake", master=master)["spark.executor.extraJavaOptions"] == '"-XX:+UseParallelGC"'
    assert "spark.executor.extraJavaOptions" not in spark_conf("/lake", short_lived=True, master="local[2]")
