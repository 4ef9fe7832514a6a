"""Small expressions shared by the metric modules."""

from __future__ import annotations

import polars as pl

from mas_eval.schema import RUN_KEY

__all__ = ["TIE_DECIMALS", "gini_of_sorted", "rank_descending"]

#: Scores equal to this many decimals are ties: floating-point sums taken in a different
#: order must not reorder alternatives that the formula ranks equal.
TIE_DECIMALS = 12


def rank_descending(value: str, *, within: str = RUN_KEY) -> pl.Expr:
    """1 for the highest ``value`` within each ``within`` group; null values are not ranked.

    Ties go to the row that comes first, so the frame must be sorted by ``(within, label)``
    for ties to go to the label that sorts first (SPEC.md §1). A sort the output needs anyway
    is far cheaper than ranking on ``(value, label)`` pairs.
    """
    return pl.col(value).round(TIE_DECIMALS).rank("ordinal", descending=True).over(within).cast(pl.Int64)


def gini_of_sorted(values: pl.Expr) -> pl.Expr:
    """Seed 004's Gini of each row's list of values, already sorted ascending (0 when they sum to 0).

    The pipeline collects each run's sorted values in its one aggregation pass and finishes
    with list arithmetic: an order statistic inside a group-by aggregation is Polars' slow
    path. :meth:`MasExpr.gini <mas_eval.metrics.namespace.MasExpr.gini>` is the same formula
    as an aggregation for users' own queries.
    """
    n = values.list.len()
    positions = pl.int_ranges(1, n + 1).cast(pl.List(pl.Float64))
    spread = (values * (2.0 * positions - n - 1.0)).list.sum()
    total = values.list.sum()
    return pl.when(n == 0).then(None).when(total > 0).then(spread / (n * total)).otherwise(0.0)
