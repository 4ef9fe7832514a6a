"""Flatten canonical JSONL run records (``run_record.schema.json``) into a Dataset folder.

The record's nesting, and the Polars dtype it is decoded with, are derived from
:mod:`mas_eval.data.schema`; :mod:`mas_eval.ingest.export` writes the same records back.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import itertools
import json
import math
import shutil
import zlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

import numpy as np
import polars as pl

from mas_eval.constraints import Interval, check_parameter
from mas_eval.data.schema import RUN_KEY, TABLES
from mas_eval.errors import IngestError, MasEvalError, option
from mas_eval.ingest.misspelt import misspelt_fields
from mas_eval.storage.dataset import MANIFEST, Dataset, write_dataset_manifest
from mas_eval.storage.inputs import describe_path, parquet_files, scan_parquet
from mas_eval.storage.manifests import write_manifest
from mas_eval.storage.outputs import atomic_directory, atomic_outputs
from mas_eval.storage.sharding import (
    SHARD_COLUMN,
    check_shards,
    shard_folder,
    shard_of,
    sharded,
    write_sorted_shards,
)

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "BYTES_CEILING",
    "CHUNK_BYTES",
    "LINE_OVERHEAD",
    "MAX_LINE_BYTES",
    "RECORD_LISTS",
    "USAGE",
    "USAGE_FIELD",
    "IngestResult",
    "RecordList",
    "arrow_record",
    "ingest_jsonl",
    "record_dtype",
]

#: ``runs`` columns that a record holds in its ``usage`` object rather than at the top level.
USAGE_FIELD = "usage"
USAGE = (
    "iterations",
    "api_calls",
    "seconds",
    "tokens",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "tool_calls",
    "tool_errors",
)

#: Default bytes of input decoded at a time by :func:`ingest_jsonl` (16 MiB). A chunk costs 12 to
#: 30 times its size in memory at its peak (the most for small records with much ground truth):
#: 0.2 to 0.5 GB on top of the imports at 16 MiB, 0.35 to 0.6 GB at 32 MiB, 0.65 to 1.1 GB at
#: 64 MiB, whatever the input's size; larger chunks were not clearly faster (benchmarks/bench_ingest.py).
CHUNK_BYTES = 16 * 2**20
#: Bytes a line counts in a chunk on top of its length: what its row costs, however short the
#: line, so that blank or tiny lines fill a chunk too (see ``_chunks``). With 64, 40 MB of blank
#: lines peak at 0.21 GB RSS and 40 MB of ``{}`` lines (all set aside) at 0.43 GB, against 1.1 and
#: 4.0 GB when a line counted its bytes alone; records of 2 kB make 3 % fewer lines a chunk.
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


@dataclass(frozen=True)
class RecordList:
    """A list in the record whose items become the rows of one table.

    ``field`` is the list's name in the item of ``parent`` (``"runs"`` is the record itself);
    the table's ``inherit`` columns are copied from that parent item (they are the parent
    table's key, or ``case_id`` for ground truth); a ``scalar`` list holds plain strings that
    fill the table's single own column.
    """

    table: str
    parent: str
    field: str
    inherit: tuple[str, ...]
    scalar: bool = False

    @property
    def own(self) -> list[str]:
        """The table's columns read from each item."""
        return [c for c in TABLES[self.table].names if c not in self.inherit]


#: The record's lists, parents before children (run_record.schema.json).
RECORD_LISTS = (
    RecordList("agents", "runs", "agents", ("run_id",)),
    RecordList("beliefs", "agents", "beliefs", ("run_id", "agent_id")),
    RecordList("criteria", "runs", "criteria", ("run_id",)),
    RecordList("alt_scores", "runs", "alternatives", ("run_id",)),
    RecordList("scores", "alt_scores", "scores", ("run_id", "alternative")),
    RecordList("ddx", "runs", "ddx", ("run_id",)),
    RecordList("ground_truth", "runs", "ground_truth", ("case_id",), scalar=True),
    RecordList("messages", "runs", "messages", ("run_id",)),
    RecordList("interventions", "runs", "interventions", ("run_id",), scalar=True),
    RecordList("answers", "runs", "answers", ("run_id",)),
    RecordList("usage", "runs", "agent_usage", ("run_id",)),
    RecordList("outcomes", "runs", "outcomes", ("run_id",)),
    RecordList("tool_calls", "runs", "tools", ("run_id",)),
    RecordList("annotations", "runs", "annotations", ("run_id",)),
)
_BY_TABLE = {lst.table: lst for lst in RECORD_LISTS}
_RUNS_TOP = [c for c in TABLES["runs"].names if c not in USAGE]


def _children(table: str) -> list[RecordList]:
    return [lst for lst in RECORD_LISTS if lst.parent == table]


def _leaf(dtype: pl.DataType, permissive: bool) -> pl.DataType:
    # Numbers are decoded as text in the permissive dtype, so that a wrong value ("high", 1.5 for
    # an integer, true) becomes a null after a non-strict cast instead of failing the whole chunk
    # (strings) or being silently coerced by the decoder (1.5 -> 1, true -> 1).
    return pl.String() if permissive and dtype.is_numeric() else dtype


def _item_dtype(table: str, permissive: bool) -> pl.DataType:
    spec = TABLES[table]
    if table == "runs":
        own = _RUNS_TOP
    else:
        lst = _BY_TABLE[table]
        own = lst.own
        if lst.scalar:
            return _leaf(spec.column_map[own[0]].dtype, permissive)
    fields = {c: _leaf(spec.column_map[c].dtype, permissive) for c in own}
    if table == "runs":
        fields[USAGE_FIELD] = pl.Struct({c: _leaf(spec.column_map[c].dtype, permissive) for c in USAGE})
    for child in _children(table):
        fields[child.field] = pl.List(_item_dtype(child.table, permissive))
    return pl.Struct(fields)


@functools.cache
def record_dtype(*, permissive: bool = False) -> pl.Struct:
    """The Polars dtype of one canonical run record, derived from :mod:`mas_eval.data.schema`.

    Parameters
    ----------
    permissive
        Decode every number as a string (what :func:`ingest_jsonl` does, so that values of the
        wrong type can be found row by row); the default gives the schema's dtypes.

    Examples
    --------
    >>> record_dtype().to_schema()["usage"]  # doctest: +NORMALIZE_WHITESPACE
    Struct({'iterations': Int64, 'api_calls': Int64, 'seconds': Float64, 'tokens': Int64,
            'input_tokens': Int64, 'output_tokens': Int64, 'cost_usd': Float64,
            'tool_calls': Int64, 'tool_errors': Int64})
    """
    return cast(pl.Struct, _item_dtype("runs", permissive))


