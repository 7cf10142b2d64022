"""Found incidents against a simulation's ground truth (expected_incidents.json): keyed by (cluster, kind,
entity), first_seen within a tolerance."""
from __future__ import annotations

from datetime import datetime, timedelta

TOLERANCE = timedelta(minutes=5)


def key(i: dict) -> tuple[str, str, str]:
    return i["cluster"], i["kind"], i["entity"]


def first_seen(i: dict) -> datetime:
    v = i["first_seen"]
    return datetime.fromisoformat(v.replace("Z", "+00:00")).replace(tzinfo=None) if isinstance(v, str) else v


def mismatches(found: list[dict], expected: list[dict], tolerance: timedelta = TOLERANCE) -> tuple[list, list, list]:
    """(missed, late, false positives): expected keys not found, found but first seen more than `tolerance`
    from the truth, and found keys nobody expected."""
    got = {key(i): i for i in found}
    want = {key(i): i for i in expected}
    missed = sorted(k for k in want if k not in got)
    late = sorted((k, str(first_seen(want[k])), str(first_seen(got[k]))) for k in want
                  if k in got and abs(first_seen(got[k]) - first_seen(want[k])) > tolerance)
    false = sorted(k for k in got if k not in want)
    return missed, late, false


def known_bugs_differ(found: list[dict], expected: list[dict]) -> list[tuple]:
    """(key, expected, found) of each expected incident found whose `known_bug` is not the truth's (none
    where the truth names none): a bug named on the wrong incident is as wrong as one missed."""
    got = {key(i): i for i in found}
    return sorted((key(i), i.get("known_bug"), got[key(i)].get("known_bug")) for i in expected
                  if key(i) in got and got[key(i)].get("known_bug") != i.get("known_bug"))


def causes_differ(found: list[dict], expected: list[dict]) -> list[tuple]:
    """(key, expected, found) of each expected incident found whose caused_by (each explaining incident's
    "kind entity") is not the truth's: a root given a cause, or an effect its cause not named."""
    got = {key(i): i for i in found}

    def named(i: dict) -> list[str]:
        return sorted(f"{c['kind']} {c['entity']}" for c in (i.get("caused_by") or []))
    return sorted((key(i), i.get("caused_by", []), named(got[key(i)])) for i in expected
                  if key(i) in got and named(got[key(i)]) != i.get("caused_by", []))
