"""The `prometheus` source (issue 63): a host's JMX for an hour read from a real Prometheus (Debian's, on loopback,
filled with past samples by promtool), as the raw samples of the hour with their own times, the labels
jmx_exporter gave them and none Prometheus added; landed as one scrape file silver reads. A hostile
Prometheus (an error answer, a redirect, something not JSON, too much, too slow) is one clear error."""
from __future__ import annotations

import http.server
import json
import threading
from datetime import datetime, timedelta, timezone

import pytest
from realservers import RETENTION, Prometheus

from fleethealth.fleet import namings
from fleethealth.fleet.inventory import Prometheus as Source
from fleethealth.fleet.inventory import parse_inventory
from fleethealth.lake.catalog import Lakehouse
from fleethealth.pull import hour as pull
from fleethealth.pull.landing import read_manifests
from fleethealth.pull.transports import prometheus
from fleethealth.pull.transports.base import TransportError

H = datetime(2026, 11, 20, 10, tzinfo=timezone.utc)     # ten days before "today": past hours, as a backfill reads
T = H.timestamp()
URP = "kafka_server_replicamanager_value"
SIZE = "kafka_log_log_value"
DEAD = "kafka_log_logcleaner_value"
ADDED = 'instance="{host}:9404",job="kafka",namespace="kafka",pod="{host}-pod"'


def samples(host: str) -> list[str]:
    """OpenMetrics lines of `host` (as Prometheus scraped them: target labels added), in time order per series."""
    added = ADDED.format(host=host)
    return [
        *(f'{URP}{{name="UnderReplicatedPartitions",{added}}} {v} {t:.3f}' for t, v in (
            (T - 0.001, 9), (T, 1), (T + 30, 2), (T + 3600 - 0.001, 3), (T + 3600, 9))),
        f'{URP}{{name="LeaderCount",{added}}} 50 {T + 30:.3f}',                      # no bean of ours
        f'{SIZE}{{name="Size",topic="__consumer_offsets",partition="3",{added}}} 1.5e+09 {T + 60:.3f}',
        f'{SIZE}{{name="Size",topic="orders",partition="3",{added}}} 7 {T + 60:.3f}',  # not the offsets topic
        f'{DEAD}{{name="DeadThreadCount",{added}}} NaN {T + 90:.3f}',
    ]


def named(host: str) -> list[str]:
    """OpenMetrics lines of `host` as Strimzi's and Confluent's rules name them (tests/test_fleet_namings.py
    cites where each name comes from), as jmx_exporter 0.x and 1.x write a counter."""
    added = ADDED.format(host=host)
    return [
        f'kafka_server_replicamanager_underreplicatedpartitions{{{added}}} 4 {T + 10:.3f}',
        f'kafka_log_log_size{{topic="__consumer_offsets",partition="38",{added}}} 2e+09 {T + 20:.3f}',
        f'kafka_log_log_size{{topic="orders",partition="38",{added}}} 5 {T + 20:.3f}',           # not ours
        f'kafka_server_sessionexpirelistener_zookeeperexpires_total{{{added}}} 3 {T + 30:.3f}',
        f'process_open_fds{{{added}}} 812 {T + 40:.3f}',
        f'kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_total{{{added}}} 0.25 {T + 50:.3f}',
        f'kafka_controller_controllereventmanager_eventqueuetimems{{quantile="0.99",{added}}} 70 {T + 60:.3f}',
        f'kafka_controller_controllereventmanager_eventqueuetimems{{quantile="0.5",{added}}} 2 {T + 60:.3f}',
        f'kafka_server_raftmetrics_election_latency_max_total{{{added}}} 1500 {T + 70:.3f}',
    ]


