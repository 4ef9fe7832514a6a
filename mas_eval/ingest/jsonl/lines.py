"""Reading a JSONL file: its lines, split a read at a time, grouped in chunks of bounded memory.

A line longer than the limit is never held whole, so memory is bounded by the chunk and the
limit, never by the input or one of its lines.
"""

from __future__ import annotations

import contextlib
import gzip
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np
import polars as pl

from mas_eval.errors import IngestError

__all__ = [
    "BYTES_CEILING",
    "CHUNK_BYTES",
    "LINE_OVERHEAD",
    "MAX_LINE_BYTES",
    "PROBLEMS",
    "Chunk",
    "chunk_lines",
    "chunks",
]

#: Default bytes of input decoded at a time by :func:`ingest_jsonl` (16 MiB). A chunk costs 12 to
#: 30 times its size in memory at its peak, and larger ones are not faster (docs/performance.md).
CHUNK_BYTES = 16 * 2**20
#: Bytes a line counts in a chunk on top of its length: what its row costs, however short the
#: line, so that blank or tiny lines fill a chunk too (see :func:`chunks`; docs/performance.md).
LINE_OVERHEAD = 64
#: Default longest line :func:`ingest_jsonl` reads (16 MiB, without its newline). A longer one is a
#: malformed line, never held whole. A line is decoded whole, at 12 to 30 times its size, so the
#: limit keeps one line within the memory of a chunk. The records the simulators write at their
#: defaults are far smaller (decision runs 2 kB, answer runs 42 kB, diagnosis runs with transcripts
#: 34 kB on average and 70 kB at most; 1.3 MB with 9 agents writing 60 messages of 20,000
#: characters); only extremes pass it (an answer run of 1,000 items of 10,000-character texts is a
#: 40 MB record), for which the limit is raised.
MAX_LINE_BYTES = 16 * 2**20
#: Largest ``chunk_bytes`` and ``max_line_bytes`` (1 GiB): a chunk or line that large is decoded in 12 to 30 GiB.
BYTES_CEILING = 2**30


#: Bytes read from a file at a time while it is split into lines; a line may span many reads.
_READ_BYTES = 2**20
#: First bytes of a line over ``max_line_bytes`` that are kept (for the rejects file); the rest is never held.
_PREFIX_BYTES = 1000


@dataclass(frozen=True)
class Chunk:
    r"""Consecutive lines of a file, decoded together.

    ``first`` is the 1-based number of the first line; ``lines`` the lines without their ``\n``,
    a line over the limit cut to its first bytes; ``long`` the number and length (in bytes) of
    each line over the limit; ``position`` the bytes of the file read so far (see :func:`chunks`).
    """

    first: int
    lines: list[bytes]
    long: dict[int, int]
    position: int


def _prefix(data: bytes) -> bytes:
    """Return the first ``_PREFIX_BYTES`` of ``data``, not cutting a UTF-8 character in two."""
    if len(data) <= _PREFIX_BYTES:
        return data
    cut = _PREFIX_BYTES
    while cut > 0 and data[cut] & 0xC0 == 0x80:  # a continuation byte: the character started before
        cut -= 1
    return data[:cut]


def _split(handle: IO[bytes], max_line_bytes: int) -> Iterator[tuple[list[bytes], np.ndarray, dict[int, int]]]:
    r"""Yield the lines of ``handle``, a read at a time: ``(lines, sizes, long)``.

    ``lines`` are the whole lines that the read completed, without their ``\n`` (the file's
    last line may lack one); ``sizes`` their lengths in the file, ``\n`` included; ``long``
    maps the position in ``lines`` of each line longer than ``max_line_bytes`` (``\n``
    excluded) to its length. Such a line is cut to its first bytes (:func:`_prefix`) as soon as
    it passes the limit, so memory is bounded by the limit and the read size, never by a line.
    """
    pieces: list[bytes] = []  # the current line so far, while within the limit
    held = 0  # the current line's length so far
    cut: bytes | None = None  # the current line's first bytes, once it is over the limit

    def grow(piece: bytes) -> None:
        nonlocal held, cut
        held += len(piece)
        if cut is None and held > max_line_bytes:
            cut = _prefix(b"".join([*pieces, piece]))
            pieces.clear()
        elif cut is None and piece:
            pieces.append(piece)

    def finish() -> tuple[bytes, int | None]:
        """Return the current line, and its length if it is over the limit; the next line starts empty."""
        nonlocal held, cut
        line, over = (cut, held) if cut is not None else (b"".join(pieces), None)
        pieces.clear()
        held, cut = 0, None
        return line, over

    while block := handle.read(_READ_BYTES):
        parts = block.split(b"\n")
        grow(parts[0])
        if len(parts) == 1:
            continue
        # parts[0] ends the current line, parts[-1] starts the next; those between are whole lines.
        first_size = held + 1
        line, over = finish()
        middle = parts[1:-1]
        lines = [line, *middle]
        # The lengths of the lines between newlines, each with its newline: the parts' lengths,
        # rather than a scan of the read for its newlines (docs/performance.md).
        sizes = np.fromiter(map(len, parts[:-1]), dtype=np.int64, count=len(parts) - 1) + 1
        sizes[0] = first_size
        long = {} if over is None else {0: over}
        if sizes[1:].max(initial=0) - 1 > max_line_bytes:  # rare: a line over the limit within one read
            for i in np.flatnonzero(sizes[1:] - 1 > max_line_bytes) + 1:
                long[int(i)], lines[i] = len(lines[i]), _prefix(lines[i])
        grow(parts[-1])
        yield lines, sizes, long
    if held:  # a last line without a newline
        size = held
        line, over = finish()
        yield [line], np.array([size], dtype=np.int64), {} if over is None else {0: over}


