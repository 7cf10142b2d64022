"""Spark configuration shared by the jobs, the tests' session and the DAG's SparkSubmitOperators.

No pyspark import here: the DAG file reads it at parse time.
"""
from __future__ import annotations

import hashlib
import os
import re
import tempfile
import zipfile
from contextlib import contextmanager
from pathlib import Path

from fleethealth.runtime import cds, config


# For small inputs (a demo's hour, one file of `fleethealth parse`) a job is mostly the driver's fixed
# work, and so is each Spark job of it: adaptive execution runs every shuffle stage as a job of its own
# and re-plans more than it saves, and a broadcast join collects its small side in a job of its own
# each time a plan runs (a demo hour's gold 29 -> 19 s; its silver 145 -> 87 jobs, gold 270 -> 193,
# no slower; one shuffle partition, as AQE would have coalesced them to).
SMALL_INPUT_PLAN_CONF = {"spark.sql.shuffle.partitions": "1", "spark.sql.adaptive.enabled": "false",
                         "spark.sql.autoBroadcastJoinThreshold": "-1"}
# and Janino compiling the generated code of every operator costs more than interpreting it over a few
# thousand rows (bronze, gold; silver's parse, heavier per row, is faster compiled even then)
SMALL_INPUT_CONF = {**SMALL_INPUT_PLAN_CONF, "spark.sql.codegen.factoryMode": "NO_CODEGEN"}
# a line of spark-defaults.conf (Java properties: `key value`, `key=value` or `key: value`)
_SETTING = re.compile(r"(?P<key>spark\.[^\s=:]+)\s*[\s=:]\s*(?P<value>\S.*)")
# an hour (or window) whose landed files are smaller than this is a small input
SMALL_HOUR_BYTES = 64 * 2**20


def java_options_string(options: list[str]) -> str:
    """JVM options as one `extraJavaOptions` value: Spark splits it like a shell (quotes, backslash),
    so each option is quoted and a path with a space or a quote stays one option."""
    return " ".join('"' + o.replace("\\", "\\\\").replace('"', '\\"') + '"' for o in options if o)


def process_umask() -> int:
    """This process's umask: from /proc (Linux), else set and put back at once."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def is_local(master: str) -> bool:
    """A master whose executors run in the driver's JVM (local, local[N], local[*])."""
    return master.startswith("local")


