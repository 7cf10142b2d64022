"""The scaled deployment (docker-compose.yaml + docker/airflow.Dockerfile), the one-machine set-up
(scripts/env.sh, pom.xml) and the code's configuration (fleethealth.runtime.config) must agree.

Pure text/YAML/XML checks: nothing heavy is imported (no Spark, no Airflow, no Docker needed).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from fleethealth.runtime import config

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = ROOT / "docker-compose.yaml"
ENV_SH = ROOT / "scripts" / "env.sh"
POM = ROOT / "pom.xml"
REQUIREMENTS = ROOT / "requirements.txt"

SPARK_CONN_ENV = f"AIRFLOW_CONN_{config.SPARK_CONN_ID.upper()}"
REQUIRED_ENV = (config.ENV_LAKEHOUSE, config.ENV_JARS, SPARK_CONN_ENV, "GX_ANALYTICS_ENABLED")
AIRFLOW_SERVICES = (
    "airflow-init",
    "airflow-apiserver",
    "airflow-scheduler",
    "airflow-dag-processor",
    "airflow-triggerer",
)
SPARK_SERVICES = ("spark-master", "spark-worker")
LAKEHOUSE_VOLUME = "lakehouse"


# --- helpers ---------------------------------------------------------------------------------
def pins() -> dict[str, str]:
    out = {}
    for line in REQUIREMENTS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        m = re.match(r"^([A-Za-z0-9_.\-\[\]]+)\s*==\s*([^\s;]+)", line)
        if m:
            out[re.sub(r"[-_.]+", "-", m.group(1).lower())] = m.group(2)
    return out


def major_minor(version: str) -> str:
    m = re.match(r"^(\d+)\.(\d+)", version)
    assert m, f"not a version: {version!r}"
    return f"{m.group(1)}.{m.group(2)}"


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


@pytest.fixture(scope="module")
def services(compose) -> dict:
    return compose["services"]


def env_of(service: dict) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):  # ["NAME=value", ...] form
        env = dict(item.split("=", 1) if "=" in item else (item, "") for item in env)
    return {str(k): "" if v is None else str(v) for k, v in env.items()}


def volume_mounts(service: dict) -> dict[str, str]:
    """source -> target for every volume of a service (short and long syntax)."""
    out = {}
    for vol in service.get("volumes") or []:
        if isinstance(vol, str):
            parts = vol.split(":")
            out[parts[0]] = parts[1] if len(parts) > 1 else parts[0]
        else:
            out[str(vol.get("source"))] = str(vol.get("target"))
    return out


def dockerfile_of(service: dict) -> Path | None:
    build = service.get("build")
    if not build:
        return None
    if isinstance(build, str):
        return ROOT / build / "Dockerfile"
    return ROOT / build.get("context", ".") / build.get("dockerfile", "Dockerfile")


def env_sh_exports() -> dict[str, str]:
    """NAME -> raw value text of every `export NAME=...` in scripts/env.sh."""
    out = {}
    for line in ENV_SH.read_text().splitlines():
        m = re.match(r"^\s*(?:\*\)\s*)?export\s+([A-Za-z_][A-Za-z0-9_]*)=(.*?)\s*(?:;;)?\s*$", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


# --- docker-compose.yaml ----------------------------------------------------------------------
def test_services_exist(services):
    missing = [s for s in ("postgres", *AIRFLOW_SERVICES, *SPARK_SERVICES) if s not in services]
    assert not missing, f"docker-compose.yaml lacks services {missing}"


@pytest.mark.parametrize("name", AIRFLOW_SERVICES)
def test_airflow_service_environment(services, name):
    env = env_of(services[name])
    missing = [k for k in REQUIRED_ENV if k not in env]
    assert not missing, f"{name}: environment lacks {missing}"
    assert env[config.ENV_LAKEHOUSE] == "/lakehouse"
    assert env[config.ENV_JARS] == "/opt/fleethealth/jars"
    assert env["GX_ANALYTICS_ENABLED"].lower() == "false"
    assert env["AIRFLOW__CORE__EXECUTOR"] == "LocalExecutor"
    assert env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"].startswith("postgresql")
    assert "@postgres" in env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]
    conn = json.loads(env[SPARK_CONN_ENV])
    assert conn["conn_type"] == "spark"
    assert conn["host"] == "spark://spark-master:7077"


@pytest.mark.parametrize("name", AIRFLOW_SERVICES)
def test_airflow_service_mounts(services, name):
    mounts = volume_mounts(services[name])
    env = env_of(services[name])
    assert mounts.get(LAKEHOUSE_VOLUME) == env[config.ENV_LAKEHOUSE], f"{name}: lakehouse volume"
    dags_folder = env["AIRFLOW__CORE__DAGS_FOLDER"]
    assert mounts.get("./dags") == dags_folder, f"{name}: ./dags must be mounted at {dags_folder}"
    for folder in ("include", "spark", "expectations"):
        assert mounts.get(f"./{folder}") == f"/opt/fleethealth/{folder}", f"{name}: ./{folder}"


def test_airflow_commands(services):
    def words(service):
        cmd = service.get("command")
        return cmd.split() if isinstance(cmd, str) else [str(c) for c in cmd]

    assert words(services["airflow-init"])[-2:] == ["db", "migrate"]
    assert words(services["airflow-apiserver"])[-1] == "api-server"
    assert words(services["airflow-scheduler"])[-1] == "scheduler"
    assert words(services["airflow-dag-processor"])[-1] == "dag-processor"
    assert words(services["airflow-triggerer"])[-1] == "triggerer"


def test_lakehouse_volume_shared_with_spark_worker(compose, services):
    assert LAKEHOUSE_VOLUME in (compose.get("volumes") or {}), "named volume `lakehouse` missing"
    worker = services["spark-worker"]
    assert volume_mounts(worker).get(LAKEHOUSE_VOLUME) == "/lakehouse"
    assert env_of(worker).get(config.ENV_LAKEHOUSE) == "/lakehouse"


def test_spark_master_listens_where_the_connection_points(services):
    cmd = " ".join(str(c) for c in services["spark-master"]["command"])
    assert "org.apache.spark.deploy.master.Master" in cmd
    assert re.search(r"--port\s+7077\b", cmd)
    worker_cmd = " ".join(str(c) for c in services["spark-worker"]["command"])
    assert "spark://spark-master:7077" in worker_cmd


def test_image_installs_the_same_requirements(services):
    dockerfiles = {dockerfile_of(services[s]) for s in AIRFLOW_SERVICES}
    assert len(dockerfiles) == 1 and None not in dockerfiles, "Airflow services: one shared build"
    dockerfile = dockerfiles.pop()
    assert dockerfile.is_file(), f"{dockerfile} missing"
    text = dockerfile.read_text()
    assert re.search(r"COPY\b.*\brequirements\.txt\b.*\bconstraints\.txt\b", text)
    assert re.search(r"pip install\b.*-r requirements\.txt\s+-c constraints\.txt", text)
    assert re.search(r"pip install\b.*\s-e \.", text), "the project itself must be installed"
    assert re.search(r"COPY\s+pom\.xml", text) and "dependency:copy-dependencies" in text
    assert re.search(r"COPY\s+engine\b", text) and "-f engine/pom.xml package" in text
    assert re.search(r"COPY --from=jars\b.*\s/opt/fleethealth/jars\s*$", text, re.M)
    # Base image: the Airflow version pinned in requirements.txt, Python 3.11.
    airflow_pin = pins()["apache-airflow"]
    assert f"apache/airflow:{airflow_pin}-python3.11" in text


def test_spark_version_matches_pyspark_pin(services):
    """Spark services run either the project image (pyspark from requirements.txt) or an
    apache/spark image whose major.minor equals the pyspark pin."""
    pyspark_mm = major_minor(pins()["pyspark"])
    airflow_dockerfile = dockerfile_of(services["airflow-scheduler"])
    for name in SPARK_SERVICES:
        service = services[name]
        image = str(service.get("image", ""))
        if image.startswith(("apache/spark:", "spark:")):
            tag = image.split(":", 1)[1]
            assert major_minor(tag) == pyspark_mm, f"{name}: {image} vs pyspark {pyspark_mm}"
        else:
            assert dockerfile_of(service) == airflow_dockerfile, f"{name}: image {image!r}"
            assert image == str(services["airflow-scheduler"].get("image")), name


# --- pom.xml -----------------------------------------------------------------------------------
def test_pom_matches_pins():
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    props = {el.tag.split("}", 1)[1]: el.text for el in ET.parse(POM).getroot().find("m:properties", ns)}
    p = pins()
    assert props["spark.binary.version"] == major_minor(p["pyspark"])
    assert props["scala.binary.version"] == "2.13"
    assert major_minor(props["delta.version"]) == major_minor(p["delta-spark"])
    text = POM.read_text()
    assert "delta-spark_${spark.binary.version}_${scala.binary.version}" in text
    assert "spark.jars.packages" not in text
    # hadoop-aws must be the Hadoop that pyspark ships (S3A calls into hadoop-client-api's classes)
    import pyspark

    shipped = [j.name for j in (Path(pyspark.__file__).parent / "jars").glob("hadoop-client-api-*.jar")]
    assert shipped == [f"hadoop-client-api-{props['hadoop.version']}.jar"]


def test_engine_pom_compiles_against_the_pinned_spark():
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    pom = ROOT / "engine" / "pom.xml"
    props = {el.tag.split("}", 1)[1]: el.text for el in ET.parse(pom).getroot().find("m:properties", ns)}
    assert props["spark.version"] == pins()["pyspark"]
    jars = ROOT / ".venv" / "lib" / "python3.11" / "site-packages" / "pyspark" / "jars"
    if jars.is_dir():   # the Scala and Kryo that pyspark ships are the ones compiled against
        names = {j.name for j in jars.glob("*.jar")}
        assert f"scala-library-{props['scala.version']}.jar" in names
        kryo = re.search(r"<artifactId>kryo-shaded</artifactId>\s*<version>([^<]+)</version>", pom.read_text())
        assert kryo and f"kryo-shaded-{kryo.group(1)}.jar" in names
        hadoop = re.search(r"<artifactId>hadoop-client-api</artifactId>\s*<version>([^<]+)</version>", pom.read_text())
        assert hadoop and f"hadoop-client-api-{hadoop.group(1)}.jar" in names


# --- scripts/env.sh ---------------------------------------------------------------------------
def test_env_sh_exports_the_same_names(services):
    exports = env_sh_exports()
    for name in (*REQUIRED_ENV, "AIRFLOW_HOME", "AIRFLOW__CORE__DAGS_FOLDER",
                 "AIRFLOW__CORE__LOAD_EXAMPLES", "PYSPARK_PYTHON", "SPARK_LOCAL_IP"):
        assert name in exports, f"scripts/env.sh does not export {name}"
    # Every fleethealth / connection / GX name the Airflow services get, env.sh exports too.
    shared = {
        k for k in env_of(services["airflow-scheduler"])
        if k.startswith(("FLEETHEALTH_", "AIRFLOW_CONN_", "GX_"))
    }
    assert shared <= set(exports), f"env.sh lacks {sorted(shared - set(exports))}"
    conn = json.loads(exports[SPARK_CONN_ENV].strip("'"))
    assert conn == {"conn_type": "spark", "host": "local[*]"}
    # The lakehouse default must not override a value the caller set.
    assert re.search(r"\$\{%s:-" % config.ENV_LAKEHOUSE, exports[config.ENV_LAKEHOUSE])


def sourced_env_sh(names: tuple[str, ...], **env: str) -> dict[str, str]:
    """The values of `names` after `. scripts/env.sh` in a shell given only `env` (and PATH)."""
    script = f'. "{ENV_SH}"; for n in {" ".join(names)}; do printf "%s=%s\\n" "$n" "${{!n}}"; done'
    proc = subprocess.run(["bash", "-c", script], env={"PATH": os.environ["PATH"], **env},
                          capture_output=True, text=True, timeout=30, check=True)
    return dict(line.split("=", 1) for line in proc.stdout.splitlines())


def test_env_sh_and_the_config_agree_on_the_lakehouse_default():
    """One default: a shell that sourced env.sh and a process that did not both use the project's lakehouse/."""
    assert sourced_env_sh((config.ENV_LAKEHOUSE,))[config.ENV_LAKEHOUSE] == config.SETTINGS[config.ENV_LAKEHOUSE].default
    assert config.SETTINGS[config.ENV_LAKEHOUSE].default == str(ROOT / "lakehouse")


