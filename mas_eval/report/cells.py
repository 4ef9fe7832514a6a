"""A report table's cells as a reader sees them, shared by the HTML, Markdown and LaTeX renderers.

The comparison table is shown in its reader's columns (the JSON keeps all of them); every
other table shows all its columns. Numbers go through :mod:`mas_eval.formatting`, so the
terminal and every report format write the same digits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from mas_eval.formatting import format_ci, format_number, format_p, format_value, system_means_rows
from mas_eval.report.findings import correction_of
from mas_eval.stats.comparison_table import group_columns

if TYPE_CHECKING:
    from mas_eval.report.parts import ReportTable

__all__ = ["Cells", "cells"]


@dataclass(frozen=True)
class Cells:
    """Headers, rows of strings, and which columns are numeric (right-aligned)."""

    headers: list[str]
    rows: list[list[str]]
    numeric: list[bool]


def _comparison_cells(frame: pl.DataFrame) -> Cells:
    keys = group_columns(frame)
    correction = correction_of(frame)
    headers = [*keys, "metric", "n", "treatment", "control", "difference", "95% CI", "p", f"p ({correction})"]
    headers += ["d", "g", "effect"]
    rows = []
    for r in frame.iter_rows(named=True):
        n = r["n_pairs"] if r["n_pairs"] is not None else (r["n_treatment"] or 0) + (r["n_control"] or 0)
        rows.append(
            [
                *(format_value(key, r[key]) for key in keys),
                str(r["metric"]),
                format_number(n),
                format_number(r["mean_treatment"]),
                format_number(r["mean_control"]),
                format_number(r["difference"]),
                format_ci(r["ci_low"], r["ci_high"]),
                format_p(r["p_value"]),
                format_p(r["p_adjusted"]) + (" *" if r["significant"] else ""),
                format_number(r["cohens_d"], 2),
                format_number(r["hedges_g"], 2),
                r["effect_size"] or "",
            ]
        )
    numeric = [False] * (len(keys) + 1) + [True] * 9 + [False]
    return Cells(headers, rows, numeric)


#: The columns of a table of means with intervals per system (:func:`mas_eval.stats.describe`).
_PROFILE = {"system", "metric", "mean", "ci_low", "ci_high", "interval"}


def _profile_cells(frame: pl.DataFrame) -> Cells:
    """Metrics as rows, systems as columns, each cell ``mean [low, high]``; two systems get their difference."""
    keys = frame.columns[: frame.columns.index("system")]
    systems = frame["system"].unique(maintain_order=True).to_list()
    rows: list[list[str]] = []
    for values, part in frame.group_by([*keys, "metric"], maintain_order=True):
        by_system = {r["system"]: r for r in part.iter_rows(named=True)}
        row = [format_value(k, v) for k, v in zip([*keys, "metric"], values, strict=True)]
        for system in systems:
            r = by_system.get(system)
            row.append(
                "" if r is None else f"{format_number(r['mean'])} {format_ci(r['ci_low'], r['ci_high'])}".strip()
            )
        if len(systems) == 2:
            a, b = (by_system.get(system) for system in systems)
            row.append(format_number(None if a is None or b is None else a["mean"] - b["mean"]))
        row.append(", ".join(sorted(set(part["interval"].drop_nulls().to_list()))))
        rows.append(row)
    headers = [*keys, "metric", *map(str, systems)]
    headers += [f"{systems[0]} − {systems[1]}"] if len(systems) == 2 else []
    headers.append("95% interval")
    numeric = [False] * (len(keys) + 1) + [True] * (len(headers) - len(keys) - 2) + [False]
    return Cells(headers, rows, numeric)


def cells(table: ReportTable) -> Cells:
    """Return the cells of ``table`` for a reader: a comparison's chosen columns, else every column.

    A comparison is the table named ``comparison`` or ``<section>_comparison`` (rows of it).

    >>> from mas_eval.report.document import ReportTable
    >>> table = ReportTable("t", "", pl.DataFrame({"system": ["mas"], "dqs": [0.123456], "p_value": [2e-5]}))
    >>> cells(table)
    Cells(headers=['system', 'dqs', 'p_value'], rows=[['mas', '0.1235', '2.0e-05']], numeric=[False, True, True])
    """
    if table.name == "comparison" or table.name.endswith("_comparison"):  # a section's rows of the comparison
        return _comparison_cells(table.frame)
    if set(table.frame.columns) >= _PROFILE:  # means with intervals: metrics as rows, systems as columns
        return _profile_cells(table.frame)
    if table.name == "headline":  # metrics as rows, systems as columns: as the terminal prints it
        headers, rows = system_means_rows(table.frame.to_dicts())
        return Cells(headers, rows, [False, *[True] * (len(headers) - 1)])
    frame = table.frame
    rows = [[format_value(name, value) for name, value in row.items()] for row in frame.iter_rows(named=True)]
    return Cells(frame.columns, rows, [dtype.is_numeric() for dtype in frame.dtypes])
