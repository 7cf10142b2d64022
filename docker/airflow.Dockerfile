# syntax=docker/dockerfile:1
# fleethealth image for the scaled deployment (docker-compose.yaml): Airflow 3 + Java 17 + PySpark
# with the Delta jars, and the fleethealth package. The same image runs the Spark master and
# workers, so executors have exactly the driver's Spark, Python (3.11) and fleethealth code.
#
#   docker compose build        (context: the repository root)
#
# Stage 1 resolves the Delta Lake jars from Maven Central with the project's pom.xml and builds
# engine/ (exactly what scripts/setup.sh does on one machine); Spark never downloads anything at run time.

ARG AIRFLOW_IMAGE=apache/airflow:3.3.2-python3.11
ARG MAVEN_IMAGE=maven:3.9-eclipse-temurin-17
ARG JRE_IMAGE=eclipse-temurin:17-jre

# --- Delta jars (pom.xml) ----------------------------------------------------------------------
FROM ${MAVEN_IMAGE} AS jars
WORKDIR /build
COPY pom.xml ./
RUN mvn -q -B -Dstyle.color=never dependency:copy-dependencies \
    && ls -l /build/jars
# the project's Java module (engine/: bronze's streaming reader), built into the same folder
COPY engine ./engine
RUN mvn -q -B -Dstyle.color=never -f engine/pom.xml package \
    && ls -l /build/jars/fleethealth-engine.jar

# --- Java 17 runtime (distribution-independent copy of Temurin) ---------------------------------
FROM ${JRE_IMAGE} AS jre

# --- Airflow + fleethealth ---------------------------------------------------------------------
FROM ${AIRFLOW_IMAGE}

USER root
COPY --from=jre /opt/java/openjdk /opt/java/openjdk
ENV JAVA_HOME=/opt/java/openjdk \
    PATH=/opt/java/openjdk/bin:${PATH}
# /lakehouse is the mount point of the `lakehouse` named volume: a new volume takes this
# ownership, so Airflow (Spark driver) and the Spark workers (executors) can both write it.
RUN mkdir -p /opt/fleethealth /lakehouse \
    && chown -R airflow:0 /opt/fleethealth /lakehouse \
    && chmod -R g+rwX /opt/fleethealth /lakehouse
COPY --from=jars --chown=airflow:0 /build/jars /opt/fleethealth/jars

USER airflow
WORKDIR /opt/fleethealth

# Same pins as the one-machine set-up: requirements.txt with the constraints.txt lock.
COPY --chown=airflow:0 requirements.txt constraints.txt pyproject.toml ./
RUN pip install --no-cache-dir -r requirements.txt -c constraints.txt

# The project itself. Editable install: fleethealth.runtime.config.PROJECT_ROOT is then /opt/fleethealth,
# so spark/ and expectations/ are found next to include/ (docker-compose.yaml mounts them over
# these copies for development).
COPY --chown=airflow:0 include ./include
COPY --chown=airflow:0 spark ./spark
COPY --chown=airflow:0 expectations ./expectations
COPY --chown=airflow:0 dags ./dags
RUN pip install --no-cache-dir --no-deps -e . \
    && pin="$(sed -n 's/^pyspark==\([^[:space:]]*\).*/\1/p' requirements.txt)" \
    && python -c "import os, sys, pyspark; v = pyspark.__version__; \
jars = os.path.join(os.path.dirname(pyspark.__file__), 'jars'); \
sys.exit(0 if v == sys.argv[1] and os.path.isdir(jars) else f'pyspark {v} (pin {sys.argv[1]}), jars dir {jars}')" "$pin" \
    && java -version

ENV FLEETHEALTH_JARS=/opt/fleethealth/jars \
    FLEETHEALTH_LAKEHOUSE=/lakehouse \
    GX_ANALYTICS_ENABLED=False \
    PYSPARK_PYTHON=python3 \
    AIRFLOW__CORE__DAGS_FOLDER=/opt/fleethealth/dags \
    AIRFLOW__CORE__LOAD_EXAMPLES=False

WORKDIR /opt/airflow