def _path(table: str) -> str:
    """JSON path of a table's items in the record, e.g. ``agents[].beliefs[]``."""
    if table == "runs":
        return ""
    lst = _BY_TABLE[table]
    parent = _path(lst.parent)
    return f"{parent}.{lst.field}[]" if parent else f"{lst.field}[]"


# -- results ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class IngestResult:
    """What :func:`ingest_jsonl` wrote.

    Attributes
    ----------
    out
        The Dataset folder.
    runs
        Runs ingested (rows of ``runs``).
    rejected
        Malformed lines set aside (only with ``skip_invalid=True``; otherwise 0).
    rejects
        The rejects file (written whenever ``skip_invalid=True``, possibly empty), else None.
    """

    out: Path
    runs: int
    rejected: int
    rejects: Path | None


# -- reading ----------------------------------------------------------------------------------


#: Bytes read from a file at a time while it is split into lines; a line may span many reads.
_READ_BYTES = 2**20
#: First bytes of a line over ``max_line_bytes`` that are kept (for the rejects file); the rest is never held.
_PREFIX_BYTES = 1000


@dataclass(frozen=True)
class _Chunk:
    """Consecutive lines of a file, decoded together.

    ``first`` is the 1-based number of the first line; ``lines`` the lines without their ``\\n``,
    a line over the limit cut to its first bytes; ``long`` the number and length (in bytes) of
    each line over the limit; ``position`` the bytes of the file read so far (see :func:`_chunks`).
    """

    first: int
    lines: list[bytes]
    long: dict[int, int]
    position: int


def _prefix(data: bytes) -> bytes:
    """The first ``_PREFIX_BYTES`` of ``data``, not cutting a UTF-8 character in two."""
    if len(data) <= _PREFIX_BYTES:
        return data
    cut = _PREFIX_BYTES
    while cut > 0 and data[cut] & 0xC0 == 0x80:  # a continuation byte: the character started before
        cut -= 1
    return data[:cut]


def _split(handle: IO[bytes], max_line_bytes: int) -> Iterator[tuple[list[bytes], np.ndarray, dict[int, int]]]:
    """The lines of ``handle``, a read at a time: ``(lines, sizes, long)``.

    ``lines`` are the whole lines that the read completed, without their ``\\n`` (the file's
    last line may lack one); ``sizes`` their lengths in the file, ``\\n`` included; ``long``
    maps the position in ``lines`` of each line longer than ``max_line_bytes`` (``\\n``
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
        """The current line, and its length if it is over the limit; the next line starts empty."""
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
        # The lengths of the lines between newlines, each with its newline: the parts' lengths
        # (a scan of the read for its newlines took 2.5 ms a MiB, this 0.1).
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


def _chunks(path: Path, chunk_bytes: int, max_line_bytes: int) -> Iterator[_Chunk]:
    """The file's lines in chunks, read lazily, in memory bounded by ``chunk_bytes`` and ``max_line_bytes``.

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
                    yield _Chunk(first, lines, {n: size for n, size in long.items() if n < after}, position)
                    first, long = after, {n: size for n, size in long.items() if n >= after}
                    lines, cost, start = [], -int(costs[end]), end + 1
                lines.extend(read[start:])
                cost += int(costs[-1])
                number += len(read)
                offset = int(ends[-1])
            if lines:
                position = raw.tell() if packed else offset
                yield _Chunk(first, lines, long, position)
            if raw.tell() != position:
                yield _Chunk(first + len(lines), [], {}, raw.tell())
    except (OSError, EOFError, zlib.error) as exc:
        # EOFError and zlib.error: a truncated or corrupt .gz file.
        msg = f"{path}: cannot be read ({exc})"
        raise IngestError(msg) from exc


_PROBLEMS = {"line": pl.Int64, "error": pl.String}


def _too_long(size: int, max_line_bytes: int) -> str:
    return f"line too long: {size:,} bytes, over the limit of {max_line_bytes:,}"


