"""Plain-text renderings for the CLI and job logs."""
from __future__ import annotations

from tabulate import tabulate


def table(rows: list[dict], columns: list[str] | None = None, fmt: str = "simple") -> str:
    if not rows:
        return "(no rows)"
    columns = columns or list(rows[0])
    return tabulate([[r.get(c) for c in columns] for r in rows], headers=columns, tablefmt=fmt)


def reconciliation_text(rows: list[dict]) -> str:
    """One line per source of an hour: bronze = silver + quarantine (records), every quarantine row,
    files listed = read + rejected; unaccounted records called out; then the files that could not
    be read, and the verdict line (the DAG test greps it)."""
    keys = ("bronze_records", "silver_records", "quarantined_records", "unaccounted", "quarantine_rows",
            "files_listed", "files_read", "files_rejected")
    totals: dict[str, dict] = {}
    problems = []
    for r in rows:
        t = totals.setdefault(r["source"], dict.fromkeys(keys + ("hosts",), 0))
        for k in keys:
            t[k] += r.get(k) or 0
        t["hosts"] += 1
        problems += [f"  {r['cluster']}/{r['host']} {r['source']}: {p}" for p in r.get("file_problems") or []]
    lines = []
    for source, t in sorted(totals.items()):
        check = "ok" if t["unaccounted"] == 0 else f"{t['unaccounted']} UNACCOUNTED"
        lines.append(f"  {source:<12} bronze {t['bronze_records']:>9,} = silver {t['silver_records']:>9,} + quarantine "
                     f"{t['quarantined_records']:>7,}  ({t['quarantine_rows']:,} quarantine rows; files "
                     f"{t['files_listed']:,} = {t['files_read']:,} read + {t['files_rejected']:,} rejected; "
                     f"{t['hosts']} host{'s' if t['hosts'] != 1 else ''}, {check})")
    lines += problems
    lost = sum(t["unaccounted"] for t in totals.values())
    lines.append("  reconciled: bronze = silver + quarantine" if lost == 0
                 else f"  NOT RECONCILED: {lost} bronze records unaccounted")
    return "\n".join(lines)
