"""Plain-text renderings for the CLI and job logs."""
from __future__ import annotations

from tabulate import tabulate


def table(rows: list[dict], columns: list[str] | None = None, fmt: str = "simple") -> str:
    if not rows:
        return "(no rows)"
    columns = columns or list(rows[0])
    return tabulate([[r.get(c) for c in columns] for r in rows], headers=columns, tablefmt=fmt)


def reconciliation_text(rows: list[dict]) -> str:
    """One line per source of an hour: bronze = silver + quarantine, unaccounted records called out;
    then the verdict line (the DAG test greps it)."""
    totals: dict[str, dict] = {}
    for r in rows:
        t = totals.setdefault(r["source"], {"bronze": 0, "silver": 0, "quarantine": 0, "unaccounted": 0, "hosts": 0})
        t["bronze"] += r["bronze_records"]
        t["silver"] += r["silver_records"]
        t["quarantine"] += r["quarantined_records"]
        t["unaccounted"] += r["unaccounted"]
        t["hosts"] += 1
    lines = []
    for source, t in sorted(totals.items()):
        check = "ok" if t["unaccounted"] == 0 else f"{t['unaccounted']} UNACCOUNTED"
        lines.append(f"  {source:<12} bronze {t['bronze']:>9,} = silver {t['silver']:>9,} + quarantine "
                     f"{t['quarantine']:>7,}  ({t['hosts']} host{'s' if t['hosts'] != 1 else ''}, {check})")
    lost = sum(t["unaccounted"] for t in totals.values())
    lines.append("  reconciled: bronze = silver + quarantine" if lost == 0
                 else f"  NOT RECONCILED: {lost} bronze records unaccounted")
    return "\n".join(lines)
