#!/usr/bin/env bash
# fleethealth set-up: everything the embedded deployment needs, from a fresh clone.
#
#   scripts/setup.sh            (make setup; also run by make demo / make test / .ci/run)
#
# Idempotent: every step is skipped when its inputs did not change, so a second run takes seconds.
# Independent steps run at once (see "What runs together" below): apt's test programs beside the rest,
# c) beside e) and e2), then h) beside f).
#   a) Java >= 17                      apt-get install openjdk-17-jre-headless if missing/older
#   b) Maven                           apt-get install maven, only if the jars must be (re)resolved
#   c) .venv (Python 3.11)             uv pip install -r requirements.txt -c constraints.txt, uv pip install -e .
#                                      (uv, pinned in constraints.txt, bootstrapped by pip: ~25 s instead of
#                                      ~2 min; pip does it all if uv cannot be installed)
#                                      stamp: sha256 of requirements.txt + constraints.txt + pyproject.toml
#   d) pyspark sanity check            version == pin in requirements.txt, pyspark/jars present
#   e) ./jars                          mvn dependency:copy-dependencies (pom.xml); stamp: sha256 of pom.xml
#      ./jars-agents                   mvn dependency:copy@agents (Jolokia JVM agent, never on Spark's classpath)
#   e2) ./jars/fleethealth-engine.jar  mvn package (engine/pom.xml; apt-get install openjdk-17-jdk-headless if
#                                      javac is missing); stamp: sha256 of engine/pom.xml and engine/src
#   h) ./jars/spark-cds.jsa            class-data-sharing archive of the Spark driver (python -m fleethealth.setup.class_sharing);
#                                      stamp: jars + engine + requirements + java -version. Not built when
#                                      FLEETHEALTH_CLASS_SHARING=0 (make demo: it takes ~50 s and saves ~4.5 s per
#                                      Spark JVM, 4 in a demo, hundreds in make test)
#   g) OpenSSH server                  apt-get install openssh-server if /usr/sbin/sshd is missing (the pull
#                                      tests start their own sshd on loopback; nothing is started here)
#   g2) Prometheus Alertmanager        apt-get install prometheus-alertmanager if /usr/bin/prometheus-alertmanager
#                                      is missing (the notify tests start their own on loopback; a daemon the
#                                      package starts is stopped again)
#   g3) Chromium                       apt-get install chromium if /usr/bin/chromium is missing (the HTML
#                                      report's tests load its pages in it, headless, network blocked)
#   g4) Prometheus                     apt-get install prometheus if /usr/bin/prometheus or promtool is missing
#                                      (the Prometheus transport's tests start their own on loopback, filled
#                                      by promtool; a daemon the package starts is stopped again)
#   f) Airflow metadata DB             airflow db migrate (SQLite in $AIRFLOW_HOME, default ./airflow; scripts/env.sh)
#                                      if missing or deps changed
#
# Environment knobs:
#   FLEETHEALTH_FORCE_SETUP=1   ignore the stamps and redo every step
#   FLEETHEALTH_CLASS_SHARING=0 do not build the class-data-sharing archive (an existing one is kept)
#   FLEETHEALTH_TEST_PACKAGES=0 skip g, g2, g3 and g4 (make demo: programs only the tests run)
#   MAVEN_REPO_LOCAL=DIR        Maven local repository (default: Maven's own, ~/.m2/repository)
#   PYTHON=/path/to/python3.11  interpreter used to create .venv
set -euo pipefail

PROJECT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "$PROJECT"

VENV="$PROJECT/.venv"
JARS="$PROJECT/jars"
AGENTS="$PROJECT/jars-agents"
VENV_STAMP="$VENV/.setup-stamp-venv"
JARS_STAMP="$JARS/.setup-stamp-pom"
FORCE="${FLEETHEALTH_FORCE_SETUP:-0}"

T0=$SECONDS
log()  { printf 'setup: %s\n' "$*"; }
die()  { printf 'setup: ERROR: %s\n' "$*" >&2; exit 1; }
step() { printf 'setup: [%3ss] %s\n' "$((SECONDS - T0))" "$*"; }

# One set-up at a time per checkout (make demo and make test may start together).
if command -v flock >/dev/null 2>&1; then
    exec 9>"$PROJECT/.setup-stamp.lock"
    if ! flock -n 9; then
        log "another set-up is running in $PROJECT; waiting for it"
        flock 9
    fi
