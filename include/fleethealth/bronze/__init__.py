"""Bronze: landed files → bronze.records (one row per raw record, with lineage) and bronze.files.

In: the landing folder and manifests of an hour. Out: `bronze.records` (line, JSON document or
whole thread dump, with cluster, host, source, file, line number and file hash: nothing dropped,
nothing parsed away) and `bronze.files` (the file ledger: read, rejected, damaged).
"""
