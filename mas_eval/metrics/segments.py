"""Group reductions as ordered segment reductions over sorted keys, with numpy.

Scoring groups rows by keys that are pairs of integer codes packed in one ``uint64``, a run's
and a label's (:mod:`mas_eval.metrics.codes`); each shard of a Dataset is written sorted by
run, and within a run by its other key columns. A group's sum is then a :func:`numpy.bincount`
over the rows' group numbers, and its extremes an unbuffered :meth:`numpy.ufunc.at`: no hash
table, no partial sums.

Each group is reduced on its own, in row order (a sum adds its terms one by one, as a plain
loop would). A group's result therefore depends only on
its own rows in that order: never on thread counts, on how rows were split between threads,
or on the other runs in the same shard. That is what makes scoring bit-for-bit reproducible
from call to call, across ``POLARS_MAX_THREADS`` and between a sharded and an unsharded
Dataset (hash aggregations merge partial sums in no fixed order).

>>> import numpy as np
>>> groups = Groups.of(np.array([7, 3, 7, 3, 9], dtype=np.uint64))
>>> groups.keys.tolist(), groups.sum(np.array([1.0, 2.0, 3.0, 4.0, 5.0])).tolist()
([3, 7, 9], [6.0, 4.0, 5.0])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["DENSE_SLOTS_PER_ROW", "Groups", "is_sorted", "label_of", "merged", "pack", "run_of", "union"]

_SHIFT = np.uint64(32)


def pack(run: np.ndarray, label: np.ndarray) -> np.ndarray:
    """Pack a pair of ``uint32`` codes into one ``uint64`` key per row, ordered as the pairs are.

    This is the numpy twin of :func:`mas_eval.metrics.codes.pack`.

    Examples
    --------
    >>> import numpy as np
    >>> from mas_eval.metrics.segments import label_of, pack, run_of
    >>> keys = pack(np.array([0, 0, 1]), np.array([2, 5, 0]))
    >>> keys.tolist()
    [2, 5, 4294967296]
    >>> run_of(keys).tolist(), label_of(keys).tolist()
    ([0, 0, 1], [2, 5, 0])
    """
    return (run.astype(np.uint64) << _SHIFT) | label.astype(np.uint64)


def run_of(keys: np.ndarray) -> np.ndarray:
    """Return the run codes of :func:`pack` ed keys."""
    return (keys >> _SHIFT).astype(np.uint32)


def label_of(keys: np.ndarray) -> np.ndarray:
    """Return the label codes of :func:`pack` ed keys."""
    return (keys & np.uint64(0xFFFFFFFF)).astype(np.uint32)


def union(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Return the sorted distinct values of two sorted arrays (a merge: timsort finds the two runs).

    Examples
    --------
    >>> import numpy as np
    >>> from mas_eval.metrics.segments import union
    >>> union(np.array([1, 3, 5]), np.array([2, 3, 6])).tolist()
    [1, 2, 3, 5, 6]
    """
    merged = np.concatenate([first, second])
    merged.sort(kind="stable")
    if len(merged) < 2:
        return merged
    return merged[np.append(True, merged[1:] != merged[:-1])]