fi

sha256_of() { cat "$@" | sha256sum | cut -d' ' -f1; }
stamp_ok() { [ "$FORCE" != 1 ] && [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]; }

SUDO=""
if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 && SUDO="sudo"
fi
APT_UPDATED=0
apt_install() {
    command -v apt-get >/dev/null 2>&1 \
        || die "need to install $* but apt-get is not available: install it by hand and re-run"
    if [ "$(id -u)" != 0 ] && [ -z "$SUDO" ]; then
        die "need to install $* (apt-get) but not root and no sudo: install it by hand and re-run"
    fi
    if [ "$APT_UPDATED" = 0 ]; then
        step "apt-get update"
        $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q -o DPkg::Lock::Timeout=900 >/dev/null
        APT_UPDATED=1
    fi
    step "apt-get install $*"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        -o DPkg::Lock::Timeout=900 "$@" >/dev/null
}

# ---------------------------------------------------------------------------------------------
# a) Java 17+
java_major() {
    command -v java >/dev/null 2>&1 || { echo 0; return; }
    local v
    v="$(java -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -n1)"
    case "$v" in
        1.*) v="${v#1.}" ;;
    esac
    v="${v%%[.+-]*}"
    case "$v" in
        ''|*[!0-9]*) echo 0 ;;
        *) echo "$v" ;;
    esac
}
if [ "$(java_major)" -lt 17 ]; then
    log "Java 17+ not found (java: $(command -v java || echo none), major $(java_major))"
    apt_install openjdk-17-jre-headless
    if [ "$(java_major)" -lt 17 ]; then
        # An older Java is first on PATH: put the one just installed in front (for this run).
        for jdk in /usr/lib/jvm/java-17-openjdk*/bin; do
            [ -x "$jdk/java" ] && export PATH="$jdk:$PATH" && break
        done
    fi
    [ "$(java_major)" -ge 17 ] || die "Java 17+ still not on PATH after installing openjdk-17-jre-headless"
fi
step "java $(java_major) ok ($(command -v java))"

# ---------------------------------------------------------------------------------------------
# b) Maven, only when the jars have to be resolved
POM_HASH="$(sha256_of pom.xml)"
jars_present() { compgen -G "$JARS/*.jar" >/dev/null && compgen -G "$AGENTS/*.jar" >/dev/null; }
NEED_JARS=1
if stamp_ok "$JARS_STAMP" "$POM_HASH" && jars_present; then
    NEED_JARS=0
fi
if [ "$NEED_JARS" = 1 ] && ! command -v mvn >/dev/null 2>&1; then
    log "Maven not found"
    apt_install maven
    command -v mvn >/dev/null 2>&1 || die "mvn still not on PATH after installing maven"
fi

# ---------------------------------------------------------------------------------------------
# c) Python 3.11 virtual environment
is_py311() { "$1" -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else 1)' >/dev/null 2>&1; }
find_python() {
    local c
    for c in ${PYTHON:-} python3.11 python3 python; do
        if command -v "$c" >/dev/null 2>&1 && is_py311 "$c"; then
            command -v "$c"
            return 0
        fi
    done
    return 1
}

