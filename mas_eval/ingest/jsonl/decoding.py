"""Decoding a chunk's lines into the record's tables, and the checks that find and word each malformed line.

This is the general path: every chunk that Arrow's reader (:mod:`~mas_eval.ingest.jsonl.arrow`)
cannot read exactly as this one would comes here. Decoding and checks are vectorised; only a
chunk the decoder rejects is bisected to find the lines, and only those lines are read one by one.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import IO, Any

import polars as pl

from mas_eval.data.schema import TABLES
from mas_eval.errors import IngestError, option
from mas_eval.ingest.jsonl.lines import PROBLEMS, Chunk, chunk_lines
from mas_eval.ingest.jsonl.misspelt import misspelt_fields
from mas_eval.ingest.jsonl.record import BY_TABLE, RECORD_LISTS, RUNS_TOP, USAGE, USAGE_FIELD, json_path, record_dtype
from mas_eval.ingest.recipe import json_type

__all__ = ["chunk_tables"]


def _expected(dtype: pl.DataType) -> str:
    if isinstance(dtype, pl.Struct):
        return "an object"
    if isinstance(dtype, pl.List):
        return "an array"
    if dtype.is_integer():
        return "an integer"
    return "a number" if dtype.is_numeric() else "a string"


def _shape_problem(value: Any, dtype: pl.DataType, where: str) -> str | None:
    """Return the first place where ``value`` does not have the shape of ``dtype`` (a typed record).

    Mirrors what the decoder rejects with the permissive dtype, no more: a container of the
    wrong kind, or a number out of range. (Scalars of the wrong type are found by the
    vectorised checks, and a lone scalar for an array of scalars is read as a one-item array.)
    """
    if value is None:
        return None
    if isinstance(dtype, pl.Struct):
        return _object_problem(value, dtype, where)
    if isinstance(dtype, pl.List):
        return _array_problem(value, dtype, where)
    if isinstance(value, dict | list):
        return f"field '{where}': expected {_expected(dtype)}, got {json_type(value)}"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return f"field '{where}': number out of range"
    return None


def _object_problem(value: Any, dtype: pl.Struct, where: str) -> str | None:
    """Return the first place where ``value`` is not an object of ``dtype``'s fields (:func:`_shape_problem`)."""
    if not isinstance(value, dict):
        return f"field '{where}': expected an object, got {json_type(value)}"
    for fld in dtype.fields:
        if fld.name in value:
            inner = f"{where}.{fld.name}" if where else fld.name
            problem = _shape_problem(value[fld.name], fld.dtype, inner)
            if problem:
                return problem
    return None


def _array_problem(value: Any, dtype: pl.List, where: str) -> str | None:
    """Return the first place where ``value`` is not an array of ``dtype``'s items (:func:`_shape_problem`)."""
    if not isinstance(value, list):
        if not isinstance(value, dict) and not isinstance(dtype.inner, pl.Struct | pl.List):
            return _shape_problem(value, dtype.inner, where)
        return f"field '{where}': expected an array, got {json_type(value)}"
    for i, item in enumerate(value):
        problem = _shape_problem(item, dtype.inner, f"{where}[{i}]")
        if problem:
            return problem
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
#: input, so a chunk is decoded in slices (docs/performance.md).
_DECODE_BYTES = 2**20


def _json_decode(texts: pl.Series, dtype: pl.DataType) -> pl.Series:
    """Decode ``texts.str.json_decode(dtype)`` in slices of whole lines of about ``_DECODE_BYTES``."""
    if texts.len() == 0:
        return texts.str.json_decode(dtype)
    ends = texts.str.len_bytes().cast(pl.Int64).cum_sum()
    marks = pl.int_range(_DECODE_BYTES, ends[-1], _DECODE_BYTES, dtype=pl.Int64, eager=True)
    bounds = sorted({0, *ends.search_sorted(marks, side="right").to_list(), texts.len()})
    parts = [texts.slice(lo, hi - lo).str.json_decode(dtype) for lo, hi in itertools.pairwise(bounds)]
    # Rechunked: on a struct column of several chunks, Polars 2.1 can panic ("i < self.len()") in _checks.
    return pl.concat(parts, rechunk=True)


