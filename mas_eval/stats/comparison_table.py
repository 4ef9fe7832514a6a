"""Showing and saving a comparison table: the columns worth printing, its display, and an atomic file write."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from mas_eval.constraints import DATAFRAME, PATH, PATH_LIST, PROBABILITY, Boolean, check_columns, validate_params
from mas_eval.errors import InvalidParameterError, SchemaError
from mas_eval.escaping import html_text, spreadsheet_restored, spreadsheet_safe, visible
from mas_eval.formatting import format_ci, format_number, format_p, format_value
from mas_eval.stats.options import COMPARISON_COLUMNS, HYPOTHESIS_COLUMNS
from mas_eval.storage.manifests import JSON, ListOf, MapOf, check_shape, read_json
from mas_eval.storage.outputs import atomic_file

__all__ = [
    "FORMATS",
    "SUMMARY_COLUMNS",
    "ComparisonCells",
    "ComparisonDisplay",
    "check_comparisons_path",
    "comparison_cells",
    "display",
    "read_comparisons",
    "summary_view",
    "write_comparisons",
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


@validate_params({"table": [DATAFRAME]})
def summary_view(table: pl.DataFrame) -> pl.DataFrame:
    """Select the ``by`` columns and :data:`SUMMARY_COLUMNS` of a :func:`~mas_eval.stats.comparison.compare` table.

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval.stats import compare
    >>> runs = pl.DataFrame({"task": ["a"] * 6, "system": ["mas"] * 3 + ["single"] * 3,
    ...                      "dqs": [0.8, 0.7, 0.9, 0.6, 0.5, 0.65]})
    >>> summary_view(compare(runs, "dqs", by="task")).columns[:3]
    ['task', 'metric', 'test']
    """
    return table.select(*group_columns(table), *(c for c in SUMMARY_COLUMNS if c in table.columns))


def group_columns(table: pl.DataFrame) -> list[str]:
    """Return the ``by`` columns of a :func:`~mas_eval.stats.comparison.compare` table: those it adds to its own.

    Examples
    --------
    >>> group_columns(pl.DataFrame({"task": ["a"], "metric": ["dqs"], "p_value": [0.5]}))
    ['task']
    """
    return [name for name in table.columns if name not in COMPARISON_COLUMNS and name not in HYPOTHESIS_COLUMNS]


def check_comparisons_path(path: str | Path) -> Path:
    """Return ``path`` as a Path if its suffix names a format :func:`write_comparisons` writes, else raise.

    Raises
    ------
    InvalidParameterError
        The suffix is none of .parquet, .csv and .json (case aside).

    Examples
    --------
    >>> check_comparisons_path("results/comparisons.CSV").name
    'comparisons.CSV'
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


@validate_params(
    {"table": [DATAFRAME], "path": [PATH], "overwrite": [Boolean()], "inputs": [PATH_LIST], "raw_csv": [Boolean()]}
)
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

    Parameters
    ----------
    table : polars.DataFrame
        What :func:`~mas_eval.stats.comparison.compare` returned.
    path : str or pathlib.Path
        The file to write; its suffix (.parquet, .csv or .json) chooses the format.
    overwrite : bool
        Replace an existing file (never one of ``inputs``).
    inputs : sequence of str or pathlib.Path
        The files the table was computed from, which ``path`` must not name.
    raw_csv : bool
        In a CSV file, write text cells that look like formulas as they are.

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    InvalidParameterError
        The suffix names no format written.
    OutputExistsError
        ``path`` exists and ``overwrite`` is False.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import polars as pl
    >>> from mas_eval.stats import compare
    >>> runs = pl.DataFrame({"task": ["a"] * 6, "system": ["mas"] * 3 + ["single"] * 3,
    ...                      "dqs": [0.8, 0.7, 0.9, 0.6, 0.5, 0.65]})
    >>> table = compare(runs, "dqs", by="task")
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = write_comparisons(table, Path(folder) / "comparisons.parquet")
    ...     print(path.name, read_comparisons(path).equals(table))
    comparisons.parquet True

    A task named like a formula is written with a leading quote in CSV, and read back without it:

    >>> named = table.with_columns(pl.lit("=1+2").alias("task"))
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = write_comparisons(named, Path(folder) / "comparisons.csv")
    ...     print(path.read_text().splitlines()[1][:15], read_comparisons(path)["task"].to_list())
    '=1+2,dqs,welch ['=1+2']
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

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import polars as pl
    >>> from mas_eval.stats import compare
    >>> runs = pl.DataFrame({"system": ["mas"] * 3 + ["single"] * 3, "dqs": [0.8, 0.7, 0.9, 0.6, 0.5, 0.65]})
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = write_comparisons(compare(runs, "dqs"), Path(folder) / "comparisons.json")
    ...     read_comparisons(path).select("metric", "test", "n_treatment").rows()
    [('dqs', 'welch', 3)]
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