DEPS_HASH="$(sha256_of requirements.txt constraints.txt pyproject.toml)"
venv_phase() {
    if [ -x "$VENV/bin/python" ] && ! is_py311 "$VENV/bin/python"; then
        log ".venv is not a working Python 3.11 environment: recreating it"
        rm -rf "$VENV"
    fi
    if [ ! -x "$VENV/bin/python" ]; then
        PY="$(find_python || true)"
        if [ -z "$PY" ]; then
            log "Python 3.11 not found (tried: ${PYTHON:-} python3.11 python3 python)"
            apt_install python3.11 python3.11-venv
            PY="$(find_python)" || die "Python 3.11 still not found; set PYTHON=/path/to/python3.11"
        fi
        step "creating .venv with $PY"
        if ! "$PY" -m venv "$VENV"; then
            rm -rf "$VENV"
            apt_install python3.11-venv
            "$PY" -m venv "$VENV" || die "could not create $VENV with $PY"
        fi
    fi
    if stamp_ok "$VENV_STAMP" "$DEPS_HASH" && [ -x "$VENV/bin/fleethealth" ]; then
        step ".venv up to date (requirements unchanged)"
    else
        rm -f "$VENV_STAMP"
        PIP=("$VENV/bin/python" -m pip --disable-pip-version-check --quiet)
        step "pip install uv (constraints.txt)"
        if "${PIP[@]}" install --progress-bar off uv -c constraints.txt && [ -x "$VENV/bin/uv" ]; then
            # compiled at install, as pip does: a process that may not write __pycache__
            # (PYTHONDONTWRITEBYTECODE, a read-only venv) otherwise compiles Airflow and GX at every start
            INSTALLER=uv INSTALL=("$VENV/bin/uv" pip install --quiet --compile-bytecode --python "$VENV/bin/python")
        else
            log "could not install uv: pip installs the requirements instead (slower)"
            INSTALLER=pip INSTALL=("${PIP[@]}" install --progress-bar off)
        fi
        step "$INSTALLER install -r requirements.txt -c constraints.txt"
        "${INSTALL[@]}" -r requirements.txt -c constraints.txt
        step "$INSTALLER install -e . --no-deps (console script: fleethealth)"
        "${INSTALL[@]}" -e . --no-deps
        if [ "$INSTALLER" = uv ]; then
            # pyspark is an sdist only: uv builds it (~1 GB) into a new cache revision at every fresh
            # clone and keeps the old ones, which filled a shared disk at 60 clones
            "$VENV/bin/uv" cache prune --quiet || log "uv cache prune failed (ignored)"
        fi
        echo "$DEPS_HASH" >"$VENV_STAMP"
    fi

    # ---------------------------------------------------------------------------------------------
    # d) pyspark: the pinned version, and the full distribution (with its jars)
    PYSPARK_PIN="$(sed -n 's/^[[:space:]]*pyspark[[:space:]]*==[[:space:]]*\([^[:space:];#]*\).*/\1/p' requirements.txt | head -n1)"
    [ -n "$PYSPARK_PIN" ] || die "requirements.txt does not pin pyspark==X.Y.Z"
    PYSPARK_INFO="$("$VENV/bin/python" - <<'EOF' 2>&1
import os
try:
    import pyspark
except Exception as exc:  # noqa: BLE001
    print(f"IMPORT-ERROR {exc}")
else:
    print(pyspark.__version__, os.path.join(os.path.dirname(pyspark.__file__), "jars"))
EOF
    )" || true
    case "$PYSPARK_INFO" in
        IMPORT-ERROR*|"") die "cannot import pyspark in $VENV: ${PYSPARK_INFO#IMPORT-ERROR }" ;;
    esac
    PYSPARK_VERSION="${PYSPARK_INFO%% *}"
    PYSPARK_JARS="${PYSPARK_INFO#* }"
    [ "$PYSPARK_VERSION" = "$PYSPARK_PIN" ] \
        || die "pyspark in .venv is $PYSPARK_VERSION but requirements.txt pins $PYSPARK_PIN (run FLEETHEALTH_FORCE_SETUP=1 make setup)"
    if [ ! -d "$PYSPARK_JARS" ] || ! compgen -G "$PYSPARK_JARS/spark-core_*.jar" >/dev/null; then
        die "$PYSPARK_JARS has no Spark jars: only the thin pyspark-client (Spark Connect) is installed; reinstall the full distribution with: $VENV/bin/pip install --force-reinstall --no-deps pyspark==$PYSPARK_PIN"
    fi
    step "pyspark $PYSPARK_VERSION ok ($PYSPARK_JARS)"
}