def _lines(chunk: _Chunk, max_line_bytes: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Every line as ``line, text`` (without its terminator); ``line, error`` of lines over the
    limit (their text cut, see :func:`_split`), then of lines that are not UTF-8."""
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
    problems = pl.DataFrame(invalid, schema=_PROBLEMS, orient="row").unique("line", keep="first", maintain_order=True)
    return frame, problems


# -- decoding and checks ----------------------------------------------------------------------


def json_type(value: Any) -> str:
    """How a message names a JSON value's type: ``"null"``, ``"a number"``, ``"an array"``..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _expected(dtype: pl.DataType) -> str:
    if isinstance(dtype, pl.Struct):
        return "an object"
    if isinstance(dtype, pl.List):
        return "an array"
    if dtype.is_integer():
        return "an integer"
    return "a number" if dtype.is_numeric() else "a string"


def _shape_problem(value: Any, dtype: pl.DataType, where: str) -> str | None:
    """The first place where ``value`` does not have the shape of ``dtype`` (a typed record).

    Mirrors what the decoder rejects with the permissive dtype, no more: a container of the
    wrong kind, or a number out of range. (Scalars of the wrong type are found by the
    vectorised checks, and a lone scalar for an array of scalars is read as a one-item array.)
    """
    if value is None:
        return None
    if isinstance(dtype, pl.Struct):
        if not isinstance(value, dict):
            return f"field '{where}': expected an object, got {json_type(value)}"
        for fld in dtype.fields:
            if fld.name in value:
                inner = f"{where}.{fld.name}" if where else fld.name
                problem = _shape_problem(value[fld.name], fld.dtype, inner)
                if problem:
                    return problem
        return None
    if isinstance(dtype, pl.List):
        if not isinstance(value, list):
            if not isinstance(value, dict) and not isinstance(dtype.inner, pl.Struct | pl.List):
                return _shape_problem(value, dtype.inner, where)
            return f"field '{where}': expected an array, got {json_type(value)}"
        for i, item in enumerate(value):
            problem = _shape_problem(item, dtype.inner, f"{where}[{i}]")
            if problem:
                return problem
        return None
    if isinstance(value, dict | list):
        return f"field '{where}': expected {_expected(dtype)}, got {json_type(value)}"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return f"field '{where}': number out of range"
    return None


def _reject_constant(name: str) -> Any:
    msg = f"{name} is not valid JSON"
    raise ValueError(msg)


def _diagnose(text: str) -> str | None:
    """Why one line cannot be decoded, in the record's terms; None if no reason is found (error path only)."""
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:
        return f"not valid JSON ({exc})"
    except RecursionError:
        return "cannot be decoded: nested too deeply"
    if not isinstance(value, dict):
        return f"expected a JSON object, got {json_type(value)}"
    return _shape_problem(value, record_dtype(), "")


#: Bytes of text given to the JSON decoder at a time. Its working memory is several times its
#: input (a 64 MiB chunk decoded at once peaks 430 MB higher), so a chunk is decoded in slices.
_DECODE_BYTES = 2**20


def _json_decode(texts: pl.Series, dtype: pl.DataType) -> pl.Series:
    """``texts.str.json_decode(dtype)``, decoded in slices of whole lines of about ``_DECODE_BYTES``."""
    if texts.len() == 0:
        return texts.str.json_decode(dtype)
    ends = texts.str.len_bytes().cast(pl.Int64).cum_sum()
    marks = pl.int_range(_DECODE_BYTES, ends[-1], _DECODE_BYTES, dtype=pl.Int64, eager=True)
    bounds = sorted({0, *ends.search_sorted(marks, side="right").to_list(), texts.len()})
    parts = [texts.slice(lo, hi - lo).str.json_decode(dtype) for lo, hi in itertools.pairwise(bounds)]
    # Rechunked: on a struct column of several chunks, Polars 2.1 can panic ("i < self.len()") in _checks.
    return pl.concat(parts, rechunk=True)


def _decode(texts: pl.Series, dtype: pl.DataType) -> str | None:
    """None if ``texts`` decode, else the decoder's error."""
    try:
        _json_decode(texts, dtype)
    except pl.exceptions.ComputeError as exc:
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return None


#: Below this many lines, a failing range of a chunk is diagnosed line by line.
_BLOCK = 64


def _block_problems(texts: pl.Series, lo: int, hi: int, dtype: pl.DataType) -> list[tuple[int, str]]:
    """``(position, problem)`` of the undecodable lines among ``texts[lo:hi]``."""
    found, clean = [], []
    for i, text in enumerate(texts.slice(lo, hi - lo).to_list(), start=lo):
        problem = _diagnose(text)
        if problem is None:
            clean.append(i)
        else:
            found.append((i, problem))
    # The decoder may refuse what Python's json accepts (e.g. its depth limit): confirm the rest.
    if clean and _decode(texts.gather(clean), dtype) is not None:
        for i in clean:
            error = _decode(texts.slice(i, 1), dtype)
            if error is not None:
                found.append((i, f"cannot be decoded ({error})"))
    return sorted(found)


def _undecodable(frame: pl.DataFrame, dtype: pl.DataType, *, first_only: bool) -> pl.DataFrame:
    """``line, error`` of the lines the decoder rejects, given that the whole chunk failed.

    Error path only. The decoder fails a whole chunk for one bad line and does not say which,
    so the chunk is bisected: a half that decodes is done, a failing half is split again, and
    a failing range of at most ``_BLOCK`` lines is diagnosed line by line. When the left half
    decodes the right one must fail, so a single bad line costs about one decode of the
    chunk. With ``first_only`` only the leftmost failing block is searched.
    """
    texts = frame["text"]
    found: list[tuple[int, str]] = []
    pending = [(0, len(texts))]  # ranges that fail; the leftmost is last
    while pending and not (first_only and found):
        lo, hi = pending.pop()
        if hi - lo <= _BLOCK:
            found.extend(_block_problems(texts, lo, hi, dtype))
            continue
        mid = (lo + hi) // 2
        if _decode(texts.slice(lo, mid - lo), dtype) is None:
            pending.append((mid, hi))
            continue
        if not first_only and _decode(texts.slice(mid, hi - mid), dtype) is not None:
            pending.append((mid, hi))
        pending.append((lo, mid))
    rows = [(frame["line"][i], problem) for i, problem in found]
    return pl.DataFrame(rows, schema=_PROBLEMS, orient="row").sort("line")


def _checks(table: str, frame: pl.DataFrame) -> list[pl.DataFrame]:
    """``line, error`` of the rows of one level of decoded items (numbers still text) that break the record.

    Vectorised: a number field is invalid when its text does not cast to the schema's dtype,
    or casts to NaN or infinity (which JSON cannot hold, so they came from strings).
    """
    spec = TABLES[table]
    prefix = _path(table)
    scalar = table != "runs" and _BY_TABLE[table].scalar
    own = _RUNS_TOP + list(USAGE) if table == "runs" else _BY_TABLE[table].own
    problems = []
    for name in own:
        column = spec.column_map[name]
        if scalar:
            where = prefix
        elif name in USAGE:
            where = f"{USAGE_FIELD}.{name}"
        else:
            where = f"{prefix}.{name}" if prefix else name
        raw = pl.col(name)
        checks = []
        if column.required or name in spec.key:
            checks.append((raw.is_null(), pl.lit(f"required field '{where}' is missing or null")))
        if column.dtype.is_numeric():
            parsed = raw.cast(column.dtype, strict=False)
            wrong = parsed.is_null()
            if column.dtype.is_float():
                wrong = wrong | parsed.is_infinite() | parsed.is_nan()
            kind = _expected(column.dtype) if column.dtype.is_integer() else "a finite number"
            error = pl.format(f"field '{where}': expected {kind}, got '{{}}'", raw.str.slice(0, 40))
            checks.append((raw.is_not_null() & wrong, error))
        problems.extend(frame.filter(bad).select("line", error.alias("error")) for bad, error in checks)
    return problems


def _flatten(decoded: pl.DataFrame) -> tuple[dict[str, pl.DataFrame], pl.DataFrame]:
    """The tables of one chunk (with ``line``; numbers still text) and ``line, error`` of its problems.

    Problems are listed record first, then the lists in order, so a line's first problem is
    the outermost one.
    """
    not_object = pl.lit("expected a JSON object, got null").alias("error")
    problems = [decoded.filter(pl.col("rec").is_null()).select("line", not_object)]
    top = decoded.select("line", pl.col("rec").struct.unnest())
    levels = {"runs": top.with_columns(pl.col(USAGE_FIELD).struct.field(*USAGE)).drop(USAGE_FIELD)}
    problems.extend(_checks("runs", levels["runs"]))
    for lst in RECORD_LISTS:
        parent = levels[lst.parent].select("line", *lst.inherit, lst.field)
        items = parent.explode(lst.field, keep_nulls=False)
        where = _path(lst.table).removesuffix("[]")
        null_item = f"field '{where}': an item is null, expected {'a string' if lst.scalar else 'an object'}"
        problems.append(items.filter(pl.col(lst.field).is_null()).select("line", error=pl.lit(null_item)))
        items = items.filter(pl.col(lst.field).is_not_null())
        levels[lst.table] = items.rename({lst.field: lst.own[0]}) if lst.scalar else items.unnest(lst.field)
        problems.extend(_checks(lst.table, levels[lst.table]))
    return levels, pl.concat(problems)


def _tables(levels: dict[str, pl.DataFrame], bad_lines: pl.Series) -> dict[str, pl.DataFrame]:
    tables = {}
    for name, frame in levels.items():
        spec = TABLES[name]
        table = frame.filter(~pl.col("line").is_in(bad_lines.implode())).select(
            pl.col(c.name).cast(c.dtype) for c in spec.columns
        )
        tables[name] = table.unique() if name == "ground_truth" else table
    return tables


# -- the fast path: a whole chunk read by Arrow's JSON reader -----------------------------------


def _arrow_type(dtype: pl.DataType) -> pa.DataType:
    """The Arrow type that Arrow's JSON reader reads a value of Polars ``dtype`` as (its list, not large list)."""
    import pyarrow as pa  # here, not at the top: ``mas-eval`` starts without loading Arrow

    if isinstance(dtype, pl.Struct):
        return pa.struct([pa.field(fld.name, _arrow_type(fld.dtype)) for fld in dtype.fields])
    if isinstance(dtype, pl.List):
        return pa.list_(_arrow_type(dtype.inner))
    # The record's scalar dtypes (data/schema.py): a new one fails here, not silently.
    return {pl.String: pa.string(), pl.Int64: pa.int64(), pl.Float64: pa.float64(), pl.Boolean: pa.bool_()}[
        dtype.base_type()
    ]


@functools.cache
def arrow_record() -> pa.Schema:
    """The record as Arrow's JSON reader reads it: the schema's own dtypes (numbers typed, not text).

    What :func:`ingest_jsonl` reads a clean chunk with; ``benchmarks/bench_ingest.py`` times the
    same reader alone on the same file, the floor of an ingest.
    """
    import pyarrow as pa

    return pa.schema([pa.field(fld.name, _arrow_type(fld.dtype)) for fld in record_dtype().fields])


#: Bytes of a chunk that Arrow's reader parses as one block (in parallel with the others); a block
#: is made twice the longest line if that is longer. Of 1, 4 and 16 MiB, 1 MiB was the cheapest.
_ARROW_BLOCK_BYTES = 2**20
#: The largest finite double. The JSON decoder refuses a literal above it that rounds down to it
#: (``1.797693134862315807e308``), which Arrow's reader accepts; such a chunk takes the general path.
_DOUBLE_MAX = float(np.finfo(np.float64).max)


def _out_of_reach(column: str) -> pl.Expr:
    """Whether a decoded float column holds a value the general path would read otherwise or refuse.

    NaN and infinity (Arrow reads ``NaN``, ``Infinity`` and an overflow), the largest double
    (see :data:`_DOUBLE_MAX`), and negative zero (the decoder reads ``-0`` as ``+0.0``).
    """
    value = pl.col(column)
    return (~(value.abs() < _DOUBLE_MAX) | ((value == 0) & (1 / value < 0))).any()


def _longest_object(data: bytes) -> int | None:
    """The length of the longest line of ``data`` (lines joined by ``\\n``) if every line starts with ``{``
    and ends with ``}``, else None.

    With Arrow reading one row per line (checked after), this makes each line exactly one JSON
    object: a value cannot run on to the next line, since after a ``}`` only ``,``, ``}`` or
    ``]`` may follow inside a value and a JSON string holds no raw newline. A blank line, a
    byte-order mark or leading space fails it (the general path strips them). A line may end
    with ``\\r`` (CRLF files): JSON's whitespace to both readers.
    """
    codes = np.frombuffer(data, dtype=np.uint8)
    breaks = np.flatnonzero(codes == ord("\n"))
    starts = np.concatenate(([0], breaks + 1))
    ends = np.concatenate((breaks, [len(codes)]))
    lengths = ends - starts
    if not (lengths >= 2).all():  # an empty line, or one too short for "{}"
        return None
    last = codes[ends - 1]
    crlf = last == ord("\r")
    closing = np.where(crlf, codes[ends - 2], last)
    return int(lengths.max()) if ((codes[starts] == ord("{")) & (closing == ord("}"))).all() else None


def _arrow_tables(chunk: _Chunk) -> dict[str, pl.DataFrame] | None:
    """The chunk's tables read in one call of Arrow's JSON reader, or None where only the general path can tell.

    Arrow reads the chunk with the schema's own dtypes and refuses any unknown field, so it
    refuses what the general path must look at line by line: invalid JSON, a value of another
    type (which includes the leniencies: ``"0.5"`` for a number, ``17`` for a string, a lone
    string for an array), a field that may be a misspelling; an unknown field is never skipped
    (Arrow would skip ``NaN`` or a nesting deep enough to overflow its stack there). What it
    accepts is read as the general path reads it, unless a check here fails: lines that are
    not one object each (:func:`_longest_object`), invalid UTF-8 (which Arrow does not check),
    a required field or a list item null, a float NaN, infinite, the largest double or
    negative zero (:func:`_out_of_reach`).
    The lists are flattened with Arrow's list kernels (no copy of the items), so the tables
    cost little beyond the read. A record with a field the schema does not name (a user's own
    metadata) takes the general path, which reads it at a fifth of the speed.

    Returns
    -------
    dict or None
        Every table (possibly empty), rows in the order of the general path; None sends the
        chunk to the general path, which finds and words its problems.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj

    if chunk.long:
        return None
    data = b"\n".join(chunk.lines)
    longest = _longest_object(data)
    if longest is None:
        return None
    # Arrow's reader takes a string's bytes as they are, so UTF-8 is checked here (ASCII, the
    # common case, without making a copy).
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    options = pj.ParseOptions(explicit_schema=arrow_record(), unexpected_field_behavior="error")
    # Blocks are parsed in parallel; a line longer than a block is an error to Arrow.
    reading = pj.ReadOptions(use_threads=True, block_size=max(_ARROW_BLOCK_BYTES, 2 * longest))
    try:
        table = pj.read_json(pa.BufferReader(data), read_options=reading, parse_options=options)
    except (pa.ArrowException, ValueError):  # ValueError: Arrow's message about invalid UTF-8 cannot be decoded
        return None
    del data
    if table.num_rows != len(chunk.lines):  # two objects on a line
        return None
    record = table.to_struct_array().combine_chunks()
    runs = dict(zip(record.type.names, record.flatten(), strict=True))
    usage = cast(pa.StructArray, runs.pop(USAGE_FIELD))
    runs |= dict(zip(usage.type.names, usage.flatten(), strict=True))
    levels = {"runs": runs}
    # Parents before children (RECORD_LISTS' order): a parent's items are checked for nulls before they are flattened.
    for lst in RECORD_LISTS:
        parent = levels[lst.parent]
        items = pc.list_flatten(parent[lst.field])
        if items.null_count:
            return None
        rows = pc.list_parent_indices(parent[lst.field])
        level = {name: parent[name].take(rows) for name in lst.inherit}
        if lst.scalar:
            level[lst.own[0]] = items
        else:
            level |= dict(zip(items.type.names, cast(pa.StructArray, items).flatten(), strict=True))
        levels[lst.table] = level
    tables = {}
    for name, level in levels.items():
        spec = TABLES[name]
        table = cast(pl.DataFrame, pl.from_arrow(pa.table({c.name: level[c.name] for c in spec.columns})))
        if table.schema != spec.polars_schema:  # not expected: Arrow's types are made from the schema's
            table = table.cast(dict(spec.polars_schema))
        checks = [pl.col(c).is_null().any() for c in spec.required]
        checks += [_out_of_reach(c.name) for c in spec.columns if c.dtype == pl.Float64]
        if table.height and table.select(pl.any_horizontal(checks)).item():
            return None
        tables[name] = table.unique() if name == "ground_truth" else table
    return tables


# -- the ingest -------------------------------------------------------------------------------


def _check_inputs(paths: Sequence[str | Path] | str | Path, chunk_bytes: int, max_line_bytes: int) -> list[Path]:
    files = [Path(paths)] if isinstance(paths, str | Path) else [Path(p) for p in paths]
    if not files:
        msg = "no input files given; pass one or more JSONL files of run records"
        raise IngestError(msg)
    for file in files:
        if not file.is_file():
            if not file.exists():
                msg = f"{file}: no such file; pass JSONL files of run records (one JSON object per line)"
                raise IngestError(msg)
            what = describe_path(file)
            fix = "it is ingested already" if what == "is a Dataset folder" else "pass JSONL files of run records"
            msg = f"{file} {what}, not a JSONL file; {fix} (ingest reads files of one JSON object per line)"
            raise IngestError(msg)
    for name, value in [("chunk_bytes", chunk_bytes), ("max_line_bytes", max_line_bytes)]:
        check_parameter(name, value, [Interval(int, 0, BYTES_CEILING, closed="right")], where="ingest_jsonl")
    return files


@contextlib.contextmanager
def _staged(
    target: Path, rejects: Path | None, *, overwrite: bool, inputs: list[Path]
) -> Iterator[tuple[Path, IO[bytes] | None]]:
    """The staging folder of the Dataset ``target`` and a handle on the staged ``rejects`` file:
    both replace their paths together when the ingest succeeds (one output of two parts, checked
    before either is written), or neither does."""
    if rejects is None:
        with atomic_directory(target, overwrite=overwrite, inputs=inputs) as staging:
            yield staging, None
        return
    outputs = atomic_outputs((target, "folder"), (rejects, "file"), overwrite=overwrite, inputs=inputs)
    with outputs as (staging, temporary), temporary.open("wb") as handle:
        yield staging, handle


def ingest_jsonl(
    paths: Sequence[str | Path],
    out: str | Path,
    *,
    overwrite: bool = False,
    skip_invalid: bool = False,
    rejects: str | Path | None = None,
    chunk_bytes: int = CHUNK_BYTES,
    progress: Callable[[int], None] | None = None,
    shards: int | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> IngestResult:
    """Flatten JSONL run records into a Dataset folder at ``out``.

    Parameters
    ----------
    paths
        JSONL files (``.jsonl.gz`` is read too), one canonical run record per line
        (``mas_eval/ingest/run_record.schema.json``), ingested in order; a single path is accepted
        too. Blank lines are skipped.
    out
        The Dataset folder to write: ``<out>/<table>/part-NNNNN.parquet``.
    overwrite
        Replace an existing ``out`` (and rejects file).
    skip_invalid
        Set malformed lines aside instead of failing: they are written verbatim to
        ``rejects`` and the rest is ingested.
    rejects
        Where the rejected lines go (with ``skip_invalid=True``): one JSON object per line,
        ``{"file", "line", "error", "text"}``. Default: ``<out>.rejects.jsonl`` beside ``out``.
    chunk_bytes
        Bytes of input decoded at a time: a chunk is whole lines, ending with the line that
        takes it past ``chunk_bytes`` (a longer line is a chunk of its own), each line counting
        its length plus :data:`LINE_OVERHEAD` bytes (so blank or tiny lines fill a chunk too).
        Memory is bounded by one chunk, 12 to 30 times ``chunk_bytes`` (see Notes); the default
        is 16 MiB.
    progress
        Called after each chunk with the number of bytes of the input files read so far (all
        files together; for a ``.gz`` file, compressed bytes, as stored), so its last call
        gives the sum of the files' sizes: the total of a progress bar.
    shards
        ``None`` or 1: one folder of part files per table. ``N`` (2 to 10,000): the sharded
        layout of :meth:`Dataset.write <mas_eval.storage.dataset.Dataset.write>` (every run's rows in
        shard ``hash(run_id) % N`` of every table, sorted by key): each chunk's rows are
        split by shard as they are read and staged in their shard about every 32 MiB of rows,
        and each shard is sorted (if its rows are not in key order already) once all are
        ingested and checked, one shard in memory at a time.
    max_line_bytes
        Longest line read, in bytes without its newline (default :data:`MAX_LINE_BYTES`,
        16 MiB). A longer line is malformed (``line too long``); it is never held whole, so a
        file without newlines costs no more memory than a chunk. With ``skip_invalid`` it goes
        to the rejects file, its ``text`` cut to the first 1,000 bytes.

    Returns
    -------
    IngestResult
        The folder, the number of runs ingested and of lines rejected, and the rejects file.

    Raises
    ------
    InvalidParameterError
        ``chunk_bytes`` or ``max_line_bytes`` is not an integer from 1 to :data:`BYTES_CEILING`
        (1 GiB), or ``shards`` not an integer from 1 to 10,000.
    IngestError
        An input file is missing or unreadable, or has a malformed line (without
        ``skip_invalid``): the message names the file, the 1-based line number and the problem.
        Also when no run record is found at all.
    MasEvalError
        ``out`` exists and ``overwrite`` is false, or the records break a rule of the Dataset
        (e.g. a repeated ``run_id``, a negative mass): :meth:`Dataset.validate`'s error.
        Nothing is written.

    Notes
    -----
    Mapping: the record's top-level fields and its ``usage`` object give ``runs``;
    ``agents[]`` → ``agents`` and ``agents[].beliefs[]`` → ``beliefs``; ``criteria[]`` →
    ``criteria``; ``alternatives[]`` → ``alt_scores`` and ``alternatives[].scores[]`` →
    ``scores``; ``ddx[]``, ``messages[]``, ``answers[]`` → their tables; ``interventions[]``
    (strings) → ``interventions``; ``ground_truth[]`` (strings) → ``ground_truth`` keyed by
    ``case_id``: the union over the case's runs, without duplicates. Every item of a list
    gives a row (an agent without beliefs is still an agent). Unknown fields are ignored,
    unless one resembles a field that its object lacks (``usage.tokns`` without
    ``usage.tokens``, :mod:`~mas_eval.ingest.misspelt`): that line is malformed, as the value
    would otherwise vanish. Tables with no rows in the whole input are not written.

    A line is malformed when it is longer than ``max_line_bytes``, not JSON, not an object,
    lacks a required field (run_id, system, case_id, or an item's key), has an item that is
    null, or has a field of the wrong type: a container (object, array) where another is expected, or a number field
    holding a value that is not a number (``"confidence": "high"``, ``true``, ``1.5`` for an
    integer). Leniencies of the decoder that are kept: a number written as a string
    (``"0.5"``) is read as the number, a number or boolean given for a string field is read
    as its text (``"case_id": 17`` → ``"17"``), and a lone string given for an array of
    strings is read as a one-item array.

    A chunk is read in one call of Arrow's JSON reader, with the schema's own dtypes and its
    lists flattened by Arrow's list kernels, when that reads it exactly as the general path
    would: every line one JSON object, UTF-8, no field the record does not name, no value of
    another type (so none of the leniencies above), no required field or item null, no float
    NaN, infinite or negative zero. Any other chunk takes the general path: decoded with
    ``str.json_decode`` (in slices of about 1 MiB) with every number read as text, flattened
    with ``explode``/``unnest``, type and required-field checks vectorised, misspelt fields
    looked for; only when the decoder rejects the chunk (invalid JSON or a container of the
    wrong kind) is it bisected to find the lines, and those lines alone are diagnosed one by
    one to word the error. Records with fields of a user's own (unknown to the record) are
    read by the general path, about five times slower.

    Each chunk is written (and validated, see below) on a thread of its own while the next is
    read. 200,000 simulated records (447 MB, ``mas-eval ingest``) took 24 CPU seconds, 34 with
    ``--shards 8``, against 36 and 53 when every chunk was decoded by the general path and the
    shards were made by rewriting the staged Dataset; on 2 cores shared with other work (load
    average 9 to 15), 54 s and 73 s of wall time against 86 s and 139 s. Without shards, Arrow's
    reader takes about two fifths of the CPU time, the per-chunk validation and the Parquet
    writes most of the rest; with them, sorting the shards and storing their codes a third.
    Staging a sharded table's rows every 32 MiB rather than every chunk (a file per table, shard
    and chunk) took the same 200,000 records with ``--shards 8`` from 22.7 s to 19.9 s of wall
    time (30.9 CPU seconds against 34.1; alternating fresh processes, 2 cores, nothing else running)
    for 431 MB peak RSS against 355.

    Memory is bounded by the chunk, not by the input: each chunk is decoded, checked,
    validated and written on its own (at most two chunks are held: one being written, one
    being read, and with shards the rows held until they are staged), so that an ingest with
    the default ``chunk_bytes`` peaks near 0.3 GB RSS (0.45 GB with shards)
    for 100,000 simulated records (223 MB) or 200,000 (447 MB) alike, and near 0.6 GB for
    small records with much ground truth (``benchmarks/bench_ingest.py``).
    The file is read 1 MiB at a time and split into lines without holding a line longer than
    ``max_line_bytes``: 40 MB of blank lines, or one 200 MB line without a newline, peak near
    0.2 GB and 0.1 GB RSS.
    The two steps that span chunks, deduplicating the ground truth and checking that no
    run_id repeats, work on hash buckets of about two million rows at a time.

    The Dataset is staged in a temporary folder and renamed into place only if everything
    succeeded. It is validated chunk by chunk with :meth:`Dataset.validate`: a run is one
    line, so all the rows keyed by a run come from one chunk, and across chunks only a
    repeated run_id can break a rule. When a chunk breaks one, or a run_id repeats, the
    staged Dataset is validated as a whole, so that the error counts and names the offending
    keys of the whole input.
    """
    count = check_shards(shards, where="ingest")
    files = _check_inputs(paths, chunk_bytes, max_line_bytes)
    target = Path(out)
    rejects_path = (
        (Path(rejects) if rejects is not None else target.parent / f"{target.name}.rejects.jsonl")
        if skip_invalid
        else None
    )
    permissive = record_dtype(permissive=True)
    counts = {"runs": 0, "rejected": 0, "chunks": 0}
    # Neither output may be, hold or lie inside an input, nor the rejects file inside the Dataset.
    with (
        _staged(target, rejects_path, overwrite=overwrite, inputs=files) as (staging, reject_handle),
        _ChunkWriter(staging, count) as writer,
    ):
        read_before = 0  # bytes of the files before this one
        for file in files:
            position = 0
            for chunk in _chunks(file, chunk_bytes, max_line_bytes):
                position = chunk.position
                if chunk.lines:
                    tables = _arrow_tables(chunk)
                    if tables is None:
                        tables = _chunk_tables(file, chunk, permissive, counts, reject_handle, max_line_bytes)
                    if tables:
                        counts["runs"] += tables["runs"].height
                        writer.put(tables, counts["chunks"])
                    counts["chunks"] += 1
                    del tables  # else they would live on while the next chunk is decoded
                del chunk
                if progress is not None:
                    progress(read_before + position)
            read_before += position
        # Every chunk written: what follows reads the staged files.
        chunks_valid = writer.finish()
        if counts["runs"] == 0:
            rejected = f" ({counts['rejected']} malformed line(s) set aside)" if counts["rejected"] else ""
            msg = f"no run records found in {', '.join(map(str, files))}{rejected}; nothing was written"
            raise IngestError(msg)
        scratch = staging / _GROUND_TRUTH_SCRATCH
        if scratch.exists():
            _deduplicate_ground_truth(scratch, staging / "ground_truth")
            shutil.rmtree(scratch)
        dataset = _staged_dataset(staging, count)
        if not (chunks_valid and _run_ids_unique(parquet_files(_table_folder(staging, "runs", count)))):
            # Error path: the whole Dataset is validated, so that the error covers the whole input.
            dataset.validate()
        if count > 1:
            _sort_shards(staging, dataset.table_names, count)
        else:
            write_manifest(staging, MANIFEST, {"tables": dataset.table_names})
    return IngestResult(target, counts["runs"], counts["rejected"], rejects_path)


#: Hidden folders of the staging folder: the chunks' ground truth before it is deduplicated across
#: chunks, and (``shards > 1``) every sharded table's rows, split by shard, before each shard is sorted.
_GROUND_TRUTH_SCRATCH = ".ground_truth"
_SHARDS_SCRATCH = ".shards"
#: The compression of the part files that are read back once and removed (the scratch folders'):
#: faster to write and read than Polars' default (zstd), for files about 1.5 times larger.
_SCRATCH_COMPRESSION = "lz4"


def _table_folder(staging: Path, name: str, shards: int) -> Path:
    """Where the chunks' part files of table ``name`` are staged (ground truth: before it is deduplicated)."""
    if name == "ground_truth":
        return staging / _GROUND_TRUTH_SCRATCH
    return staging / _SHARDS_SCRATCH / name if shards > 1 else staging / name


def _store(tables: dict[str, pl.DataFrame], index: int, staging: Path, held: _ShardRows | None) -> bool:
    """Write one chunk's tables as part files ``part-<index>``; whether they pass :meth:`Dataset.validate` alone.

    With shards (``held`` given) a sharded table's rows go to their shard (the hash of
    :meth:`Dataset.write <mas_eval.storage.dataset.Dataset.write>`, :func:`shard_of`) through
    ``held``, so that the sharded layout is made by sorting each shard once
    (:func:`_sort_shards`), never by reading and splitting the whole Dataset again.
    """
    part = f"part-{index:05d}.parquet"
    for name, table in tables.items():
        if table.height == 0:
            continue
        if held is not None and sharded(name):
            held.add(name, table)
            continue
        folder = _table_folder(staging, name, 1 if held is None else held.shards)
        folder.mkdir(parents=True, exist_ok=True)
        # An unsharded table's parts are the Dataset's own files, in Polars' default compression.
        scratch = name == "ground_truth"
        table.write_parquet(folder / part, **({"compression": _SCRATCH_COMPRESSION} if scratch else {}))
    if held is not None:
        held.write_if_full()
    return _valid(tables)


#: Bytes of rows (Polars' estimate) that :class:`_ShardRows` holds before it writes them out.
_HELD_BYTES = 32 * 2**20


class _ShardRows:
    """The sharded tables' rows of the chunks, by shard, held until about :data:`_HELD_BYTES` and then
    written as one part file per table and shard.

    Written chunk by chunk, every chunk gave each table one small file per shard (8 shards, 6
    tables: 48 files a chunk), and on 2 cores the cost of a file (about 2 ms to create, write
    and read back) was much of a sharded ingest's time. The rows keep the input's order: a part
    holds its chunks' rows in turn, and parts are numbered in the order they are written.
    """

    def __init__(self, staging: Path, shards: int) -> None:
        self.shards = shards
        self._staging = staging
        self._rows: dict[tuple[str, int], list[pl.DataFrame]] = {}
        self._bytes = 0
        self._parts = 0

    def add(self, name: str, table: pl.DataFrame) -> None:
        homes = table.with_columns(shard_of(table[RUN_KEY], self.shards))
        # A loop over the chunk's shards (at most the number of shards).
        for (home,), rows in homes.partition_by(SHARD_COLUMN, as_dict=True, include_key=False).items():
            self._rows.setdefault((name, cast(int, home)), []).append(rows)
        self._bytes += table.estimated_size()

    def write_if_full(self) -> None:
        if self._bytes >= _HELD_BYTES:
            self.write()

    def write(self) -> None:
        """Write every held row, one part file per table and shard."""
        part = f"part-{self._parts:05d}.parquet"
        for (name, home), frames in self._rows.items():
            destination = shard_folder(_table_folder(self._staging, name, self.shards), home)
            destination.mkdir(parents=True, exist_ok=True)
            pl.concat(frames, rechunk=False).write_parquet(destination / part, compression=_SCRATCH_COMPRESSION)
        self._rows, self._bytes = {}, 0
        self._parts += 1


class _ChunkWriter:
    """Writes and checks each chunk (:func:`_store`) on a thread of its own while the next chunk is read.

    Arrow's reader and Polars release the GIL, so on two cores the reading of a chunk and the
    writing of the one before overlap. At most one chunk is in flight (memory stays bounded by
    two chunks and the rows :class:`_ShardRows` holds); :meth:`put` waits for it first, so that a
    failure to write it is raised before anything later, as it would be without the thread.
    """

    def __init__(self, staging: Path, shards: int) -> None:
        self._staging = staging
        self._held = _ShardRows(staging, shards) if shards > 1 else None
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ingest-writer")
        self._pending: Future[bool] | None = None
        self._valid = True

    def _wait(self) -> None:
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self._valid = pending.result() and self._valid

    def put(self, tables: dict[str, pl.DataFrame], index: int) -> None:
        """Write and check ``tables`` as part ``index``, once the chunk before is written."""
        self._wait()
        self._pending = self._pool.submit(_store, tables, index, self._staging, self._held)

    def finish(self) -> bool:
        """Wait for the last chunk and write the rows still held: whether every chunk passed
        :meth:`Dataset.validate` on its own."""
        self._wait()
        if self._held is not None:
            self._held.write()
        return self._valid

    def __enter__(self) -> _ChunkWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: object) -> None:
        # The chunk in flight is waited for in any case, so that nothing writes into the staging
        # folder once it is removed; it came first, so its failure is the one raised.
        pending, self._pending = self._pending, None
        self._pool.shutdown(wait=True)
        failure = pending.exception() if error is not None and pending is not None else None
        if failure is not None:
            raise failure from error