AIRFLOW_PATHS = ("AIRFLOW__DATABASE__SQL_ALCHEMY_CONN", "AIRFLOW__LOGGING__BASE_LOG_FOLDER",
                 "AIRFLOW__LOGGING__DAG_PROCESSOR_CHILD_PROCESS_LOG_DIRECTORY", "AIRFLOW__CORE__PLUGINS_FOLDER")


def test_env_sh_keeps_the_callers_airflow_home_and_derives_every_airflow_path_from_it(tmp_path):
    names = ("AIRFLOW_HOME", *AIRFLOW_PATHS, "AIRFLOW__CORE__PARALLELISM", "AIRFLOW__CORE__EXECUTION_API_SERVER_URL")
    home = tmp_path / "second home"
    got = sourced_env_sh(names, AIRFLOW_HOME=str(home), AIRFLOW__API__PORT="8123")
    assert got["AIRFLOW_HOME"] == str(home)
    assert got["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] == f"sqlite:///{home}/airflow.db?timeout=30"
    assert all(str(home) in got[n] for n in AIRFLOW_PATHS), got
    assert got["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"] == "http://127.0.0.1:8123/execution/"
    assert got["AIRFLOW__CORE__PARALLELISM"] == str(2 * len(os.sched_getaffinity(0)))
    default = sourced_env_sh(names, AIRFLOW__CORE__PARALLELISM="3")
    assert default["AIRFLOW_HOME"] == str(ROOT.resolve() / "airflow")
    assert default["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] == f"sqlite:///{ROOT.resolve()}/airflow/airflow.db?timeout=30"
    assert default["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"] == "http://127.0.0.1:8080/execution/"
    assert default["AIRFLOW__CORE__PARALLELISM"] == "3"


def test_env_sh_has_no_side_effects():
    """Only exports: no installs, no file writes, no downloads."""
    body = "\n".join(
        line for line in ENV_SH.read_text().splitlines() if not line.lstrip().startswith("#")
    )
    for word in ("pip ", "apt-get", "mvn ", "mkdir", "rm ", "curl", "wget", "touch ", ">"):
        if word == ">":
            assert not re.search(r"(?<![>2&])>\s*[^&/ ]", body.replace(">/dev/null", "")), \
                "env.sh writes a file"
        else:
            assert word not in body, f"env.sh runs {word.strip()}"


# --- safe by default: secrets, logins, ports -------------------------------------------------------------
SECRETS = ("AIRFLOW_FERNET_KEY", "AIRFLOW_JWT_SECRET", "AIRFLOW_API_SECRET_KEY", "POSTGRES_PASSWORD")
_VAR = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])((?:[^{}]|\{[^{}]*\})*))?\}")