# ---------------------------------------------------------------------------------------------
# e) Delta Lake jars from Maven Central into ./jars, then e2) the engine jar: one job, run while c) installs
ENGINE_JAR="$JARS/fleethealth-engine.jar"
ENGINE_STAMP="$JARS/.setup-stamp-engine"
ENGINE_HASH="$(cd "$PROJECT" && find engine/pom.xml engine/src -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -d' ' -f1)"
jars_phase() {
    if [ "$NEED_JARS" = 0 ]; then
        step "jars up to date (pom.xml unchanged)"
    else
        rm -f "$JARS_STAMP"
        mkdir -p "$JARS" "$AGENTS"
        rm -f "$JARS"/*.jar "$AGENTS"/*.jar
        MVN=(mvn -q -B -Dstyle.color=never)
        [ -n "${MAVEN_REPO_LOCAL:-}" ] && MVN+=("-Dmaven.repo.local=$MAVEN_REPO_LOCAL")
        step "mvn dependency:copy-dependencies -> jars/, dependency:copy@agents -> jars-agents/"
        MVN_LOG="$JARS/.mvn.log"
        if ! "${MVN[@]}" -f "$PROJECT/pom.xml" dependency:copy-dependencies dependency:copy@agents >"$MVN_LOG" 2>&1; then
            tail -n 30 "$MVN_LOG" >&2
            die "Maven could not resolve the jars in pom.xml (Maven Central is needed on the first run; full log: $MVN_LOG)"
        fi
        jars_present || die "Maven ran but $JARS has no jars"
        echo "$POM_HASH" >"$JARS_STAMP"
        step "jars: $(cd "$JARS" && ls ./*.jar | sed 's|^\./||' | tr '\n' ' ')"
        step "agents: $(cd "$AGENTS" && ls ./*.jar | sed 's|^\./||' | tr '\n' ' ')"
    fi

    # ---------------------------------------------------------------------------------------------
    # e2) the project's Java module (engine/: Spark's streaming file reader of bronze) into ./jars
    if [ -f "$ENGINE_JAR" ] && stamp_ok "$ENGINE_STAMP" "$ENGINE_HASH"; then
        step "engine jar up to date ($ENGINE_JAR)"
    else
        rm -f "$ENGINE_STAMP"
        MVN=(mvn -q -B -Dstyle.color=never)
        [ -n "${MAVEN_REPO_LOCAL:-}" ] && MVN+=("-Dmaven.repo.local=$MAVEN_REPO_LOCAL")
        step "mvn package (engine/) -> $ENGINE_JAR"
        ENGINE_LOG="$JARS/.mvn-engine.log"
        # unlinked, not overwritten: a running Spark JVM keeps reading the file it opened
        rm -f "$ENGINE_JAR"
        if ! "${MVN[@]}" -f "$PROJECT/engine/pom.xml" package >"$ENGINE_LOG" 2>&1; then
            tail -n 30 "$ENGINE_LOG" >&2
            die "Maven could not build engine/ (full log: $ENGINE_LOG)"
        fi
        [ -f "$ENGINE_JAR" ] || die "Maven ran but $ENGINE_JAR is missing"
        echo "$ENGINE_HASH" >"$ENGINE_STAMP"
    fi
}

# g, g2, g3, g4) programs only the tests run (make demo skips them: FLEETHEALTH_TEST_PACKAGES=0), in one
# apt-get call: the pull tests run sshd themselves on 127.0.0.1 (own config), the notify tests
# Alertmanager, the HTML report's tests Chromium (playwright drives it; `playwright install` is never
# run), the Prometheus transport's tests Prometheus with storage filled by `promtool tsdb create-blocks-from
# openmetrics`. The packages start their services where they can (9093, 9090, a node exporter): they
# are stopped again, nothing here should listen.
test_packages() {
    local missing=() services=()
    if [ -x /usr/sbin/sshd ] && command -v ssh-keygen >/dev/null 2>&1; then
        step "sshd ok (/usr/sbin/sshd)"
    else
        missing+=(openssh-server)
    fi
    if [ -x /usr/bin/prometheus-alertmanager ]; then
        step "alertmanager ok (/usr/bin/prometheus-alertmanager)"
    else
        missing+=(prometheus-alertmanager) services+=(prometheus-alertmanager)
    fi
    if [ -x /usr/bin/chromium ]; then
        step "chromium ok (/usr/bin/chromium)"
    else
        missing+=(chromium)
    fi
    if [ -x /usr/bin/prometheus ] && [ -x /usr/bin/promtool ]; then
        step "prometheus ok (/usr/bin/prometheus, /usr/bin/promtool)"
    else
        missing+=(prometheus) services+=(prometheus prometheus-node-exporter)
    fi
    [ "${#missing[@]}" = 0 ] && return 0
    log "not found: ${missing[*]}"
    apt_install "${missing[@]}"
    local program
    for program in /usr/sbin/sshd /usr/bin/prometheus-alertmanager /usr/bin/chromium /usr/bin/prometheus /usr/bin/promtool; do
        [ -x "$program" ] || die "$program still missing after installing ${missing[*]}"
    done
    if command -v service >/dev/null 2>&1; then
        for program in "${services[@]}"; do
            $SUDO service "$program" stop >/dev/null 2>&1 || true
        done
    fi
    step "installed ${missing[*]}"
}

# ---------------------------------------------------------------------------------------------
# What runs together: apt's test packages (network, dpkg) beside everything else; the .venv
# (c, d) beside Maven (e, e2); then the class-data-sharing archive (h, which needs both) beside the
# Airflow database (f). A fresh clone's set-up: ~240 s instead of ~310 s (apt calls that overlap wait
# for dpkg's lock: DPkg::Lock::Timeout). What Maven's job needs is installed before it starts.
if ! { [ -f "$ENGINE_JAR" ] && stamp_ok "$ENGINE_STAMP" "$ENGINE_HASH"; }; then
    command -v javac >/dev/null 2>&1 || apt_install openjdk-17-jdk-headless
    command -v mvn >/dev/null 2>&1 || apt_install maven
fi
PIDS_TESTS=""
if [ "${FLEETHEALTH_TEST_PACKAGES:-1}" = 0 ]; then
    step "sshd, alertmanager, chromium, prometheus not checked (FLEETHEALTH_TEST_PACKAGES=0: the tests need them, not the demo)"
else
    test_packages & PIDS_TESTS=$!
fi
jars_phase & PID_JARS=$!
venv_phase
wait "$PID_JARS" || die "the jars could not be made (above)"

# ---------------------------------------------------------------------------------------------
# h) JVM class-data-sharing archive: ~5 s less per Spark JVM start (fleethealth/setup/class_sharing.py)
CDS_ARCHIVE="$JARS/spark-cds.jsa"
CDS_STAMP="$JARS/.setup-stamp-cds"
CDS_HASH="$(printf '%s %s %s %s' "$POM_HASH" "$ENGINE_HASH" "$DEPS_HASH" "$(java -version 2>&1 | head -n 1)" | sha256sum | cut -d' ' -f1)"
class_sharing() {
    if [ -f "$CDS_ARCHIVE" ] && stamp_ok "$CDS_STAMP" "$CDS_HASH"; then
        step "class-data-sharing archive up to date ($CDS_ARCHIVE)"
    elif [ "${FLEETHEALTH_CLASS_SHARING:-1}" = 0 ]; then
        step "class-data-sharing archive not built (FLEETHEALTH_CLASS_SHARING=0)"
    else
        rm -f "$CDS_STAMP"
        step "class-data-sharing archive of the Spark driver -> $CDS_ARCHIVE"
        CDS_LOG="$JARS/.cds.log"
        # shellcheck source=scripts/env.sh
        if (. "$PROJECT/scripts/env.sh" && "$VENV/bin/python" -m fleethealth.setup.class_sharing) >"$CDS_LOG" 2>&1 \
            && [ -f "$CDS_ARCHIVE" ]; then
            echo "$CDS_HASH" >"$CDS_STAMP"
        else  # only slower without it: say so and go on
            tail -n 10 "$CDS_LOG" >&2
            log "WARNING: no class-data-sharing archive (Spark JVMs start ~5 s slower; log: $CDS_LOG)"
        fi
    fi
}
class_sharing & PID_CDS=$!

# ---------------------------------------------------------------------------------------------
# f) Airflow metadata database (SQLite in $AIRFLOW_HOME: a caller's, else ./airflow)
# shellcheck source=scripts/env.sh
. "$PROJECT/scripts/env.sh"
mkdir -p "$AIRFLOW_HOME"
AIRFLOW_DB="$AIRFLOW_HOME/airflow.db"
DB_STAMP="$AIRFLOW_HOME/.setup-stamp-db"
if [ -f "$AIRFLOW_DB" ] && stamp_ok "$DB_STAMP" "$DEPS_HASH"; then
    step "airflow db up to date ($AIRFLOW_DB)"
else
    rm -f "$DB_STAMP"
    step "airflow db migrate ($AIRFLOW_DB)"
    AIRFLOW_LOG="$AIRFLOW_HOME/setup-db-migrate.log"
    if ! "$VENV/bin/airflow" db migrate >"$AIRFLOW_LOG" 2>&1; then
        tail -n 30 "$AIRFLOW_LOG" >&2
        die "airflow db migrate failed (full log: $AIRFLOW_LOG)"
    fi
    echo "$DEPS_HASH" >"$DB_STAMP"
fi

wait "$PID_CDS" || die "the class-data-sharing step failed (above)"
if [ -n "$PIDS_TESTS" ]; then
    wait "$PIDS_TESTS" || die "the test programs could not be installed (above)"
fi
step "done"
