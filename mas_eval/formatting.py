"""Numbers as a reader sees them: in terminal tables, Markdown summaries and reports alike.

One place decides how a p-value, an estimate, a confidence interval or a count is written,
so that the terminal and the written summaries never disagree (a p-value is never ``0.0000``).

>>> format_p(0.0312), format_p(0.00012), format_p(5.99e-11), format_p(0.0), format_p(None)
('0.031', '1.2e-04', '6.0e-11', '<1e-16', '')
>>> format_number(0.123456), format_number(-0.0000123), format_number(1234567.0), format_number(42)
('0.1235', '-1.23e-05', '1.23e+06', '42')
>>> format_ci(0.0123, 0.0456)
'[0.0123, 0.0456]'
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from mas_eval.escaping import html_text, one_line

__all__ = [
    "CORRECTION_NAMES", "P_FLOOR", "correction_name", "format_ci", "format_number", "format_p", "format_value",
    "is_p_column", "summary_html", "summary_text", "system_means_rows",
]  # fmt: skip

#: Below this, a p-value is written ``<1e-16``: smaller values are beyond double precision's
#: resolution near 1 (a p computed as ``1 - cdf`` cannot be smaller) and a t distribution's
#: tail underflows to 0 long before any real evidence could justify the digits.
P_FLOOR = 1e-16


def format_p(p: float | None) -> str:
    """Format a p-value: 3 decimals from 0.001 up, 2 significant digits below, ``<1e-16`` at the floor.

    Examples
    --------
    >>> format_p(0.04321), format_p(0.000123), format_p(1e-20), format_p(None)
    ('0.043', '1.2e-04', '<1e-16', '')
    """
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return ""
    if p < P_FLOOR:
        return "<1e-16"
    if p < 0.001:
        return f"{p:.1e}"
    return f"{p:.3f}"


def format_number(value: float | int | None, digits: int = 4) -> str:
    """Format an estimate: ``digits`` decimals, or 3 significant digits when tiny or huge; integers as they are.

    Examples
    --------
    >>> format_number(0.123456), format_number(0.0000123), format_number(2_500_000), format_number(True)
    ('0.1235', '1.23e-05', '2,500,000', 'yes')
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 100_000 else str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value != 0 and (abs(value) < 10 ** -(digits - 1) or abs(value) >= 1e6):
        return f"{value:.3g}" if "e" in f"{value:.3g}" else f"{value:.2e}"
    return f"{value:.{digits}f}"


def format_ci(low: float | None, high: float | None, digits: int = 4) -> str:
    """Format a confidence interval ``[low, high]`` (empty when either end is missing).

    Both ends on the scale of the larger one, so that an end near zero reads ``-0.0008``
    beside ``0.0626``, not ``-7.64e-04``.

    Examples
    --------
    >>> format_ci(-0.000764, 0.0626), format_ci(1.2e-7, 3.4e-7)
    ('[-0.0008, 0.0626]', '[1.2e-07, 3.4e-07]')
    """
    if low is None or high is None:
        return ""
    larger = max(abs(low), abs(high))
    if 10 ** -(digits - 1) <= larger < 1e6:
        return f"[{low:.{digits}f}, {high:.{digits}f}]"
    return f"[{format_number(low, digits)}, {format_number(high, digits)}]"


#: How each multiple-comparison correction reads in a caption, a legend or a column header.
CORRECTION_NAMES = {"holm": "Holm", "fdr_bh": "BH", "bonferroni": "Bonferroni", "none": "unadjusted"}


def correction_name(corrections: Iterable[str | None]) -> str:
    """Name the correction a comparison table's ``correction`` column holds, as a reader reads it.

    ``adjusted`` when the column is empty or names more than one correction.

    Examples
    --------
    >>> correction_name(["holm", "holm"]), correction_name(["fdr_bh"]), correction_name(["none"])
    ('Holm', 'BH', 'unadjusted')
    >>> correction_name([]), correction_name(["holm", "bonferroni"])
    ('adjusted', 'adjusted')
    """
    found = {c for c in corrections if c is not None}
    if len(found) != 1:
        return "adjusted"
    (only,) = found
    return CORRECTION_NAMES.get(only, only)


def is_p_column(name: str) -> bool:
    """Whether a column holds p-values (``p_value``, ``p_adjusted``, ``p``...).

    Examples
    --------
    >>> is_p_column("p_adjusted"), is_p_column("dqs")
    (True, False)
    """
    return name == "p" or name.startswith("p_") or name.endswith("_p")


def format_value(name: str, value: object) -> str:
    """Format any cell of a table: p-values as :func:`format_p`, numbers as :func:`format_number`.

    Examples
    --------
    >>> format_value("p_adjusted", 0.00001234), format_value("estimate", 0.123456), format_value("n", None)
    ('1.2e-05', '0.1235', '')
    """
    if value is None:
        return ""
    if isinstance(value, float) and is_p_column(name):
        return format_p(value)
    if isinstance(value, bool | int | float):
        return format_number(value)
    return str(value)


