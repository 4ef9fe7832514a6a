"""The fast path: a whole chunk read by one call of Arrow's JSON reader, when it reads it as the general path would."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, cast

import numpy as np
import polars as pl

from mas_eval.data.schema import TABLES
from mas_eval.ingest.jsonl.lines import Chunk
from mas_eval.ingest.jsonl.record import RECORD_LISTS, USAGE_FIELD, record_dtype

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["arrow_record", "arrow_tables"]


def _arrow_type(dtype: pl.DataType) -> pa.DataType:
    """Return the Arrow type Arrow's JSON reader reads a value of Polars ``dtype`` as (its list, not large list)."""
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
    """Return the record as Arrow's JSON reader reads it: the schema's own dtypes (numbers typed, not text).

    What :func:`ingest_jsonl` reads a clean chunk with (its speed alone, the floor of an ingest:
    docs/performance.md).
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
    """Return whether a decoded float column holds a value the general path would read otherwise or refuse.

    NaN and infinity (Arrow reads ``NaN``, ``Infinity`` and an overflow), the largest double
    (see :data:`_DOUBLE_MAX`), and negative zero (the decoder reads ``-0`` as ``+0.0``).
    """
    value = pl.col(column)
    return (~(value.abs() < _DOUBLE_MAX) | ((value == 0) & (1 / value < 0))).any()


def _longest_object(data: bytes) -> int | None:
    r"""Return the length of the longest line of ``data`` if every line is one JSON object, else None.

    Lines are joined by ``\n``; every line must start with ``{`` and end with ``}``.

    With Arrow reading one row per line (checked after), this makes each line exactly one JSON
    object: a value cannot run on to the next line, since after a ``}`` only ``,``, ``}`` or
    ``]`` may follow inside a value and a JSON string holds no raw newline. A blank line, a
    byte-order mark or leading space fails it (the general path strips them). A line may end
    with ``\r`` (CRLF files): JSON's whitespace to both readers.
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


def arrow_tables(chunk: Chunk) -> dict[str, pl.DataFrame] | None:
    """Read the chunk's tables in one call of Arrow's JSON reader, or None where only the general path can tell.

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
    metadata) takes the general path, which is slower (docs/performance.md).

    Returns
    -------
    dict or None
        Every table (possibly empty), rows in the order of the general path; None sends the
        chunk to the general path, which finds and words its problems.
    """
    import pyarrow as pa

    table = _read(chunk)
    if table is None:
        return None
    levels = _levels(table)
    if levels is None:
        return None
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


def _read(chunk: Chunk) -> pa.Table | None:
    """Read the chunk with Arrow's JSON reader, or return None if a line is not one object of the record's shape."""
    import pyarrow as pa
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
    return table


def _levels(table: pa.Table) -> dict[str, dict[str, pa.Array]] | None:
    """Return each table's columns, the record's lists flattened; None if a list holds a null item."""
    import pyarrow as pa
    import pyarrow.compute as pc

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
    return levels
