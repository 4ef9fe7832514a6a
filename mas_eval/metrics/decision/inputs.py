"""The decision family's input tables, collected once and sorted by their keys.

Every table arrives keyed by integer codes (:mod:`mas_eval.metrics.codes`) whose order is the
labels' order. Sorted by its key, each table's groups are contiguous segments
(:mod:`mas_eval.metrics.segments`). A sharded Dataset is written sorted already, so the sort
here is one comparison per row; other input is sorted once (stably).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import polars as pl

from mas_eval.data.schema import TABLES
from mas_eval.data.validation import validate

__all__ = ["sorted_table"]

Labels = Callable[[pl.LazyFrame], pl.LazyFrame]


def _lexsorted(keys: list[np.ndarray]) -> bool:
    """Whether rows are in ascending order of ``keys`` (the first the most significant)."""
    if len(keys[0]) < 2:
        return True
    undecided = np.ones(len(keys[0]) - 1, dtype=bool)
    for key in keys:
        later, earlier = key[1:], key[:-1]
        if np.any(undecided & (later < earlier)):
            return False
        undecided &= later == earlier
    return True


def _has_repeats(keys: list[np.ndarray]) -> bool:
    """Whether two adjacent rows (of rows sorted by ``keys``) have the same key."""
    if len(keys[0]) < 2:
        return False
    same = np.ones(len(keys[0]) - 1, dtype=bool)
    for key in keys:
        same &= key[1:] == key[:-1]
    return bool(same.any())


def sorted_table(
    name: str, frame: pl.LazyFrame, columns: list[str | pl.Expr], labels: Mapping[str, str], decode: Callable
) -> pl.DataFrame:
    """Table ``name``'s key and ``columns``, collected and sorted by the key.

    ``labels`` maps the key columns to their kinds and ``decode(labels)`` gives the function
    that turns codes back into labels, for error messages. A null key or a repeated key is a
    :class:`~mas_eval.errors.DataError` naming the table, column and keys: scoring relies on
    every key being one group.
    """
    key = list(TABLES[name].key)
    table = frame.select(*key, *columns).collect()
    to_labels = decode(labels)
    if any(table[column].has_nulls() for column in key):
        validate({name: table}, "values", columns=key, labels=to_labels)
    arrays = [table[column].to_numpy() for column in key]
    if not _lexsorted(arrays):
        order = np.lexsort(arrays[::-1])
        table = table[order]
        arrays = [array[order] for array in arrays]
    if _has_repeats(arrays):
        validate({name: to_labels(table.lazy())}, "unique keys")
    return table
