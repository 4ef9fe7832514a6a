"""The diagnosis family's reference tables: shipped CSVs, and users' tables checked the same way.

The synonym table (:mod:`~.equivalence`) and the intervention table (:mod:`~.labels`) are both
two string columns, shipped as a CSV in the package and extendable by the user; this module
reads the one and checks the other, so that a bad table gets the same kind of message either way.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib import resources

import polars as pl

from mas_eval.errors import DataError, InvalidParameterError, SchemaError

__all__ = ["shipped_table", "string_table"]


@cache
def shipped_table(file: str, columns: tuple[str, ...]) -> pl.DataFrame:
    """The package's CSV ``file`` (``#`` lines are comments) with String ``columns``."""
    source = resources.files("mas_eval.metrics.diagnosis").joinpath(file)
    with resources.as_file(source) as path:
        return pl.read_csv(path, comment_prefix="#", schema=dict.fromkeys(columns, pl.String))


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
    missing = [c for c in names if c not in table.columns]
    if missing:
        msg = (
            f"{name}: missing column(s) {', '.join(map(repr, missing))}; {kind} has columns {described}, "
            f"got {table.columns}"
        )
        raise SchemaError(msg)
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
