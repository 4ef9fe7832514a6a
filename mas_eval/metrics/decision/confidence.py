r"""Confidence (seed 004, "Confidence Metrics"; SPEC.md §1): agent statistics and the decision's confidence.

Notes
-----
Runs with two or more agents use the MAS formula

.. math:: DC = w\,CL + (1 - w)\,\overline{c},\qquad w = 0.6

(``consensus_weight``); runs with one agent or none use the self-reported ``runs.confidence``,
else the single agent's confidence. ``uncertainty = 1 - DC``; variance and standard deviation
over agents are population ones (ddof = 0). The seed's worked example (.82, .78, .88, .71)
prints variance .032; the formula gives .00382 (SPEC.md §4).
"""

from __future__ import annotations

import polars as pl

__all__ = ["decision_confidence", "run_terms"]


def run_terms() -> dict[str, pl.Expr]:
    """Per run, over its agents: the confidence statistics, and what the one-agent case reads."""
    conf = pl.col("confidence")
    return {
        "average_confidence": conf.mean(),
        # Polars gives 0.0, not null, for the variance of a lone null value.
        "confidence_variance": pl.when(conf.count() > 0).then(conf.var(ddof=0)),
        "confidence_std": pl.when(conf.count() > 0).then(conf.std(ddof=0)),
        "min_confidence": conf.min(),
        "max_confidence": conf.max(),
        "n_confidences": conf.count(),
        "only_confidence": conf.drop_nulls().first(),
    }


def decision_confidence(consensus_weight: float) -> pl.Expr:
    """The run's confidence, from ``consensus_level``, :func:`run_terms`, ``num_agents`` and ``runs.confidence``."""
    w = consensus_weight
    n = pl.col("num_agents")
    return (
        pl.when((n >= 2) & pl.col("consensus_level").is_not_null() & pl.col("average_confidence").is_not_null())
        .then(w * pl.col("consensus_level") + (1.0 - w) * pl.col("average_confidence"))
        .when(pl.col("confidence").is_not_null())
        .then(pl.col("confidence"))
        .when((n == 1) & (pl.col("n_confidences") == 1))
        .then(pl.col("only_confidence"))
    )
