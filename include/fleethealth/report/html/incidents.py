"""Incidents as the pages show them: open first, most severe first, the entity an incident names, and
the fact rows (and chart) behind it."""
from __future__ import annotations

import ast
import importlib.util
import pkgutil
from functools import cache
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from fleethealth.fleet import entities
from fleethealth.runtime.vocabulary import SEVERITY_RANK
from fleethealth.lake.hours import HOUR, floor_hour
from fleethealth.report.html.read import Gold, records


def open_then_most_severe(incidents: pd.DataFrame) -> pd.DataFrame:
    """Incidents in the order both pages list them: open before resolved, the most severe first, then the
    earliest first seen."""
    rank = incidents["severity"].map(lambda s: -SEVERITY_RANK.get(s, 0))
    closed = incidents["status"] != "open" if "status" in incidents else False
    keys = [k for k in ("first_seen", "cluster", "kind", "entity") if k in incidents]
    return (incidents.assign(_closed=closed, _rank=rank).sort_values(["_closed", "_rank", *keys])
            .drop(columns=["_closed", "_rank"]))


# the package whose modules declare what the report shows of each kind (REPORT, see its docstring)
DETECTOR_PACKAGE = "fleethealth.gold.detectors"


class Shown(NamedTuple):
    """What the report shows of an incident: its chart (on its cluster's page), the fact table and
    its columns; the rows are those of the incident's entity and hours."""
    chart: str | None
    table: str
    columns: list[str]


@cache
def shown() -> dict[str, Shown | None]:
    """kind -> what the report shows of its incidents, as its detector module declares it (REPORT).
    Read from the modules' source, not imported: they import Spark, which the report does without."""
    found = {}
    for module in pkgutil.iter_modules(importlib.util.find_spec(DETECTOR_PACKAGE).submodule_search_locations):
        source = Path(module.module_finder.path, f"{module.name}.py")
        values = {target.id: node.value for node in ast.parse(source.read_text(), str(source)).body
                  if isinstance(node, ast.Assign) for target in node.targets if isinstance(target, ast.Name)}
        if "KIND" in values and "REPORT" in values:
            report = ast.literal_eval(values["REPORT"])
            found[ast.literal_eval(values["KIND"])] = Shown(**report) if report is not None else None
    return found


def chart_of(kind: str) -> str | None:
    """The id of the chart (on its cluster's page) that shows the facts of an incident of `kind`."""
    return facts.chart if (facts := shown().get(kind)) else None


def fact_rows(gold: Gold, incident) -> tuple[str | None, str | None, list[dict]]:
    """(chart id, table, rows) of the facts behind an incident: its entity's rows in its hours."""
    chart, table, columns = shown().get(incident.kind) or (None, None, [])
    df = gold.get(table, incident.cluster) if table else None
    if df is None or df.empty:
        return chart, table, []
    e = entities.parse(incident.entity)
    keep = pd.Series(True, index=df.index)
    for key, columns_of_key in (("broker", ("broker_id", "broker", "lost_broker")), ("partition", ("partition",)),
                                ("topic", ("topic",)), ("zk", ("zk_myid",)), ("controller", ("broker_id",)),
                                ("host", ("host",))):
        col = next((c for c in columns_of_key if c in df), None)
        if key in e and col:
            keep &= df[col] == e[key]
    when = "minute" if "minute" in df else "hour"
    first = pd.Timestamp(floor_hour(incident.first_hour.to_pydatetime() if not pd.isna(incident.first_hour)
                                    else incident.first_seen.to_pydatetime()))
    last = incident.last_hour if not pd.isna(incident.last_hour) else incident.last_seen
    keep &= (df[when] >= first) & (df[when] < pd.Timestamp(last) + pd.Timedelta(HOUR))
    return chart, table, records(df[keep].sort_values(when).head(48), columns)