def _staged_dataset(staging: Path, shards: int) -> Dataset:
    """The staged tables as a Dataset, before ``_dataset.json`` is written (ground truth deduplicated)."""
    if shards == 1:
        return Dataset.open(staging)
    # Ground truth is deduplicated by now, into the folder of an unsharded Dataset's table.
    folders = {name: _table_folder(staging, name, shards) for name in TABLES if name != "ground_truth"}
    folders["ground_truth"] = staging / "ground_truth"
    return Dataset({name: scan_parquet(parquet_files(folder)) for name, folder in folders.items() if folder.is_dir()})


def _sort_shards(staging: Path, names: list[str], shards: int) -> None:
    """Make the sharded layout from the staged shards: each shard sorted by key, ground truth one
    sorted file, then ``_dataset.json`` and the stored codes (as :meth:`Dataset.write_tables` writes them)."""
    for name in names:
        spec = TABLES[name]
        if sharded(name):
            write_sorted_shards(_table_folder(staging, name, shards), spec, staging, shards, spec.polars_schema)
        else:
            folder = staging / name
            scan_parquet(parquet_files(folder)).sort(list(spec.key)).sink_parquet(staging / f"{name}.parquet")
            shutil.rmtree(folder)
    shutil.rmtree(staging / _SHARDS_SCRATCH)
    write_dataset_manifest(staging, names, shards)


