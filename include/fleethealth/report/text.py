"""Plain-text renderings for the CLI and job logs."""
from __future__ import annotations

from datetime import timezone

from tabulate import tabulate

from fleethealth.lake.catalog import Lakehouse
from fleethealth.runtime.text import printable


def table(rows: list[dict], columns: list[str] | None = None, fmt: str = "simple") -> str:
    if not rows:
        return "(no rows)"
    columns = columns or list(rows[0])
    return tabulate([[printable(r.get(c)) for c in columns] for r in rows], headers=[printable(c) for c in columns],
                    tablefmt=fmt)


def incident_rows(lakehouse: Lakehouse) -> list[dict]:
    """gold.incidents as the on-call engineer reads them: the open ones first, the most severe first,
    then by first seen.
    Read with delta-rs, not Spark (a fraction of a second, not a JVM); [] before the first gold hour."""
    from fleethealth.runtime.vocabulary import SEVERITY_RANK
    from fleethealth.lake import tables as lake

    if not lake.present("gold.incidents", lakehouse):
        return []

    def order(r: dict):
        seen = r.get("first_seen")
        return (r.get("status", "open") != "open", -SEVERITY_RANK.get(r.get("severity"), 0), seen is not None,
                seen.timestamp() if seen else 0,
                r.get("cluster") or "", r.get("kind") or "", r.get("entity") or "")

    kraft = kraft_clusters(lakehouse)
    rows = [dict(r, mode="kraft" if r["cluster"] in kraft else None)
            for r in lake.arrow_rows(lake.table("gold.incidents").path(lakehouse)).to_pylist()]
    return sorted(rows, key=order)


def kraft_clusters(lakehouse: Lakehouse) -> set[str]:
    """The clusters gold found in KRaft mode (rows of gold.kraft_quorum, which only they have), read with
    delta-rs: the mode a runbook is chosen by (gold.runbooks.of)."""
    from fleethealth.lake import tables as lake

    if not lake.present("gold.kraft_quorum", lakehouse):
        return set()
    return set(lake.arrow_rows(lake.table("gold.kraft_quorum").path(lakehouse), ["cluster"]).column("cluster").to_pylist())


def incidents_report(rows: list[dict], failed: str = "", exposure: list[dict] | None = None) -> str:
    """What `fleethealth run` and the demo print at the end (README shows it; test_mixed_fleet.py keeps
    README true): the incidents, then the known bugs of the fleet's versions (`exposure`:
    exposure_rows). `failed` (what of the run failed): the summary is then said to be of the hours
    published before, never a clean bill of health."""
    still = sum(1 for r in rows if r.get("status", "open") == "open")
    counts = f"{len(rows)} incident(s), {still} open, open first, most severe first"
    head = (f"gold.incidents as of the last published hour, without the failed ones ({failed}): {counts}"
            if failed else f"gold.incidents: {counts}")
    bugs = f"\n\n{exposure_text(exposure)}" if exposure else ""
    return f"{head}\n\n{incidents_text(rows)}{bugs}"


def exposure_rows(lakehouse: Lakehouse) -> list[dict]:
    """gold.known_bug_exposure of each cluster's newest hour (delta-rs, no Spark); [] before there is one."""
    import pyarrow.dataset as ds

    from fleethealth.lake import tables as lake

    if not lake.present("gold.known_bug_exposure", lakehouse):
        return []
    path = lake.table("gold.known_bug_exposure").path(lakehouse)
    newest: dict = {}
    for r in lake.arrow_rows(path, ["cluster", "hour"]).to_pylist():
        newest[r["cluster"]] = max(newest.get(r["cluster"], r["hour"]), r["hour"])
    if not newest:
        return []
    rows = lake.arrow_rows(path, filter=ds.field("hour") >= min(newest.values())).to_pylist()
    return sorted((r for r in rows if r["hour"] == newest[r["cluster"]]),
                  key=lambda r: (r["cluster"], _version_order(r["kafka_version"]), r["bug_id"]))


def _version_order(version: str):
    from fleethealth.gold import known_bugs

    try:
        return known_bugs.version_key(version)
    except ValueError:
        return (0, 0, 0, 0)


def exposure_text(rows: list[dict]) -> str:
    """The known bugs of the fleet's versions, one line per cluster and version (rows: exposure_rows):
    advice for the next upgrade, not incidents."""
    lines = ["known bugs in this fleet (gold.known_bug_exposure, newest hour): advice for the next upgrade, "
             "not incidents"]
    by_version: dict[tuple, list[dict]] = {}
    for r in rows:
        by_version.setdefault((r["cluster"], r["kafka_version"]), []).append(r)
    for (cluster, version), bugs in by_version.items():
        hosts = {h for r in bugs for h in r["hosts"]}
        named = "; ".join(f"{r['bug_id']} ({fixed_text(r['fixed_in'])})" for r in bugs)
        lines.append(f"  {cluster}: Kafka {version} on {len(hosts)} host(s): {named}")
    return "\n".join(lines)


def _key(cluster, kind, entity, first_seen) -> tuple:
    """An incident's key across re-runs (gold.causes): first_seen as naive UTC to the second, whichever
    reader gave it (delta-rs, pandas, an aware datetime, a message's ISO text)."""
    if isinstance(first_seen, str):
        return (cluster, kind, entity, first_seen[:19])
    if first_seen is not None and getattr(first_seen, "tzinfo", None) is not None:
        first_seen = first_seen.astimezone(timezone.utc).replace(tzinfo=None)
    at = first_seen.strftime("%Y-%m-%dT%H:%M:%S") if first_seen is not None else None
    return (cluster, kind, entity, at)


def _named(kind, entity, first_seen) -> str:
    at = _key(None, None, None, first_seen)[3]
    return f"{kind} {entity}" + (f" (since {at[11:16]}Z)" if at else "")


