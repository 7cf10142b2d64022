"""Command line: simulate, check, pull, run, backfill, parse, query, report, and the demo.

In: arguments. Out: what the layers above give, one clear line per user mistake (`main`); whether an
hour would run as set up, a line per problem (`check`); the silver rows of one raw file (`parse`);
read-only SQL over the lakehouse (`query`); the HTML report (`report`, fleethealth.report.html); the
end-to-end demo (`demo`). Owns no table.
"""