#: Columns of a comparison table as a reader sees it, most important first: (header, cell of a row).
COMPARISON_CELLS: tuple[tuple[str, Callable[[dict[str, Any]], str]], ...] = (
    ("difference", lambda r: format_number(r["difference"])),
    ("95% CI", lambda r: format_ci(r["ci_low"], r["ci_high"])),
    ("p_adj", lambda r: format_p(r["p_adjusted"]) + (" *" if r["significant"] else "")),
    ("d", lambda r: format_number(r["cohens_d"], 2)),
    ("n", lambda r: format_number(r["n_pairs"] if r["n_pairs"] is not None else r["n_treatment"] + r["n_control"])),
    ("treatment", lambda r: format_number(r["mean_treatment"])),
    ("control", lambda r: format_number(r["mean_control"])),
    ("effect", lambda r: r["effect_size"] or ""),
    ("test", lambda r: r["test"] or ""),
)


@dataclass(frozen=True)
class ComparisonCells:
    """A comparison table's cells as a reader sees them: the terminal, :func:`display` and Jupyter alike.

    Attributes
    ----------
    headers, columns, numeric
        Column headers, each column's cells (text), and whether it holds numbers (right-aligned).
    keep
        How many leading columns always show (the groups, the metric and the note marks).
    notes
        The rows' warnings, numbered ``[1]``, ``[2]``, … as the ``note`` column marks them.

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval.stats import compare
    >>> runs = pl.DataFrame({"system": ["mas"] * 3 + ["single"] * 3, "dqs": [0.8, 0.7, 0.9, 0.6, 0.5, 0.65]})
    >>> cells = comparison_cells(compare(runs, "dqs"))
    >>> isinstance(cells, ComparisonCells), cells.headers[:4], cells.keep
    (True, ['metric', 'difference', '95% CI', 'p_adj'], 1)
    """

    headers: list[str]
    columns: list[list[str]]
    numeric: list[bool]
    keep: int
    notes: list[str]


def comparison_cells(table: pl.DataFrame, *, confidence: float = 0.95) -> ComparisonCells:
    """Return the cells of a :func:`~mas_eval.stats.comparison.compare` table as the terminal prints them.

    The group and metric lead; then the difference, its CI, the adjusted p (``*`` when
    significant), Cohen's d, n (pairs, or runs), the two means, the effect label and the test.
    Warnings become numbered notes, marked in a ``note`` column right after the metric. A table
    tested against a margin (``compare(..., hypothesis=...)``) shows its ``verdict`` after them.

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval.stats import compare
    >>> runs = pl.DataFrame({"task": ["a"] * 6 + ["b"] * 4,
    ...                      "system": ["mas"] * 3 + ["single"] * 3 + ["mas", "mas", "single", "single"],
    ...                      "dqs": [0.8, 0.7, 0.9, 0.6, 0.5, 0.65, 0.5, 0.5, 0.5, 0.5]})
    >>> cells = comparison_cells(compare(runs, "dqs", by="task"))
    >>> cells.headers[:5]
    ['task', 'metric', 'note', 'difference', '95% CI']
    >>> [column[1] for column in cells.columns[:5]]
    ['b', 'dqs', '[1]', '0.0000', '']
    >>> cells.notes
    ['zero variance in both systems: the test and d are undefined']
    """
    keys = group_columns(table)
    rows = table.to_dicts()
    headers = [*keys, "metric"]
    columns = [[format_value(k, r[k]) for r in rows] for k in headers]
    numeric = [False] * len(headers)
    for header, cell in COMPARISON_CELLS:
        headers.append(f"{round(confidence * 100):g}% CI" if header == "95% CI" else header)
        columns.append([cell(r) for r in rows])
        numeric.append(header not in ("effect", "test"))
    if "verdict" in table.columns:
        # A test against a margin: what it showed reads before the numbers behind it.
        headers.insert(len(keys) + 1, "verdict")
        columns.insert(len(keys) + 1, [r["verdict"] or "" for r in rows])
        numeric.insert(len(keys) + 1, False)
    notes = [(i, r["warning"]) for i, r in enumerate(rows) if r.get("warning")]
    if notes:
        marks = {i: f"[{n}]" for n, (i, _) in enumerate(notes, start=1)}
        # The note marks must stay visible: right after the metric.
        position = len(keys) + 1
        headers.insert(position, "note")
        columns.insert(position, [marks.get(i, "") for i in range(len(rows))])
        numeric.insert(position, False)
    keep = len(keys) + 1 + bool(notes) + ("verdict" in table.columns)
    return ComparisonCells(headers, columns, numeric, keep, [w for _, w in notes])