def system_means_rows(means: list[dict[str, object]]) -> tuple[list[str], list[list[str]]]:
    """Per-system means laid out for a reader: ``(headers, rows)``, metrics as rows.

    ``means`` holds one dict per system with ``system``, ``runs`` and one entry per metric.
    Two systems get a third column, the first minus the second (as a comparison reads it).
    The terminal and the Markdown summary print the same cells.

    Examples
    --------
    >>> system_means_rows([{"system": "mas", "runs": 2, "dqs": 0.75}, {"system": "single", "runs": 2, "dqs": 0.5}])
    (['metric', 'mas', 'single', 'mas - single'], [['runs', '2', '2', ''], ['dqs', '0.7500', '0.5000', '0.2500']])
    """
    systems = [str(row["system"]) for row in means]
    metrics = [name for name in (means[0] if means else {}) if name not in ("system", "runs")]
    headers = ["metric", *systems]
    rows = [["runs", *(format_number(row["runs"]) for row in means)]]  # type: ignore[arg-type]
    rows += [[name, *(format_number(row[name]) for row in means)] for name in metrics]  # type: ignore[arg-type]
    if len(means) == 2:
        first, second = means
        headers.append(f"{systems[0]} - {systems[1]}")
        rows[0].append("")
        for row, name in zip(rows[1:], metrics, strict=True):
            a, b = first[name], second[name]
            row.append(format_number(None if a is None or b is None else a - b))  # type: ignore[operator]
    return headers, rows


#: A summary's longest value and most tables: a ``repr`` stays a glance (under 1,000 characters).
_SUMMARY_VALUE, _SUMMARY_TABLES, _SUMMARY_LENGTH = 120, 12, 999


def _shorten(text: str, limit: int = _SUMMARY_VALUE) -> str:
    text = one_line(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _shape(rows: int | None, columns: int) -> str:
    counted = "? rows" if rows is None else f"{rows:,} row{'s' * (rows != 1)}"
    return f"{counted} x {columns} column{'s' * (columns != 1)}"


def summary_text(title: str, facts: Sequence[tuple[str, str]], tables: Sequence[tuple[str, int | None, int]]) -> str:
    """Summarise a collection of tables in compact plain text (the ``repr`` of ``Scores`` and ``Dataset``).

    ``facts`` are ``(label, value)`` lines; ``tables`` are ``(name, rows, columns)`` (``rows``
    ``None`` when unknown). User text is shown on one line, control characters as escapes, long
    values cut with ``…``, and at most 12 tables listed; the whole stays under 1,000 characters.

    Examples
    --------
    >>> print(summary_text("Scores", [("preset", "spec")], [("runs", 1200, 40), ("agents", 6000, 9)]))
    <Scores: 2 tables>
      preset  spec
      runs    1,200 rows x 40 columns
      agents  6,000 rows x 9 columns
    """
    shown = [(_shorten(name, 30), _shape(rows, columns)) for name, rows, columns in tables[:_SUMMARY_TABLES]]
    if len(tables) > _SUMMARY_TABLES:
        shown.append(("…", f"and {len(tables) - _SUMMARY_TABLES} more tables"))
    lines = [(_shorten(label, 30), _shorten(value)) for label, value in facts] + shown
    width = max((len(label) for label, _ in lines), default=0)
    body = [f"  {label.ljust(width)}  {value}".rstrip() for label, value in lines]
    text = "\n".join([f"<{title}: {len(tables)} table{'s' * (len(tables) != 1)}>", *body])
    return text if len(text) <= _SUMMARY_LENGTH else text[: _SUMMARY_LENGTH - 1] + "…"


def summary_html(title: str, facts: Sequence[tuple[str, str]], tables: Sequence[tuple[str, int | None, int]]) -> str:
    """Summarise a collection of tables in HTML, as :func:`summary_text` does in text; every name escaped.

    It is Jupyter's ``_repr_html_`` of ``Scores`` and ``Dataset``.

    Examples
    --------
    >>> summary_html("Scores", [("preset", "<b>x</b>")], [("runs", 3, 2)]).count("&lt;b&gt;")
    1
    """
    rows = "".join(f"<tr><th>{html_text(label)}</th><td>{html_text(value)}</td></tr>" for label, value in facts)
    cells = "".join(
        f"<tr><td><code>{html_text(name)}</code></td><td>{'?' if rows_ is None else format(rows_, ',')}</td>"
        f"<td>{columns}</td></tr>"
        for name, rows_, columns in tables
    )
    head = f"<strong>{html_text(title)}</strong>: {len(tables)} table{'s' * (len(tables) != 1)}"
    facts_table = f"<table>{rows}</table>" if rows else ""
    tables_table = (
        f"<table><thead><tr><th>table</th><th>rows</th><th>columns</th></tr></thead><tbody>{cells}</tbody></table>"
    )
    return f'<div class="mas-eval-summary"><p>{head}</p>{facts_table}{tables_table}</div>'
