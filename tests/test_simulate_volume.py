"""The simulator writes the volume it is asked for (issue 13): bytes of Kafka logs and JMX samples per
broker-hour, the JMX samples counted as silver counts them; the added MBeans change nothing else."""
from __future__ import annotations

import hashlib
import json
from collections import Counter
from datetime import datetime, timedelta, timezone
from functools import cache
from pathlib import Path

import pytest

from fleethealth.cli import main as cli
from fleethealth.fleet import mbeans
from fleethealth.simulate import simulate
from fleethealth.runtime.frames import local_frame

START = datetime(2026, 11, 20, 10, tzinfo=timezone.utc)
HOUR = START + timedelta(hours=1)
TOLERANCE = 0.05


def silver_samples(response: dict) -> list[tuple[str, str, object]]:
    """(mbean, attribute, value) of each sample silver makes of one Jolokia read response, written out
    from `fleethealth.silver.parsers.jolokia.parse`: a failed read none; a pattern read one per attribute of
    each MBean; one named attribute one; a list of attributes (or none named) one per attribute; a
    composite value one per item (`Attribute.item`)."""
    if response.get("status") != 200:
        return []
    req, value = response["request"], response["value"]
    mbean, attribute = req["mbean"], req.get("attribute")
    if ("*" in mbean or "?" in mbean) and isinstance(value, dict):
        pairs = [(bean, a, v) for bean, attrs in value.items() for a, v in attrs.items()]
    elif attribute is not None and not isinstance(attribute, list):
        pairs = [(mbean, attribute, value)]
    elif isinstance(value, dict):
        pairs = [(mbean, a, v) for a, v in value.items()]
    else:
        pairs = []
    out = []
    for bean, a, v in pairs:
        out += [(bean, f"{a}.{k}", x) for k, x in v.items()] if isinstance(v, dict) else [(bean, a, v)]
    return out


def scrapes(out: Path) -> dict[tuple[str, str, str], list[list[dict]]]:
    """(cluster, host, file) -> the bulk responses of each line of each JMX file."""
    return {(f.parts[-4], f.parts[-3], f.name): [json.loads(line) for line in f.read_text().splitlines()]
            for f in sorted((out / "fleet").glob("*/*/jmx/jolokia.jsonl.*"))}


def kafka_bytes(out: Path) -> dict[tuple[str, str], int]:
    """(cluster, host) -> bytes of its Kafka log files."""
    return {(d.parts[-3], d.parts[-2]): sum(f.stat().st_size for f in d.iterdir())
            for d in (out / "fleet").glob("*/*/kafka")}