def filesystems(host: str) -> list[str]:
    """node_exporter's filesystem series of `host` (its own target: port 9100, job node), as node_exporter
    names them (collector/filesystem_common.go: node_filesystem_avail_bytes, node_filesystem_size_bytes with
    device, fstype and mountpoint), and one of its series fleethealth does not read."""
    added = f'instance="{host}:9100",job="node"'
    fs = {"/": 'device="/dev/sda1",fstype="ext4"', "/var/lib/kafka": 'device="/dev/nvme1n1",fstype="xfs"'}
    return [
        *(f'node_filesystem_avail_bytes{{{fs[m]},mountpoint="{m}",{added}}} {v} {T + t:.3f}'
          for m, t, v in (("/", 15, 3e10), ("/var/lib/kafka", 15, 5e11), ("/var/lib/kafka", 75, 4.9e11))),
        *(f'node_filesystem_size_bytes{{{fs[m]},mountpoint="{m}",{added}}} {v} {T + 15:.3f}'
          for m, v in (("/", 5e10), ("/var/lib/kafka", 1e12))),
        f'node_filesystem_files_free{{{fs["/"]},mountpoint="/",{added}}} 1000 {T + 15:.3f}',
    ]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    lines = (samples("pay-kafka-1") + samples("pay-kafka-12") + named("str-1") + named("cf-1")
             + samples("disk-1") + filesystems("disk-1"))
    by_series = sorted(lines, key=lambda line: line.split("{")[0])       # a metric family's lines together
    with Prometheus(tmp_path_factory.mktemp("prometheus"), "\n".join(by_series) + "\n# EOF\n") as p:
        yield p


def test_the_hour_s_raw_samples_with_their_own_times_and_the_exporter_s_labels_only(server):
    got = prometheus.read_hour(Source(server.url), "pay-kafka-1", ("zk_broker",), H, deadline=30)
    ms = lambda t: round(t * 1000)  # noqa: E731
    assert sorted((s.series, s.labels, s.ms, s.value) for s in got) == sorted([
        # the hour is [10:00, 11:00): not the last ms before it, nor 11:00 itself; pay-kafka-12 is another host
        (URP, (("name", "UnderReplicatedPartitions"),), ms(T), "1"),
        (URP, (("name", "UnderReplicatedPartitions"),), ms(T + 30), "2"),
        (URP, (("name", "UnderReplicatedPartitions"),), ms(T + 3600) - 1, "3"),
        (SIZE, (("name", "Size"), ("partition", "3"), ("topic", "__consumer_offsets")), ms(T + 60), "1500000000"),
        (DEAD, (("name", "DeadThreadCount"),), ms(T + 90), "NaN")])
    text = prometheus.exposition(got)
    assert text.splitlines()[0] == f'{URP}{{name="UnderReplicatedPartitions"}} 1 {ms(T)}'
    assert f'{DEAD}{{name="DeadThreadCount"}} NaN {ms(T + 90)}' in text.splitlines()
    # an hour Prometheus has nothing of: no sample, no error
    assert prometheus.read_hour(Source(server.url), "pay-kafka-1", ("zk_broker",), H - timedelta(days=30)) == []


def test_node_exporter_s_filesystems_of_a_broker_are_read_beside_its_jmx(server):
    """Kafka has no disk-free MBean: a broker's hour holds its host's filesystems as node_exporter gives them,
    with the mount point only, under any jmx_exporter naming; a ZooKeeper server's does not."""
    from fleethealth.silver.parsers.prometheus import mapping

    ms = lambda t: round(t * 1000)  # noqa: E731
    for naming in ("default", "strimzi"):
        got = prometheus.read_hour(Source(server.url, naming=naming), "disk-1", ("kraft_broker",), H)
        disk = sorted((s.series, s.labels, s.ms, s.value) for s in got if s.series.startswith("node_"))
        assert disk == [
            ("node_filesystem_avail_bytes", (("mountpoint", "/"),), ms(T + 15), "30000000000"),
            ("node_filesystem_avail_bytes", (("mountpoint", "/var/lib/kafka"),), ms(T + 15), "500000000000"),
            ("node_filesystem_avail_bytes", (("mountpoint", "/var/lib/kafka"),), ms(T + 75), "490000000000"),
            ("node_filesystem_size_bytes", (("mountpoint", "/"),), ms(T + 15), "50000000000"),
            ("node_filesystem_size_bytes", (("mountpoint", "/var/lib/kafka"),), ms(T + 15), "1000000000000")], naming
    zk = prometheus.read_hour(Source(server.url), "disk-1", ("zookeeper",), H)
    assert not [s for s in zk if s.series.startswith("node_")]
    # silver reads them back as the filesystem's pseudo-bean
    assert [mapping().resolve(n) for n in namings.DISK_SERIES] == [
        ("node", "Filesystem", "AvailableBytes"), ("node", "Filesystem", "SizeBytes")]


def test_a_host_label_other_than_instance(server):
    got = prometheus.read_hour(Source(server.url, host_label="pod"), "pay-kafka-1-pod", ("zk_broker",), H)
    assert len(got) == 5


