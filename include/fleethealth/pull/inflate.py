"""Gzip'd files as found on hosts: decompress every member, keep the complete lines of a damaged one
(a .gz copied while being written ends early) and say what was lost.
"""
from __future__ import annotations

import os
import zlib
from pathlib import Path


CHUNK = 1 << 20          # compressed bytes read, and decompressed bytes made, per step
GZIP = 16 + zlib.MAX_WBITS


class TooLarge(Exception):
    """A .gz inflates to more than its host's cap (max_file_bytes)."""


def gzip_damage(path: Path, limit: int | None = None) -> tuple[str, Path | None]:
    """('', None) for a sound .gz; else why it is damaged and a plain file holding every complete
    line that decompressed (None when not one did, or when it inflates to more than `limit` bytes).
    A .gz copied while being written ends early."""
    try:
        problem = inflate(path, None, limit)
    except TooLarge as exc:
        return str(exc), None
    if not problem:
        return "", None
    recovered = path.with_name(path.name[:-3] + ".recovered")
    with recovered.open("wb") as dst:
        inflate(path, dst, limit)
    truncate_after_last_newline(recovered)
    lines = count_lines(recovered)
    if lines == 0:
        recovered.unlink()
        return f"damaged gzip ({problem}): nothing decompressed", None
    return (f"damaged gzip ({problem}): kept the {lines} complete lines that decompressed "
            f"({recovered.stat().st_size} bytes), lost the rest"), recovered


def inflate(path: Path, dst, limit: int | None = None) -> str:
    """Decompress every gzip member of `path` into `dst` (if given); returns what is wrong with the
    file, or ''. Memory and time are bounded by design: CHUNK bytes in and out per step, zero padding
    after a member skipped as it is read, and TooLarge past `limit` bytes of output."""
    inflater, data, written = zlib.decompressobj(GZIP), b"", 0
    with path.open("rb") as src:
        try:
            while True:
                if not data:
                    data = src.read(CHUNK)
                    if not data:
                        if inflater.eof or not (data := inflater.decompress(b"", CHUNK)):
                            break           # the end of the file, and of what the inflater held
                        written = _out(data, dst, written, limit)
                        data = b""
                        continue
                if inflater.eof:
                    data = data.lstrip(b"\0")      # zero padding after a member
                    if not data:
                        continue
                    inflater = zlib.decompressobj(GZIP)   # the next member
                written = _out(inflater.decompress(data, CHUNK), dst, written, limit)
                data = inflater.unused_data if inflater.eof else inflater.unconsumed_tail
        except zlib.error as exc:
            return f"not readable as gzip: {exc}"
    if not inflater.eof:
        return "truncated: it ends before the gzip end-of-stream marker"
    return ""


def _out(out: bytes, dst, written: int, limit: int | None) -> int:
    written += len(out)
    if limit is not None and written > limit:
        raise TooLarge(f"inflates to more than {limit} bytes, the cap of its host (max_file_bytes)")
    if dst is not None:
        dst.write(out)
    return written


def gunzip(transport, folder: str, name: str, target: Path, size: int,
           limit: int | None = None) -> tuple[str, Path | None]:
    """Fetch the .gz `folder/name` (its first `size` bytes, as listed: one that grows meanwhile is not
    followed) beside `target` and decompress it, at most `limit` bytes: (what is damaged or too large,
    or ''; the plain file with every complete line that decompressed, or None when not one did)."""
    whole = target.with_name(target.name + ".fetched")
    try:
        transport.fetch(folder, name, whole, 0, size)
        reason, plain = gzip_damage(whole, limit)
        if not reason:
            plain = whole.with_name(whole.name + ".plain")
            with plain.open("wb") as dst:
                inflate(whole, dst, limit)
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


def truncate_after_last_newline(path: Path) -> int:
    """Cut `path` after its last newline, looking back a block at a time (nothing left without one)."""
    size = end = path.stat().st_size
    with path.open("rb+") as fh:
        while end > 0:
            start = max(0, end - CHUNK)
            fh.seek(start)
            cut = fh.read(end - start).rfind(b"\n")
            if cut >= 0:
                end = start + cut + 1
                break
            end = start
        if end < size:
            fh.truncate(end)
    return end
