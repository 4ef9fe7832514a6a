"""Group sums and means in Polars whose bits do not depend on thread counts.

A Polars ``group_by`` adds a group's terms in partial sums that threads merge in no fixed
order, so a float sum or mean may differ in its last bits from call to call and with
``POLARS_MAX_THREADS``. Collected as a list, a group keeps its rows' order (Polars guarantees
that order within groups), and the list's sum is then taken by one thread, term by term: the
same bits every time, provided the rows arrive in a fixed order (sort them first). The decision
family's numpy reductions follow the same rule (:mod:`mas_eval.metrics.segments`).

>>> import polars as pl
>>> frame = pl.LazyFrame({"g": ["a", "b", "a"], "x": [0.1, 1.0, 0.2]})
>>> ordered_aggregates(frame, "g", means={"x": pl.col("x")}).sort("g").collect().rows()
[('a', 0.15000000000000002), ('b', 1.0)]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl

__all__ = ["ordered_aggregates"]


def ordered_aggregates(
    frame: pl.LazyFrame,
    by: str | Sequence[str],
    *,
    means: Mapping[str, pl.Expr] | None = None,
    sums: Mapping[str, pl.Expr] | None = None,
    other: Mapping[str, pl.Expr] | None = None,
) -> pl.LazyFrame:
    """Group ``frame`` ``by`` keys: ``means`` and ``sums`` added in row order, ``other`` aggregations as given.

    The means and sums are of expressions over each group's rows; ``other`` holds counts,
    extremes and the like.

    The rows must come in a fixed order (sorted by a key that orders every group's rows).
    """
    means, sums, other = dict(means or {}), dict(sums or {}), dict(other or {})
    return (
        frame.group_by(by)
        .agg(**means, **sums, **other)
        .with_columns(
            *(pl.col(name).list.mean() for name in means),
            *(pl.col(name).list.sum() for name in sums),
        )
    )