def interpolate(text: str, env: dict[str, str]) -> tuple[str, list[str]]:
    """Compose's variable interpolation (${V}, ${V:-default}, ${V-default}, ${V:?error}, ${V?error},
    $$): the text as `docker compose` would use it with `env`, and the errors it would stop on."""
    errors: list[str] = []

    def one(m: re.Match) -> str:
        if m.group(0) == "$$":
            return "$"
        name, op, arg = m.group(1), m.group(2) or "", m.group(3) or ""
        value = env.get(name)
        unset = value is None or (op.startswith(":") and value == "")
        if op.endswith("?") and unset:
            errors.append(f"{name}: {arg}")
            return ""
        if op.endswith("-") and unset:
            return arg
        return value or ""

    return _VAR.sub(one, text), errors


def test_the_stack_refuses_to_start_until_every_secret_is_set():
    _, errors = interpolate(COMPOSE.read_text(), {})
    assert sorted({e.split(":")[0] for e in errors}) == sorted(SECRETS)
    assert all(e.endswith(f"(python3 scripts/compose_env.py writes it; {compose_env.GUIDE})") for e in errors)
    for missing in SECRETS:   # each one alone is enough to refuse
        _, errors = interpolate(COMPOSE.read_text(), {n: "x" for n in SECRETS if n != missing})
        assert errors and {e.split(":")[0] for e in errors} == {missing}


