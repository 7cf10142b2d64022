"""Report: gold.incidents and silver.reconciliation as the on-call engineer reads them.

In: rows of gold.incidents (with runbooks and known bugs) and silver.reconciliation. Out: text, one
line per incident, most severe first. Owns no table.
"""
