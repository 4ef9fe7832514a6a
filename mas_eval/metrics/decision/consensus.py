r"""Consensus among agents (the crisis-MAS evaluation methodology, "Consensus Level").

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

The sums are taken per run in agent order (:mod:`~mas_eval.metrics.decision.beliefs`).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from mas_eval.data.schema import AGENT_KEY
from mas_eval.metrics.arrays import take
from mas_eval.metrics.ordered import ordered_aggregates
from mas_eval.metrics.segments import Groups, label_of, pack, run_of

__all__ = ["PAIR_KEY", "consensus_level", "pairwise_similarities", "top_preference", "unit_square"]

PAIR_KEY = ["run_id", "agent_a", "agent_b"]
_RA = ["run_id", "alternative"]


def unit_square(by_alternative: Groups, alternatives_by_run: Groups, mass: np.ndarray, norm: np.ndarray) -> np.ndarray:
    """Return ``‖Σ_i u_i‖²`` per run.

    Each belief row's ``m / ‖m_i‖`` (``norm`` per row) is summed per (run, alternative)
    (``by_alternative``), then the squares of those sums per run.
    """
    unit_sum = by_alternative.sum(mass / norm)
    return alternatives_by_run.sum(unit_sum * unit_sum)


def consensus_level(
    unit_square: np.ndarray, agents: np.ndarray, single_agent_consensus: float | None
) -> tuple[np.ndarray, np.ndarray]:
    """Return the consensus level in closed form from ``unit_square`` = ``‖Σ_i u_i‖²`` and the agents, per run.

    Returns ``(values, valid)``: null with fewer than two agents unless ``single_agent_consensus``.

    Examples
    --------
    Two agents with the same beliefs (``‖u_1 + u_2‖² = 4``), two with orthogonal ones, one agent:

    >>> import numpy as np
    >>> from mas_eval.metrics.decision.consensus import consensus_level
    >>> level, valid = consensus_level(np.array([4.0, 2.0, 1.0]), np.array([2, 2, 1]), None)
    >>> level.tolist(), valid.tolist()
    ([1.0, 0.0, 0.0], [True, True, False])
    """
    n = agents.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        level = (unit_square - n) / (n * (n - 1.0))
    several = agents >= 2
    if single_agent_consensus is None:
        return np.where(several, level, 0.0), several
    return np.where(several, level, single_agent_consensus), np.ones(len(agents), dtype=bool)


def top_preference(run: np.ndarray, top_choice: np.ndarray, chose: np.ndarray, runs: int) -> dict[str, np.ndarray]:
    """Per run: the most frequent top choice among its agents (a tie to the id that sorts first).

    ``run``, ``top_choice`` and ``chose`` (whether the agent has a top choice) are per agent.
    Returns ``top_preference`` (valid where ``n_tops > 0``), ``top_votes``, ``n_tops`` and
    ``unique_preferences`` (distinct top choices).

    Examples
    --------
    >>> import numpy as np
    >>> from mas_eval.metrics.decision.consensus import top_preference
    >>> got = top_preference(np.array([0, 0, 0, 1]), np.array([2, 1, 2, 0]), np.array([True, True, True, False]), 2)
    >>> got["top_preference"].tolist(), got["n_tops"].tolist(), got["unique_preferences"].tolist()
    ([2, 0], [3, 0], [2, 0])
    """
    votes = Groups.of(pack(run[chose], top_choice[chose]))
    count = votes.count()
    by_run = Groups.sorted_runs(run_of(votes.keys), runs)
    most = by_run.max(count.astype(np.float64))
    # Votes are sorted by (run, alternative): the first reaching the run's maximum is the smallest id.
    first = by_run.first_row(count == most[by_run.index])
    return {
        "top_preference": take(label_of(votes.keys), first, first >= 0),
        "top_votes": take(count, first, first >= 0),
        "n_tops": Groups.sorted_runs(run[chose], runs).count(),
        "unique_preferences": by_run.count(),
    }


def pairwise_similarities(beliefs: pl.LazyFrame, agent_frame: pl.LazyFrame) -> pl.LazyFrame:
    """Cosine similarity of every pair of agents of a run with beliefs (``agent_a < agent_b``), sorted."""
    norms = agent_frame.filter("has_beliefs").select(*AGENT_KEY, norm=pl.col("mass_sumsq").sqrt())
    unit = beliefs.join(norms, on=AGENT_KEY, how="inner").select(
        "run_id", "agent_id", "alternative", u=pl.col("mass") / pl.col("norm")
    )
    # Sorted by alternative within each pair first: every dot product adds its terms in that order.
    products = (
        unit.join(unit, on=_RA, how="inner", suffix="_b")
        .filter(pl.col("agent_id") < pl.col("agent_id_b"))
        .select("run_id", "agent_id", "agent_id_b", "alternative", product=pl.col("u") * pl.col("u_b"))
        .sort("run_id", "agent_id", "agent_id_b", "alternative")
    )
    dots = ordered_aggregates(products, ["run_id", "agent_id", "agent_id_b"], sums={"dot": pl.col("product")})
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
