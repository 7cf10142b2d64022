"""Command line: simulate, pull, run, backfill, parse, query, and the demo.

In: arguments. Out: what the layers above give, one clear line per user mistake (`main`); the
silver rows of one raw file (`parse`); read-only SQL over the lakehouse (`query`); the end-to-end
demo (`demo`). Owns no table.
"""