def test_one_selector_per_series_with_the_beans_fixed_keys_and_the_host():
    sel = prometheus.selectors(("zk_broker",), "pay-kafka-1")
    host = 'instance=~"pay\\\\-kafka\\\\-1(:[0-9]+)?"'
    key = f'{{__name__=~"{SIZE}|{SIZE}_total",{host},name=~"Size",topic=~"__consumer_offsets"}}'
    assert [s.bean.id for s in sel[key]] == ["offsets_log_size"]
    urp = [k for k in sel if k.startswith(f'{{__name__=~"{URP}|')]
    # beans sharing a series: one regex of their names
    assert urp == [f'{{__name__=~"{URP}|{URP}_total",{host},name=~"UnderMinIsrPartitionCount|UnderReplicatedPartitions"}}']
    assert all(s.count("instance=~") == 1 for s in sel)
    assert len(sel) == len(set(s.split(",")[0] for s in sel))
    # a ZooKeeper server: its JVM's
    assert sorted(prometheus.selectors(("zookeeper",), "zk-1")) == [
        '{__name__=~"java_lang_operatingsystem_maxfiledescriptorcount|java_lang_operatingsystem_maxfiledescriptorcount'
        '_total",instance=~"zk\\\\-1(:[0-9]+)?"}',
        '{__name__=~"java_lang_operatingsystem_openfiledescriptorcount|java_lang_operatingsystem_openfiledescriptorcount'
        '_total",instance=~"zk\\\\-1(:[0-9]+)?"}']


def test_each_naming_reads_its_series_and_lands_them_as_the_default_naming_writes_them(server):
    """One Prometheus, hosts of clusters whose rules differ: each read as its naming spells its beans, what
    no bean of ours is left, and each sample written as silver reads jmx_exporter's default naming."""
    ms = lambda t: round(t * 1000)  # noqa: E731
    strimzi = prometheus.read_hour(Source(server.url, naming="strimzi"), "str-1", ("kraft_broker", "controller"), H)
    assert sorted((s.series, s.labels, s.ms, s.value) for s in strimzi) == sorted([
        (URP, (("name", "UnderReplicatedPartitions"),), ms(T + 10), "4"),
        (SIZE, (("name", "Size"), ("partition", "38"), ("topic", "__consumer_offsets")), ms(T + 20), "2000000000"),
        ("java_lang_operatingsystem_openfiledescriptorcount", (), ms(T + 40), "812"),
        ("kafka_controller_controllereventmanager_99thpercentile", (("name", "EventQueueTimeMs"),), ms(T + 60), "70"),
        ("kafka_server_raft_metrics_election_latency_max", (), ms(T + 70), "1500")])
    # the request handlers' idle is Confluent's name: Strimzi's rules have none of it; the expiries are
    # a ZooKeeper-mode broker's
    confluent = prometheus.read_hour(Source(server.url, naming="confluent"), "cf-1", ("zk_broker",), H)
    assert sorted((s.series, s.labels, s.value) for s in confluent) == sorted([
        (URP, (("name", "UnderReplicatedPartitions"),), "4"),
        (SIZE, (("name", "Size"), ("partition", "38"), ("topic", "__consumer_offsets")), "2000000000"),
        ("java_lang_operatingsystem_openfiledescriptorcount", (), "812"),
        ("kafka_server_kafkarequesthandlerpool_oneminuterate", (("name", "RequestHandlerAvgIdlePercent"),), "0.25")])
    assert prometheus.exposition(confluent).splitlines()[0] == (
        f'{URP}{{name="UnderReplicatedPartitions"}} 4 {ms(T + 10)}')
    # the same host read in the default naming finds nothing: its names are not the default's
    assert prometheus.read_hour(Source(server.url), "cf-1", ("zk_broker",), H) == []


def test_a_prometheus_host_s_pull_lands_the_hour_as_a_scrape_file(server, tmp_path):
    inventory = parse_inventory({"clusters": [{
        "name": "pay", "timezone": "UTC", "root": str(tmp_path / "fleet"), "prometheus": {"url": server.url},
        "hosts": [{"host": "pay-kafka-1", "role": "kafka", "broker_id": 1, "kafka_version": "3.6.1"}]}]})
    (tmp_path / "fleet" / "pay-kafka-1").mkdir(parents=True)
    lake = Lakehouse.at(tmp_path / "lake")
    pull.pull_hour(inventory, H, lake)
    [row] = [r for r in read_manifests(H, lake) if r.source == "jmx"]
    assert (row.status, row.file) == ("read", "pay/pay-kafka-1/jmx/prometheus.2026-11-20T10-00-00Z.prom")
    landed = (lake.landing(H) / "pay" / "pay-kafka-1" / "jmx" / "prometheus.2026-11-20T10-00-00Z.prom").read_text()
    assert len(landed.splitlines()) == 5 and row.size == len(landed.encode()) and row.reason == ""


