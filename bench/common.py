"""Shared by the bench scripts (run as `python bench/<script>.py`, so this folder is on sys.path)."""
from __future__ import annotations

import os


def load() -> str:
    """The load average, printed with every figure: other work on the cores skews all of them."""
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"