def _chunk_tables(
    file: Path,
    chunk: _Chunk,
    dtype: pl.DataType,
    counts: dict[str, int],
    reject_handle: IO[bytes] | None,
    max_line_bytes: int,
) -> dict[str, pl.DataFrame]:
    """The general path: decode and check one chunk line by line where needed; its tables (every
    table, possibly empty; none for blank lines only). A malformed line is raised (file:line), or
    set aside in the rejects file with ``skip_invalid``."""
    every, problems = _lines(chunk, max_line_bytes)
    frame = every.filter(
        pl.col("text").str.strip_chars() != "", ~pl.col("line").is_in(problems["line"].implode())
    ).with_columns(pl.col("text").str.strip_prefix("\ufeff"))
    if frame.is_empty() and problems.is_empty():
        return {}  # blank lines only
    try:
        records = _json_decode(frame["text"], dtype)
    except pl.exceptions.ComputeError:
        undecodable = _undecodable(frame, dtype, first_only=reject_handle is None)
        problems = pl.concat([problems, undecodable])
        if reject_handle is None:
            # Only the first malformed line is reported: check the lines before it, which decode.
            frame = frame.filter(pl.col("line") < undecodable["line"].min())
        else:
            frame = frame.filter(~pl.col("line").is_in(undecodable["line"].implode()))
        records = _json_decode(frame["text"], dtype)
    decoded = pl.DataFrame({"line": frame["line"], "rec": records})
    levels, found = _flatten(decoded)
    suspects = misspelt_fields(frame["text"], dtype)
    misspelt = pl.DataFrame({"line": frame["line"].gather(suspects["position"]), "error": suspects["error"]})
    # One problem per line: the first found (the record's own checks come before its items').
    problems = pl.concat([problems, misspelt, found]).unique("line", keep="first", maintain_order=True).sort("line")
    if problems.height:
        if reject_handle is None:
            line, error = problems.row(0)
            if line in chunk.long:
                size = chunk.long[line]
                raise_it = option("max_line_bytes", size, cli=f"--max-line-mb {math.ceil(size / 2**20)}")
                fix = f"if the line is one run record, raise the limit ({raise_it}), else fix the file"
            else:
                fix = "fix the line"
            skip = f"or pass {option('skip_invalid')} to set malformed lines aside in a rejects file"
            msg = f"{file}:{line}: {error}; {fix}, {skip}"
            raise IngestError(msg)
        problems.join(every, on="line", how="left").select(
            pl.lit(str(file)).alias("file"), "line", "error", "text"
        ).write_ndjson(reject_handle)
        counts["rejected"] += problems.height
    return _tables(levels, problems["line"])


