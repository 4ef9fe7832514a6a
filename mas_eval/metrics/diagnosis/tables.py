"""The diagnosis family's reference tables: shipped CSVs, and users' tables checked the same way.

The synonym table (:mod:`~.equivalence`) and the intervention table (:mod:`~.labels`) are both
two string columns, shipped as a CSV in the package and extendable by the user; this module
reads the one and checks the other, so that a bad table gets the same kind of message either way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from importlib import resources

import polars as pl

from mas_eval.constraints import check_columns
from mas_eval.errors import DataError, InvalidParameterError, MasEvalError, SchemaError
from mas_eval.storage.inputs import input_file, read_csv

__all__ = ["shipped_table", "string_table", "user_table"]


@cache
def shipped_table(file: str, columns: tuple[str, ...], package: str = "mas_eval.metrics.diagnosis") -> pl.DataFrame:
    """Read ``package``'s CSV ``file`` (``#`` lines are comments) with String ``columns``."""
    source = resources.files(package).joinpath(file)
    with resources.as_file(source) as path:
        return read_csv(path, comment_prefix="#", schema=dict.fromkeys(columns, pl.String))


def string_table(table: object, name: str, columns: Mapping[str, str], kind: str) -> pl.DataFrame:
    """``table`` (a frame of ``columns``, their meaning the values) as String columns, or a clear error.

    Raises :class:`InvalidParameterError` for something other than a frame, :class:`SchemaError`
    for a missing column or one that does not hold strings, :class:`DataError` for null values;
    every message starts with ``name`` and says what ``kind`` of table has which columns.
    """
    names = list(columns)
    described = " and ".join(f"{c!r} ({meaning})" for c, meaning in columns.items())
    if isinstance(table, pl.LazyFrame):
        table = table.collect()
    if not isinstance(table, pl.DataFrame):
        listed = " and ".join(map(repr, names))
        msg = f"{name} must be a polars DataFrame with columns {listed}, not {type(table).__name__}"
        raise InvalidParameterError(msg)
    check_columns(table.schema, names, name, fix=f"{kind} has columns {described}")
    for column in names:
        dtype = table.schema[column]
        if dtype not in (pl.String, pl.Categorical) and not isinstance(dtype, pl.Enum | pl.Null):
            fix = f"pl.col({column!r}).cast(pl.String)"
            msg = f"{name}: column {column!r} must hold strings, not {dtype}; cast it with {fix}"
            raise SchemaError(msg)
    table = table.select(pl.col(names).cast(pl.String))
    nulls = table.with_row_index("row").filter(pl.any_horizontal(pl.col(names).is_null()))
    if nulls.height:
        rows = nulls["row"].head(5).to_list()
        msg = f"{name}: {nulls.height} row(s) with a null {' or '.join(names)}: rows {rows}; drop them"
        raise DataError(msg)
    return table


def user_table(
    path: str | None, parameter: str, columns: tuple[str, str], extend: Callable[[pl.DataFrame], pl.DataFrame]
) -> pl.DataFrame | None:
    """Return the shipped table extended (``extend``) by the CSV a ``*_file`` parameter names, or ``None``.

    A file that is missing, unreadable or wrong in shape is an error naming the parameter and the file.
    """
    if path is None:
        return None
    wanted = ",".join(columns)
    where = f"score: {parameter}={str(path)!r}"
    fix = f"pass a CSV with the header {wanted}"
    file = input_file(path, "a CSV file", fix, where=where, error=InvalidParameterError)
    try:
        table = read_csv(file, comment_prefix="#", infer_schema=False)
    except (pl.exceptions.PolarsError, UnicodeDecodeError, OSError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        msg = f"{where} is not a readable CSV ({first}); it needs the header {wanted}"
        raise InvalidParameterError(msg) from None
    try:
        return extend(table)
    except MasEvalError as exc:
        msg = f"{where}: {exc}"
        raise type(exc)(msg) from None
