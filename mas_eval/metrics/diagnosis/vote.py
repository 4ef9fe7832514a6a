r"""The credibility-weighted vote that turns the agents' rankings into the team's list (the LDDx v6 metrics guide).

Each agent ranks diagnoses; a diagnosis at position :math:`p` of a ranking of length :math:`L`
earns :math:`(L - p + 1)` points times the ranking agent's credibility, summed over agents.
Diagnoses scoring at least ``keep_share`` (30%) of the top score are kept, at most ``at_most``
(10), best first.
"""

from __future__ import annotations

import polars as pl

from mas_eval.constraints import Interval, validate_params
from mas_eval.metrics.ordered import ordered_aggregates

__all__ = ["credibility_vote"]

#: An agent without a credibility score counts with this weight (Local-DDx's default).
DEFAULT_CREDIBILITY = 1.0


@validate_params({"keep_share": [Interval(float, 0, 1)], "at_most": [Interval(int, 1)]})
def credibility_vote(
    votes: pl.LazyFrame,
    credibility: pl.LazyFrame,
    *,
    keep_share: float = 0.3,
    at_most: int = 10,
) -> pl.LazyFrame:
    r"""Return the team's list of every run: ``run_id, diagnosis, points, rank``, best first.

    Parameters
    ----------
    votes
        ``run_id, agent_id, diagnosis, rank`` (1 = the agent's first choice) and optionally
        ``mentions`` (how often the ranking lists the diagnosis; the ranking's length is their
        sum, null counting 1).
    credibility
        ``run_id, agent_id, credibility``; an agent without one weighs
        :data:`DEFAULT_CREDIBILITY`.
    keep_share, at_most
        Keep the diagnoses with at least ``keep_share`` of the top score, at most ``at_most``.

    Notes
    -----
    .. math:: \text{points}(d) = \sum_{a \text{ ranking } d} (L_a - p_a(d) + 1)\, c_a

    Diagnoses are compared as written. Equal points are ranked by the diagnosis's text, so
    the order is the same on every call; a diagnosis with no points (every voter has
    credibility 0) is not kept.

    Examples
    --------
    >>> votes = pl.LazyFrame({"run_id": ["r"] * 4, "agent_id": ["a", "a", "b", "b"],
    ...                       "diagnosis": ["flu", "cold", "cold", "flu"], "rank": [1, 2, 1, 2]})
    >>> cred = pl.LazyFrame({"run_id": ["r", "r"], "agent_id": ["a", "b"], "credibility": [30.0, 10.0]})
    >>> credibility_vote(votes, cred).collect().rows()
    [('r', 'flu', 70.0, 1), ('r', 'cold', 50.0, 2)]
    """
    has_mentions = "mentions" in votes.collect_schema().names()
    length = (pl.col("mentions").fill_null(1).sum() if has_mentions else pl.len()).over("run_id", "agent_id")
    contributions = (
        votes.with_columns(length=length)
        .join(credibility.select("run_id", "agent_id", "credibility"), on=["run_id", "agent_id"], how="left")
        .with_columns(
            contribution=(pl.col("length") - pl.col("rank") + 1)
            * pl.col("credibility").fill_null(DEFAULT_CREDIBILITY).cast(pl.Float64)
        )
    )
    # Sorted first, so that each diagnosis's points add the same terms in the same order every time.
    points = (
        ordered_aggregates(
            contributions.sort("run_id", "diagnosis", "agent_id", "rank", "contribution"),
            ["run_id", "diagnosis"],
            sums={"points": pl.col("contribution")},
        )
        .filter(pl.col("points") > 0)
        .sort("run_id", pl.col("points"), "diagnosis", descending=[False, True, False])
        .with_columns(rank=pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over("run_id"))
    )
    top = pl.col("points").max().over("run_id")
    return points.filter((pl.col("points") >= keep_share * top) & (pl.col("rank") <= at_most)).select(
        "run_id", "diagnosis", "points", "rank"
    )