def test_every_secret_comes_from_the_operator_and_nowhere_else(services):
    given = {n: f"operator-{n.lower()}" for n in SECRETS}
    text, errors = interpolate(COMPOSE.read_text(), given)
    assert not errors
    doc = yaml.safe_load(text)
    env = env_of(doc["services"]["airflow-scheduler"])
    assert env["AIRFLOW__CORE__FERNET_KEY"] == given["AIRFLOW_FERNET_KEY"]
    assert env["AIRFLOW__API_AUTH__JWT_SECRET"] == given["AIRFLOW_JWT_SECRET"]
    assert env["AIRFLOW__API__SECRET_KEY"] == given["AIRFLOW_API_SECRET_KEY"]
    assert env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] == \
        f"postgresql+psycopg2://airflow:{given['POSTGRES_PASSWORD']}@postgres/airflow"
    assert env_of(doc["services"]["postgres"])["POSTGRES_PASSWORD"] == given["POSTGRES_PASSWORD"]
    for name, value in [(k, v) for s in doc["services"].values() for k, v in env_of(s).items()]:
        if re.search(r"PASSWORD|SECRET|FERNET", name) and not name.endswith("_FILE"):
            assert value in given.values(), f"{name} has a value the operator did not choose: {value!r}"


def test_logins_are_named_users_with_roles_not_everyone_an_admin(compose):
    text, _ = interpolate(COMPOSE.read_text(), {n: "x" for n in SECRETS})
    doc = yaml.safe_load(text)
    for name in AIRFLOW_SERVICES:
        env = env_of(doc["services"][name])
        assert env["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS"].lower() == "false", name
        users = dict(u.split(":") for u in env["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS"].split(","))
        assert set(users.values()) <= {"viewer", "user", "op", "admin"} and len(set(users.values())) > 1
        passwords = env["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE"]
        assert volume_mounts(doc["services"][name]).get("airflow-auth") == str(Path(passwords).parent), name
    assert "airflow-auth" in compose["volumes"]


