# fleethealth: one-machine set-up, demo, tests and benchmarks.
#   make setup   Java 17, Maven, .venv, Delta jars (pom.xml), Airflow DB (idempotent, fast 2nd run)
#   make demo    set-up (without the class-data-sharing archive: it pays over many Spark JVMs, not 4; without the programs only the tests run: sshd, Alertmanager, Chromium), then the end-to-end demo
#   make test    set-up, then pytest in 2 worker processes (PYTEST_ARGS="-k foo" to narrow, PYTEST_WORKERS=0 for one process)
#   make test-slow   set-up, then the end-to-end acceptance runs (the DAG, many-hour scenarios, notifications, faults' crash point, a run stopped by Ctrl-C and SIGTERM, a real scheduler on a Spark cluster, tables on a real S3 server) and make test-big's, in 2 workers (CI runs it after make test)
#   make test-faults  set-up, then the kill -9 and concurrent-run tests at every point (slow; not in .ci/run: make test-slow runs one crash point)
#   make test-big    set-up, then the tests on files of gigabytes (a 2 GiB live server.log; make test-slow runs them too)
#   make bench   set-up, then the benchmarks in bench/
#   make clean   remove generated data (lakehouse/, demo/, airflow/logs, spark-warehouse/)
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON := .venv/bin/python
PYTEST_ARGS ?=
# test files are spread over workers whole (module fixtures stay in one process; one JVM each)
PYTEST_WORKERS ?= 2
ARGS ?=

.PHONY: help setup demo test test-slow test-faults test-big bench clean

help:
	@sed -n 's/^#   make /make /p' $(firstword $(MAKEFILE_LIST))

setup:
	bash scripts/setup.sh

demo:
	FLEETHEALTH_CLASS_SHARING=0 FLEETHEALTH_TEST_PACKAGES=0 bash scripts/setup.sh
	. scripts/env.sh && $(PYTHON) -m fleethealth.cli.demo $(ARGS)

test: setup
	. scripts/env.sh && $(PYTHON) -m pytest -q -n $(PYTEST_WORKERS) --dist loadfile --durations=20 -m "not faults and not big and not slow" tests $(PYTEST_ARGS)

test-slow: setup
	. scripts/env.sh && $(PYTHON) -m pytest -q -n $(PYTEST_WORKERS) --dist loadfile --durations=20 -m "(slow or big) and not faults" tests $(PYTEST_ARGS)

test-faults: setup
	. scripts/env.sh && $(PYTHON) -m pytest -q -m faults tests/test_faults.py $(PYTEST_ARGS)

test-big: setup
	. scripts/env.sh && $(PYTHON) -m pytest -q -m big tests $(PYTEST_ARGS)

bench: setup
	. scripts/env.sh && \
	if [ -f bench/run.sh ]; then bash bench/run.sh $(ARGS); \
	elif [ -f bench/run_all.py ]; then $(PYTHON) bench/run_all.py $(ARGS); \
	else echo "bench: no bench/run.sh or bench/run_all.py yet" >&2; exit 1; fi

clean:
	rm -rf lakehouse demo airflow/logs spark-warehouse metastore_db derby.log
