r"""Consensus among agents (seed 004, "Consensus Level"; SPEC.md §1).

* ``consensus_level``: the mean pairwise cosine similarity of the agents' belief vectors over
  the union of alternatives (missing mass = 0), by the closed form

  .. math:: CL = \frac{2}{n(n-1)}\sum_{i<j}\cos(m_i, m_j) = \frac{\lVert\sum_i u_i\rVert^2 - n}{n(n-1)},
            \quad u_i = m_i/\lVert m_i\rVert

  which needs only group sums (no self-join; mergeable across shards). Fewer than two agents:
  null, or ``single_agent_consensus``.
* ``top_choice`` (per agent): the highest-mass alternative; ``top_preference`` (per run): the
  most frequent top choice; ``agreement_percentage``: the share of agents whose top choice it
  is. Every exact tie goes to the alternative id that sorts first.
* ``pairwise`` (on request): the cosine of every pair of agents, by a self-join.
"""

from __future__ import annotations

import polars as pl

from mas_eval.schema import AGENT_KEY

__all__ = [
    "PAIR_KEY",
    "agent_terms",
    "agreement",
    "consensus_level",
    "norm",
    "pairwise_similarities",
    "run_choice_terms",
    "top_preference",
    "unit_sum",
]

PAIR_KEY = ["run_id", "agent_a", "agent_b"]
_RA = ["run_id", "alternative"]


def agent_terms() -> dict[str, pl.Expr]:
    """Per (run, agent), over its belief rows: the squared norm of its masses and its top choice."""
    mass = pl.col("mass")
    return {
        "mass_sumsq": mass.pow(2).sum(),
        # An exact tie goes to the alternative that sorts first.
        "top_choice": pl.col("alternative").sort_by(mass, "alternative", descending=[True, False]).first(),
    }


def norm() -> pl.Expr:
    """An agent's norm ``‖m_i‖``, from :func:`agent_terms`."""
    return pl.col("mass_sumsq").sqrt()


def unit_sum() -> pl.Expr:
    """Per (run, alternative): the alternative's entry of ``Σ_i u_i``, over belief rows joined with :func:`norm`."""
    return (pl.col("mass") / pl.col("norm")).sum()


def consensus_level(unit_square: pl.Expr, agents: pl.Expr, single_agent_consensus: float | None) -> pl.Expr:
    """The closed form from ``unit_square`` = ``‖Σ_i u_i‖²`` and the number of agents with beliefs."""
    return (
        pl.when(agents >= 2)
        .then((unit_square - agents) / (agents * (agents - 1)))
        .otherwise(pl.lit(single_agent_consensus, pl.Float64))
    )


def run_choice_terms() -> dict[str, pl.Expr]:
    """Per run, over its agents: how many have a top choice (the denominator of agreement)."""
    return {"n_tops": pl.col("top_choice").count()}


def top_preference(agents: pl.LazyFrame) -> pl.LazyFrame:
    """Per run with a top choice: ``top_preference`` and the number of agents choosing it (``top_votes``)."""
    top = pl.col("top_choice")
    votes = agents.filter(top.is_not_null()).group_by("run_id", "top_choice").agg(votes=pl.len())
    # The most frequent top choice; a tie goes to the alternative id that sorts first.
    return (
        votes.filter(pl.col("votes") == pl.col("votes").max().over("run_id"))
        .group_by("run_id")
        .agg(top_preference=top.min(), top_votes=pl.col("votes").first())
    )


def agreement() -> pl.Expr:
    """``agreement_percentage`` from :func:`top_preference` and :func:`run_choice_terms`."""
    return pl.col("top_votes") / pl.col("n_tops")


def pairwise_similarities(beliefs: pl.LazyFrame, agent_frame: pl.LazyFrame) -> pl.LazyFrame:
    """Cosine similarity of every pair of agents of a run with beliefs (``agent_a < agent_b``), sorted."""
    norms = agent_frame.filter("has_beliefs").select(*AGENT_KEY, norm=norm())
    unit = beliefs.join(norms, on=AGENT_KEY, how="inner").select(
        "run_id", "agent_id", "alternative", u=pl.col("mass") / pl.col("norm")
    )
    dots = (
        unit.join(unit, on=_RA, how="inner", suffix="_b")
        .filter(pl.col("agent_id") < pl.col("agent_id_b"))
        .group_by("run_id", "agent_id", "agent_id_b")
        .agg(dot=(pl.col("u") * pl.col("u_b")).sum())
    )
    pairs = (
        norms.select(AGENT_KEY)
        .join(norms.select(AGENT_KEY), on="run_id", how="inner", suffix="_b")
        .filter(pl.col("agent_id") < pl.col("agent_id_b"))
    )
    return (
        pairs.join(dots, on=["run_id", "agent_id", "agent_id_b"], how="left")
        .select(
            "run_id",
            agent_a=pl.col("agent_id"),
            agent_b=pl.col("agent_id_b"),
            similarity=pl.col("dot").fill_null(0.0),
        )
        .sort(PAIR_KEY)
    )
