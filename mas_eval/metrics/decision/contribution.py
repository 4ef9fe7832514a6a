r"""Expert contribution balance and diversity (seed 004, "Contribution Score", "Balance"; SPEC.md §1).

Notes
-----
.. math:: contrib_i = \frac{c_i + H_{norm}(m_i)}{2},\qquad H_{norm}(m) = \frac{-\sum_a p_a\ln p_a}{\ln N}

with N the distinct alternatives in the run's beliefs (``entropy_support="run"``; the agent's
own under ``"agent"``), :math:`p = m / \sum m` (not renormalised under
``entropy_renormalise=False``), 0 ln 0 = 0 and N = 1 → 0. ``balance_score = 1 - Gini`` of the
contributions, Gini exactly as the seed writes it (:meth:`MasExpr.gini
<mas_eval.metrics.namespace.MasExpr.gini>`); ``diversity_score`` = distinct top choices /
agents. Both formulas are the ``mas`` namespace's own (:mod:`mas_eval.metrics.namespace`).
"""

from __future__ import annotations

import polars as pl

from mas_eval.metrics.decision.params import EntropySupport
from mas_eval.metrics.namespace import entropy_sums, normalized_entropy_from_sums

__all__ = ["agent_terms", "contribution", "gini", "normalized_entropy", "run_metrics", "run_terms"]


def agent_terms() -> dict[str, pl.Expr]:
    """Per (run, agent), over its belief rows: the entropy's sums and the alternatives it covers."""
    return {**entropy_sums(pl.col("mass")), "own_alternatives": pl.len()}


def normalized_entropy(*, support: EntropySupport, renormalise: bool) -> pl.Expr:
    """An agent's normalised entropy from :func:`agent_terms` (and the run's ``n_alternatives``)."""
    outcomes = pl.col("n_alternatives") if support == "run" else pl.col("own_alternatives")
    return normalized_entropy_from_sums(pl.col("mass_total"), pl.col("m_log_m"), outcomes, renormalise=renormalise)


def contribution() -> pl.Expr:
    """``(c_i + H_norm(m_i)) / 2``: null when either is."""
    return (pl.col("confidence") + pl.col("normalized_entropy")) / 2.0


def run_terms() -> dict[str, pl.Expr]:
    """Per run, over its agents: the sorted contributions (for the Gini) and distinct top choices."""
    return {
        "contributions": pl.col("contribution").drop_nulls().sort(),
        "unique_preferences": pl.col("top_choice").drop_nulls().n_unique(),
    }


def gini() -> pl.Expr:
    """``gini_coefficient`` from :func:`run_terms` (null for a run without contributions)."""
    return pl.col("contributions").mas.gini_of_sorted_list()


def run_metrics() -> dict[str, pl.Expr]:
    """``balance_score`` and ``diversity_score``, from :func:`run_terms` and ``gini_coefficient``."""
    return {
        "balance_score": 1.0 - pl.col("gini_coefficient"),
        "diversity_score": pl.when(pl.col("n_tops") > 0).then(pl.col("unique_preferences") / pl.col("num_agents")),
    }
