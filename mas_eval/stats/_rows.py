"""The comparison table as values: rows (numpy columns, validity, warnings) and the patches steps return.

A design (:mod:`~mas_eval.stats.designs`) builds the base :class:`Rows` with a :class:`RowsBuilder`.
Each optional step of :func:`~mas_eval.stats.comparison.compare` (clusters, rank tests, the
bootstrap, the mixed model, notes) reads the rows it is given and returns a :class:`Patch`: the
columns it sets on which rows, the warnings it adds, the rows it finds degenerate.
:meth:`Rows.patched` returns new rows with a patch applied; nothing is changed in place.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from mas_eval.stats.corrections import adjust_pvalues
from mas_eval.stats.effects import effect_size_label
from mas_eval.stats.options import COMPARISON_COLUMNS

__all__ = ["INFERENTIAL", "INTERNAL", "Patch", "Rows", "RowsBuilder", "warnings_on"]

_COUNTS = ("n_treatment", "n_control", "n_pairs", "n_clusters")
_STRINGS = ("metric", "test", "ci_method", "d_type")
#: Columns computed when the table is finished, from the others.
_DERIVED = ("warning", "p_adjusted", "correction", "significant", "effect_size")
#: Columns that a degenerate row leaves null.
INFERENTIAL = (
    "statistic", "dof", "p_value", "ci_low", "ci_high", "cohens_d", "hedges_g", "d_ci_low", "d_ci_high",
    "power", "correlation",
)  # fmt: skip
#: Columns the rows carry for later steps but the table does not show: the standard error of the
#: difference, which a test against a margin shifts by (``compare(..., hypothesis=...)``).
INTERNAL = ("standard_error",)
#: Columns that must be finite in a valid row (a NaN there is reported, never passed on silently).
_REQUIRED = ("statistic", "p_value", "ci_low", "ci_high", "cohens_d")

#: Warnings by row: only the rows that get one are keys.
RowWarnings = Mapping[int, Sequence[str]]


def _dtype(name: str) -> type:
    return object if name in (*_STRINGS, *_DERIVED) else np.float64


def column_values(name: str, values: object, size: int) -> np.ndarray:
    """``values`` (an array or one value for every row) as a writable column ``name`` of ``size`` rows."""
    return np.broadcast_to(np.asarray(values, dtype=_dtype(name)), (size,)).copy()


def warnings_on(mask: np.ndarray, message: str | Callable[[int], str]) -> dict[int, list[str]]:
    """``{row: [message]}`` for the rows of ``mask``; ``message`` may be a function of the row."""
    return {int(r): [message(int(r)) if callable(message) else message] for r in np.flatnonzero(mask)}


@dataclass(frozen=True)
class Patch:
    """What one step contributes to the table.

    Attributes
    ----------
    columns
        Column name -> values for every row (or one value for all); only the ``where`` rows are used.
    where
        The rows whose ``columns`` the step sets; ``None``: every row.
    warnings
        Warnings the step adds after a row's others, by row.
    invalid
        Rows the step finds degenerate (their inference is withheld); ``None``: none.
    first_warnings
        Warnings put before a row's others, by row (a fallback explains the row first).
    whole_rows
        The ``where`` rows are the step's own from scratch: their earlier warnings and validity
        are dropped (the mixed model's rows replace the design's).
    """

    columns: Mapping[str, object] = field(default_factory=dict)
    where: np.ndarray | None = None
    warnings: RowWarnings = field(default_factory=dict)
    invalid: np.ndarray | None = None
    first_warnings: RowWarnings = field(default_factory=dict)
    whole_rows: bool = False


@dataclass(frozen=True)
class Rows:
    """Columns as numpy arrays (NaN = missing), ``ok`` rows for inference, and warnings per row.

    Treat as read-only: :meth:`patched` and :meth:`finish` return new values.
    """

    size: int
    cols: Mapping[str, np.ndarray]
    ok: np.ndarray
    warnings: tuple[tuple[str, ...], ...]

    def patched(self, patch: Patch) -> Rows:
        """Return these rows with ``patch``'s columns, warnings and degenerate rows."""
        where = np.ones(self.size, dtype=bool) if patch.where is None else patch.where
        cols = dict(self.cols)
        for name, values in patch.columns.items():
            column = cols[name].copy()
            column[where] = column_values(name, values, self.size)[where]
            cols[name] = column
        ok = self.ok.copy()
        notes = [list(w) for w in self.warnings]
        if patch.whole_rows:
            ok[where] = True
            for r in np.flatnonzero(where):
                notes[r] = []
        for r, messages in patch.first_warnings.items():
            notes[r][:0] = messages
        for r, messages in patch.warnings.items():
            notes[r].extend(messages)
        if patch.invalid is not None:
            ok &= ~patch.invalid
        return Rows(self.size, cols, ok, tuple(tuple(w) for w in notes))

    def finish(self, *, correction: str, alpha: float) -> pl.DataFrame:
        """Null the inference of invalid rows, adjust p over the family, label, and build the frame."""
        cols = {name: values.copy() for name, values in self.cols.items()}
        with np.errstate(all="ignore"):
            finite_required = np.logical_and.reduce([np.isfinite(cols[name]) for name in _REQUIRED])
        non_finite = self.ok & ~finite_required
        ok = self.ok & ~non_finite
        notes = [list(w) for w in self.warnings]
        for r in np.flatnonzero(non_finite):
            notes[r].append("a statistic came out non-finite; inference withheld")
        for name in INFERENTIAL:
            cols[name][~ok] = np.nan
        cols["ci_method"][~np.isfinite(cols["ci_low"])] = None
        cols["d_type"][~np.isfinite(cols["cohens_d"])] = None

        p_adjusted = adjust_pvalues(np.where(ok, cols["p_value"], np.nan), correction)
        significant = np.full(self.size, None, dtype=object)
        defined = np.isfinite(p_adjusted)
        significant[defined] = p_adjusted[defined] <= alpha
        cols["p_adjusted"] = p_adjusted
        cols["correction"] = np.full(self.size, correction, dtype=object)
        cols["significant"] = significant
        cols["effect_size"] = effect_size_label(cols["cohens_d"])
        cols["warning"] = np.array(["; ".join(w) if w else None for w in notes], dtype=object)

        series = []
        for name in COMPARISON_COLUMNS:
            values = cols[name]
            if name in _COUNTS:
                series.append(pl.Series(name, values, dtype=pl.Float64, nan_to_null=True).cast(pl.Int64))
            elif name == "significant":
                series.append(pl.Series(name, values.tolist(), dtype=pl.Boolean))
            elif values.dtype == object:
                series.append(pl.Series(name, values.tolist(), dtype=pl.String))
            else:
                series.append(pl.Series(name, values, dtype=pl.Float64, nan_to_null=True))
        return pl.DataFrame(series)


class RowsBuilder:
    """Builds a design's :class:`Rows` column by column (every column starts missing, every row valid)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.cols = {
            name: np.full(size, None if name in _STRINGS else np.nan, dtype=_dtype(name))
            for name in (*COMPARISON_COLUMNS, *INTERNAL)
            if name not in _DERIVED
        }
        self.ok = np.ones(size, dtype=bool)
        self.warnings: list[list[str]] = [[] for _ in range(size)]

    def set(self, name: str, values: object) -> None:
        """Column ``name`` for every row (an array, or one value for all)."""
        self.cols[name] = column_values(name, values, self.size)

    def warn(self, mask: np.ndarray, message: str | Callable[[int], str], *, invalid: bool = True) -> None:
        """Add ``message`` (or ``message(row)``) to the rows of ``mask``; ``invalid`` drops them."""
        for r, messages in warnings_on(mask, message).items():
            self.warnings[r].extend(messages)
        if invalid:
            self.ok &= ~mask

    def build(self) -> Rows:
        """Return the rows built so far."""
        return Rows(self.size, dict(self.cols), self.ok.copy(), tuple(tuple(w) for w in self.warnings))
