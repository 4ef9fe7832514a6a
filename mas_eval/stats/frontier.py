r"""The accuracy–cost frontier as a table: per system and k, majority-of-k, pass@k and pass^k beside spending.

The figure drawn from it is :func:`mas_eval.plots.frontier_curve`. The runs are read as in
:mod:`~mas_eval.stats.epochs` (one row per run; null outcomes left out; sorted before any sum).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from mas_eval.constraints import NONE, RUN_METRICS, validate_params
from mas_eval.metrics.outcomes.epochs import draw_ratio
from mas_eval.stats._common import (
    ASIDE,
    COLUMN_NAME,
    as_lazy,
    aside_note,
    column_list,
    joined_notes,
    set_aside,
    with_aside,
)
from mas_eval.stats._epoch_runs import (
    EPOCH_COLUMNS,
    K_VALUES,
    POSITION,
    VALUE,
    epoch_runs,
    join_spending,
    k_list,
    named_columns,
)

__all__ = ["accuracy_cost_frontier"]


@validate_params(
    {"run_metrics": [RUN_METRICS], "metric": [COLUMN_NAME], "ks": [K_VALUES, NONE], "tokens": [COLUMN_NAME, NONE],
     "cost": [COLUMN_NAME, NONE], **EPOCH_COLUMNS}  # type: ignore[dict-item]
)  # fmt: skip
def accuracy_cost_frontier(
    run_metrics: Any,
    metric: str,
    ks: int | Sequence[int] | None = None,
    by: str | Sequence[str] | None = None,
    *,
    tokens: str | None = "run_tokens",
    cost: str | None = "run_cost_usd",
    system: str = "system",
    case: str = "case_id",
    epoch: str = "epoch",
) -> pl.DataFrame:
    r"""Return the points of each system's accuracy–cost frontier: pass rate of majority-of-k against spending.

    Parameters
    ----------
    run_metrics : polars.DataFrame, polars.LazyFrame or Scores
        One row per run.
    metric : str
        The pass/fail outcome (boolean or 0/1).
    ks : int or sequence of int, optional
        The k of the points; by default 1, 2, 4, … up to the most epochs of a case.
    by : str or list of str, optional
        Grouping columns besides ``system``.
    tokens, cost : str or None
        Each run's tokens and cost (not negative); ``None`` leaves that one out.
    system, case, epoch : str
        The system, case and epoch columns.

    Returns
    -------
    polars.DataFrame
        One row per (``by`` group, ``system``, k) with at least one case of k epochs, sorted:

        ================== ========================================================
        k                  epochs spent per case
        cases              cases with at least k epochs (the others are left out)
        majority_rate      mean over cases of the majority vote of the first k epochs (a tie fails)
        majority_ties      cases whose vote over k epochs was a tie
        pass_at_k          mean over cases of pass@k (over all the case's epochs)
        pass_hat_k         mean over cases of pass^k
        tokens_per_case    mean over cases of the tokens of the first k epochs
        cost_per_case      likewise for the cost
        note               the cases left out, or null
        ================== ========================================================

    Raises
    ------
    InvalidParameterError
        A parameter outside the values above.
    SchemaError
        A named column is missing, or not numeric or boolean (the epochs: not integers).
    DataError
        A metric other than 0/1; a null or negative spending; two runs of one case and epoch.

    Notes
    -----
    Running a system k times on a case and taking the majority vote spends the first k epochs'
    tokens; each point is that trade, averaged over cases (every case weighs the same). A point
    whose ``cases`` is below the system's total averages over fewer, possibly easier, cases: its
    note says so. pass@k is the chance that one of k attempts passes (Chen et al. 2021), a
    ceiling no voting rule reaches without an oracle to pick the right answer; majority-of-k
    is what a deployment without one gets. An even k loses its ties (half the votes passing
    does not pass), so majority-of-k dips at k = 2, 4, …; odd ks (1, 3, 5, 9) avoid ties.
    pass@1 is the mean over all the case's epochs, majority-of-1 its first epoch alone.

    Examples
    --------
    >>> import polars as pl
    >>> runs = pl.DataFrame({"system": "single", "case_id": "a", "epoch": [1, 2, 3, 4],
    ...                      "ok": [0, 1, 1, 0], "run_tokens": [100, 120, 80, 100]})
    >>> accuracy_cost_frontier(runs, "ok", cost=None).select("k", "majority_rate", "pass_at_k", "tokens_per_case").rows()
    [(1, 0.0, 0.5, 100.0), (2, 0.0, 0.8333333333333334, 220.0), (4, 0.0, 1.0, 400.0)]
    """  # noqa: E501
    where = "accuracy_cost_frontier"
    groups = [*column_list(by, "by"), system]
    spent = {name: column for name, column in (("tokens", tokens), ("cost", cost)) if column is not None}
    frame, aside = set_aside(as_lazy(run_metrics), [metric, *spent.values()], groups)
    runs, _ = epoch_runs(frame, metric, [*groups, case], epoch, where)
    runs, _ = join_spending(frame, runs, [*groups, case, epoch], spent, judged=tokens is not None, where=where)
    cases = [*groups, case]
    most = int(runs.group_by(cases).len()["len"].max() or 0)
    chosen = k_list(ks) if ks is not None else [2**i for i in range(most.bit_length())]
    totals = runs.group_by(cases).agg(n=pl.len().cast(pl.Int64), c=pl.col(VALUE).sum().cast(pl.Int64))
    running = runs.with_columns(
        _passed=pl.col(VALUE).cum_sum().over(cases),
        **{f"_{name}": pl.col(name).cum_sum().over(cases).cast(pl.Float64) for name in spent},
    )
    points = (
        running.filter(pl.col(POSITION).is_in(chosen))
        .join(totals, on=cases, how="left", nulls_equal=True, maintain_order="left")
        .rename({POSITION: "k"})
    )
    n, c, k = (points[name].to_numpy() for name in ("n", "c", "k"))
    points = points.with_columns(
        _majority=(2 * pl.col("_passed") > pl.col("k")).cast(pl.Float64),
        _tie=(2 * pl.col("_passed") == pl.col("k")).cast(pl.Int64),
        _pass_at=pl.Series(1.0 - draw_ratio(n, n - c, k)),
        _pass_hat=pl.Series(draw_ratio(n, c, k)),
    ).sort([*groups, "k", case], nulls_last=True)
    total_cases = totals.group_by(groups).agg(_total=pl.len().cast(pl.Int64))
    out = (
        points.group_by([*groups, "k"], maintain_order=True)
        .agg(
            cases=pl.len().cast(pl.Int64),
            majority_rate=pl.col("_majority").mean(),
            majority_ties=pl.col("_tie").sum(),
            pass_at_k=pl.col("_pass_at").mean(),
            pass_hat_k=pl.col("_pass_hat").mean(),
            **{f"{name}_per_case": pl.col(f"_{name}").mean() for name in spent},
        )
        .join(total_cases, on=groups, how="left", nulls_equal=True, maintain_order="left")
        .with_columns(
            note=pl.when(pl.col("cases") < pl.col("_total")).then(
                pl.format("{} of {} cases have at least k epochs; the others are left out", "cases", "_total")
            )
        )
        .drop("_total")
    )
    out = (
        with_aside(out, aside, groups)
        .with_columns(joined_notes(pl.col("note"), aside_note(named_columns([metric, *spent.values()]))).alias("note"))
        .drop(ASIDE)
        .sort([*groups, "k"], nulls_last=True)
    )
    return out
