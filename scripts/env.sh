# shellcheck shell=bash
# fleethealth environment for the embedded (one machine) deployment.
#
#   . scripts/env.sh
#
# Sourced by the Makefile recipes, tests and .ci/run. Only exports variables: no files are
# created, nothing is installed (that is scripts/setup.sh). Safe to source more than once and
# under `set -u`. docker-compose.yaml sets the same names for the scaled deployment
# (tests/test_compose.py checks both against fleethealth.runtime.config).

if [ -n "${BASH_SOURCE[0]:-}" ]; then
    _fh_here="${BASH_SOURCE[0]}"
else
    _fh_here="$0"
fi
FLEETHEALTH_PROJECT="$(cd "$(dirname "$_fh_here")/.." && pwd -P)"
export FLEETHEALTH_PROJECT
unset _fh_here

# --- fleethealth (names: include/fleethealth/runtime/config.py) ------------------------------
# Lakehouse root: keep a value the caller chose, else the project's ./lakehouse.
export FLEETHEALTH_LAKEHOUSE="${FLEETHEALTH_LAKEHOUSE:-$FLEETHEALTH_PROJECT/lakehouse}"
# Delta Lake jars resolved by Maven at set-up (pom.xml); Spark never downloads at run time.
export FLEETHEALTH_JARS="$FLEETHEALTH_PROJECT/jars"

# --- Airflow (SQLite metadata under ./airflow) ------------------------------------------------
export AIRFLOW_HOME="$FLEETHEALTH_PROJECT/airflow"
export AIRFLOW__CORE__DAGS_FOLDER="$FLEETHEALTH_PROJECT/dags"
export AIRFLOW__CORE__LOAD_EXAMPLES=False
# Connection id spark_default (fleethealth.runtime.config.SPARK_CONN_ID): local Spark. Without it the
# Spark provider falls back to master "yarn".
export AIRFLOW_CONN_SPARK_DEFAULT='{"conn_type":"spark","host":"local[*]"}'

# --- Great Expectations ---------------------------------------------------------------------------
export GX_ANALYTICS_ENABLED=False

# --- Java / Spark ---------------------------------------------------------------------------------
if [ -z "${JAVA_HOME:-}" ] && command -v java >/dev/null 2>&1; then
    _fh_java="$(readlink -f "$(command -v java)" 2>/dev/null || true)"
    case "$_fh_java" in
        */bin/java) export JAVA_HOME="${_fh_java%/bin/java}" ;;
    esac
    unset _fh_java
fi
export PYSPARK_PYTHON="$FLEETHEALTH_PROJECT/.venv/bin/python"
export SPARK_LOCAL_IP=127.0.0.1

# .venv/bin first (airflow, spark-submit, fleethealth), once.
case ":${PATH:-}:" in
    ":$FLEETHEALTH_PROJECT/.venv/bin:"*) ;;
    *) export PATH="$FLEETHEALTH_PROJECT/.venv/bin${PATH:+:$PATH}" ;;
esac
