"""Each named score of ``outcomes`` as a run column of its name (the specification's "Outcomes of any benchmark")."""

from __future__ import annotations

import polars as pl

from mas_eval.data.schema import RUN_KEY
from mas_eval.errors import DataError
from mas_eval.metrics.registry import check_named

__all__ = ["score_columns"]


def score_columns(runs: pl.LazyFrame, outcomes: pl.LazyFrame) -> pl.LazyFrame:
    """One column per score name of ``outcomes``, one row per run of ``runs``, sorted by ``run_id``.

    Parameters
    ----------
    runs, outcomes
        The Dataset's tables keyed by run codes (:mod:`mas_eval.metrics.codes`).

    Returns
    -------
    pl.LazyFrame
        ``run_id`` and, for each name in ``outcomes.name`` (sorted), the run's score: for a
        pass/fail score (``outcomes.passed`` recorded) a Boolean, whether the run passed, which
        :func:`mas_eval.compare` and the statistics read as 1/0; for any other score its
        ``value`` (Float64). A run without a row of the name gets null.

    Raises
    ------
    DataError
        A name is pass/fail in some runs and not in others (the Dataset's rule, checked here
        too since ``score`` does not validate), or is another run column of the Scores
        (:func:`~mas_eval.metrics.registry.check_named`): rename it in ``outcomes.name``.

    Notes
    -----
    The names are data, so they are collected here (one ``unique`` over a short column) to
    build the columns; each run's value is its single row of the name (the key is ``(run_id,
    name)``), so no sum is involved and the columns repeat bit for bit.
    """
    kinds = (
        outcomes.group_by("name")
        .agg(pass_fail=pl.col("passed").is_not_null().any(), mixed=pl.col("passed").is_null().n_unique() > 1)
        .sort("name")
        .collect()
    )
    mixed = kinds.filter("mixed")["name"].to_list()
    if mixed:
        msg = (
            f"outcomes: the score(s) {', '.join(map(repr, mixed[:5]))} have outcomes.passed in some runs and null in "
            "others; a score is pass/fail in every run or in none: record passed for all of its rows or for none"
        )
        raise DataError(msg)
    names = kinds["name"].to_list()
    check_named(names, "outcomes.name")
    if not names:
        return runs.select(RUN_KEY).sort(RUN_KEY)
    # One expression per score name (a handful per benchmark), not per run: the pivot stays one group-by.
    columns = [
        pl.col("passed" if pass_fail else "value").filter(pl.col("name") == name).first().alias(name)
        for name, pass_fail in kinds.select("name", "pass_fail").iter_rows()
    ]
    wide = outcomes.group_by(RUN_KEY).agg(*columns)
    return runs.select(RUN_KEY).join(wide, on=RUN_KEY, how="left").sort(RUN_KEY)