def digest(out: Path, sources: set[str] | None = None) -> str:
    """Hash of the fleet's files (of `sources` only: kafka, jmx, ...)."""
    h = hashlib.sha256()
    for p in sorted((out / "fleet").rglob("*")):
        if p.is_file() and (sources is None or p.parent.name in sources):
            h.update(p.relative_to(out).as_posix().encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def near(value: float, target: float) -> bool:
    return abs(value - target) <= TOLERANCE * target


# --- bytes -----------------------------------------------------------------------------------------
def test_small_budget_every_broker_of_a_large_cluster(tmp_path):
    # 30 brokers: with 48 user partitions, half of them hosted none and wrote a few KB (issue 13)
    b = 200_000
    simulate(tmp_path, "healthy", START, HOUR, brokers=30, bytes_per_broker_hour=b, jmx_samples_per_broker_hour=0)
    sizes = kafka_bytes(tmp_path)
    assert len(sizes) == 30
    controller = ("healthy", "healthy-kafka-1")   # its own records (the preferred-replica checks) may exceed B
    off = {host: n for host, n in sizes.items() if host != controller and not near(n, b)}
    assert off == {}
    assert sizes[controller] >= (1 - TOLERANCE) * b
    assert near(sum(sizes.values()) - sizes[controller], 29 * b)


def test_large_budget(tmp_path):
    b = 20_000_000
    simulate(tmp_path, "pm3-dead-cleaner", START, HOUR, brokers=2, bytes_per_broker_hour=b,
             jmx_samples_per_broker_hour=0)
    sizes = kafka_bytes(tmp_path)
    assert len(sizes) == 2 and all(near(n, b) for n in sizes.values()), sizes


def test_bytes_per_hour_over_a_window(tmp_path):
    b = 300_000
    simulate(tmp_path, "healthy", START, START + timedelta(hours=3), bytes_per_broker_hour=b,
             jmx_samples_per_broker_hour=0)
    per_file_hour = Counter()
    for f in (tmp_path / "fleet").glob("healthy/*/kafka/*"):
        per_file_hour[(f.parts[-3], f.name.rsplit(".", 1)[1])] += f.stat().st_size
    assert len(per_file_hour) == 9 and all(near(n, b) for n in per_file_hour.values()), per_file_hour


# --- JMX samples -----------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [None, 50_000])   # None: simulate()'s default, 20,000
def test_jmx_samples_per_broker_hour(tmp_path, n):
    kw = {} if n is None else {"jmx_samples_per_broker_hour": n}
    simulate(tmp_path, ["healthy", "pm1-deadlock"], START, HOUR, bytes_per_broker_hour=50_000, **kw)
    target = n or 20_000
    files = scrapes(tmp_path)
    assert len(files) == 6
    for key, lines in files.items():
        assert len(lines) == 12, key
        per_scrape = [[s for r in line for s in silver_samples(r)] for line in lines]
        assert near(sum(len(s) for s in per_scrape), target), (key, sum(len(s) for s in per_scrape))
        assert {len(s) for s in per_scrape} == {round(target / 12)}, key   # one scrape every 5 minutes
        # every scrape reads the same MBeans, and each sample (MBean, attribute) once
        names = [sorted((m, a) for m, a, _ in s) for s in per_scrape]
        assert all(x == names[0] for x in names), key
        assert len(set(names[0])) == len(names[0]), key
        # per-partition Log Size of the user topics and request metrics are among them
        beans = {m for m, _ in names[0]}
        assert any(m.startswith("kafka.log:name=Size,partition=") and "topic=orders" in m for m in beans), key
        assert any(m.startswith("kafka.network:type=RequestMetrics,name=TotalTimeMs,request=Produce") for m in beans)


def detector_samples(files: dict) -> list[tuple]:
    """Every sample of an MBean in fleethealth.fleet.mbeans (what gold reads: `MBean.matches`), with host and time."""
    @cache
    def read_by_gold(bean: str, attribute: str) -> bool:
        domain, _, keys = bean.partition(":")
        props = dict(kv.split("=", 1) for kv in keys.split(","))
        return any(domain == m.domain and attribute == m.attribute and all(props.get(k) == v for k, v in m.keys)
                   for m in mbeans.ALL)

    found = []
    for (cluster, host, _), lines in files.items():
        for line in lines:
            for r in line:
                found += [(cluster, host, r["timestamp"], bean, attribute, value)
                          for bean, attribute, value in silver_samples(r) if read_by_gold(bean, attribute)]
    return sorted(found, key=str)


def test_added_mbeans_change_nothing_the_detectors_or_other_sources_see(tmp_path):
    simulate(tmp_path / "lean", "all", START, HOUR, jmx_samples_per_broker_hour=0)
    simulate(tmp_path / "full", "all", START, HOUR, jmx_samples_per_broker_hour=20_000)
    lean_scrapes, full_scrapes = scrapes(tmp_path / "lean"), scrapes(tmp_path / "full")
    lean, full = detector_samples(lean_scrapes), detector_samples(full_scrapes)
    assert len(lean) > 500 and lean == full
    others = {"kafka", "zookeeper", "threaddumps", "logdirs"}
    assert digest(tmp_path / "lean", others) == digest(tmp_path / "full", others)
    for name in ("expected_incidents.json", "inventory.yaml"):
        assert (tmp_path / "lean" / name).read_text().replace("/lean/", "/x/") == \
            (tmp_path / "full" / name).read_text().replace("/full/", "/x/")
    # the base reads are the first ones of every scrape, unchanged
    for key, lines in lean_scrapes.items():
        for small, big in zip(lines, full_scrapes[key], strict=True):
            ok = [r for r in small if r["status"] == 200]
            assert big[:len(ok)] == ok


def test_zero_samples_writes_only_the_mbeans_fleethealth_reads(tmp_path):
    simulate(tmp_path, "healthy", START, HOUR, jmx_samples_per_broker_hour=0)
    for lines in scrapes(tmp_path).values():
        for line in lines:
            assert len(line) <= 13 and sum(len(silver_samples(r)) for r in line) < 100


def test_same_seed_same_bytes(tmp_path):
    for name, seed in (("a", 5), ("b", 5), ("c", 6)):
        simulate(tmp_path / name, ["healthy", "pm5-metadata-divergence"], START, HOUR, seed=seed,
                 bytes_per_broker_hour=100_000)
    assert digest(tmp_path / "a") == digest(tmp_path / "b")
    assert digest(tmp_path / "a", {"jmx"}) != digest(tmp_path / "c", {"jmx"})


def test_cli_option(tmp_path, capsys):
    rc = cli.main(["simulate", "--out", str(tmp_path), "--scenario", "healthy", "--from", "2026-11-20T10:00Z",
                   "--to", "2026-11-20T11:00Z", "--brokers", "1", "--jmx-samples-per-broker-hour", "3000",
                   "--bytes-per-broker-hour", "100000"])
    assert rc == 0
    [lines] = scrapes(tmp_path).values()
    assert near(sum(len(silver_samples(r)) for line in lines for r in line), 3_000)
    assert near(sum(kafka_bytes(tmp_path).values()), 100_000)
    assert cli.main(["simulate", "--out", str(tmp_path), "--scenario", "healthy", "--from", "2026-11-20T10:00Z",
                     "--to", "2026-11-20T11:00Z", "--jmx-samples-per-broker-hour", "-1"]) == 2
    assert "JMX samples per broker-hour must be >= 0" in capsys.readouterr().err


@pytest.mark.spark
def test_silver_counts_what_the_simulator_counts(spark, tmp_path):
    from fleethealth.silver.parsers import jolokia

    simulate(tmp_path, "healthy", START, HOUR, brokers=1, jmx_samples_per_broker_hour=5_000)
    [((cluster, host, name), lines)] = scrapes(tmp_path).items()
    rows = [(cluster, host, "jmx", name, "-", i, START.replace(tzinfo=None), json.dumps(line))
            for i, line in enumerate(lines, 1)]
    bronze = local_frame(spark, rows, "cluster string, host string, source string, file string, "
                                         "file_sha256 string, line_number int, hour timestamp, record string")
    samples, _ = jolokia.parse(bronze)
    got = Counter((r.mbean, r.attribute) for r in samples.select("mbean", "attribute").collect())
    want = Counter((m, a) for line in lines for r in line for m, a, _ in silver_samples(r))
    assert got == want and near(sum(got.values()), 5_000)