def test_an_hour_without_samples_lands_empty_and_says_why(server, tmp_path):
    """An hour Prometheus has nothing of lands an empty scrape (the read happened) whose reason says so, and
    when it is older than Prometheus keeps, since when it keeps samples."""
    now = H + timedelta(days=1)
    kept = now - timedelta(days=365 * int(RETENTION.removesuffix("y")))
    recent, _ = prometheus.land(Source(server.url), "pay-kafka-1", ("zk_broker",), H - timedelta(days=30),
                                tmp_path / "a", now=now)
    assert recent.read_text() == ""
    assert prometheus.land(Source(server.url), "pay-kafka-1", ("zk_broker",), H - timedelta(days=30), tmp_path / "a",
                           now=now)[1] == "the cluster's Prometheus has no sample of pay-kafka-1 in this hour"
    old = kept.replace(minute=0, second=0, microsecond=0) - timedelta(hours=2)
    assert prometheus.land(Source(server.url), "pay-kafka-1", ("zk_broker",), old, tmp_path / "b", now=now)[1] == (
        f"the cluster's Prometheus has no sample of pay-kafka-1 in this hour: it keeps {RETENTION}, nothing before "
        f"{kept:%Y-%m-%d %H:%M} UTC")


def test_an_unreachable_prometheus_is_a_rejected_row_and_the_host_s_files_land(tmp_path):
    from realservers import free_port

    url = f"http://127.0.0.1:{free_port()}"
    inventory = parse_inventory({"clusters": [{
        "name": "pay", "timezone": "UTC", "root": str(tmp_path / "fleet"), "prometheus": {"url": url},
        "hosts": [{"host": "pay-kafka-1", "role": "kafka", "broker_id": 1, "kafka_version": "3.6.1"}]}]})
    (tmp_path / "fleet" / "pay-kafka-1" / "logs").mkdir(parents=True)
    with pytest.raises(pull.HostsFailed) as err:
        pull.pull_hour(inventory, H, Lakehouse.at(tmp_path / "lake"))
    reason = f"{url.split('//')[1]}: cannot reach Prometheus: Connection refused"
    assert err.value.errors == [f"pay-kafka-1: Prometheus read failed ({reason}); its 1 files landed"]
    assert [(r.source, r.status, r.reason) for r in read_manifests(H, Lakehouse.at(tmp_path / "lake"))] == [
        ("jmx", "rejected", f"not read from the cluster's Prometheus: {reason}")]


class _Hostile:
    """An HTTP server answering every query one hostile way."""
    ANSWERS = {
        "error": (400, b'{"status":"error","errorType":"bad_data","error":"invalid parameter \\"query\\""}'),
        "redirect": (302, b""),
        "html": (200, b"<html>hunter2</html>"),
        "huge": (200, b'{"status":"success","data":{"resultType":"matrix","result":[' + b" " * 4096 + b"]}}"),
        "vector": (200, b'{"status":"success","data":{"resultType":"vector","result":[]}}'),
        "trickle": (200, b'{"status":"success","data":{"resultType":"matrix","result":[]}}'),
    }

    def __init__(self, kind: str):
        status, body = self.ANSWERS[kind]
        closed = self.closed = threading.Event()

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                self.send_response(status)
                if status == 302:
                    self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    for i in range(len(body)) if kind == "trickle" else ():
                        self.wfile.write(body[i:i + 1])
                        self.wfile.flush()
                        if closed.wait(0.2):
                            return
                    if kind != "trickle":
                        self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    return

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.closed.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("kind, message", [
    ("error", 'Prometheus answered HTTP 400, not a success: bad_data: invalid parameter "query"'),
    ("redirect", "Prometheus answered HTTP 302 (a redirect: not followed)"),
    ("html", "Prometheus answered HTTP 200 with something that is not JSON"),
    ("huge", "Prometheus answered over 1024 bytes"),
    ("vector", "Prometheus answered a dict that is not a matrix to a range-vector query"),
    ("trickle", "no complete answer from Prometheus within 1.5 s"),
])
def test_a_hostile_prometheus_is_one_clear_error(kind, message, monkeypatch):
    monkeypatch.setattr(prometheus, "MAX_RESPONSE_BYTES", 1024)
    server = _Hostile(kind)
    try:
        with pytest.raises(TransportError) as err:
            prometheus.read_hour(Source(server.url), "pay-kafka-1", ("zk_broker",), H, deadline=1.5)
    finally:
        server.close()
    assert str(err.value) == f"{server.url.split('//')[1]}: {message}"
    assert "hunter2" not in str(err.value)


