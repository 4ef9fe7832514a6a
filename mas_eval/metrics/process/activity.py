r"""Who took part in a run and how evenly: active agents, turns, rounds, message density, and each agent's share.

Per run, with :math:`A` its active agents (those with a turn, a system usage row or a tool call;
:mod:`~mas_eval.metrics.process.trace`) and, per agent :math:`a`, its turns :math:`u_a`, system
tokens :math:`k_a` and tool calls :math:`c_a`:

.. math::

    agents\_active = |A|,\qquad turns = \sum_a u_a,\qquad
    rounds = |\{\text{round of a turn}\}|,\qquad
    message\_density = \frac{turns}{|\{a : u_a > 0\}| \cdot rounds}

and each agent's shares :math:`u_a / \sum_b u_b`, :math:`k_a / \sum_b k_b`, :math:`c_a / \sum_b c_b`
(table ``agent_process``). The balance of each share vector over :math:`A` is
:math:`1 - G`, with :math:`G` the Gini coefficient exactly as the crisis-MAS methodology writes
it ("Expert Contribution Balance"; :func:`mas_eval.metrics.decision.contribution.balance`, the
same function the decision family's ``balance_score`` uses):

.. math:: G = \frac{\sum_i (2i - n - 1)\, w_{(i)}}{n \sum_i w_i}

over the ascending values :math:`w_{(1)} \le \dots \le w_{(n)}` of the :math:`n` agents with a
value, with no :math:`n/(n-1)` correction (a lone agent has :math:`G = 0`). It is computed on
the counts themselves (the Gini is scale-free), whose sums are exact.

An active agent with none of a quantity counts 0 in its vector when the run records that
quantity: turns when the run has a ``messages`` row, tokens when its system usage rows record
tokens, tool calls when its ``tool_calls`` rows count them. Otherwise the agent's value is null,
and a vector whose values are all null or sum to 0 has no shares and no Gini. Message density is
per agent that spoke: an agent seen only in usage or tool calls is active but adds no turns.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from mas_eval.data.schema import AGENT_KEY, RUN_KEY
from mas_eval.metrics.decision.contribution import balance
from mas_eval.metrics.outcomes.usage import row_tokens

__all__ = ["QUANTITIES", "agent_activity", "gini_columns", "run_activity", "traced_runs"]

#: Each quantity of ``agent_process`` and the prefix of its share, Gini and balance columns.
QUANTITIES = {"tokens": "token", "turns": "turn", "tool_calls": "tool_call"}


def traced_runs(messages: pl.LazyFrame, usage: pl.LazyFrame) -> pl.LazyFrame:
    """``run_id`` of every run with a ``messages`` row (any role) or a system usage row, each once."""
    return pl.concat([messages.select(RUN_KEY), usage.select(RUN_KEY)]).unique().sort(RUN_KEY)


def agent_activity(
    messages: pl.LazyFrame, turns: pl.LazyFrame, usage: pl.LazyFrame, tool_calls: pl.LazyFrame, tools: pl.LazyFrame
) -> pl.LazyFrame:
    """One row per active agent of a run: ``run_id, agent_id, turns, tokens, tool_calls`` and their shares.

    ``messages`` are all of a run's messages, ``turns`` the agents' own, ``usage`` the system's
    rows; ``tools`` is :func:`~mas_eval.metrics.process.spending.tool_use` (the run's
    ``tool_calls`` and ``tool_rows``). Sorted by ``run_id, agent_id``.
    """
    spoke = turns.group_by(AGENT_KEY).agg(turns=pl.len().cast(pl.Int64))
    spent = usage.group_by(AGENT_KEY).agg(
        tokens=pl.when(row_tokens().count() > 0).then(row_tokens().sum()).cast(pl.Int64), _used=pl.lit(True)
    )
    called = tool_calls.group_by(AGENT_KEY).agg(tool_calls=pl.len().cast(pl.Int64))
    active = pl.concat([spoke.select(AGENT_KEY), spent.select(AGENT_KEY), called.select(AGENT_KEY)]).unique()
    spoken = messages.select(RUN_KEY).unique().with_columns(_spoken=pl.lit(True))
    recorded = spent.group_by(RUN_KEY).agg(_tokens_recorded=pl.col("tokens").count() > 0)
    # A run's tool calls are known agent by agent when they come from its rows (or are 0).
    counted = tools.select(RUN_KEY, _counted=(pl.col("tool_rows") > 0) | (pl.col("tool_calls") == 0).fill_null(False))
    frame = (
        active.join(spoke, on=AGENT_KEY, how="left")
        .join(spent, on=AGENT_KEY, how="left")
        .join(called, on=AGENT_KEY, how="left")
        .join(spoken, on=RUN_KEY, how="left")
        .join(recorded, on=RUN_KEY, how="left")
        .join(counted, on=RUN_KEY, how="left")
        .select(
            *AGENT_KEY,
            pl.when(pl.col("_spoken")).then(pl.col("turns").fill_null(0)).alias("turns"),
            pl.when(pl.col("_used")).then("tokens").when(pl.col("_tokens_recorded")).then(0).alias("tokens"),
            pl.when(pl.col("_counted")).then(pl.col("tool_calls").fill_null(0)).alias("tool_calls"),
        )
    )
    # Integer sums over a run's agents: exact in any order.
    shares = [
        pl.when(pl.col(q).sum().over(RUN_KEY) > 0).then(pl.col(q) / pl.col(q).sum().over(RUN_KEY)).alias(f"{p}_share")
        for q, p in QUANTITIES.items()
    ]
    return frame.with_columns(shares).select(*AGENT_KEY, "turns", "tokens", "tool_calls", *(
        f"{QUANTITIES[q]}_share" for q in ("turns", "tokens", "tool_calls"))).sort(AGENT_KEY)  # fmt: skip


def run_activity(runs: pl.LazyFrame, messages: pl.LazyFrame, turns: pl.LazyFrame, agents: pl.LazyFrame,
                 traced: pl.LazyFrame) -> pl.LazyFrame:  # fmt: skip
    """``run_id, agents_active, turns, rounds, message_density``, one row per run of ``runs``.

    ``agents`` is :func:`agent_activity`; ``traced`` the runs with a message or system usage
    row (a run with only tool calls has active agents too).
    """
    spoken = messages.select(RUN_KEY).unique().with_columns(_spoken=pl.lit(True))
    per_run = turns.group_by(RUN_KEY).agg(
        _turns=pl.len().cast(pl.Int64), _rounds=pl.col("round").n_unique().cast(pl.Int64)
    )
    speakers = agents.group_by(RUN_KEY).agg(
        _agents=pl.len().cast(pl.Int64), _speakers=(pl.col("turns") > 0).sum().cast(pl.Int64)
    )
    has_trace = traced.select(RUN_KEY, _traced=pl.lit(True))
    spoke = pl.col("_spoken").fill_null(False)
    turns_, rounds_ = pl.col("_turns").fill_null(0), pl.col("_rounds").fill_null(0)
    active = pl.when(pl.col("_traced").fill_null(False) | pl.col("_agents").is_not_null())
    return (
        runs.select(RUN_KEY)
        .join(spoken, on=RUN_KEY, how="left")
        .join(per_run, on=RUN_KEY, how="left")
        .join(speakers, on=RUN_KEY, how="left")
        .join(has_trace, on=RUN_KEY, how="left")
        .select(
            RUN_KEY,
            active.then(pl.col("_agents").fill_null(0)).alias("agents_active"),
            pl.when(spoke).then(turns_).alias("turns"),
            pl.when(spoke).then(rounds_).alias("rounds"),
            pl.when(rounds_ > 0).then(turns_ / (pl.col("_speakers") * rounds_)).alias("message_density"),
        )
        .sort(RUN_KEY)
    )


def gini_columns(agents: pl.DataFrame, runs: int) -> list[pl.Series]:
    """Per run (codes ``0 .. runs-1``), ``<q>_gini`` and ``<q>_balance`` of each quantity of :data:`QUANTITIES`.

    ``agents`` is :func:`agent_activity` collected: sorted by run. A run's Gini is over its agents
    with a value, when they sum to more than 0; else null.
    """
    run = agents[RUN_KEY].to_numpy()
    out = []
    for quantity, prefix in QUANTITIES.items():
        values = agents[quantity]
        amount = values.fill_null(0).cast(pl.Float64).to_numpy()
        total = np.bincount(run, weights=amount, minlength=runs)
        valid = values.is_not_null().to_numpy() & (total[run] > 0)
        gini, has = balance(run, amount, valid, runs)
        series = pl.Series(f"{prefix}_gini", gini, dtype=pl.Float64).set(pl.Series(~has), None)
        out += [series, (1.0 - series).alias(f"{prefix}_balance")]
    return out
