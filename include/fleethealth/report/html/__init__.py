"""The offline HTML report: read.py (gold, no Spark) → charts.py, incidents.py → pages.py (index.html, cluster pages).

index.html is the fleet overview, its open incidents first; a page per cluster has its incidents and charts.

Gold is read without Spark (`read`: deltalake -> Arrow -> pandas, only the window's `hour` partitions);
`charts` builds the Vega-Lite specs (Altair), times in UTC; `incidents` orders incidents and finds the
fact rows behind each; `pages` writes the pages and, once beside them, the Vega/Vega-Lite/vega-embed
bundle of vl-convert they share, so a page needs no network at all (fleets are air-gapped; the pages'
CSP forbids any fetch but the bundle's). A table a lakehouse does not have yet is a note on the page, not a failure.
"""
from fleethealth.report.html.pages import ReportError, cluster_page, last_hours, overview_page, write_report
from fleethealth.report.html.read import Gold, last_processed_hour, read_gold

__all__ = ["Gold", "ReportError", "cluster_page", "last_hours", "last_processed_hour", "overview_page", "read_gold", "write_report"]