def causes_of(caused_by) -> list:
    """A caused_by value as a list, whichever reader gave it (delta-rs: a list or None; pandas: an array)."""
    return [] if caused_by is None else list(caused_by)


def explained(rows: list[dict]) -> dict[tuple, list[dict]]:
    """What each incident explains: (cluster, kind, entity, first_seen) -> the incidents (of `rows`,
    gold.incidents rows) whose caused_by names it."""
    out: dict[tuple, list[dict]] = {}
    for r in rows:
        for c in causes_of(r.get("caused_by")):
            out.setdefault(_key(r["cluster"], c["kind"], c["entity"], c["first_seen"]), []).append(r)
    return out


def explains_of(row: dict, by_cause: dict[tuple, list[dict]]) -> list[dict]:
    """The incidents `row` explains (by_cause: explained()), each as {kind, entity, first_seen}."""
    found = by_cause.get(_key(row["cluster"], row["kind"], row["entity"], row.get("first_seen")), [])
    return [{"kind": r["kind"], "entity": r["entity"], "first_seen": r.get("first_seen")} for r in found]


def causal_text(caused_by, explains) -> str:
    """" | caused by broker_fenced broker-2 (since 10:12Z) | explains leader_election_storm broker-2 (since
    10:12Z)": what follows an incident's evidence when another explains it or it explains others."""
    parts, caused_by = [], causes_of(caused_by)
    if caused_by:
        parts.append("caused by " + "; ".join(_named(c["kind"], c["entity"], c["first_seen"]) for c in caused_by))
    if explains:
        parts.append("explains " + "; ".join(_named(c["kind"], c["entity"], c["first_seen"]) for c in explains))
    return "".join(f" | {p}" for p in parts)


def incidents_text(rows: list[dict]) -> str:
    """The on-call summary of gold.incidents (rows already ordered: open first, most severe first): one line per
    incident with the evidence that fired it (and what fires it now, when that changed), the incidents
    that explain it or that it explains (gold.causes), the known
    bug with the releases that fix it, and the first step of its kind's runbook; the full table stays
    one query away."""
    lines, by_cause = [], explained(rows)
    for r in rows:
        seen = f"{r['first_seen']:%Y-%m-%d %H:%M}Z" if r.get("first_seen") else "?"
        state = f", resolved {r['resolved_at']:%Y-%m-%d %H:%M}Z" if r.get("resolved_at") else ", open"
        line = (f"{r['severity'].upper():<8} {r['cluster']} {r['kind']} {r['entity']} "
                f"(since {seen}, {r['hours']} h{state}): ")
        line += evidence_text(r.get("first_evidence"), r["evidence"])
        line += causal_text(r.get("caused_by"), explains_of(r, by_cause))
        lines.append(line + incident_notes(r["kind"], r.get("known_bug"), line, r.get("mode")))
    return "\n".join(lines) if lines else "(no incidents)"


def evidence_text(first_evidence: str | None, evidence: str | None) -> str:
    """What fired an incident, and what fires it now when that changed: "<first>; now: <now>" (the
    on-call summary and the HTML report say it so)."""
    first, now = first_evidence or evidence or "", evidence or ""
    return first if not now or first == now else f"{first}; now: {now}"


def hour_incidents_text(hour, rows: list[dict]) -> str:
    """The gold step's log line of an hour and the incidents its findings belong to, one per line."""
    head = f"gold {hour.isoformat()}: {len(rows)} incident(s) in this hour"
    return head + ("\n" + incidents_text(rows) if rows else " (no findings)")


def known_bugs_text(known_bug: str | None, said: str = "") -> str | None:
    """The catalogued bugs of a `known_bug` value ("KAFKA-7215,KAFKA-..."), each with its title and the
    releases that fix it: "matches KAFKA-7215 (One bad partition kills the cleaner thread; ...), fixed in
    2.1.0" — "may be" for a bug without a signature of its own (the incident's kind on an affected version
    is all that shows it); those `said` already names left out (not twice: a deadlock's evidence
    names them); None when none is left."""
    from fleethealth.gold import known_bugs

    catalogue = {b.id: b for b in known_bugs.load()}
    bugs = [catalogue.get(b.strip()) for b in (known_bug or "").split(",") if b.strip()]
    bugs = [b for b in bugs if b and b.id not in said]

    def named(b) -> str:
        return f"{b.id} ({b.title}), {fixed_text(b.fixed_in)}"

    shown = [named(b) for b in bugs if not b.kind_only]
    maybe = [named(b) for b in bugs if b.kind_only]
    parts = ([f"matches {'; '.join(shown)}"] if shown else []) + ([f"may be {'; '.join(maybe)}"] if maybe else [])
    return " | ".join(parts) or None


def fixed_text(fixed_in) -> str:
    """"fixed in 2.0.2 / 2.1.2" of a bug's fix releases, "no fix yet" without one."""
    return f"fixed in {' / '.join(fixed_in)}" if len(fixed_in) else "no fix yet"


def incident_notes(kind: str, known_bug: str | None, said: str = "", mode: str | None = None) -> str:
    """What follows an incident's evidence on its one line (the on-call summary, a notification):
    " | matches KAFKA-4399 (Deadlock between ...), fixed in 0.10.1.1 | check first: <the runbook's first step>"
    (the runbook of the cluster's `mode`, when known)."""
    from fleethealth.gold import runbooks

    bugs, book = known_bugs_text(known_bug, said), runbooks.of(kind, mode)
    return (f" | {bugs}" if bugs else "") + (f" | check first: {book.first_step}" if book else "")


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
        problems += [f"  {r['cluster']}/{r['host']} {r['source']}: {printable(p)}" for p in r.get("file_problems") or []]
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
