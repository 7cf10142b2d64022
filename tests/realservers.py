"""Real servers on loopback for the pull and notification tests, started and stopped by the tests themselves.

- `Sshd`: Debian's OpenSSH server (`/usr/sbin/sshd -f <cfg> -D -e`) on a free 127.0.0.1 port, with a
  throwaway host key and user key made here; it serves this machine's files as the current user.
- `ZooKeeper`: a real ZooKeeper server (the zookeeper jar pyspark ships) in its own JVM with the
  Jolokia JVM agent (./jars-agents, from Maven Central via scripts/setup.sh), logging with ZooKeeper's
  own layout into a file: real MBeans over HTTP and a real ZooKeeper log.
- `Alertmanager`: Debian's Prometheus Alertmanager (`/usr/bin/prometheus-alertmanager`) on a free
  127.0.0.1 port, gossip off, routing every alert to a receiver that notifies nobody.
- `Prometheus`: Debian's Prometheus (`/usr/bin/prometheus`) on a free 127.0.0.1 port over its own storage,
  filled with past samples by `promtool tsdb create-blocks-from openmetrics`, kept ten years.
- `S3Proxy`: S3Proxy (./jars-agents/s3proxy.jar, from Maven Central via scripts/setup.sh), an S3 server
  storing its buckets in a folder, on a free 127.0.0.1 port, with its own access key.
- `SlowProxy`: a TCP proxy on a free 127.0.0.1 port in front of another server (the sshd) that passes
  the server's bytes at a fixed rate: a real slow SFTP server to the client. With `drop`, it accepts
  connections and answers nothing (a host whose packets are dropped once connected).
- `Receiver`: an HTTP server recording the JSON bodies POSTed to it (a webhook, a Slack incoming
  webhook); `Smtpd`: aiosmtpd recording each message.
scripts/setup.sh installs them (openssh-server, the agent, S3Proxy, prometheus-alertmanager, prometheus), so these
tests never skip.
"""
from __future__ import annotations

import getpass
import json
import os
import shutil
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from email import message_from_bytes
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
SSHD = Path("/usr/sbin/sshd")
ALERTMANAGER = Path("/usr/bin/prometheus-alertmanager")
PROMETHEUS, PROMTOOL = Path("/usr/bin/prometheus"), Path("/usr/bin/promtool")
RETENTION = "10y"     # a test Prometheus keeps its fixed-date samples ten years (Prometheus counts 365 d a year)
JOLOKIA_AGENT = PROJECT / "jars-agents" / "jolokia-agent-jvm-javaagent.jar"
S3PROXY = PROJECT / "jars-agents" / "s3proxy.jar"
JMX_EXPORTER = PROJECT / "jars-agents" / "jmx_prometheus_javaagent.jar"
ZK_LAYOUT = "%d{yyyy-MM-dd HH:mm:ss,SSS} [myid:%X{myid}] - %-5p [%t:%C{1}@%L] - %m%n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what: str, check, proc: subprocess.Popen, log: Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        if check():
            return
        time.sleep(0.1)
    raise RuntimeError(f"{what} not ready after {timeout} s:\n{log.read_text()[-3000:]}")


def keygen(path: Path) -> str:
    """A new ed25519 key pair at `path`; returns the public key line (`ssh-ed25519 AAAA...`)."""
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "", "-f", str(path)], check=True)
    return " ".join(path.with_suffix(".pub").read_text().split()[:2])


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


