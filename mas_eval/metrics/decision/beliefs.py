"""The fused passes over ``beliefs``: one group-by per key, carrying every metric's sums.

Consensus, contribution and evidential reasoning all read the same belief rows. Rather than
a pass each, their aggregations (declared in :mod:`~mas_eval.metrics.decision.consensus`,
:mod:`~mas_eval.metrics.decision.contribution` and :mod:`~mas_eval.metrics.decision.evidential`)
share one group-by per key: per ``(run, agent)``, then per ``(run, alternative)``, then per run.
Tables come keyed by integer codes (:mod:`mas_eval.metrics.codes`).
"""

from __future__ import annotations

import polars as pl

from mas_eval.metrics.codes import label_of, pack, run_of
from mas_eval.metrics.decision import consensus, contribution, evidential
from mas_eval.metrics.decision.params import ER

__all__ = ["agent_pass", "alternative_pass", "run_pass"]


def agent_pass(beliefs: pl.LazyFrame, agents: pl.LazyFrame) -> pl.LazyFrame:
    """Per ``(run, agent)``: belief sums, top choice, confidence and ER weight ``w``.

    The result has the key columns and ``agent``, the two packed in one. Agents of the
    ``agents`` table without belief rows keep their confidence and get null belief columns
    (``has_beliefs`` is false).
    """
    stats = beliefs.group_by(agent=pack("run_id", "agent_id")).agg(
        # mass_min: for the mass rules scoring checks (validation.check_agent_masses).
        **contribution.agent_terms(),
        **consensus.agent_terms(),
        mass_min=pl.col("mass").min(),
        has_beliefs=pl.lit(True),
    )
    frame = (
        stats.join(
            agents.select("confidence", "weight", agent=pack("run_id", "agent_id")),
            on="agent",
            how="full",
            coalesce=True,
        )
        .with_columns(run_id=run_of("agent"), agent_id=label_of("agent"))
        .with_columns(pl.col("has_beliefs").fill_null(False))
    )
    return evidential.with_weights(frame)


def alternative_pass(beliefs: pl.LazyFrame, agent_frame: pl.LazyFrame, *, er: ER) -> pl.LazyFrame:
    """Per ``(run, alternative)``: the unit-vector sum (consensus) and the ER sums over the agents present."""
    per_agent = agent_frame.filter("has_beliefs").select("agent", norm=consensus.norm(), **evidential.agent_columns())
    return (
        beliefs.select("mass", agent=pack("run_id", "agent_id"), run_alternative=pack("run_id", "alternative"))
        .join(per_agent, on="agent", how="inner")
        .group_by("run_alternative")
        .agg(unit_sum=consensus.unit_sum(), **evidential.alternative_terms(er))
        .with_columns(run_id=run_of("run_alternative"), alternative=label_of("run_alternative"))
        .drop("run_alternative")
    )


def run_pass(
    agent_frame: pl.LazyFrame, alternative_frame: pl.LazyFrame, *, er: ER, single_agent_consensus: float | None
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Per run: consensus and ER; per ``(run, alternative)``: the ER belief.

    Returns ``(runs, alternatives)``: per run with beliefs ``consensus_level,
    n_belief_agents, n_alternatives, er_unassigned``; per ``(run, alternative)`` ``er_belief``.
    """
    per_run_agents = (
        agent_frame.filter("has_beliefs")
        .group_by("run_id")
        .agg(n_belief_agents=pl.len(), **evidential.run_agent_terms())
    )
    per_run_alternatives = alternative_frame.group_by("run_id").agg(
        unit_square=pl.col("unit_sum").pow(2).sum(),
        n_alternatives=pl.len(),
        **evidential.run_alternative_terms(),
    )
    runs = per_run_agents.join(per_run_alternatives, on="run_id", how="inner").with_columns(
        consensus_level=consensus.consensus_level(
            pl.col("unit_square"), pl.col("n_belief_agents"), single_agent_consensus
        )
    )
    runs, alternatives = evidential.combine(runs, alternative_frame, er=er)
    return runs.select("run_id", "consensus_level", "n_belief_agents", "n_alternatives", "er_unassigned"), alternatives