class ComparisonDisplay:
    """A :func:`~mas_eval.stats.comparison.compare` table shown as the terminal shows it.

    Its ``repr`` is the table as text and ``_repr_html_`` the same cells as an HTML table, so that
    the last line of a Jupyter cell, ``display(table)``, reads as ``mas-eval compare`` prints: the CI
    as ``[low, high]``, the adjusted p as a p-value with ``*`` when significant, warnings as notes.
    Every name is escaped. The table itself is :attr:`table`, unchanged.

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval.stats import compare
    >>> runs = pl.DataFrame({"task": ["a"] * 6 + ["b"] * 4,
    ...                      "system": ["mas"] * 3 + ["single"] * 3 + ["mas", "mas", "single", "single"],
    ...                      "dqs": [0.8, 0.7, 0.9, 0.6, 0.5, 0.65, 0.5, 0.5, 0.5, 0.5]})
    >>> table = compare(runs, "dqs", by="task")
    >>> shown = ComparisonDisplay(table)
    >>> shown.table is table
    True
    >>> print(shown)
    task  metric  note  difference            95% CI    p_adj     d  n  treatment  control  effect  test
    ----  ------  ----  ----------  ----------------  -------  ----  -  ---------  -------  ------  -----
    a     dqs               0.2167  [0.0093, 0.4240]  0.044 *  2.44  6     0.8000   0.5833  large   welch
    b     dqs     [1]       0.0000                                   4     0.5000   0.5000          welch
    [1] zero variance in both systems: the test and d are undefined
    >>> shown._repr_html_()[:45]
    '<div class="mas-eval-comparison"><table><thea'
    """

    def __init__(self, table: pl.DataFrame, *, confidence: float = 0.95) -> None:
        self.table = table
        self.cells = comparison_cells(table, confidence=confidence)

    def __repr__(self) -> str:
        """Return the table as text, its columns aligned as the terminal prints them."""
        from rich.cells import cell_len

        cells = self.cells
        headers = [visible(h) for h in cells.headers]
        columns = [[visible(c) for c in column] for column in cells.columns]
        widths = [
            max([cell_len(h), *(cell_len(c) for c in column)]) for h, column in zip(headers, columns, strict=True)
        ]

        def line(texts: Sequence[str]) -> str:
            padded = []
            for text, width, number in zip(texts, widths, cells.numeric, strict=True):
                space = " " * (width - cell_len(text))
                padded.append(space + text if number else text + space)
            return "  ".join(padded).rstrip()

        body = [line(headers), line(["-" * w for w in widths])]
        body += [line(row) for row in zip(*columns, strict=True)]
        body += [f"[{n}] {visible(note)}" for n, note in enumerate(cells.notes, start=1)]
        return "\n".join(body)

    def _repr_html_(self) -> str:
        cells = self.cells

        def cell(tag: str, text: str, number: bool) -> str:
            style = ' style="text-align: right"' if number else ' style="text-align: left"'
            return f"<{tag}{style}>{html_text(text)}</{tag}>"

        head = "".join(cell("th", h, n) for h, n in zip(cells.headers, cells.numeric, strict=True))
        rows = "".join(
            "<tr>" + "".join(cell("td", c, n) for c, n in zip(row, cells.numeric, strict=True)) + "</tr>"
            for row in zip(*cells.columns, strict=True)
        )
        notes = "".join(f"<li>[{n}] {html_text(note)}</li>" for n, note in enumerate(cells.notes, start=1))
        listed = f'<ul style="list-style: none; padding-left: 0">{notes}</ul>' if notes else ""
        return (
            f'<div class="mas-eval-comparison"><table><thead><tr>{head}</tr></thead>'
            f"<tbody>{rows}</tbody></table>{listed}</div>"
        )


@validate_params({"table": [DATAFRAME], "confidence": [PROBABILITY]})
def display(table: pl.DataFrame, *, confidence: float = 0.95) -> ComparisonDisplay:
    """Show a :func:`~mas_eval.stats.comparison.compare` table as ``mas-eval compare`` prints it.

    ``compare`` returns a plain :class:`polars.DataFrame`, so that everything a user does with a
    frame (filter, join, ``to_pandas``, ``write_csv``, ``isinstance`` checks, equality) keeps
    working; in Jupyter it shows every column with raw floats. ``display(table)`` is the
    reader's view: the groups and metric, the difference, its CI, the adjusted p (``*`` when
    significant), Cohen's d, n, both means, the effect label and the test, with warnings as
    numbered notes. Text in ``print`` and ``repr``, an HTML table in Jupyter.

    Parameters
    ----------
    table : polars.DataFrame
        What :func:`~mas_eval.stats.comparison.compare` returned (or :func:`read_comparisons` read).
    confidence : float
        The CI's level, for its header (``compare``'s ``confidence``).

    Returns
    -------
    ComparisonDisplay
        Its ``table`` attribute is ``table`` itself.

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval.stats import compare, display
    >>> runs = pl.DataFrame({"task": ["a"] * 6, "system": ["mas"] * 3 + ["single"] * 3,
    ...                      "dqs": [0.8, 0.7, 0.9, 0.6, 0.5, 0.65]})
    >>> print(display(compare(runs, "dqs", by="task")))
    task  metric  difference            95% CI    p_adj     d  n  treatment  control  effect  test
    ----  ------  ----------  ----------------  -------  ----  -  ---------  -------  ------  -----
    a     dqs         0.2167  [0.0093, 0.4240]  0.044 *  2.44  6     0.8000   0.5833  large   welch
    """
    needed = [c for c in COMPARISON_COLUMNS if c not in ("correction", "n_clusters")]
    check_columns(table.schema, needed, "display: table", fix="pass a table that compare returned")
    return ComparisonDisplay(table, confidence=confidence)
