r"""Evidential reasoning (seed 004, "Evidential Reasoning"): the agents' beliefs combined per alternative.

Yang & Xu's ER algorithm in the analytical form of Wang, Yang & Xu (2006), with the unassigned
belief :math:`\beta_H`; preset ``crisis-mas-poc`` uses that code's normalised weighted average.
Its products over agents are held as group sums (:func:`log_product`), so that they ride along
in the fused passes over beliefs (:mod:`~mas_eval.metrics.decision.beliefs`) and merge across
shards.

Notes
-----
With attribute weights :math:`w_i`, :math:`\bar m_{H,i} = 1 - w_i`,
:math:`m_{H,i} = 1 - w_i\sum_n\beta_{n,i}` and :math:`P_n = \prod_i(w_i\beta_{n,i} + m_{H,i})`
over the run's agents, N the alternatives in the run's beliefs:

.. math::
    k = \Big[\sum_n P_n - (N-1)\prod_i m_{H,i}\Big]^{-1},\quad
    \beta_n = \frac{k\,[P_n - \prod_i m_{H,i}]}{1 - k\prod_i \bar m_{H,i}},\quad
    \beta_H = \frac{k\,[\prod_i m_{H,i} - \prod_i \bar m_{H,i}]}{1 - k\prod_i \bar m_{H,i}}

An agent with no row for alternative n contributes :math:`m_{H,i}` to :math:`P_n`: the product
over all agents is assembled from the product over the agents present and the per-run product
of :math:`m_{H,i}` over all agents, divided by that over the agents present, each held as a
log-sum and a count of zeros.

``er="weighted_average"`` (crisis_mas_poc): :math:`\beta_n \propto \sum_i w_i m_{n,i} /
\sum_a m_{a,i}`, renormalised to sum 1, and nothing is left unassigned.
"""

from __future__ import annotations

import polars as pl

from mas_eval.metrics.decision.params import ER

__all__ = [
    "agent_columns",
    "alternative_terms",
    "combine",
    "log_product",
    "run_agent_terms",
    "run_alternative_terms",
    "with_weights",
]

_RA = ["run_id", "alternative"]


def with_weights(agent_frame: pl.LazyFrame) -> pl.LazyFrame:
    """``agent_frame`` (per run and agent, ``has_beliefs`` and ``weight``) with the ER attribute weight ``w``.

    ``w`` is ``agents.weight`` normalised to sum 1 over the run's agents with beliefs, or equal
    weights when any of them has none (or they sum to 0); null for an agent without beliefs.
    """
    # Per-run totals by group-by and join: a window over an unsorted frame is several times slower.
    believer = pl.col("has_beliefs")
    per_run = agent_frame.group_by("run_id").agg(
        weight_total=pl.when(believer).then(pl.col("weight")).sum(),
        weight_missing=(believer & pl.col("weight").is_null()).any(),
        believers=believer.sum(),
    )
    weights_given = ~pl.col("weight_missing") & (pl.col("weight_total") > 0)
    return (
        agent_frame.join(per_run, on="run_id", how="inner")
        .with_columns(
            w=pl.when(~believer)
            .then(None)
            .when(weights_given)
            .then(pl.col("weight") / pl.col("weight_total"))
            .otherwise(1.0 / pl.col("believers")),
        )
        .drop("weight_total", "weight_missing", "believers")
    )


def log_product(factor: pl.Expr) -> dict[str, pl.Expr]:
    """A product over a group as two sums: of the logs of its positive factors, and of its zeros.

    Sums are Polars' fast path (a product is not) and they merge across shards; the zero
    count lets a product be divided by a sub-product without dividing by zero.
    """
    return {
        "log": pl.when(factor > 0).then(factor.log()).otherwise(0.0).sum(),
        "zeros": (factor <= 0).sum(),
    }


def agent_columns() -> dict[str, pl.Expr]:
    """Per agent with beliefs, what the per-alternative pass needs: ``total``, ``w``, ``m_h``."""
    return {
        "total": pl.col("mass_total"),
        "w": pl.col("w"),
        "m_h": 1.0 - pl.col("w") * pl.col("mass_total"),
    }