class Sshd:
    def __init__(self, folder: Path, permissions_bind_root: bool = False):
        """`permissions_bind_root`: when run as root, sshd is started without root's override of file
        permissions (setpriv drops CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH), so a file its user may not
        read is unreadable over SFTP, as to a pull's ordinary user."""
        assert SSHD.is_file(), "no /usr/sbin/sshd: run `make setup` (installs openssh-server)"
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.host_key = keygen(folder / "host_ed25519")
        self.user_key = folder / "user_ed25519"
        (folder / "authorized_keys").write_text(keygen(self.user_key) + "\n")
        self.other_host_key = keygen(folder / "impostor_ed25519")
        self.user = getpass.getuser()
        self.port = free_port()
        self.log = folder / "sshd.log"
        config = folder / "sshd_config"
        config.write_text("\n".join([
            f"Port {self.port}", "ListenAddress 127.0.0.1", f"HostKey {folder / 'host_ed25519'}",
            f"PidFile {folder / 'sshd.pid'}", f"AuthorizedKeysFile {folder / 'authorized_keys'}",
            "PubkeyAuthentication yes", "PasswordAuthentication no", "KbdInteractiveAuthentication no",
            "UsePAM no", "StrictModes no", "PermitRootLogin prohibit-password", f"AllowUsers {self.user}",
            "Subsystem sftp internal-sftp", "LogLevel VERBOSE", ""]))
        if os.geteuid() == 0:
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)   # privilege separation directory
        wrap = (["setpriv", "--bounding-set=-dac_override,-dac_read_search"]
                if permissions_bind_root and os.geteuid() == 0 else [])
        self.proc = subprocess.Popen([*wrap, str(SSHD), "-f", str(config), "-D", "-e"],
                                     stdout=self.log.open("wb"), stderr=subprocess.STDOUT)
        wait_for("sshd", self._banner, self.proc, self.log)

    def _banner(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                return s.recv(64).startswith(b"SSH-2.0")
        except OSError:
            return False

    def connection(self, port: int | None = None, **extra) -> str:
        """An Airflow connection URI-less JSON (for AIRFLOW_CONN_<ID>) to this server."""
        extra = {"key_file": str(self.user_key), "host_key": self.host_key, "look_for_keys": "false", **extra}
        extra = {k: v for k, v in extra.items() if v is not None}
        return json.dumps({"conn_type": "ssh", "host": "127.0.0.1", "port": port or self.port,
                           "login": self.user, "extra": extra})

    def stop(self) -> None:
        stop(self.proc)


class SlowProxy:
    def __init__(self, port: int, bytes_per_s: int = 50_000, drop: bool = False):
        self.target, self.rate, self.drop = port, bytes_per_s, drop
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.closed = threading.Event()
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closed.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            self.sockets.append(client)
            if self.drop:
                continue                      # connected, then silence
            server = socket.create_connection(("127.0.0.1", self.target))
            self.sockets.append(server)
            threading.Thread(target=self._pipe, args=(client, server, 0), daemon=True).start()
            threading.Thread(target=self._pipe, args=(server, client, self.rate), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket, rate: int) -> None:
        chunk = max(1, rate // 20) if rate else 65536
        try:
            while not self.closed.is_set():
                data = src.recv(chunk)
                if not data:
                    break
                dst.sendall(data)
                if rate:
                    time.sleep(len(data) / rate)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def stop(self) -> None:
        self.closed.set()
        for s in (self.listener, *self.sockets):
            try:        # wakes a thread blocked on it (close alone would not, nor tell the other end)
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()


class ZooKeeper:
    def __init__(self, folder: Path, log_dir: Path, exporter_rules: str | None = None):
        """A real ZooKeeper JVM with Jolokia's agent; with `exporter_rules` (a jmx_exporter config), jmx_exporter's
        agent too, its HTTP endpoint at `exporter` (host:port)."""
        assert JOLOKIA_AGENT.is_file(), f"no {JOLOKIA_AGENT}: run `make setup`"
        import pyspark

        jars = Path(pyspark.__file__).parent / "jars"
        folder.mkdir(parents=True, exist_ok=True)
        log_dir.mkdir(parents=True, exist_ok=True)
        self.log_file = log_dir / "zookeeper.log"
        log4j = folder / "log4j2.xml"
        log4j.write_text(f"""<Configuration status="warn"><Appenders>
  <File name="zk" fileName="{self.log_file}"><PatternLayout pattern="{ZK_LAYOUT}"/></File>
</Appenders><Loggers><Root level="info"><AppenderRef ref="zk"/></Root></Loggers></Configuration>
""")
        self.client_port, self.jolokia_port = free_port(), free_port()
        self.jolokia_url = f"http://127.0.0.1:{self.jolokia_port}/jolokia/"
        self.log = folder / "jvm.log"
        zoo_cfg = folder / "zoo.cfg"
        zoo_cfg.write_text(f"dataDir={folder / 'data'}\nclientPort={self.client_port}\n"
                           "clientPortAddress=127.0.0.1\ntickTime=2000\nadmin.enableServer=false\n")
        java = shutil.which("java") or "java"
        agents = []
        if exporter_rules is not None:
            assert JMX_EXPORTER.is_file(), f"no {JMX_EXPORTER}: run `make setup`"
            (folder / "exporter.yaml").write_text(exporter_rules)
            self.exporter = f"127.0.0.1:{free_port()}"
            agents.append(f"-javaagent:{JMX_EXPORTER}={self.exporter}:{folder / 'exporter.yaml'}")
        self.proc = subprocess.Popen(
            [java, "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", *agents,
             f"-javaagent:{JOLOKIA_AGENT}=host=127.0.0.1,port={self.jolokia_port},discoveryEnabled=false",
             f"-Dlog4j2.configurationFile={log4j}", "-Dzookeeper.admin.enableServer=false",
             "-cp", f"{jars}/*", "org.apache.zookeeper.server.ZooKeeperServerMain",
             str(zoo_cfg)],
            stdout=self.log.open("wb"), stderr=subprocess.STDOUT)
        wait_for("ZooKeeper with Jolokia", self._ready, self.proc, self.log, timeout=60)

    def _ready(self) -> bool:
        if "binding to port" not in (self.log_file.read_text() if self.log_file.exists() else ""):
            return False
        try:
            with socket.create_connection(("127.0.0.1", self.jolokia_port), timeout=1):
                return True
        except OSError:
            return False

    def stop(self) -> None:
        stop(self.proc)


class _Daemon:
    """A Prometheus project's server (`proc`, answering at `url`): ready when /-/ready says so; stopped by
    `stop()` or at the end of a `with` block."""
    proc: subprocess.Popen
    url: str

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/-/ready", timeout=1) as answer:
                return answer.status == 200
        except OSError:
            return False

    def stop(self) -> None:
        stop(self.proc)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


class Alertmanager(_Daemon):
    """Started on construction, stopped by `stop()` or at the end of a `with` block."""

    def __init__(self, folder: Path, extra_config: str = "", routes: str | None = None):
        """`extra_config`: more of alertmanager.yml (e.g. `inhibit_rules:`); `routes`: its `route:` and
        `receivers:` (default: one receiver that sends nothing)."""
        assert ALERTMANAGER.is_file(), f"no {ALERTMANAGER}: run `make setup` (installs prometheus-alertmanager)"
        folder.mkdir(parents=True, exist_ok=True)
        config = folder / "alertmanager.yml"
        config.write_text("global:\n  resolve_timeout: 5m\n"
                          + (routes or "route:\n  receiver: nobody\nreceivers:\n  - name: nobody\n") + extra_config)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = folder / "alertmanager.log"
        self.proc = subprocess.Popen(
            [str(ALERTMANAGER), f"--config.file={config}", f"--storage.path={folder / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}", "--cluster.listen-address="],   # empty: no gossip
            stdout=self.log.open("wb"), stderr=subprocess.STDOUT)
        try:
            wait_for("Alertmanager", self._ready, self.proc, self.log)
        except BaseException:
            self.stop()
            raise


    def get(self, path: str):
        """The JSON answer of GET <url><path>, e.g. /api/v2/alerts."""
        with urllib.request.urlopen(self.url + path, timeout=5) as answer:
            return json.load(answer)


class Prometheus(_Daemon):
    """Started on construction over the samples of `openmetrics` (OpenMetrics text, `# EOF` last; times in
    seconds), stopped by `stop()` or at the end of a `with` block. Its storage keeps them RETENTION."""

    def __init__(self, folder: Path, openmetrics: str = "# EOF\n", scrape: str = "[]"):
        """`scrape`: its scrape_configs (YAML; default none)."""
        assert PROMETHEUS.is_file() and PROMTOOL.is_file(), f"no {PROMETHEUS} or {PROMTOOL}: run `make setup`"
        folder.mkdir(parents=True, exist_ok=True)
        data, source = folder / "data", folder / "samples.om"
        source.write_text(openmetrics)
        self.log = folder / "prometheus.log"
        made = subprocess.run([str(PROMTOOL), "tsdb", "create-blocks-from", "openmetrics", str(source), str(data)],
                              capture_output=True, text=True, timeout=300)
        assert made.returncode == 0, made.stderr[-3000:]
        config = folder / "prometheus.yml"
        config.write_text(f"global:\n  scrape_interval: 15s\nscrape_configs: {scrape}\n")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [str(PROMETHEUS), f"--config.file={config}", f"--storage.tsdb.path={data}",
             f"--storage.tsdb.retention.time={RETENTION}", f"--web.listen-address=127.0.0.1:{self.port}"],
            stdout=self.log.open("wb"), stderr=subprocess.STDOUT)
        try:
            wait_for("Prometheus", self._ready, self.proc, self.log)
        except BaseException:
            self.stop()
            raise


class S3Proxy:
    """Started on construction with one bucket, stopped by `stop()` or at the end of a `with` block.
    `env` is what a client needs: the standard AWS variables (Spark's S3A and delta-rs read them)."""

    def __init__(self, folder: Path, bucket: str):
        assert S3PROXY.is_file(), f"no {S3PROXY}: run `make setup` (Maven copies S3Proxy there)"
        self.data = folder / "data"
        self.data.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.key, self.secret = "fleethealth", os.urandom(12).hex()
        config = folder / "s3proxy.conf"
        config.write_text(f"s3proxy.endpoint={self.url}\ns3proxy.authorization=aws-v2-or-v4\n"
                          f"s3proxy.identity={self.key}\ns3proxy.credential={self.secret}\n"
                          f"jclouds.provider=filesystem\njclouds.filesystem.basedir={self.data}\n")
        self.log = folder / "s3proxy.log"
        self.proc = subprocess.Popen(["java", "-jar", str(S3PROXY), "--properties", str(config)],
                                     stdout=self.log.open("wb"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.env = {"AWS_ACCESS_KEY_ID": self.key, "AWS_SECRET_ACCESS_KEY": self.secret,
                    "AWS_ENDPOINT_URL": self.url, "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true"}
        try:
            wait_for("S3Proxy", self._ready, self.proc, self.log, timeout=60)
            self.filesystem(allow_bucket_creation=True).create_dir(bucket)
        except BaseException:
            self.stop()
            raise

    def filesystem(self, **options):
        """A client of the server: pyarrow's S3 file system (the AWS SDK for C++)."""
        from pyarrow import fs

        return fs.S3FileSystem(access_key=self.key, secret_key=self.secret, endpoint_override=self.url,
                               scheme="http", region="us-east-1", **options)

    def _ready(self) -> bool:
        try:
            urllib.request.urlopen(self.url + "/", timeout=1)
        except urllib.error.HTTPError:   # 403 to an unsigned request: it listens
            return True
        except OSError:
            return False
        return True

    def stop(self) -> None:
        stop(self.proc)

    def __enter__(self) -> S3Proxy:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


class Receiver:
    """An HTTP server recording the JSON bodies POSTed to it; `status` and `answer` (the body) are what it
    answers (a Jolokia agent answering `[]`, too), after `delay` seconds (a slow but working receiver);
    `requests` counts every POST, whatever its answer, `answered` the monotonic time each 2xx answer was given."""

    def __init__(self, delay: float = 0.0):
        self.bodies: list = []
        self.answered: list[float] = []
        self.requests = 0
        self.status = 200
        self.answer = b"ok"
        self.delay = delay
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.requests += 1
                if receiver.delay:
                    time.sleep(receiver.delay)
                if receiver.status == 200:
                    receiver.bodies.append(json.loads(body))
                    receiver.answered.append(time.monotonic())
                try:
                    self.send_response(receiver.status)
                    self.send_header("Content-Length", str(len(receiver.answer)))
                    self.end_headers()
                    self.wfile.write(receiver.answer)
                except OSError:             # the client gave up waiting (a slow receiver's deadline)
                    pass

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def slack_connection(self) -> str:
        """An Airflow Slack incoming-webhook connection (for AIRFLOW_CONN_<ID>) posting to this server."""
        return json.dumps({"conn_type": "slackwebhook", "host": self.url, "password": "services/T0/B0/token"})

    def stop(self):
        if self.thread.is_alive():
            self.server.shutdown()
            self.server.server_close()
            self.thread.join()


class Smtpd:
    """aiosmtpd on a free loopback port, recording each message."""

    def __init__(self):
        from aiosmtpd.controller import Controller

        self.messages: list = []
        outer = self

        class Handler:
            async def handle_DATA(self, server, session, envelope):
                outer.messages.append((envelope.rcpt_tos, message_from_bytes(envelope.content)))
                return "250 OK"

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.controller = Controller(Handler(), hostname="127.0.0.1", port=self.port)
        self.controller.start()

    def connection(self) -> str:
        """An Airflow SMTP connection (for AIRFLOW_CONN_<ID>) to this server: no TLS, one try."""
        return json.dumps({"conn_type": "smtp", "host": "127.0.0.1", "port": self.port,
                           "extra": {"disable_tls": True, "disable_ssl": True, "from_email": "fleethealth@example.com",
                                     "retry_limit": 0, "timeout": 5}})

    def stop(self):
        if self.controller._thread is not None:     # not stopped yet
            self.controller.stop()
