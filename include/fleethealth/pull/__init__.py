"""Pull: inventory → transports (local, sftp, jolokia, prometheus) → landing files, manifests, file identity.

In: the inventory and an hour. Out: `<lakehouse>/landing/<hour>/<cluster>/<host>/<source>/` with a
`_manifest.json` per host (`landing`), the per-host state of what was landed (`identity`), gzip'd and
live files cut to the hour's lines (`inflate`, `linecut`). `hour` pulls an hour for every host
(`pull_hour`): one unreachable host or one bad file never stops the others. Owns the landing folder.
"""