def spark_conf(warehouse: str | os.PathLike | None = None, *, tables: str = "", short_lived: bool = False,
               class_sharing: bool = True, master: str = "local[*]", deployment: bool = True) -> dict[str, str]:
    """Settings every fleethealth Spark application gets: `warehouse` is where the catalog's databases
    go, `tables` where the Delta tables live (a lakehouse's, fleethealth.lake.catalog: its S3A settings).

    The Delta jars and the engine jar come from the Maven-resolved folder (never Ivy at run time): on
    the driver's class path, and, for a cluster `master`, shipped to the executors by `spark.jars`
    (the library goes with them: build_session adds library_zip()).
    The driver maps the class-data-sharing archive of set-up when there is one (fleethealth.runtime.cds).
    `short_lived` (the spark-submit jobs of the DAG: one hour each, a minute or two) keeps the JIT
    at its quick first tier and Spark SQL off whole-stage code generation: such a JVM ends before
    compiling (C2, Janino) would pay back (-20 % per job on an hour of a small fleet).
    `deployment`: with the deployment's own settings (deployment_conf); the DAG's file leaves them
    to the task (fleethealth.pipeline.operator), so that none is read when the DAG is parsed.
    """
    # a batch job wants throughput, not short pauses: G1's concurrent threads and write barriers
    # cost 5-10 % on 2 cores (the DAG's gold job of a tiny hour ~50 -> ~47 s; test_jobs 272 -> 263 s)
    jvm = ["-XX:+UseParallelGC"]
    if short_lived:
        # C1 alone gets a 48 MB code cache: a gold job's plans fill it, and a full code cache kills
        # the JVM ("Out of space in CodeCache for adapters")
        jvm += ["-XX:TieredStopAtLevel=1", "-XX:ReservedCodeCacheSize=256m"]
    java_options = [f"-Dlog4j.configurationFile=file:{config.PROJECT_ROOT / 'include' / 'fleethealth' / 'runtime' / 'log4j2.properties'}",
                    *jvm, *(cds.java_options() if class_sharing else [])]
    # the driver's JVM is started with them (the Delta extension, class-data sharing); local
    # executors share that JVM, a cluster's fetch spark.jars from the driver
    classpath = f"{config.jars_dir()}/*"
    conf = {
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        # the project's own Spark SQL functions (engine/, built at set-up): fleethealth.engine.*
        "spark.sql.catalog.fleethealth": "io.fleethealth.engine.Functions",
        "spark.driver.extraClassPath": classpath,
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": "8",
        "spark.sql.adaptive.enabled": "true",
        # HotSpot never JIT-compiles a method over 8000 bytes of bytecode: a stage whose generated
        # code is larger ran interpreted (the event rules: 2x slower). Above this, Spark falls back
        # to per-operator code in small methods (the setting Spark's own docs suggest for HotSpot).
        "spark.sql.codegen.hugeMethodLimit": "8000",
        # PySpark otherwise records the Python call site of every Column function for error messages:
        # four py4j round trips each, half of a gold hour's 37,000 (about 1.5 s per hour)
        "spark.python.sql.dataFrameDebugging.enabled": "false",
        # Spark keeps 100 compiled classes by default; a gold hour generates ~380 distinct ones, so
        # every hour compiled all of them again (Janino: a quarter of a warm gold hour's JVM samples).
        # With room for them an hour compiles 7-23 (-10 % per gold hour, bench/README)
        "spark.sql.codegen.cache.maxEntries": "2000",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        # without a UI Spark's status listeners still keep every job, stage, task and SQL execution up to
        # these (by default 1,000 executions, each with its plan's graph, metrics and explain text): a
        # test worker's JVM, which lives for hundreds of hours, held 488,841 SQL plan metrics; an hour's
        # job reads none of them
        "spark.ui.retainedJobs": "100",
        "spark.ui.retainedStages": "100",
        "spark.ui.retainedTasks": "1000",
        "spark.sql.ui.retainedExecutions": "20",
        # the plan text each SQL execution's start event carries, for a UI no job shows: the short form
        "spark.sql.ui.explainMode": "simple",
        "spark.databricks.delta.schema.autoMerge.enabled": "false",
        # every table Spark creates gets delta.enableDeletionVectors=false, written in its metadata: a
        # DELETE/UPDATE/MERGE then rewrites files instead of leaving deletion vectors, which the readers
        # without Spark (delta-rs, so `fleethealth query`'s DuckDB engine, polars) cannot apply
        "spark.databricks.delta.properties.defaults.enableDeletionVectors": "false",
        "spark.databricks.delta.snapshotPartitions": "2",
        "spark.sql.sources.partitionOverwriteMode": "static",
        # Delta's VACUUM lists files with one task per unit of this, 10,000 by default: ~45 s for a
        # tiny table on 2 cores (maintenance DAG, test_maintenance 91 s -> 42 s)
        "spark.sql.sources.parallelPartitionDiscovery.parallelism": "8",
        "spark.driver.memory": "4g",
        # the unit of Tungsten's memory: a broadcast join's hash relation takes a whole page however few
        # its rows (UnsafeHashedRelation), and Spark sizes pages from the heap, 32 MB here: an hour's
        # dozens of small broadcast joins allocated and zeroed GBs and, while their plans lived, kept them
        # (JFR's old-object samples: long[4194304] pages from BroadcastExchangeExec; a test worker's heap
        # full of them). Spark's own smallest size; a larger record still gets a page of its size
        "spark.buffer.pageSize": "1m",
        # Hadoop's file systems set every file and folder they create to 0666/0777 less their own umask,
        # 022 by default, not the process's: under `umask 077` the tables' files were 0644. They get the
        # process's (the folders of a lakehouse, the landing and the report are made by Python under it)
        "spark.hadoop.fs.permissions.umask-mode": f"{process_umask():03o}",
        "spark.driver.extraJavaOptions": java_options_string(java_options),
    }
    if short_lived:
        conf["spark.sql.codegen.wholeStage"] = "false"
    if is_local(master):
        # Hadoop's local file system without its native library runs a chmod process for every file it
        # creates and a readlink for every commit's rename: ~600 an hour, 7 ms each (engine/ LocalFiles).
        # Local masters only: a cluster's executors load the engine jar after Hadoop's file systems
        conf["spark.hadoop.fs.file.impl"] = "io.fleethealth.engine.LocalFiles$FileSystem"
        conf["spark.hadoop.fs.AbstractFileSystem.file.impl"] = "io.fleethealth.engine.LocalFiles$Fs"
    else:
        conf["spark.jars"] = ",".join(str(j) for j in config.jar_files())
        # a cluster's executors live as long as their application: they get the driver's collector and,
        # for a short-lived one, its JIT tier (not its class sharing: their class path is the worker's)
        conf["spark.executor.extraJavaOptions"] = java_options_string(jvm)
    if warehouse:
        conf["spark.sql.warehouse.dir"] = str(warehouse)
    return {**conf, **s3a_conf(tables, master), **(deployment_conf() if deployment else {})}


# the AWS SDKs' and delta-rs's variables, so one set of settings serves Spark and the readers without it
AWS_CREDENTIALS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")


