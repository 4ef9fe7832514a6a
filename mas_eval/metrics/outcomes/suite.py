"""The outcomes family for :func:`mas_eval.score`: named scores, run usage and agent shares together."""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from mas_eval.data.schema import RUN_KEY
from mas_eval.metrics.codes import KeyCodes
from mas_eval.metrics.outcomes.params import OutcomesParams
from mas_eval.metrics.outcomes.scores import score_columns
from mas_eval.metrics.outcomes.usage import agent_shares, evaluator_usage, run_usage, usage_totals

__all__ = ["compute"]


def compute(
    tables: Mapping[str, pl.LazyFrame], params: OutcomesParams, codes: KeyCodes
) -> dict[str, pl.LazyFrame | pl.DataFrame]:
    """Compute the outcomes family's tables: ``runs`` and ``agent_usage``.

    ``runs`` has ``run_tokens, run_cost_usd, run_calls, evaluator_tokens, evaluator_cost_usd``,
    then one column per score name.

    ``tables``: ``runs``, ``outcomes`` and ``usage`` (empty when absent) keyed by codes.
    """
    del params, codes  # no parameters; labels stay codes until score() decodes them
    totals = usage_totals(tables["usage"])
    # The judge's usage beside the system's (a left join keeps run order).
    usage = run_usage(tables["runs"], totals).join(
        evaluator_usage(tables["usage"]), on=RUN_KEY, how="left", maintain_order="left"
    )
    named = score_columns(tables["runs"], tables["outcomes"])
    # Both are one row per run in run order: side by side, as score() places families' frames.
    runs = pl.concat([usage, named.drop(RUN_KEY)], how="horizontal")
    return {"runs": runs, "agent_usage": agent_shares(tables["usage"], totals)}
