"""What a fleet is: the inventory, the sources a host sends, the JMX beans read, Kafka's own names.

In: the inventory YAML. Out: a validated `Inventory` (clusters, hosts, transports, paths, expected
sources, and its notification channels: `channels`), the sources and their silver tables (`sources`),
the MBeans fleethealth reads (`mbeans`), Kafka's constants (`kafka`) and how incidents name a
host's process, a replica or a source (`entities`: the one format and parse of an entity name). Every layer reads these;
they import nothing of the layers but `runtime` (the incident kinds a channel may filter on are read
from gold/runbooks.yaml as data). Owns no table.
"""
