"""The sources a host sends, declared once: the inventory, pull, bronze, silver, `fleethealth parse`,
the simulator and the tests read them from here.

A source is a folder under each host (`<root>/<cluster>/<host>/<source>/`), bronze's `source` column
and one silver table. Its files come in one or more formats, each parsed by the part of silver of the
same name (`fleethealth parse --source <format>`).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Source:
    name: str
    silver_table: str             # the silver table holding its records
    formats: tuple[str, ...]      # the formats of its files: silver parts and `parse --source` names
    counts_lines: bool = False    # reconciled by lines (multi-line records), else by records
    whole_file: bool = False      # one bronze record per file (a thread dump), else per line/document
    extra_tables: tuple[str, ...] = ()   # further silver tables derived from its records


SOURCES = {s.name: s for s in (
    Source("kafka", "silver.kafka_events", ("kafka",), counts_lines=True),
    Source("zookeeper", "silver.zk_events", ("zookeeper",), counts_lines=True),
    Source("jmx", "silver.jmx_samples", ("jolokia", "prometheus")),
    Source("threaddumps", "silver.threads", ("jstack",), whole_file=True, extra_tables=("silver.deadlocks",)),
    Source("logdirs", "silver.partition_sizes", ("logdirs",)),
)}
NAMES = tuple(SOURCES)
# format -> its source
FORMATS = {fmt: s.name for s in SOURCES.values() for fmt in s.formats}
# what each role sends every hour (thread dumps and log-dir snapshots are occasional); an inventory
# host's `expect:` overrides it. A KRaft controller writes Kafka logs (server.log, controller.log) and
# has JMX, but no partitions (no log-dir snapshots)
EXPECTED = {"kafka": ("kafka", "jmx"), "zookeeper": ("zookeeper",), "controller": ("kafka", "jmx")}


def silver_table(source: str) -> str:
    return SOURCES[source].silver_table