def s3a_conf(tables_root: str, master: str = "local[*]", env=os.environ) -> dict[str, str]:
    """Hadoop S3A's settings for tables on s3a://, from the standard AWS variables that delta-rs (the
    report, `fleethealth query`, the outbox) reads too: the endpoint of an S3-compatible store
    (AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL; addressed path-style, as delta-rs does, unless
    AWS_VIRTUAL_HOSTED_STYLE_REQUEST=true) and the region. Credentials: S3A's own chain reads the same
    AWS_* keys (or an instance or pod role); a cluster's executors get the driver's keys in their
    environment. FLEETHEALTH_SPARK_CONF overrides any of these."""
    if not tables_root.startswith("s3a://"):
        return {}
    conf = {}
    endpoint = env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL")
    if endpoint:
        conf["spark.hadoop.fs.s3a.endpoint"] = endpoint
        hosted = env.get("AWS_VIRTUAL_HOSTED_STYLE_REQUEST", "").lower() == "true"
        conf["spark.hadoop.fs.s3a.path.style.access"] = "false" if hosted else "true"
    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
    if region:
        conf["spark.hadoop.fs.s3a.endpoint.region"] = region
    if not is_local(master):
        conf.update({f"spark.executorEnv.{k}": env[k] for k in AWS_CREDENTIALS if env.get(k)})
    return conf


def deployment_conf() -> dict[str, str]:
    """The deployment's own Spark settings (FLEETHEALTH_SPARK_CONF: executors' memory and cores, a
    storage connector's settings, ...), in the format of Spark's spark-defaults.conf: one `key value`
    (or `key=value`) a line, `#` comments. Spark's own spark-defaults.conf cannot override the settings
    above (explicit settings win over it); this file can."""
    path = config.spark_conf_file()
    if path is None:
        return {}
    conf = {}
    for n, line in enumerate(path.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        setting = _SETTING.fullmatch(line)
        if not setting:
            raise ValueError(f"{path}:{n}: not a Spark setting (`spark.<name> <value>`): {line!r}")
        conf[setting["key"]] = setting["value"]
    return conf


# a setting whose name says it may hold a secret: a password, a token, a key (fs.s3a.access.key,
# fs.s3a.encryption.key, spark.executorEnv.AWS_SECRET_ACCESS_KEY, ...), credentials
SECRET_NAME = re.compile(r"secret|passw|token|credential|(^|[._-])key([._-]|$)", re.IGNORECASE)


def submitted_conf(conf: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """`conf` and the deployment's settings (read now) split for spark-submit: (those for its command
    line, those for a properties file: every deployment setting, which may hold keys, and any whose
    name says it holds a secret). A --conf wins over the file: the command line gets no key it has."""
    private = {**{k: v for k, v in conf.items() if SECRET_NAME.search(k)}, **deployment_conf()}
    return {k: v for k, v in conf.items() if k not in private}, private


def _escaped(text: str) -> str:
    """`text` as a Java properties file reads it back (Spark's --properties-file)."""
    out = text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
    for c in "=: #!":
        out = out.replace(c, "\\" + c)
    return out


@contextmanager
def properties_file(conf: dict[str, str]):
    """`conf` in a properties file for spark-submit's --properties-file that only this user can read
    (its own 0700 folder, the file 0600), never on a command line (`ps`); removed after the block."""
    with tempfile.TemporaryDirectory(prefix="fleethealth-spark-") as folder:
        path = Path(folder) / "spark.properties"
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8") as f:
            f.writelines(f"{_escaped(k)}={_escaped(v)}\n" for k, v in conf.items())
        yield path


class SecretsInFile:
    """Mixed into Airflow's SparkSubmitOperator by the DAG files (their one import of it): the task's
    `conf` is what the DAG file gives (spark_conf(deployment=False): nothing of the deployment's file
    is read at parse time, so none is in the serialized DAG); when the task runs, the deployment's
    settings and every one whose name says it holds a secret go to spark-submit in a properties file
    (submitted_conf, properties_file), never on its command line or in the task's log."""

    def execute(self, context):
        self.conf, private = submitted_conf(self.conf or {})
        if not private:
            return super().execute(context)
        with properties_file(private) as path:
            self.properties_file = str(path)
            return super().execute(context)


def library_zip() -> Path:
    """The fleethealth package this process imported, zipped for the executors of a cluster
    (SparkContext.addPyFile, Spark's "Python Package Management"): built once per content into the
    user's cache, so executors always run the driver's code."""
    import fleethealth

    package = Path(fleethealth.__file__).parent
    files = sorted(p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    digest = hashlib.sha256()
    for f in files:
        digest.update(f"{f.relative_to(package)}\0{f.stat().st_size}\0".encode())
        digest.update(f.read_bytes())
    target = config.cache_dir() / f"fleethealth-{digest.hexdigest()[:16]}.zip"
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(suffix=".zip", dir=target.parent)
        with os.fdopen(fd, "wb") as out, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
            for f in files:
                z.write(f, Path("fleethealth") / f.relative_to(package))
        os.replace(tmp, target)   # whole or not at all: concurrent applications may build it too
    return target