def test_ports_are_bound_to_loopback_unless_the_operator_opts_in():
    for env, address in (({}, "127.0.0.1"), ({"FLEETHEALTH_BIND": "0.0.0.0"}, "0.0.0.0")):
        text, _ = interpolate(COMPOSE.read_text(), {**{n: "x" for n in SECRETS}, **env})
        published = {name: [str(p) for p in s.get("ports") or []]
                     for name, s in yaml.safe_load(text)["services"].items()}
        assert {n: p for n, p in published.items() if p} == {"airflow-apiserver": [f"{address}:8080:8080"]}
    # the Spark master UI has no login: never published
    assert "ports" not in yaml.safe_load(COMPOSE.read_text())["services"]["spark-master"]


# --- the .env writer (scripts/compose_env.py) and the host folders mounted -------------------------------
def _compose_env():
    import importlib.util

    spec = importlib.util.spec_from_file_location("compose_env", ROOT / "scripts" / "compose_env.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


compose_env = _compose_env()
DEPLOYMENT = ROOT / "docs" / "deployment.md"
# container folder -> the .env variable naming the host folder mounted there
HOST_FOLDERS = {"/etc/fleethealth": "FLEETHEALTH_CONFIG_DIR", "/srv/fleethealth/archives": "FLEETHEALTH_ARCHIVES_DIR",
                "/opt/fleethealth/ssh": "FLEETHEALTH_SSH_DIR"}


def write_env(tmp_path, *extra: str) -> tuple[subprocess.CompletedProcess, Path, dict[str, Path]]:
    """scripts/compose_env.py run as documented, with host folders of its own under tmp_path."""
    folders = {name: tmp_path / name.lower() for name in compose_env.FOLDERS}
    for folder in folders.values():
        folder.mkdir(exist_ok=True)
    (folders["FLEETHEALTH_CONFIG_DIR"] / "inventory.yaml").touch()
    out = tmp_path / ".env"
    proc = subprocess.run(["python3", str(ROOT / "scripts" / "compose_env.py"), "--out", str(out),
                           *(x for name, folder in folders.items() for x in (compose_env.FOLDERS[name][0], str(folder))),
                           *extra], capture_output=True, text=True, timeout=30)
    return proc, out, folders


def test_the_env_writer_writes_what_compose_reads(tmp_path):
    from cryptography.fernet import Fernet

    proc, out, folders = write_env(tmp_path)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert oct(out.stat().st_mode & 0o777) == "0o600"
    values = compose_env.read_env(out)
    assert sorted(values) == sorted([*SECRETS, *compose_env.FOLDERS])
    Fernet(values["AIRFLOW_FERNET_KEY"].encode())          # a valid Fernet key
    assert all(re.fullmatch(r"[0-9a-f]{64}", values[n]) for n in SECRETS[1:])   # safe in a database URL
    text, errors = interpolate(COMPOSE.read_text(), values)
    assert errors == []
    doc = yaml.safe_load(text)
    for name in AIRFLOW_SERVICES:
        mounts = volume_mounts(doc["services"][name])
        assert {target: source for source, target in mounts.items() if target in HOST_FOLDERS} == {
            target: str(folders[variable]) for target, variable in HOST_FOLDERS.items()}, name
    # run again (a folder moved): the secrets stay, the folder is the new one
    (tmp_path / "moved").mkdir()
    again = subprocess.run(["python3", str(ROOT / "scripts" / "compose_env.py"), "--out", str(out),
                            "--config-dir", str(folders["FLEETHEALTH_CONFIG_DIR"]), "--archives-dir", str(tmp_path / "moved"),
                            "--ssh-dir", str(folders["FLEETHEALTH_SSH_DIR"]), "--bind", "0.0.0.0"],
                           capture_output=True, text=True, timeout=30)
    assert again.returncode == 0, again.stderr
    assert compose_env.read_env(out) == {**values, "FLEETHEALTH_ARCHIVES_DIR": str(tmp_path / "moved"),
                                         "FLEETHEALTH_BIND": "0.0.0.0"}


def test_the_env_writer_refuses_folders_that_are_not_there_and_writes_nothing(tmp_path):
    (tmp_path / "config").mkdir()
    proc = subprocess.run(["python3", str(ROOT / "scripts" / "compose_env.py"), "--out", str(tmp_path / ".env"),
                           "--config-dir", str(tmp_path / "config"), "--archives-dir", str(tmp_path / "nope"),
                           "--ssh-dir", str(tmp_path / "config")], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"compose_env.py: --archives-dir {tmp_path / 'nope'}: no such folder (it holds files copied off the hosts: "
        "the roots of `transport: local`; see docs/deployment.md, Compose)",
        f"compose_env.py: --config-dir {tmp_path / 'config'}: no inventory.yaml in it (see docs/deployment.md, Compose)"]
    assert not (tmp_path / ".env").exists()


def test_compose_reads_only_the_variables_the_writer_knows():
    named = set(re.findall(r"(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)", COMPOSE.read_text()))   # $$: a literal $
    assert named == set(compose_env.VARIABLES)
    # compose's own knobs are not settings of the code (those go into the services' environment)
    assert not named & set(config.SETTINGS)


def test_the_services_settings_are_the_codes_and_point_into_the_mounts(tmp_path, monkeypatch):
    proc, out, folders = write_env(tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = yaml.safe_load(interpolate(COMPOSE.read_text(), compose_env.read_env(out))[0])
    for name in (*AIRFLOW_SERVICES, *SPARK_SERVICES):
        service = doc["services"][name]
        env = {k: v for k, v in env_of(service).items() if k.startswith(config.PREFIX)}
        assert set(env) <= set(config.SETTINGS), name
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        settings = config.settings()          # each value one the code accepts
        targets = set(volume_mounts(service).values())
        assert str(settings.inventory.parent) in targets and settings.inventory.name == "inventory.yaml", name
        assert settings.lakehouse in targets, name
    # the inventory the services read is the one in the folder the writer was given
    scheduler = volume_mounts(doc["services"]["airflow-scheduler"])
    assert {t: s for s, t in scheduler.items()}["/etc/fleethealth"] == str(folders["FLEETHEALTH_CONFIG_DIR"])


def test_every_pointer_to_the_guide_names_a_section_it_has():
    headings = re.findall(r"^#+ (.+)$", DEPLOYMENT.read_text(), flags=re.M)
    pointers = set(re.findall(r"docs/deployment\.md, (\w[\w ]*\w)", COMPOSE.read_text()))
    pointers |= set(re.findall(r"docs/deployment\.md, (\w[\w ]*\w)", (ROOT / "scripts" / "compose_env.py").read_text()))
    assert pointers == {"Compose"} and "Compose" in headings
    assert "README, Deployment" not in COMPOSE.read_text()
    # the guide names the command, each host folder with its default and the container folder
    text = DEPLOYMENT.read_text()
    assert "python3 scripts/compose_env.py" in text
    for variable, (option, default, _) in compose_env.FOLDERS.items():
        target = next(t for t, v in HOST_FOLDERS.items() if v == variable)
        assert all(word in text for word in (variable, option, default, target)), variable
