"""The prometheus source's live path (issue 63): a real JVM (ZooKeeper) with jmx_exporter's Java agent, scraped
every second by a real Prometheus on loopback; the hour in progress read back as each naming spells it.
No Spark."""
from __future__ import annotations

import time
from datetime import datetime, timezone

from realservers import Prometheus, ZooKeeper

from fleethealth.fleet.inventory import Prometheus as Source
from fleethealth.pull.transports import prometheus

# jmx_exporter's default naming, as Kafka deployments run it (fleet/mbeans.yaml's `jmx_exporter` series)
DEFAULT_RULES = "lowercaseOutputName: true\nrules:\n  - pattern: \".*\"\n"
OPEN, MAX = "java_lang_operatingsystem_openfiledescriptorcount", "java_lang_operatingsystem_maxfiledescriptorcount"


def test_a_live_scrape_is_read_as_its_naming_spells_it(tmp_path):
    now = datetime.now(timezone.utc)
    if now.minute == 59 and now.second >= 10:      # the scrapes below all in one hour: the next one
        time.sleep(61 - now.second)
    zk = ZooKeeper(tmp_path / "zk", tmp_path / "logs", exporter_rules=DEFAULT_RULES)
    try:
        scrape = (f"[{{job_name: zookeeper, scrape_interval: 1s, static_configs: [{{targets: ['{zk.exporter}'], "
                  "labels: {pod: zk-live-0}}]}]")
        with Prometheus(tmp_path / "prometheus", scrape=scrape) as server:
            hour = datetime.now(timezone.utc).replace(minute=0, second=0, microsecond=0)
            deadline = time.monotonic() + 30
            got = []
            while time.monotonic() < deadline and len({s.ms for s in got}) < 3:
                time.sleep(1)
                got = prometheus.read_hour(Source(server.url, host_label="pod"), "zk-live-0", ("zookeeper",), hour)
            # the agent's own process collector (client_java) reads the same MXBean: Strimzi's naming reads it
            strimzi = prometheus.read_hour(Source(server.url, host_label="pod", naming="strimzi"), "zk-live-0",
                                           ("zookeeper",), hour)
    finally:
        zk.stop()
    assert len({s.ms for s in got}) >= 3, got
    assert {(s.series, s.labels) for s in got} == {(OPEN, ()), (MAX, ())}
    opens = [float(s.value) for s in got if s.series == OPEN]
    assert all(20 <= v < 10_000 for v in opens), opens
    assert {(s.series, s.labels) for s in strimzi} == {(OPEN, ()), (MAX, ())}
    assert all(20 <= float(s.value) < 10_000 for s in strimzi if s.series == OPEN)