def _valid(tables: dict[str, pl.DataFrame]) -> bool:
    """Whether one chunk's tables pass :meth:`Dataset.validate` on their own."""
    try:
        Dataset.from_frames(**tables).validate()
    except MasEvalError:
        return False
    return True


#: Rows handled per pass by the steps that span chunks: a larger table is split into passes over
#: hash buckets of its rows, so that their memory (about 150 bytes a row) stays bounded too.
_ROWS_PER_PASS = 2_000_000


def _buckets(frame: pl.LazyFrame, columns: list[str]) -> Iterator[pl.LazyFrame]:
    """``frame`` split by a hash of ``columns`` into parts of about ``_ROWS_PER_PASS`` rows (equal keys together)."""
    passes = -(-frame.select(pl.len()).collect().item() // _ROWS_PER_PASS)
    if passes <= 1:
        yield frame
        return
    bucket = pl.struct(columns).hash() % passes
    for index in range(passes):
        yield frame.filter(bucket == index)


def _deduplicate_ground_truth(scratch: Path, folder: Path) -> None:
    """Write the distinct ground truth rows of the chunks (a case's runs may sit in several), each part sorted."""
    key = list(TABLES["ground_truth"].key)
    folder.mkdir()
    for index, part in enumerate(_buckets(scan_parquet(parquet_files(scratch)), key)):
        truth = part.unique().sort(key).collect()
        if truth.height:
            truth.write_parquet(folder / f"part-{index:05d}.parquet")


def _run_ids_unique(files: list[Path]) -> bool:
    """Whether no run_id occurs twice among the staged runs (the one rule that spans chunks)."""
    runs = scan_parquet(files).select("run_id")
    return all(
        part.select(pl.col("run_id").n_unique() == pl.len()).collect().item() for part in _buckets(runs, ["run_id"])
    )
