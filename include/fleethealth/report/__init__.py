"""Report: gold as the on-call engineer reads it — incident lines, and an offline HTML report with charts.

In: rows of gold.incidents (with runbooks and known bugs) and silver.reconciliation (`text`: one line
per incident, most severe first); gold's tables of a window, read without Spark (`html`: index.html,
its open incidents first, a page per cluster, Vega-Lite charts rendered offline, times in UTC). Owns no table.
"""
