"""The comparison table under construction: numpy columns, a validity mask and per-row warnings."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from mas_eval.stats.corrections import adjust_pvalues
from mas_eval.stats.effects import effect_size_label

__all__ = ["COLUMNS", "INFERENTIAL", "Rows"]

#: Output columns after the ``by`` keys, in order.
COLUMNS = [
    "metric", "test", "n_treatment", "n_control", "n_pairs", "n_clusters",
    "mean_treatment", "mean_control", "std_treatment", "std_control", "difference", "improvement_percentage",
    "statistic", "dof", "p_value", "p_adjusted", "significant", "ci_low", "ci_high", "ci_method",
    "cohens_d", "hedges_g", "d_ci_low", "d_ci_high", "d_type", "effect_size", "power", "correlation", "warning",
]  # fmt: skip

_COUNTS = ("n_treatment", "n_control", "n_pairs", "n_clusters")
_STRINGS = ("metric", "test", "ci_method", "d_type")
_DESCRIPTIVE = ("mean_treatment", "mean_control", "std_treatment", "std_control", "difference")
#: Columns that a degenerate row leaves null.
INFERENTIAL = (
    "statistic", "dof", "p_value", "ci_low", "ci_high", "cohens_d", "hedges_g", "d_ci_low", "d_ci_high",
    "power", "correlation",
)  # fmt: skip
#: Columns that must be finite in a valid row (a NaN there is reported, never passed on silently).
_REQUIRED = ("statistic", "p_value", "ci_low", "ci_high", "cohens_d")


@dataclass
class Rows:
    """Columns as numpy arrays (NaN = missing), ``ok`` rows for inference, and warnings per row."""

    size: int
    cols: dict[str, np.ndarray] = field(default_factory=dict)
    ok: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    warnings: list[list[str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.ok.size != self.size:
            self.ok = np.ones(self.size, dtype=bool)
        if len(self.warnings) != self.size:
            self.warnings = [[] for _ in range(self.size)]
        for name in COLUMNS:
            if name not in self.cols and name not in ("warning", "p_adjusted", "significant", "effect_size"):
                self.cols[name] = np.full(self.size, None if name in _STRINGS else np.nan, dtype=_dtype(name))

    def set(self, name: str, values: object, mask: np.ndarray | None = None) -> None:
        values = np.broadcast_to(np.asarray(values, dtype=_dtype(name)), (self.size,))
        if mask is None:
            self.cols[name] = values.copy()
        else:
            self.cols[name][mask] = values[mask]

    def warn(self, mask: np.ndarray, message: str | Callable[[int], str], *, invalid: bool = True) -> None:
        """Add ``message`` (or ``message(row)``) to the rows of ``mask``; ``invalid`` drops them."""
        for row in np.flatnonzero(mask):
            self.warnings[row].append(message(row) if callable(message) else message)
        if invalid:
            self.ok &= ~mask

    def take(self, mask: np.ndarray, other: Rows) -> None:
        """Replace the rows of ``mask`` by ``other``'s (same size)."""
        for name, values in other.cols.items():
            self.cols[name][mask] = values[mask]
        self.ok[mask] = other.ok[mask]
        for row in np.flatnonzero(mask):
            self.warnings[row] = list(other.warnings[row])

    def finish(self, *, correction: str, alpha: float) -> pl.DataFrame:
        """Null the inference of invalid rows, adjust p over the family, label, and build the frame."""
        cols = {name: values.copy() for name, values in self.cols.items()}
        with np.errstate(all="ignore"):
            finite_required = np.logical_and.reduce([np.isfinite(cols[name]) for name in _REQUIRED])
        self.warn(self.ok & ~finite_required, "a statistic came out non-finite; inference withheld")
        for name in INFERENTIAL:
            cols[name][~self.ok] = np.nan
        cols["ci_method"][~np.isfinite(cols["ci_low"])] = None
        cols["d_type"][~np.isfinite(cols["cohens_d"])] = None

        p_adjusted = adjust_pvalues(np.where(self.ok, cols["p_value"], np.nan), correction)
        significant = np.full(self.size, None, dtype=object)
        defined = np.isfinite(p_adjusted)
        significant[defined] = p_adjusted[defined] <= alpha
        cols["p_adjusted"] = p_adjusted
        cols["significant"] = significant
        cols["effect_size"] = effect_size_label(cols["cohens_d"])
        cols["warning"] = np.array(["; ".join(w) if w else None for w in self.warnings], dtype=object)

        series = []
        for name in COLUMNS:
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


def _dtype(name: str) -> type:
    return object if name in (*_STRINGS, "warning", "effect_size", "significant") else np.float64
