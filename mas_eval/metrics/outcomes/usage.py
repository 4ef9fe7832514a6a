"""A run's tokens, cost and calls, and each agent's share of them (per-agent usage, "Outcomes of any benchmark").

The shares measure communication overhead: what part of a run's tokens (calls, cost) the
coordinating and other roles of a multi-agent system take, as the usage table records it.

A usage row with ``evaluator = true`` is a judge's (a model-graded scorer's calls grading the
run): not the system's cost. It is left out of every sum here (a run's tokens, calls and cost
summed from its usage rows, and the totals the shares divide by) and counted apart, as the run's
``evaluator_tokens`` and ``evaluator_cost_usd``.
"""

from __future__ import annotations

import polars as pl

from mas_eval.data.schema import RUN_KEY
from mas_eval.metrics.ordered import ordered_aggregates

__all__ = ["USAGE_KEY", "agent_shares", "evaluator_usage", "row_tokens", "run_usage", "usage_totals"]

#: The usage table's key after ``run_id``: rows are summed in this order, so cost sums repeat bit for bit.
USAGE_KEY = [RUN_KEY, "agent_id", "model"]


def row_tokens() -> pl.Expr:
    """Return a usage row's tokens, input + output, a missing one as 0; null when neither is recorded.

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval.metrics.outcomes.usage import row_tokens
    >>> usage = pl.DataFrame({"input_tokens": [100, None, None], "output_tokens": [20, 5, None]})
    >>> usage.select(row_tokens()).to_series().to_list()
    [120, 5, None]
    """
    inp, out = pl.col("input_tokens"), pl.col("output_tokens")
    return pl.when(inp.is_not_null() | out.is_not_null()).then(inp.fill_null(0) + out.fill_null(0))


def _is_evaluator() -> pl.Expr:
    """Whether a usage row is the evaluator's (``evaluator`` true; null is the system's)."""
    return pl.col("evaluator").fill_null(False)


def _total(column: str) -> pl.Expr:
    """Return the group sum of ``column``, null when the group has no value (Polars sums an all-null group to 0)."""
    return pl.when(pl.col(column).count() > 0).then(pl.col(column).sum())


def usage_totals(usage: pl.LazyFrame) -> pl.LazyFrame:
    r"""Per run, the sums over its usage rows.

    .. math:: T_r = \sum_{a,m} (in_{a,m} + out_{a,m}),\quad C_r = \sum_{a,m} calls_{a,m},\quad
              \$_r = \sum_{a,m} cost_{a,m}

    over the run's rows (agent ``a``, model ``m``) that are the system's (an evaluator's rows,
    ``evaluator = true``, are left out); each null where no row records it. Returns
    ``run_id, usage_tokens, usage_calls, usage_cost_usd`` (a run whose only rows are an
    evaluator's has nulls). Token and call sums are of integers (exact in any order); the cost sum
    adds the rows in key order (:mod:`mas_eval.metrics.ordered`).
    """
    rows = (
        usage.filter(~_is_evaluator())
        .select(*USAGE_KEY, row_tokens().alias("tokens"), "calls", "cost_usd")
        .sort(USAGE_KEY)
    )
    return ordered_aggregates(
        rows,
        RUN_KEY,
        sums={"usage_cost_usd": pl.col("cost_usd").drop_nulls()},
        other={
            "usage_tokens": _total("tokens"),
            "usage_calls": _total("calls"),
            "has_cost": pl.col("cost_usd").count() > 0,
        },
    ).select(
        RUN_KEY,
        "usage_tokens",
        "usage_calls",
        pl.when("has_cost").then(pl.col("usage_cost_usd")).alias("usage_cost_usd"),
    )


