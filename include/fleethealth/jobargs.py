"""Command-line arguments shared by the spark-submit entry points in spark/."""
from __future__ import annotations

import argparse

from fleethealth.hours import parse_hour


def parser(description: str, needs_inventory: bool = True) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--hour", required=True, type=parse_hour, help="processed hour, ISO-8601 UTC")
    p.add_argument("--lakehouse", default=None, help="lakehouse root (default $FLEETHEALTH_LAKEHOUSE or ./lakehouse)")
    if needs_inventory:
        p.add_argument("--inventory", required=True, help="fleet inventory YAML")
    return p