def test_credentials_and_headers_come_from_the_airflow_connection(monkeypatch):
    seen = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            seen.append((self.headers.get("Authorization"), self.headers.get("X-Scope-OrgID")))
            body = b'{"status":"success","data":{"resultType":"matrix","result":[]}}'
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("AIRFLOW_CONN_PROM_TOKEN", json.dumps({
            "conn_type": "http", "password": "s3cret", "extra": {"headers": {"X-Scope-OrgID": "team-a"}}}))
        monkeypatch.setenv("AIRFLOW_CONN_PROM_BASIC", json.dumps({"conn_type": "http", "login": "u", "password": "p"}))
        url = f"http://127.0.0.1:{httpd.server_address[1]}"
        prometheus.read_hour(Source(url, conn_id="prom_token"), "pay-kafka-1", ("zk_broker",), H)
        prometheus.read_hour(Source(url, conn_id="prom_basic"), "pay-kafka-1", ("zk_broker",), H)
    finally:
        httpd.shutdown()
        httpd.server_close()
    queries = len(prometheus.selectors(("zk_broker",), "pay-kafka-1")) + 1       # and its filesystems
    assert seen == [("Bearer s3cret", "team-a")] * queries + [("Basic dTpw", None)] * queries


def openmetrics(rows: list[dict]) -> str:
    """OpenMetrics of silver.jmx_samples rows of catalogue beans (`bean`: its entry), as jmx_exporter's default
    naming spells them and Prometheus keeps them (its target labels added), a metric family's lines together."""
    from fleethealth.fleet import mbeans

    lines = []
    for r in sorted(rows, key=lambda r: (mbeans.bean(r["bean"]).exporter_series, r["host"], sorted(r["props"].items()),
                                         r["ts"])):
        labels = [f'{k}="{v}"' for k, v in sorted(r["props"].items()) if k != "type"]
        labels += [ADDED.format(host=r["host"])]
        stamp = r["ts"].replace(tzinfo=timezone.utc).timestamp()
        lines.append(f'{mbeans.bean(r["bean"]).exporter_series}{{{",".join(labels)}}} {r["value"]!r} {stamp:.3f}')
    return "\n".join(lines) + "\n# EOF\n"


