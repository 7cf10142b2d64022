"""Lake: the table catalogue, hours, locks and maintenance: one place for every path.

In: a lakehouse root. Out: where each table lives and how an hour of it is read and replaced
(`tables`), the hour arithmetic every layer shares (`hours`), the per-hour locks that keep two runs
of one hour apart (`locks`), OPTIMIZE/VACUUM (`maintenance`). Owns the lakehouse layout.
"""