def _decode(texts: pl.Series, dtype: pl.DataType) -> str | None:
    """Return None if ``texts`` decode, else the decoder's error."""
    try:
        _json_decode(texts, dtype)
    except pl.exceptions.ComputeError as exc:
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return None


#: Below this many lines, a failing range of a chunk is diagnosed line by line.
_BLOCK = 64


def _block_problems(texts: pl.Series, lo: int, hi: int, dtype: pl.DataType) -> list[tuple[int, str]]:
    """Return ``(position, problem)`` of the undecodable lines among ``texts[lo:hi]``."""
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
    """Return ``line, error`` of the lines the decoder rejects, given that the whole chunk failed.

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
    return pl.DataFrame(rows, schema=PROBLEMS, orient="row").sort("line")


def _checks(table: str, frame: pl.DataFrame) -> list[pl.DataFrame]:
    """Return ``line, error`` of the rows of one level of decoded items (numbers still text) that break the record.

    Vectorised: a number field is invalid when its text does not cast to the schema's dtype,
    or casts to NaN or infinity (which JSON cannot hold, so they came from strings).
    """
    spec = TABLES[table]
    prefix = json_path(table)
    scalar = table != "runs" and BY_TABLE[table].scalar
    own = RUNS_TOP + list(USAGE) if table == "runs" else BY_TABLE[table].own
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
    """Return the tables of one chunk (with ``line``; numbers still text) and ``line, error`` of its problems.

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
        where = json_path(lst.table).removesuffix("[]")
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


#: A ``\\`` escape (a backslash), a UTF-16 surrogate pair written as two escapes (one character), and an escape
#: of a surrogate: JSON can write one alone, which is no character.
_BACKSLASH = r"\\\\"
_PAIR = r"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
_SURROGATE = r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}"


def _lone_surrogates(lines: pl.DataFrame) -> pl.DataFrame:
    r"""Return ``line, error`` of the lines whose JSON escapes a lone UTF-16 surrogate (``"\ud800"``).

    No text can hold one: Polars' decoder stores ``\ud800`` as ``"\x00"`` (a value changed
    silently), Arrow's refuses it, so it is refused here, vectorised: the escaped backslashes and
    the surrogate pairs (one character each, e.g. an emoji) taken out, any surrogate escape left is
    one alone. Only lines holding a surrogate escape at all are looked at twice.
    """
    suspects = lines.filter(pl.col("text").str.contains(_SURROGATE))
    left = pl.col("text").str.replace_all(_BACKSLASH, "").str.replace_all(_PAIR, "")
    lone = suspects.select("line", left.str.extract(f"({_SURROGATE})").alias("escape")).drop_nulls("escape")
    error = pl.format(
        "the escape {} is a lone UTF-16 surrogate, not a character; write the character itself (or the pair of "
        "escapes of one above U+FFFF)",
        "escape",
    )
    return lone.select("line", error.alias("error"))


def chunk_tables(
    file: Path,
    chunk: Chunk,
    dtype: pl.DataType,
    counts: dict[str, int],
    reject_handle: IO[bytes] | None,
    max_line_bytes: int,
) -> dict[str, pl.DataFrame]:
    """Decode and check one chunk line by line where needed (the general path), and return its tables.

    Every table is returned, possibly empty (none for blank lines only). A malformed line is raised
    (file:line), or set aside in the rejects file with ``skip_invalid``.
    """
    every, problems = chunk_lines(chunk, max_line_bytes)
    problems = pl.concat([problems, _lone_surrogates(every.filter(~pl.col("line").is_in(problems["line"].implode())))])
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
