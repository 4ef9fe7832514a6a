"""Polars columns as numpy arrays with a validity mask, and back.

The decision suite reduces numpy arrays over sorted segments (:mod:`mas_eval.metrics.segments`).
A null is carried as a mask beside the values, never as NaN: NaN is a value that the input
checks reject, and a null is a missing value that the formulas skip.
"""

from __future__ import annotations

import numpy as np
import polars as pl

__all__ = ["locate", "nullable", "placed", "take", "to_series"]


def nullable(series: pl.Series, fill: float | int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(values, valid)``: the values with ``fill`` at nulls, and where they are not null.

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval.metrics.arrays import nullable
    >>> values, valid = nullable(pl.Series([1.0, None, 3.0]))
    >>> values.tolist(), valid.tolist()
    ([1.0, 0.0, 3.0], [True, False, True])
    """
    valid = series.is_not_null().to_numpy()
    if series.has_nulls():
        series = series.fill_null(False if series.dtype == pl.Boolean else fill)
    return series.to_numpy(), valid


def to_series(
    name: str, values: np.ndarray, valid: np.ndarray | None = None, dtype: pl.DataType | None = None
) -> pl.Series:
    """Return a Polars column from ``values``, null where ``valid`` is false.

    Examples
    --------
    >>> import numpy as np
    >>> from mas_eval.metrics.arrays import to_series
    >>> to_series("x", np.array([1.5, 2.5]), np.array([True, False])).to_list()
    [1.5, None]
    """
    if valid is None or bool(valid.all()):
        out = pl.Series(name, values)
    else:
        # Not through pyarrow: pa.array imports pandas on its first call, in each new worker (docs/performance.md).
        out = pl.select(pl.when(pl.Series(valid)).then(pl.Series(name, values))).to_series()
    return out if dtype is None else out.cast(dtype)


def take(values: np.ndarray, at: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """``values[at]`` where ``valid``, 0 elsewhere (``at`` may be out of range where not valid).

    Examples
    --------
    >>> import numpy as np
    >>> from mas_eval.metrics.arrays import take
    >>> take(np.array([10.0, 20.0]), np.array([1, 7]), np.array([True, False])).tolist()
    [20.0, 0.0]
    """
    if len(values) == 0:
        return np.zeros(len(at), dtype=values.dtype)
    return np.where(valid, values[np.clip(at, 0, len(values) - 1)], 0).astype(values.dtype)


def locate(
    keys: np.ndarray, wanted: np.ndarray, wanted_valid: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Find where each ``wanted`` key sits in the sorted distinct ``keys``, and whether it is there.

    A left join on sorted keys; a key whose ``wanted_valid`` is false is not looked up.

    Examples
    --------
    >>> import numpy as np
    >>> from mas_eval.metrics.arrays import locate
    >>> at, found = locate(np.array([2, 4, 8]), np.array([4, 5, 8]))
    >>> at.tolist(), found.tolist()
    ([1, 2, 2], [True, False, True])
    """
    if len(keys) == 0:
        return np.zeros(len(wanted), dtype=np.intp), np.zeros(len(wanted), dtype=bool)
    if len(keys) == len(wanted) and np.array_equal(keys, wanted):  # the same keys: no search
        at, found = np.arange(len(keys)), np.ones(len(keys), dtype=bool)
        return at, found if wanted_valid is None else found & wanted_valid
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    found = keys[at] == wanted
    return at, found if wanted_valid is None else found & wanted_valid


def placed(
    at: np.ndarray, size: int, values: np.ndarray, valid: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(values, valid)`` of ``size`` rows: ``values`` at positions ``at``, null (0) elsewhere.

    Examples
    --------
    >>> import numpy as np
    >>> from mas_eval.metrics.arrays import placed
    >>> values, valid = placed(np.array([0, 2]), 4, np.array([7.0, 9.0]))
    >>> values.tolist(), valid.tolist()
    ([7.0, 0.0, 9.0, 0.0], [True, False, True, False])
    """
    out, out_valid = np.zeros(size, dtype=values.dtype), np.zeros(size, dtype=bool)
    out[at] = values
    out_valid[at] = True if valid is None else valid
    return out, out_valid
