"""Small expressions shared by the metric modules."""

from __future__ import annotations

import polars as pl

from mas_eval.schema import RUN_KEY

__all__ = ["TIE_DECIMALS", "rank_descending"]

#: Scores equal to this many decimals are ties: floating-point sums taken in a different
#: order must not reorder alternatives that the formula ranks equal.
TIE_DECIMALS = 12


def rank_descending(value: str, label: str, *, within: str = RUN_KEY) -> pl.Expr:
    """1 for the highest ``value`` within each ``within`` group; ties go to the ``label`` that sorts first.

    Rows whose ``value`` is null are not ranked (null) and do not take a place.
    """
    negated = (-pl.col(value).round(TIE_DECIMALS)).fill_null(float("inf"))
    rank = pl.struct(negated.alias("negated"), pl.col(label)).rank("ordinal").over(within).cast(pl.Int64)
    return pl.when(pl.col(value).is_not_null()).then(rank)


def first_label_of_max(value: str, label: str) -> pl.Expr:
    """Aggregation: the ``label`` of the group's largest ``value``; exact ties go to the first id."""
    return pl.col(label).filter(pl.col(value) == pl.col(value).max()).min()