def merged(first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`union` of two sorted distinct arrays, and where each one's values sit in it.

    >>> keys, first_at, second_at = merged(np.array([1, 4]), np.array([2, 4]))
    >>> keys.tolist(), first_at.tolist(), second_at.tolist()
    ([1, 2, 4], [0, 2], [1, 2])
    """
    if len(first) == len(second) and np.array_equal(first, second):
        # The usual case (every agent listed has beliefs, every alternative is scored and
        # believed in): no merge and no search.
        at = np.arange(len(first))
        return first, at, at
    keys = union(first, second)
    return keys, np.searchsorted(keys, first), np.searchsorted(keys, second)


def is_sorted(keys: np.ndarray) -> bool:
    """Whether ``keys`` never decrease (one comparison per row).

    Examples
    --------
    >>> import numpy as np
    >>> from mas_eval.metrics.segments import is_sorted
    >>> is_sorted(np.array([1, 1, 2])), is_sorted(np.array([2, 1]))
    (True, False)
    """
    return bool(np.all(keys[1:] >= keys[:-1]))


#: Packed keys are grouped by direct addressing when (runs x labels) slots are at most this many
#: times the rows (else by a sort): two passes over the rows and one over the slots.
DENSE_SLOTS_PER_ROW = 4


@dataclass(frozen=True)
class Groups:
    """Rows grouped by a key: the sorted distinct keys, and each row's group.

    Every reduction reads the rows in row order and keeps one accumulator per group, so a
    group's result depends only on its own rows in that order.

    Attributes
    ----------
    keys
        The distinct keys, ascending.
    index
        Per row, the position of its key in ``keys``.
    """

    keys: np.ndarray
    index: np.ndarray

    @classmethod
    def of(cls, keys: np.ndarray) -> Groups:
        """Group rows by :func:`pack` ed ``keys``.

        Keys already sorted are grouped in one comparison per row. Otherwise, when the
        (run, label) pairs are few enough, each row's pair is addressed directly in a table of
        runs x labels slots (no sort); else a stable argsort orders them.
        """
        if len(keys) == 0 or is_sorted(keys):
            new = np.empty(len(keys), dtype=bool)
            new[:1] = True
            np.not_equal(keys[1:], keys[:-1], out=new[1:])
            return cls(keys=keys[new], index=np.cumsum(new) - 1)
        runs, labels = run_of(keys).astype(np.int64), label_of(keys).astype(np.int64)
        width = int(labels.max()) + 1
        slots = (int(runs.max()) + 1) * width
        if slots <= DENSE_SLOTS_PER_ROW * len(keys):
            slot = runs * width + labels
            used = np.zeros(slots, dtype=bool)
            used[slot] = True
            group_of_slot = np.cumsum(used) - 1
            present = np.flatnonzero(used)
            return cls(keys=pack(present // width, present % width), index=group_of_slot[slot])
        distinct, index = np.unique(keys, return_inverse=True)
        return cls(keys=distinct, index=index.reshape(-1))

    @classmethod
    def sorted_runs(cls, runs: np.ndarray, count: int) -> Groups:
        """Rows grouped by run code, with a group for every run code in ``[0, count)``.

        Runs without rows have empty groups: their sums are 0, their counts 0.
        """
        return cls(keys=np.arange(count, dtype=np.uint64), index=runs.astype(np.intp))

    def __len__(self) -> int:
        """Return the number of groups."""
        return len(self.keys)

    def _at(self, ufunc: np.ufunc, values: np.ndarray, empty: float) -> np.ndarray:
        """``ufunc`` over each group's values, in row order; ``empty`` for a group without rows."""
        out = np.full(len(self.keys), empty, dtype=np.float64)
        ufunc.at(out, self.index, values)
        return out

    def sum(self, values: np.ndarray) -> np.ndarray:
        """Per group, the sum of ``values`` added one by one in row order (0 for an empty group)."""
        return np.bincount(self.index, weights=values, minlength=len(self.keys))

    def count(self, mask: np.ndarray | None = None) -> np.ndarray:
        """Per group, its rows (where ``mask`` is true)."""
        index = self.index if mask is None else self.index[mask]
        return np.bincount(index, minlength=len(self.keys))

    def any(self, mask: np.ndarray) -> np.ndarray:
        """Per group, whether ``mask`` is true on any of its rows."""
        return self.count(mask) > 0

    def min(self, values: np.ndarray) -> np.ndarray:
        """Per group, the smallest value (NaN propagates; +inf for an empty group)."""
        return self._at(np.minimum, values, np.inf)

    def max(self, values: np.ndarray) -> np.ndarray:
        """Per group, the largest value (NaN propagates; -inf for an empty group)."""
        return self._at(np.maximum, values, -np.inf)

    def first_row(self, mask: np.ndarray) -> np.ndarray:
        """Per group, the first row where ``mask`` is true, or -1."""
        rows = np.flatnonzero(mask)
        first = np.full(len(self.keys), len(mask), dtype=np.int64)
        np.minimum.at(first, self.index[rows], rows)
        return np.where(first < len(mask), first, -1)

    def spread(self, per_group: np.ndarray) -> np.ndarray:
        """Spread a per-group array to a per-row one."""
        return per_group[self.index]