def chunks(path: Path, chunk_bytes: int, max_line_bytes: int) -> Iterator[Chunk]:
    """Yield the file's lines in chunks, read lazily, in memory bounded by ``chunk_bytes`` and ``max_line_bytes``.

    A line counts its bytes plus :data:`LINE_OVERHEAD` (what its row costs whatever its length),
    and a chunk ends with the line that takes it past ``chunk_bytes``, so that a chunk of tiny
    or blank lines holds no more rows than memory allows. A line longer than
    ``max_line_bytes`` is never held whole (:func:`_split`). The position is in the file as
    stored: for ``.gz``, in the compressed stream, whose read-ahead may end the last chunk
    short of the file's end; a last chunk without lines then reports the end.
    """
    first = number = 1  # the numbers of the chunk's first line and of the next read's first line
    lines: list[bytes] = []
    long: dict[int, int] = {}
    cost = offset = position = 0  # the chunk's cost so far; the bytes of the lines read so far
    try:
        with (
            path.open("rb") as raw,
            gzip.GzipFile(fileobj=raw, mode="rb") if path.suffix == ".gz" else contextlib.nullcontext(raw) as handle,
        ):
            packed = handle is not raw
            for read, sizes, over in _split(handle, max_line_bytes):
                long |= {number + i: size for i, size in over.items()}
                costs = np.cumsum(sizes + LINE_OVERHEAD)
                ends = np.cumsum(sizes) + offset
                start = 0
                while (end := int(np.searchsorted(costs, chunk_bytes - cost, side="right"))) < len(read):
                    lines.extend(read[start : end + 1])
                    position = raw.tell() if packed else int(ends[end])
                    after = first + len(lines)
                    yield Chunk(first, lines, {n: size for n, size in long.items() if n < after}, position)
                    first, long = after, {n: size for n, size in long.items() if n >= after}
                    lines, cost, start = [], -int(costs[end]), end + 1
                lines.extend(read[start:])
                cost += int(costs[-1])
                number += len(read)
                offset = int(ends[-1])
            if lines:
                position = raw.tell() if packed else offset
                yield Chunk(first, lines, long, position)
            if raw.tell() != position:
                yield Chunk(first + len(lines), [], {}, raw.tell())
    except (OSError, EOFError, zlib.error) as exc:
        # EOFError and zlib.error: a truncated or corrupt .gz file.
        msg = f"{path}: cannot be read ({exc})"
        raise IngestError(msg) from exc


PROBLEMS = {"line": pl.Int64, "error": pl.String}


def _too_long(size: int, max_line_bytes: int) -> str:
    return f"line too long: {size:,} bytes, over the limit of {max_line_bytes:,}"


def chunk_lines(chunk: Chunk, max_line_bytes: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Return the chunk's lines, and ``line, error`` of the lines that cannot be read.

    Every line as ``line, text`` (without its terminator); the errors of lines over the limit (their
    text cut, see :func:`_split`), then of lines that are not UTF-8.
    """
    first, lines = chunk.first, chunk.lines
    numbers = pl.int_range(first, first + len(lines), dtype=pl.Int64, eager=True).alias("line")
    invalid = [(line, _too_long(size, max_line_bytes)) for line, size in chunk.long.items()]
    try:
        text = pl.Series("text", lines, dtype=pl.Binary).cast(pl.String)
    except pl.exceptions.ComputeError:
        # Error path only: the cast fails for the whole chunk, so find the offending lines one by one.
        texts = []
        for i, line in enumerate(lines):
            try:
                texts.append(line.decode("utf-8"))
            except UnicodeDecodeError as exc:
                invalid.append((first + i, f"not valid UTF-8 text ({exc.reason} at byte {exc.start})"))
                texts.append(line.decode("utf-8", "replace"))
        text = pl.Series("text", texts, dtype=pl.String)
    frame = pl.DataFrame([numbers, text]).with_columns(pl.col("text").str.strip_suffix("\r"))
    # A line over the limit, cut, may also not be UTF-8: its first problem is its length.
    problems = pl.DataFrame(invalid, schema=PROBLEMS, orient="row").unique("line", keep="first", maintain_order=True)
    return frame, problems
