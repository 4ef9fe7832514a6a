"""Showing and saving a comparison table: the columns worth printing, and an atomic file write."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from mas_eval.constraints import check_columns
from mas_eval.errors import InvalidParameterError, SchemaError
from mas_eval.escaping import spreadsheet_restored, spreadsheet_safe
from mas_eval.stats.options import COMPARISON_COLUMNS
from mas_eval.storage.manifests import JSON, ListOf, MapOf, check_shape, read_json
from mas_eval.storage.outputs import atomic_file

__all__ = [
    "FORMATS", "SUMMARY_COLUMNS", "check_comparisons_path", "read_comparisons", "summary_view", "write_comparisons",
]  # fmt: skip

#: What a terminal or a Markdown report shows of a comparison table (the file keeps every column).
SUMMARY_COLUMNS = [
    "metric", "test", "n_treatment", "n_control", "n_pairs", "mean_treatment", "mean_control", "difference",
    "ci_low", "ci_high", "p_adjusted", "significant", "cohens_d", "effect_size", "warning",
]  # fmt: skip

FORMATS = (".parquet", ".csv", ".json")
_WRITE_ONE = "pass a file written by `mas-eval compare --out`"
#: A comparison table as :func:`write_comparisons` writes it in JSON: one object per row.
JSON_SHAPE = ListOf(MapOf(JSON))


def summary_view(table: pl.DataFrame) -> pl.DataFrame:
    """The ``by`` columns and :data:`SUMMARY_COLUMNS` of a :func:`~mas_eval.stats.comparison.compare` table.

    >>> import polars as pl
    >>> from mas_eval.stats import compare
    >>> runs = pl.DataFrame({"task": ["a"] * 6, "system": ["mas"] * 3 + ["single"] * 3,
    ...                      "dqs": [0.8, 0.7, 0.9, 0.6, 0.5, 0.65]})
    >>> summary_view(compare(runs, "dqs", by="task")).columns[:3]
    ['task', 'metric', 'test']
    """
    return table.select(*group_columns(table), *(c for c in SUMMARY_COLUMNS if c in table.columns))


def group_columns(table: pl.DataFrame) -> list[str]:
    """The ``by`` columns of a :func:`~mas_eval.stats.comparison.compare` table: those it adds to its own.

    >>> group_columns(pl.DataFrame({"task": ["a"], "metric": ["dqs"], "p_value": [0.5]}))
    ['task']
    """
    return [name for name in table.columns if name not in COMPARISON_COLUMNS]


def check_comparisons_path(path: str | Path) -> Path:
    """``path`` as a Path if its suffix names a format :func:`write_comparisons` writes, else an error.

    >>> check_comparisons_path("out.xlsx")
    Traceback (most recent call last):
    ...
    mas_eval.errors.InvalidParameterError: out.xlsx: comparisons are written as .parquet, .csv or .json (by the file's suffix), not '.xlsx'
    """  # noqa: E501
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in FORMATS:
        shown = repr(suffix) if suffix else "a name without a suffix"
        msg = f"{target}: comparisons are written as .parquet, .csv or .json (by the file's suffix), not {shown}"
        raise InvalidParameterError(msg)
    return target


def write_comparisons(
    table: pl.DataFrame,
    path: str | Path,
    *,
    overwrite: bool = False,
    inputs: Sequence[str | Path] = (),
    raw_csv: bool = False,
) -> Path:
    """Write ``table`` to ``path`` (.parquet, .csv or .json by suffix), atomically.

    The file is written next to its target and renamed over it, so a reader never sees half a
    table; an existing file is replaced only with ``overwrite=True``, and never one of ``inputs``.

    In a CSV file, a text cell that a spreadsheet would run as a formula (a task named
    ``=HYPERLINK(...)``, ``+cmd|...``, ``-2+3`` or ``@SUM(1)``) starts with a single quote
    (:func:`~mas_eval.escaping.spreadsheet_safe`, as the OWASP "CSV Injection" guidance says);
    numbers are written as they are. :func:`read_comparisons` takes the quote off again.
    ``raw_csv=True`` writes every cell as it is.
    """
    target = check_comparisons_path(path)
    suffix = target.suffix.lower()
    with atomic_file(target, overwrite=overwrite, inputs=inputs) as staging:
        if suffix == ".parquet":
            table.write_parquet(staging)
        elif suffix == ".csv":
            (table if raw_csv else spreadsheet_safe(table)).write_csv(staging)
        else:
            staging.write_text(json.dumps(table.to_dicts(), indent=2) + "\n")
    return target


def read_comparisons(path: str | Path) -> pl.DataFrame:
    """Read a table :func:`write_comparisons` wrote (.parquet, .csv or .json by suffix).

    A CSV file's text cells are read as they were before :func:`write_comparisons` wrote them:
    the single quote it puts before a cell that would be a formula is taken off
    (:func:`~mas_eval.escaping.spreadsheet_restored`: a cell loses its first character when it is
    one or more quotes followed by a formula, which is what writing adds, and only then). A file
    written with ``raw_csv=True`` reads back the same, but for a name that is itself quotes
    followed by a formula (``'=x``), which loses its first quote.

    Raises
    ------
    SchemaError
        The file lacks the columns of a comparison table (it names them), or is not valid JSON
        (empty, not UTF-8, nested too deeply, not a list of rows).
    """
    from mas_eval.storage.inputs import input_file, read_csv, read_parquet, reading

    source = check_comparisons_path(path)
    fix = f"write one with `mas-eval compare SCORES --out {source.name}`"
    if not source.exists():
        msg = f"{source}: no such comparisons file; {fix}"
        raise SchemaError(msg)
    input_file(source, "a comparisons file", fix, error=SchemaError)
    suffix = source.suffix.lower()
    if suffix == ".parquet":
        with reading([source]):
            table = read_parquet(source)
    elif suffix == ".csv":
        try:
            table = spreadsheet_restored(read_csv(source, infer_schema_length=None))
        except (pl.exceptions.PolarsError, UnicodeDecodeError) as exc:
            first = str(exc).strip().splitlines()
            msg = f"{source}: not a comparison table ({first[0] if first else type(exc).__name__}); {_WRITE_ONE}"
            raise SchemaError(msg) from None
    else:
        rows = read_json(source, fix=_WRITE_ONE)
        problem = check_shape(rows, JSON_SHAPE)
        if problem is not None:
            msg = f"{source}: not a comparison table ({problem}); {_WRITE_ONE}"
            raise SchemaError(msg)
        try:
            table = pl.DataFrame(rows, infer_schema_length=None)
        except (pl.exceptions.PolarsError, TypeError, ValueError, OverflowError) as exc:
            first = str(exc).strip().splitlines()
            msg = f"{source}: not a comparison table ({first[0] if first else type(exc).__name__}); {_WRITE_ONE}"
            raise SchemaError(msg) from None
    needed = [name for name in COMPARISON_COLUMNS if name != "correction"]
    check_columns(table.schema, needed, f"{source}: not a comparison table", fix=_WRITE_ONE)
    return table
