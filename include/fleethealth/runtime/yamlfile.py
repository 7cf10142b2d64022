"""A YAML file an operator writes (the inventory, the thresholds), read within bounds.

The one rule for both: a regular file (a FIFO or a device is refused without blocking on it), at
most MAX_BYTES, and at most MAX_VALUES values once its aliases are expanded (a few hundred bytes of
aliases nested in aliases stand for gigabytes: PyYAML shares them, but every walk over the document
and every message quoting a part of it would expand them). A mistake is one line, YamlFileError.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import yaml

MAX_BYTES = 8 * 2**20     # an inventory of thousands of hosts is well under a megabyte
MAX_VALUES = 100_000      # values once the YAML's aliases are expanded


class YamlFileError(ValueError):
    """One line: `<path>: <what is wrong>`."""


def _one(what: str) -> str:
    return "an inventory" if what == "inventory" else f"a {what} file"


def _read(path: Path, what: str) -> bytes:
    try:
        # non-blocking: opening a FIFO for reading would wait for a writer
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise YamlFileError(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a folder" if stat.S_ISDIR(mode) else "a named pipe" if stat.S_ISFIFO(mode) else "a device"
            raise YamlFileError(f"{path}: cannot read {what}: {kind}, not a regular file")
        chunks, size = [], 0
        while size <= MAX_BYTES and (chunk := os.read(fd, MAX_BYTES + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
        data = b"".join(chunks)
    except OSError as exc:
        raise YamlFileError(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:
        raise YamlFileError(f"{path}: cannot read {what}: larger than {MAX_BYTES // 2**20} MiB; "
                            f"{_one(what)} needs far less")
    return data


def expanded_size(doc: Any) -> int:
    """How many values `doc` holds with every alias expanded, counting up to MAX_VALUES + 1."""
    count, stack = 0, [doc]
    while stack and count <= MAX_VALUES:
        value = stack.pop()
        count += 1
        if isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return count


def load(path: str | Path, what: str) -> Any:
    """The document of the YAML file `path`, `what` naming it in messages ("inventory", "thresholds")."""
    path = Path(path)
    data = _read(path, what)
    try:
        doc = yaml.safe_load(data)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise YamlFileError(f"{path}:{where} not valid YAML: {getattr(exc, 'problem', exc)}") from None
    if expanded_size(doc) > MAX_VALUES:
        raise YamlFileError(f"{path}: its YAML expands to more than {MAX_VALUES} values (aliases nested in "
                            f"aliases); {_one(what)} needs far fewer")
    return doc
