"""Lake: the catalog of one lakehouse's paths, its tables, hours, locks and maintenance.

In: a lakehouse folder and the settings (`catalog.Lakehouse`, built once at each entry point and
passed down: every sub-path and the one hour stamp). Out: where each table lives and how an hour of it
is read and replaced (`tables`), the hour arithmetic every layer shares (`hours`), the per-hour locks
that keep two runs of one hour apart (`locks`), OPTIMIZE/VACUUM (`maintenance`). Owns the lakehouse layout.
"""
