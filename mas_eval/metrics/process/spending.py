r"""What a run spent (tokens, model calls, seconds, cost) and its tool use, from the first record that has it.

Spending is the system's: the evaluator's usage rows are left out
(:func:`~mas_eval.metrics.process.trace.system_usage`). Each quantity takes the first record that
has it, per run:

.. math::

    system\_tokens &= \textstyle\sum_{usage} (in + out) \;\text{else}\; runs.tokens
        \;\text{else}\; runs.input\_tokens + runs.output\_tokens \;\text{else}\; \sum_{turns} (in + out)\\
    system\_calls &= \textstyle\sum_{usage} calls \;\text{else}\; runs.api\_calls
        \;\text{else}\; \#\{\text{turns recording their call}\}\\
    system\_seconds &= runs.seconds \;\text{else}\; \textstyle\sum_{usage} seconds
        \;\text{else}\; \sum_{turns} seconds\\
    system\_cost\_usd &= \textstyle\sum_{usage} cost\_usd \;\text{else}\; runs.cost\_usd

The usage rows come first for tokens, calls and cost because they alone set the evaluator's
calls apart (a log's run total may count a judge's tokens: the outcomes family's ``run_tokens``
is that total). Seconds are the run's wall clock first: the usage rows' seconds are the calls'
times added up, which overstates the time of calls made side by side. A turn *records its call*
when it has ``input_tokens``, ``output_tokens`` or ``seconds`` (those of the model call that
generated it). Sums of floats add a run's rows one by one in key order
(:mod:`mas_eval.metrics.ordered`), so they repeat bit for bit.

Tool use: ``tool_calls`` is the run's ``tool_calls`` rows when it has any, else
``runs.tool_calls``, else 0 when the run has a trace (a message or a system usage row) and null
without one; ``tool_errors`` likewise (rows with an ``error``, else ``runs.tool_errors``);
``tool_error_rate = tool_errors / tool_calls`` (null without a call, and when the errors exceed
the calls, which cannot be). A Dataset that records no tool at all reads as runs without tool
calls: the family cannot tell "no tool called" from "tools not logged".
"""

from __future__ import annotations

import polars as pl

from mas_eval.data.schema import RUN_KEY
from mas_eval.metrics.ordered import ordered_aggregates
from mas_eval.metrics.outcomes.usage import USAGE_KEY, row_tokens, usage_totals

__all__ = ["MESSAGE_KEY", "spending", "tool_use"]

#: The messages table's key: a run's turns are added in this order.
MESSAGE_KEY = [RUN_KEY, "round", "agent_id", "turn"]


def _recorded_sum(column: str) -> pl.Expr:
    """Return the group sum of ``column``, null when no row records it (Polars sums an all-null group to 0)."""
    return pl.when(pl.col(column).count() > 0).then(pl.col(column).sum())


def spending(runs: pl.LazyFrame, usage: pl.LazyFrame, turns: pl.LazyFrame) -> pl.LazyFrame:
    """``run_id, system_tokens, system_calls, system_seconds, system_cost_usd``, one row per run of ``runs``.

    ``usage`` is the system's usage rows, ``turns`` the agents' messages (both keyed by codes).
    """
    totals = usage_totals(usage)
    usage_seconds = ordered_aggregates(
        usage.select(*USAGE_KEY, "seconds").sort(USAGE_KEY),
        RUN_KEY,
        sums={"usage_seconds": pl.col("seconds").drop_nulls()},
        other={"_usage_timed": pl.col("seconds").count() > 0},
    ).select(RUN_KEY, pl.when("_usage_timed").then(pl.col("usage_seconds")).alias("usage_seconds"))
    recorded = pl.col("input_tokens").is_not_null() | pl.col("output_tokens").is_not_null()
    calls = turns.select(
        *MESSAGE_KEY,
        row_tokens().alias("tokens"),
        "seconds",
        (recorded | pl.col("seconds").is_not_null()).alias("call"),
    ).sort(MESSAGE_KEY)
    per_call = ordered_aggregates(
        calls,
        RUN_KEY,
        sums={"message_seconds": pl.col("seconds").drop_nulls()},
        other={
            "message_tokens": _recorded_sum("tokens"),
            "message_calls": pl.col("call").sum(),
            "_message_timed": pl.col("seconds").count() > 0,
        },
    ).select(
        RUN_KEY,
        "message_tokens",
        pl.when(pl.col("message_calls") > 0).then(pl.col("message_calls").cast(pl.Int64)).alias("message_calls"),
        pl.when("_message_timed").then(pl.col("message_seconds")).alias("message_seconds"),
    )
    split = pl.col("input_tokens") + pl.col("output_tokens")
    return (
        runs.select(RUN_KEY, "tokens", "input_tokens", "output_tokens", "api_calls", "seconds", "cost_usd")
        .join(totals, on=RUN_KEY, how="left")
        .join(usage_seconds, on=RUN_KEY, how="left")
        .join(per_call, on=RUN_KEY, how="left")
        .select(
            RUN_KEY,
            pl.coalesce("usage_tokens", "tokens", split, "message_tokens").cast(pl.Int64).alias("system_tokens"),
            pl.coalesce("usage_calls", "api_calls", "message_calls").cast(pl.Int64).alias("system_calls"),
            pl.coalesce("seconds", "usage_seconds", "message_seconds").cast(pl.Float64).alias("system_seconds"),
            pl.coalesce("usage_cost_usd", "cost_usd").cast(pl.Float64).alias("system_cost_usd"),
        )
        .sort(RUN_KEY)
    )


def tool_use(runs: pl.LazyFrame, tool_calls: pl.LazyFrame, traced: pl.LazyFrame) -> pl.LazyFrame:
    """Return ``run_id, tool_calls, tool_errors, tool_error_rate`` and ``tool_rows``, one row per run of ``runs``.

    ``tool_rows`` counts the run's rows in ``tool_calls``; ``traced`` holds ``run_id`` of the runs
    with a message or system usage row.
    """
    rows = tool_calls.group_by(RUN_KEY).agg(
        tool_rows=pl.len().cast(pl.Int64), error_rows=pl.col("error").count().cast(pl.Int64)
    )
    has_rows, logged = pl.col("tool_rows") > 0, pl.col("tool_calls").is_not_null()
    traced_run = pl.col("_traced").fill_null(False)
    calls = pl.when(has_rows).then("tool_rows").when(logged).then("tool_calls").when(traced_run).then(0)
    errors = pl.when(has_rows).then("error_rows").when(logged).then("tool_errors").when(traced_run).then(0)
    n, e = pl.col("tool_calls"), pl.col("tool_errors")
    return (
        runs.select(RUN_KEY, "tool_calls", "tool_errors")
        .join(rows, on=RUN_KEY, how="left")
        .join(traced.select(RUN_KEY, _traced=pl.lit(True)), on=RUN_KEY, how="left")
        .with_columns(pl.col("tool_rows").fill_null(0))
        .select(
            RUN_KEY, calls.cast(pl.Int64).alias("tool_calls"), errors.cast(pl.Int64).alias("tool_errors"), "tool_rows"
        )
        .with_columns(pl.when((n > 0) & (e <= n)).then(e / n).alias("tool_error_rate"))
        .select(RUN_KEY, "tool_calls", "tool_errors", "tool_error_rate", "tool_rows")
        .sort(RUN_KEY)
    )
