"""Ranks within groups with a documented tie rule: exact ties go to the id that sorts first."""

from __future__ import annotations

import numpy as np
import polars as pl

from mas_eval.metrics.arrays import nullable, to_series

__all__ = ["SMALL_GROUP_SIZE", "TIE_TOLERANCE", "with_descending_ranks"]

#: Values of a group tie when they differ by at most this much times ``max(1, |value|)``. The
#: formula may rank two alternatives equal while their computed values differ in the last bits
#: (their sums add the same terms in another order). Rounding to 12 decimals, used before, split
#: such a pair whenever a rounding boundary fell between them: with 100,000 runs of two exactly
#: tied alternatives each, 1 run in one call of three ranked the later id first.
TIE_TOLERANCE = 1e-12

#: Up to this many rows per group, ranks are counted with shifted comparisons (whole-column
#: arithmetic, ~4(n - 1) comparisons per row with the tie snapping) rather than snapped in value
#: order and ranked by a window: the crossover measured between 6 and 8 rows (docs/performance.md).
SMALL_GROUP_SIZE = 7


def _tie_ceiling(value: pl.Expr) -> pl.Expr:
    """Return the largest value that ties with ``value`` (``value`` itself when it is not finite)."""
    width = pl.when(value.is_finite()).then(TIE_TOLERANCE * pl.max_horizontal(pl.lit(1.0), value.abs()))
    return value + width.otherwise(0.0)


def _beats(
    other: np.ndarray, other_nan: np.ndarray, value: np.ndarray, value_nan: np.ndarray, *, ties: bool
) -> np.ndarray:
    """Whether ``other`` ranks above ``value`` (or equal, with ``ties``), NaN above every number."""
    above = (other_nan & ~value_nan) | (other > value)
    if ties:
        above |= (other_nan & value_nan) | (other == value)
    return above


def _small_group_ranks(group: np.ndarray, value: np.ndarray, valid: np.ndarray, group_size: int) -> np.ndarray:
    """Ranks in groups of at most ``group_size`` consecutive rows, by shifted comparisons.

    Each value is first snapped to the largest value of its group in its tie range; then a
    row's rank is 1 plus the rows of its group that beat it (a higher value, or an equal one
    on an earlier row). ``value`` holds 0 where not ``valid``.
    """
    nan = valid & np.isnan(value)
    finite = valid & np.isfinite(value)
    ceiling = np.where(finite, value + TIE_TOLERANCE * np.maximum(1.0, np.abs(value)), value)
    snapped = value.copy()
    same = {d: (group[d:] == group[:-d]) & valid[d:] & valid[:-d] for d in range(1, group_size)}
    for d, pair in same.items():
        for mine, theirs in ((slice(d, None), slice(None, -d)), (slice(None, -d), slice(d, None))):
            other = value[theirs]
            ties = pair & finite[mine] & (other >= value[mine]) & (other <= ceiling[mine])
            snapped[mine] = np.where(ties, np.maximum(snapped[mine], other), snapped[mine])
    beaten = np.ones(len(value), dtype=np.int64)
    for d, pair in same.items():
        # The row d before beats on an equal value, the row d after only on a higher one.
        before = _beats(snapped[:-d], nan[:-d], snapped[d:], nan[d:], ties=True)
        after = _beats(snapped[d:], nan[d:], snapped[:-d], nan[:-d], ties=False)
        beaten[d:] += pair & before
        beaten[:-d] += pair & after
    return beaten


def _snapped_large_groups(frame: pl.DataFrame, value: str, group: str) -> pl.Series:
    """Snap each value to the largest value of its group that is at least it and ties with it.

    This works for groups of any size.

    Sorted from the highest value down within each group, the values that tie with a row from
    above sit just before it: look back one row, then two, ... until no row of any group finds
    one within its tie ceiling. The values before a row only grow with the distance, so the
    last one found is the largest. A loop over distances, as long as the longest run of ties.
    """
    v, g = pl.col(value), pl.col(group)
    ordered = (
        frame.select(group, value)
        .with_row_index("_row")
        .sort([group, value], descending=[False, True], nulls_last=True)
        .with_columns(_ceiling=_tie_ceiling(v))
    )
    snapped = ordered[value]
    for distance in range(1, ordered.height):
        found = ordered.select(
            pl.when((g.shift(distance) == g) & (v.shift(distance) <= pl.col("_ceiling"))).then(v.shift(distance))
        ).to_series()
        if found.null_count() == found.len():
            break
        snapped = pl.select(pl.max_horizontal(snapped, found)).to_series()
    # Back to the frame's row order.
    return snapped.gather(ordered["_row"].arg_sort())


def with_descending_ranks(frame: pl.DataFrame, ranks: dict[str, str], *, group: str) -> pl.DataFrame:
    r"""Add a column ``rank`` per ``{rank: value}`` to ``frame``: 1 for the highest ``value`` in each ``group``.

    Ties go to the row that comes first; null values are not ranked.

    ``frame`` must be sorted by ``(group, label)`` (so that ties go to the label that sorts first),
    and each group's rows must be consecutive; a sort the output needs anyway is far cheaper than
    ranking on ``(value, label)`` pairs.

    Notes
    -----
    Ties within :data:`TIE_TOLERANCE`: each value is first replaced by the largest value of its
    group in :math:`[v, v + 10^{-12}\max(1, |v|)]`, and those are ranked exactly, so the ranks of a
    group are always 1..n. Few rows per group (the usual case): a row's rank is 1 plus the rows
    of its group that beat it (a higher value, or an equal one on an earlier row), counted with
    shifted comparisons, whole-column arithmetic (a window rank pays a per-group cost). More
    rows: the values are snapped in value order and ranked by a window. Polars' comparisons
    order NaN (highest) and ±0.0 (equal) as its rank does; nulls beat no row.

    Examples
    --------
    >>> frame = pl.DataFrame({"run": [1, 1, 1], "label": ["a", "b", "c"], "v": [0.5, 0.5 + 1e-15, 0.7]})
    >>> with_descending_ranks(frame, {"rank": "v"}, group="run")["rank"].to_list()
    [2, 3, 1]
    """
    groups = frame[group].to_numpy()
    starts = np.flatnonzero(np.append(True, groups[1:] != groups[:-1])) if len(groups) else groups
    largest_group = int(np.diff(np.append(starts, len(groups))).max()) if len(groups) else 0
    snapped = {rank: f"_snapped_{rank}" for rank in ranks}
    if largest_group <= SMALL_GROUP_SIZE:
        columns = []
        for rank, value in ranks.items():
            values, valid = nullable(frame[value].cast(pl.Float64))
            ranked = _small_group_ranks(groups, values, valid, largest_group)
            columns.append(to_series(rank, ranked, valid, pl.Int64))
        return frame.with_columns(columns)
    frame = frame.with_columns(
        _snapped_large_groups(frame, value, group).alias(snapped[rank]) for rank, value in ranks.items()
    )
    windowed = {
        rank: pl.col(snapped[rank]).rank("ordinal", descending=True).over(group).cast(pl.Int64) for rank in ranks
    }
    return frame.with_columns(**windowed).drop(snapped.values())
