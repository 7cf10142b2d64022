"""Gzip'd files as found on hosts: decompress every member, keep the complete lines of a damaged one
(a .gz copied while being written ends early) and say what was lost.
"""
from __future__ import annotations

import os
import zlib
from pathlib import Path


def gzip_damage(path: Path) -> tuple[str, Path | None]:
    """('', None) for a sound .gz; else why it is damaged and a plain file holding every complete
    line that decompressed (None when not one did). A .gz copied while being written ends early."""
    problem = inflate(path, None)
    if not problem:
        return "", None
    recovered = path.with_name(path.name[:-3] + ".recovered")
    with recovered.open("wb") as dst:
        inflate(path, dst)
    lines = count_lines(recovered)
    if lines == 0:
        recovered.unlink()
        return f"damaged gzip ({problem}): nothing decompressed", None
    return (f"damaged gzip ({problem}): kept the {lines} complete lines that decompressed "
            f"({recovered.stat().st_size} bytes), lost the rest"), recovered


def inflate(path: Path, dst) -> str:
    """Decompress every gzip member of `path`, writing complete lines to `dst` (if given); returns
    what is wrong with the file, or ''."""
    inflater, tail = zlib.decompressobj(16 + zlib.MAX_WBITS), b""
    with path.open("rb") as src:
        try:
            while chunk := src.read(1 << 20):
                while chunk:
                    out = inflater.decompress(chunk)
                    if dst is not None:
                        out, cut = tail + out, (tail + out).rfind(b"\n") + 1
                        dst.write(out[:cut])
                        tail = out[cut:]
                    chunk = b""
                    if inflater.eof and inflater.unused_data.strip(b"\0"):   # the next member
                        chunk, inflater = inflater.unused_data, zlib.decompressobj(16 + zlib.MAX_WBITS)
        except zlib.error as exc:
            return f"not readable as gzip: {exc}"
    if not inflater.eof:
        return "truncated: it ends before the gzip end-of-stream marker"
    if dst is not None:
        dst.write(tail)   # a sound file's last line needs no newline
    return ""


def gunzip(transport, folder: str, name: str, target: Path) -> tuple[str, Path | None]:
    """Fetch the .gz `folder/name` beside `target` and decompress it: (what is damaged or '', the plain
    file with every complete line that decompressed, or None when not one did)."""
    whole = target.with_name(target.name + ".fetched")
    try:
        transport.fetch(folder, name, whole)
        reason, plain = gzip_damage(whole)
        if not reason:
            plain = whole.with_name(whole.name + ".plain")
            with plain.open("wb") as dst:
                inflate(whole, dst)
        return reason, plain
    finally:
        whole.unlink(missing_ok=True)


def ends_with_newline(path: Path) -> bool:
    with path.open("rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"


def count_lines(path: Path) -> int:
    with path.open("rb") as fh:
        return sum(block.count(b"\n") for block in iter(lambda: fh.read(1 << 20), b""))


def cut_after_last_newline(path: Path) -> int:
    """Truncate `path` after its last newline (a line being written lands whole next time); new size."""
    size = path.stat().st_size
    with path.open("rb+") as fh:
        back = min(size, 1 << 20)
        fh.seek(size - back)
        tail = fh.read(back)
        cut = tail.rfind(b"\n")
        if cut == -1 or cut == len(tail) - 1:
            return size
        new = size - back + cut + 1
        fh.truncate(new)
        return new
