"""Silver: parsers/ + rules/*.yaml → typed events, JMX samples, quarantine, reconciliation.

In: bronze.records and bronze.files of an hour, and the inventory (time zones, roles). Out (`tables`):
the table of each source declared in fleet.sources (`silver_table`, `extra_tables`), silver.quarantine
(every record that did not parse, with its reason) and silver.reconciliation (bronze records = silver +
quarantine, per host, source and hour). Log rules
are data (`rules/*.yaml`), read by the generic engine `parsers/rules.py`; jmx_exporter series map
back onto MBeans through `jmx_prometheus_mapping.yaml`. The layer's job (`job`: read the published
bronze, compute, gate, publish) is run by fleethealth.pipeline.
"""
from fleethealth.fleet.sources import event_rules
from fleethealth.quality import suites


def _event_types(source: str):
    def values() -> list[str]:
        from fleethealth.silver.parsers.rules import load_rules

        return sorted({r.event_type for r in load_rules(source)} | {"other"})
    return values


# "$values:<source>_event_types" of each log4j source (kafka_event_types, zookeeper_event_types, ...)
for _source in event_rules():
    suites.register_values(f"{_source}_event_types", _event_types(_source))