@pytest.mark.spark
def test_silver_reads_the_same_jmx_from_prometheus_as_from_the_jolokia_files(spark, tmp_path):
    """The dead cleaner's hour: its JMX exports parsed by silver, put into a real Prometheus as jmx_exporter and
    Prometheus would have them, then pulled from it (the exports gone): silver has the same samples of every
    catalogue bean its processes register (host, bean, its keys, attribute, time, value)."""
    import shutil

    import yaml
    from pyspark.sql import functions as F

    from fleethealth.bronze import tables as bronze
    from fleethealth.fleet import mbeans
    from fleethealth.fleet.inventory import load_inventory
    from fleethealth.silver import tables as silver
    from fleethealth.simulate import simulate

    def jmx(inventory_path, lake: Lakehouse) -> list[dict]:
        inventory = load_inventory(inventory_path)
        landed = pull.pull_hour(inventory, H, lake)
        records = bronze.records(spark, landed, lake.landing(H), H)
        tables = silver.build(spark, records, inventory, bronze.files(spark, landed, records, H))
        samples, quarantined = tables["silver.jmx_samples"], tables["silver.quarantine"]
        jmx.quarantined = quarantined.where(F.col("source") == "jmx").count()
        beans = [b for b in mbeans.ALL if b.exporter_series]
        which = F.coalesce(*[F.when(b.matches(), F.lit(b.id)) for b in beans])
        return [r.asDict() for r in samples.withColumn("bean", which).where(F.col("bean").isNotNull())
                .select("host", "bean", "domain", "props", "attribute", "ts", "value").collect()]

    inventory = simulate(tmp_path / "files", ["pm3-dead-cleaner"], H, H + timedelta(hours=1), jmx_samples_per_broker_hour=0)
    from_files = jmx(inventory, Lakehouse.at(tmp_path / "files" / "lake"))
    assert {r["bean"] for r in from_files} >= {"offsets_log_size", "cleaner_time_since_last_run", "under_replicated"}

    doc = yaml.safe_load(inventory.read_text())
    shutil.copytree(tmp_path / "files" / "fleet", tmp_path / "prom" / "fleet", ignore=shutil.ignore_patterns("jmx"))
    with Prometheus(tmp_path / "prometheus", openmetrics(from_files)) as server:
        for c in doc["clusters"]:
            c.update(root=str(tmp_path / "prom" / "fleet"), prometheus={"url": server.url})
        (tmp_path / "prom" / "inventory.yaml").write_text(yaml.safe_dump(doc))
        from_prometheus = jmx(tmp_path / "prom" / "inventory.yaml", Lakehouse.at(tmp_path / "prom" / "lake"))
    # no quarantine row: the ZooKeeper host, which is not expected to send JMX, is not asked (an empty hour would
    # be one, its reason "the cluster's Prometheus has no sample of … in this hour")
    assert jmx.quarantined == 0
    assert list((tmp_path / "prom" / "lake").rglob("pm3-dead-cleaner-zk-1/jmx/*")) == []
    assert len(list((tmp_path / "prom" / "lake").rglob("pm3-dead-cleaner-kafka-*/jmx/prometheus.*.prom"))) == 3

    def key(r):
        return (r["host"], r["bean"], r["domain"], sorted(r["props"].items()), r["attribute"], r["ts"], r["value"])
    # what a ZooKeeper-mode broker registers and is asked for: every bean its exports hold
    asked = {b.id for b in mbeans.for_processes(("zk_broker",))}
    assert sorted(map(key, from_prometheus)) == sorted(map(key, from_files))
    assert {r["bean"] for r in from_files} <= asked


def test_check_reaches_the_prometheus_of_a_host_and_says_what_is_wrong(server):
    """`fleethealth check`: a Prometheus that has no sample of the host in the last complete hour (here: it
    keeps only 2026-11-20) says which label it looked for; one that cannot be reached says so."""
    from realservers import free_port

    from fleethealth.cli import check

    def host(url: str):
        return parse_inventory({"clusters": [{"name": "pay", "timezone": "UTC", "root": "/nowhere", "prometheus": {
            "url": url}, "hosts": [{"host": "pay-kafka-1", "role": "kafka", "broker_id": 1, "kafka_version": "3.6.1"}]}]}
        ).host("pay-kafka-1")

    [line] = check.prometheus_problems(host(server.url), 10)
    assert line.startswith(f"pay-kafka-1: Prometheus at {server.url} has no sample of pay-kafka-1 in the hour from ")
    assert ('UTC (instance="pay-kafka-1" or "pay-kafka-1:<port>", series named as default names them): is '
            'prometheus.host_label the label naming it') in line
    closed = f"127.0.0.1:{free_port()}"
    assert list(check.prometheus_problems(host(f"http://{closed}"), 10)) == [
        f"pay-kafka-1: {closed}: cannot reach Prometheus: Connection refused (prometheus.url must be the HTTP API's "
        "base, e.g. http://prometheus:9090)"]