def evaluator_usage(usage: pl.LazyFrame) -> pl.LazyFrame:
    r"""Per run, the tokens and cost of its evaluator's rows (``evaluator = true``): a judge's, apart from the system's.

    .. math:: E_r = \sum_{a,m:\,evaluator} (in_{a,m} + out_{a,m}),\quad \$^E_r = \sum_{a,m:\,evaluator} cost_{a,m}

    Returns ``run_id, evaluator_tokens, evaluator_cost_usd`` for the runs that have such rows
    (each null where no row records it); the cost sum adds the rows in key order.
    """
    rows = usage.filter(_is_evaluator()).select(*USAGE_KEY, row_tokens().alias("tokens"), "cost_usd").sort(USAGE_KEY)
    return ordered_aggregates(
        rows,
        RUN_KEY,
        sums={"evaluator_cost_usd": pl.col("cost_usd").drop_nulls()},
        other={"evaluator_tokens": _total("tokens"), "has_cost": pl.col("cost_usd").count() > 0},
    ).select(
        RUN_KEY,
        "evaluator_tokens",
        pl.when("has_cost").then(pl.col("evaluator_cost_usd")).alias("evaluator_cost_usd"),
    )


def run_usage(runs: pl.LazyFrame, totals: pl.LazyFrame) -> pl.LazyFrame:
    r"""Return a run's tokens, cost and calls: what the run records, else the sum over its usage rows.

    .. math:: run\_tokens = tokens \;\text{else}\; input\_tokens + output\_tokens \;\text{else}\; T_r

    (the sum only when both halves are recorded), ``run_cost_usd`` = ``cost_usd`` else
    :math:`\$_r`, ``run_calls`` = ``api_calls`` else :math:`C_r` (:func:`usage_totals`). The
    run's own total wins: a log that records it counts what the usage rows may leave out
    (retries); a log adapter that can tell leaves a judge's calls out of it (inspect_ai's, unless
    asked to count them). Returns ``run_id, run_tokens, run_cost_usd, run_calls`` in run order.
    """
    return (
        runs.select(RUN_KEY, "tokens", "input_tokens", "output_tokens", "cost_usd", "api_calls")
        .join(totals, on=RUN_KEY, how="left")
        .select(
            RUN_KEY,
            pl.coalesce("tokens", pl.col("input_tokens") + pl.col("output_tokens"), pl.col("usage_tokens")).alias(
                "run_tokens"
            ),
            pl.coalesce("cost_usd", "usage_cost_usd").alias("run_cost_usd"),
            pl.coalesce("api_calls", "usage_calls").alias("run_calls"),
        )
        .sort(RUN_KEY)
    )


def agent_shares(usage: pl.LazyFrame, totals: pl.LazyFrame) -> pl.LazyFrame:
    r"""Each usage row's (agent's, with one model) share of its run's tokens, calls and cost.

    .. math:: token\_share_{a,m} = \frac{in_{a,m} + out_{a,m}}{T_r},\quad
              call\_share_{a,m} = \frac{calls_{a,m}}{C_r},\quad cost\_share_{a,m} = \frac{cost_{a,m}}{\$_r}

    with the totals of :func:`usage_totals`, which are the system's: the shares of a run's
    system rows sum to 1, and an evaluator's row (``evaluator = true``) has none (its ``tokens``
    stay). A share is null when its numerator or the run's total is not recorded, or the total is
    0. Returns ``run_id, agent_id, model, tokens, token_share, call_share, cost_share`` sorted by
    that key.
    """

    def share(part: str, total: str) -> pl.Expr:
        return pl.when((pl.col(total) > 0) & ~_is_evaluator()).then(pl.col(part) / pl.col(total))

    return (
        usage.select(*USAGE_KEY, row_tokens().alias("tokens"), "calls", "cost_usd", "evaluator")
        .join(totals, on=RUN_KEY, how="left")
        .select(
            *USAGE_KEY,
            "tokens",
            share("tokens", "usage_tokens").alias("token_share"),
            share("calls", "usage_calls").alias("call_share"),
            share("cost_usd", "usage_cost_usd").alias("cost_share"),
        )
        .sort(USAGE_KEY)
    )