def alternative_terms(er: ER) -> dict[str, pl.Expr]:
    """Per (run, alternative), over its belief rows joined with :func:`agent_columns`."""
    terms = {"weighted_average": (pl.col("w") * pl.col("mass") / pl.col("total")).sum()}
    if er == "yang_xu":
        with_grade = log_product(pl.col("w") * pl.col("mass") + pl.col("m_h"))
        present_h = log_product(pl.col("m_h"))
        terms |= {
            "with_log": with_grade["log"],
            "with_zeros": with_grade["zeros"],
            "present_h_log": present_h["log"],
            "present_h_zeros": present_h["zeros"],
        }
    return terms


def run_agent_terms() -> dict[str, pl.Expr]:
    r"""Per run, over its agents with beliefs: :math:`\prod_i m_{H,i}` and :math:`\prod_i \bar m_{H,i}` as sums."""
    all_h = log_product(1.0 - pl.col("w") * pl.col("mass_total"))
    all_bar = log_product(1.0 - pl.col("w"))
    return {
        "all_h_log": all_h["log"],
        "all_h_zeros": all_h["zeros"],
        "all_bar_log": all_bar["log"],
        "all_bar_zeros": all_bar["zeros"],
    }


def run_alternative_terms() -> dict[str, pl.Expr]:
    """Per run, over its alternatives: the total of the weighted averages (their normaliser)."""
    return {"weighted_average_total": pl.col("weighted_average").sum()}


def combine(runs: pl.LazyFrame, alternatives: pl.LazyFrame, *, er: ER) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """``runs`` with ``er_unassigned``, and per (run, alternative) ``er_belief``.

    ``runs`` holds :func:`run_agent_terms`, :func:`run_alternative_terms` and
    ``n_alternatives``; ``alternatives`` holds :func:`alternative_terms`.
    """
    runs = runs.with_columns(
        q_h=pl.when(pl.col("all_h_zeros") > 0).then(0.0).otherwise(pl.col("all_h_log").exp()),
        q_bar=pl.when(pl.col("all_bar_zeros") > 0).then(0.0).otherwise(pl.col("all_bar_log").exp()),
    )
    if er == "weighted_average":
        beliefs = alternatives.join(runs.select("run_id", "weighted_average_total"), on="run_id", how="inner").select(
            *_RA, er_belief=pl.col("weighted_average") / pl.col("weighted_average_total")
        )
        # The renormalised average assigns all belief: crisis_mas_poc's max(0, 1 - Σβ) is 0.
        return runs.with_columns(er_unassigned=pl.lit(0.0)), beliefs

    absent_zeros = pl.col("all_h_zeros") - pl.col("present_h_zeros")
    p_n = (
        pl.when((pl.col("with_zeros") > 0) | (absent_zeros > 0))
        .then(0.0)
        .otherwise((pl.col("with_log") + pl.col("all_h_log") - pl.col("present_h_log")).exp())
    )
    with_p = alternatives.join(
        runs.select("run_id", "q_h", "q_bar", "n_alternatives", "all_h_zeros", "all_h_log"),
        on="run_id",
        how="inner",
    ).with_columns(p_n=p_n)
    k = with_p.group_by("run_id").agg(
        k=1.0 / (pl.col("p_n").sum() - (pl.col("n_alternatives").first() - 1) * pl.col("q_h").first())
    )
    runs = runs.join(k, on="run_id", how="inner").with_columns(
        er_unassigned=pl.col("k") * (pl.col("q_h") - pl.col("q_bar")) / (1.0 - pl.col("k") * pl.col("q_bar"))
    )
    beliefs = with_p.join(runs.select("run_id", "k"), on="run_id", how="inner").select(
        *_RA,
        er_belief=pl.col("k") * (pl.col("p_n") - pl.col("q_h")) / (1.0 - pl.col("k") * pl.col("q_bar")),
    )
    return runs, beliefs