def test_check_names_what_a_cluster_s_naming_cannot_tell():
    from fleethealth.cli import check

    def cluster(name: str, naming: str, hosts: list[dict]) -> dict:
        return {"name": name, "timezone": "UTC", "root": "/nowhere", "hosts": hosts,
                "prometheus": {"url": "http://prometheus:9090", "naming": naming}}

    broker = {"host": "b1", "role": "kafka", "broker_id": 1, "kafka_version": "3.6.1"}
    inventory = parse_inventory({"clusters": [
        cluster("zk", "strimzi", [broker]),
        cluster("cf", "confluent", [dict(broker, host="b2", kafka_version="4.0.0"),
                                    {"host": "c2", "role": "controller", "node_id": 9, "kafka_version": "4.0.0"}]),
        cluster("plain", "default", [dict(broker, host="b3")])]})
    lines = check.naming_notes(inventory)
    assert lines[0] == (
        "clusters[zk]: prometheus.naming strimzi: no series of request_handler_idle (kafka.server:type="
        "KafkaRequestHandlerPool,name=RequestHandlerAvgIdlePercent OneMinuteRate, read by gold.request_saturation): "
        "its rules export RequestHandlerAvgIdlePercent's MeanRate only (kafka_server_kafkarequesthandlerpool_"
        "requesthandleravgidle_percent): the mean since the broker started, not the last minute's; a rule exporting "
        "it lets them see it")
    # Confluent's: the KRaft beans of its brokers and controllers, and nothing of the default naming's cluster
    assert [line.split(": no series of ")[1].split(" ")[0] for line in lines[1:]] == [
        "raft_current_leader", "raft_current_epoch", "raft_high_watermark", "raft_election_latency_avg",
        "raft_election_latency_max", "broker_metadata_applied_offset", "broker_metadata_applied_lag",
        "broker_metadata_load_errors", "broker_metadata_apply_errors"]
    assert all(line.startswith("clusters[cf]: prometheus.naming confluent: ") for line in lines[1:])


@pytest.mark.spark
def test_an_unreachable_prometheus_is_one_finding_for_the_cluster_and_its_logs_land(spark, tmp_path):
    """The dead cleaner's hour pulled with its cluster's Prometheus down: each broker's JMX a rejected row naming
    the cluster's Prometheus, its logs and ZooKeeper's landed and in silver; gold: one prometheus_unreadable for
    the cluster and no data_missing."""
    import yaml

    from fleethealth.bronze import tables as bronze
    from fleethealth.fleet.inventory import load_inventory
    from fleethealth.gold import thresholds
    from fleethealth.gold.detectors import data_missing, prometheus_unreadable
    from fleethealth.gold.facts.core import Facts, broker_health
    from fleethealth.runtime.frames import materialize
    from fleethealth.silver import tables as silver
    from fleethealth.simulate import simulate
    from realservers import free_port

    path = simulate(tmp_path / "files", ["pm3-dead-cleaner"], H, H + timedelta(hours=1), jmx_samples_per_broker_hour=0)
    doc = yaml.safe_load(path.read_text())
    closed = f"127.0.0.1:{free_port()}"
    for c in doc["clusters"]:
        c["prometheus"] = {"url": f"http://{closed}"}
    path.write_text(yaml.safe_dump(doc))
    inventory, lake = load_inventory(path), Lakehouse.at(tmp_path / "lake")
    with pytest.raises(pull.HostsFailed) as err:
        pull.pull_hour(inventory, H, lake)
    landed = read_manifests(H, lake)        # what bronze reads: every host's manifest, the failed ones' too
    assert len(err.value.errors) == 3
    rejected = [r for r in landed if r.status == "rejected"]
    assert sorted((r.host, r.source) for r in rejected) == [(f"pm3-dead-cleaner-kafka-{n}", "jmx") for n in (1, 2, 3)]
    assert {r.reason for r in rejected} == {f"not read from the cluster's Prometheus: {closed}: cannot reach "
                                            "Prometheus: Connection refused"}
    records = materialize(bronze.records(spark, landed, lake.landing(H), H))
    files = bronze.files(spark, landed, records, H)
    tables = silver.build(spark, records, inventory, files)
    reconciliation = materialize(silver.reconciliation(records, tables, tables["silver.quarantine"], files))
    assert {(r.host, r.source) for r in reconciliation.where("silver_records > 0").collect()} >= {
        ("pm3-dead-cleaner-kafka-1", "kafka"), ("pm3-dead-cleaner-zk-1", "zookeeper")}
    facts = Facts(H, silver.hosts_frame(spark, inventory), None, None, None, None, reconciliation, None, None)
    facts.broker_health = materialize(broker_health(facts))
    limits = thresholds.load()
    [finding] = prometheus_unreadable.detect(facts, limits).collect()
    assert (finding.cluster, finding.entity, finding.severity) == ("pm3-dead-cleaner", "prometheus", "major")
    assert finding.evidence.startswith("no JMX of 3 host(s) of the cluster (pm3-dead-cleaner-kafka-1, "
                                       "pm3-dead-cleaner-kafka-2, pm3-dead-cleaner-kafka-3) came from its Prometheus")
    assert data_missing.detect(facts, limits).count() == 0
