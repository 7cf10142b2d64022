"""A deployment's own Spark settings (FLEETHEALTH_SPARK_CONF) reach every fleethealth Spark application
(the jobs' sessions and the DAG's spark-submit) and win over fleethealth's defaults. No Spark: the
settings are a dict every session builder and SparkSubmitOperator is given."""
from __future__ import annotations

import pytest

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
