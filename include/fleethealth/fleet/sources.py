"""The sources a host sends, declared once: the inventory, pull, bronze, silver, the quality suites'
value sets, `fleethealth parse`, the simulator and the tests read them from here.

A source is a folder under each host (`<root>/<cluster>/<host>/<source>/`), bronze's `source` column
and one silver table. Its declaration says everything the code used to name it for:

- `placed_by`: how pull finds the hour of its files: by their lines' timestamps ("lines"; a log), by
  their lines unless the name holds a time ("lines_unless_named"; thread dumps), by their JSON lines'
  Jolokia timestamps unless named ("json_lines"; JMX exports), or by the time in the name, else the
  mtime ("name"; snapshots, scrapes);
- `reader`: the family of reader bronze and silver use, not the source's name: "log4j" (lines
  assembled into multi-line records by a log4j `layout`, which the engine knows by name: a new source
  in Kafka's layout needs no Java), "json_lines" (a JSON document per line, or a pretty-printed file
  whole), "lines" (one record per line), "snapshot" (the whole file is one record: a dump, a table);
- `formats`: the parsers of its files: `fleethealth parse --source` names, and the silver part of each
  (a log4j source's is the generic log part; another's the module `fleethealth.silver.parsers.<parser>`);
- `id_column`: the inventory id its rows carry (broker_id, zk_myid; None for a cluster-wide source);
- `rules`: its event rules (`silver/rules/<rules>`) for a log4j source; their event types are the
  suites' `$values:<source>_event_types`;
- `scope`: "host" (what the host says of itself) or "cluster" (taken on one host for the whole
  cluster: a consumer-groups snapshot, a Prometheus transport's scrape);
- `sent_by`: the roles that send it every hour (the inventory's default `expect:`; any other source
  is optional: expected only where a host's `expect:` lists it, never `data_missing` otherwise).

How to add a source: docs/development.md.
"""
from __future__ import annotations

from dataclasses import dataclass

PLACEMENTS = ("lines", "lines_unless_named", "json_lines", "name")
READERS = ("log4j", "json_lines", "lines", "snapshot")


@dataclass(frozen=True)
class Source:
    name: str
    silver_table: str             # the silver table holding its records
    formats: tuple[str, ...]      # the formats of its files: silver parts and `parse --source` names
    placed_by: str                # PLACEMENTS: how pull finds a file's hour
    reader: str                   # READERS: how bronze makes records of a file and silver reads them
    layout: str = ""              # reader log4j: the engine's layout (its <layout>_start, <layout>_log)
    id_column: str | None = "broker_id"   # the inventory id of the host its rows carry
    rules: str = ""               # reader log4j: its event rules file under silver/rules/
    scope: str = "host"           # "host", or "cluster": one host's file speaks for the whole cluster
    sent_by: tuple[str, ...] = ()  # the roles that send it every hour (else optional, per `expect:`)
    parsers: tuple[str, ...] = ()  # per format: the module under fleethealth.silver.parsers (not log4j)
    extra_tables: tuple[str, ...] = ()   # further silver tables derived from its records

    def __post_init__(self):
        assert self.placed_by in PLACEMENTS and self.reader in READERS and self.scope in ("host", "cluster")
        assert (self.reader == "log4j") == bool(self.layout) == bool(self.rules), self.name
        # a cluster-wide file's rows are not one host's: no host id on them
        assert self.scope == "host" or self.id_column is None, self.name

    @property
    def counts_lines(self) -> bool:
        """Reconciled by lines (a log4j record spans lines), else by records."""
        return self.reader == "log4j"

    @property
    def whole_file(self) -> bool:
        """One bronze record per file (a thread dump, a snapshot table), else per line/document."""
        return self.reader == "snapshot"

    @property
    def role(self) -> str:
        """The role of a host that sends it (`fleethealth parse` lands a file as such a host)."""
        return self.sent_by[0] if self.sent_by else "kafka"


SOURCES = {s.name: s for s in (
    Source("kafka", "silver.kafka_events", ("kafka",), "lines", "log4j", layout="kafka",
           rules="kafka_events.yaml", sent_by=("kafka", "controller")),
    Source("zookeeper", "silver.zk_events", ("zookeeper",), "lines", "log4j", layout="zookeeper",
           id_column="zk_myid", rules="zookeeper_events.yaml", sent_by=("zookeeper",)),
    Source("jmx", "silver.jmx_samples", ("jolokia", "prometheus"), "json_lines", "json_lines",
           sent_by=("kafka", "controller")),
    Source("threaddumps", "silver.threads", ("jstack",), "lines_unless_named", "snapshot",
           extra_tables=("silver.deadlocks",)),
    Source("logdirs", "silver.partition_sizes", ("logdirs",), "name", "lines", parsers=("logdirs",)),
    # kafka-consumer-groups.sh --describe [--state] snapshots, taken on one host for the whole cluster
    Source("groups", "silver.consumer_offsets", ("groups",), "name", "snapshot", id_column=None, scope="cluster",
           parsers=("groups",)),
)}
NAMES = tuple(SOURCES)
# format -> its source
FORMATS = {fmt: s.name for s in SOURCES.values() for fmt in s.formats}
# what each role sends every hour (thread dumps and log-dir snapshots are occasional); an inventory
# host's `expect:` overrides it. A KRaft controller writes Kafka logs (server.log, controller.log) and
# has JMX, but no partitions (no log-dir snapshots)
EXPECTED = {role: tuple(s.name for s in SOURCES.values() if role in s.sent_by)
            for role in dict.fromkeys(r for s in SOURCES.values() for r in s.sent_by)}


def silver_table(source: str) -> str:
    return SOURCES[source].silver_table


def event_rules() -> dict[str, str]:
    """source -> its event rules file, for the log4j sources."""
    return {s.name: s.rules for s in SOURCES.values() if s.rules}
