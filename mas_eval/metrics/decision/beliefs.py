"""Metrics of the agents' belief distributions: per agent, per alternative, per run.

One pass per group key over ``beliefs``: per ``(run, agent)`` the sums that give the norm,
entropy and top choice; per ``(run, alternative)`` the sums that give consensus (closed form)
and evidential reasoning (products over agents as group aggregations); per run the rest.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from mas_eval.errors import DataError, format_keys
from mas_eval.metrics.codes import label_of, pack, run_of
from mas_eval.metrics.namespace import entropy_from_sums
from mas_eval.schema import AGENT_KEY

__all__ = ["agent_beliefs", "agent_entropy", "alternative_beliefs", "check_agent_masses", "run_beliefs"]

_RA = ["run_id", "alternative"]


def agent_beliefs(beliefs: pl.LazyFrame, agents: pl.LazyFrame) -> pl.LazyFrame:
    """Per ``(run, agent)``: mass sums, top choice, confidence and ER weight.

    Tables ``beliefs`` and ``agents`` keyed by codes (:mod:`mas_eval.metrics.codes`); the
    result has their key columns and ``agent``, the two packed in one.

    Agents of the ``agents`` table without belief rows keep their confidence and get null
    belief columns. ``w`` is the agent's ER attribute weight: ``agents.weight`` normalised to
    sum 1 over the run's agents with beliefs, or equal weights when any of them has none (or
    they sum to 0).
    """
    mass = pl.col("mass")
    stats = beliefs.group_by(agent=pack("run_id", "agent_id")).agg(
        mass_total=mass.sum(),
        mass_sumsq=mass.pow(2).sum(),
        m_log_m=pl.when(mass > 0).then(mass * mass.log()).otherwise(0.0).sum(),
        own_alternatives=pl.len(),
        # An exact tie goes to the alternative that sorts first.
        top_choice=pl.col("alternative").sort_by(mass, "alternative", descending=[True, False]).first(),
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
    # Per-run totals by group-by and join: a window over an unsorted frame is several times slower.
    believer = pl.col("has_beliefs")
    per_run = frame.group_by("run_id").agg(
        weight_total=pl.when(believer).then(pl.col("weight")).sum(),
        weight_missing=(believer & pl.col("weight").is_null()).any(),
        believers=believer.sum(),
    )
    weights_given = ~pl.col("weight_missing") & (pl.col("weight_total") > 0)
    return (
        frame.join(per_run, on="run_id", how="inner")
        .with_columns(
            w=pl.when(~believer)
            .then(None)
            .when(weights_given)
            .then(pl.col("weight") / pl.col("weight_total"))
            .otherwise(1.0 / pl.col("believers")),
        )
        .drop("weight_total", "weight_missing", "believers")
    )


def check_agent_masses(
    agent_frame: pl.DataFrame, labels: Callable[[pl.LazyFrame], pl.LazyFrame] = lambda keys: keys
) -> None:
    """An agent whose belief masses are all zero has no distribution: a clear error.

    ``labels`` turns the frame's keys into the user's labels when they are codes.
    """
    empty = agent_frame.filter(pl.col("has_beliefs") & (pl.col("mass_total") <= 0))
    if empty.height:
        keys = labels(empty.lazy().select(AGENT_KEY).sort(AGENT_KEY).head(5)).collect().to_dicts()
        msg = (
            f"table 'beliefs', column 'mass': {empty.height} agent(s) have all masses zero, e.g. at "
            f"{format_keys(keys)}; consensus, entropy and ER need a distribution: drop those agents' "
            "belief rows or give them mass"
        )
        raise DataError(msg)


def _log_product(factor: pl.Expr) -> dict[str, pl.Expr]:
    """A product over a group as two sums: of the logs of its positive factors, and of its zeros.

    Sums are Polars' fast path (a product is not) and they merge across shards; the zero
    count lets a product be divided by a sub-product without dividing by zero.
    """
    return {
        "log": pl.when(factor > 0).then(factor.log()).otherwise(0.0).sum(),
        "zeros": (factor <= 0).sum(),
    }


def alternative_beliefs(beliefs: pl.LazyFrame, agent_frame: pl.LazyFrame, *, er: str) -> pl.LazyFrame:
    r"""Per ``(run, alternative)``: unit-vector sums and the ER products over the agents present.

    Notes
    -----
    With :math:`m_{H,i} = 1 - w_i \sum_n \beta_{n,i}` (Wang, Yang & Xu 2006), the ER product
    :math:`\prod_i (w_i\beta_{n,i} + m_{H,i})` runs over all of the run's agents; an agent with
    no row for alternative n contributes :math:`m_{H,i}`. It is assembled from the product
    over the agents present and the per-run product of :math:`m_{H,i}` over all agents,
    divided by that over the agents present, each held as a log-sum and a count of zeros.
    """
    per_agent = agent_frame.filter("has_beliefs").select(
        "agent",
        norm=pl.col("mass_sumsq").sqrt(),
        total=pl.col("mass_total"),
        w=pl.col("w"),
        m_h=1.0 - pl.col("w") * pl.col("mass_total"),
    )
    aggregations = {
        "unit_sum": (pl.col("mass") / pl.col("norm")).sum(),
        "weighted_average": (pl.col("w") * pl.col("mass") / pl.col("total")).sum(),
    }
    if er == "yang_xu":
        with_grade = _log_product(pl.col("w") * pl.col("mass") + pl.col("m_h"))
        present_h = _log_product(pl.col("m_h"))
        aggregations |= {
            "with_log": with_grade["log"],
            "with_zeros": with_grade["zeros"],
            "present_h_log": present_h["log"],
            "present_h_zeros": present_h["zeros"],
        }
    return (
        beliefs.select("mass", agent=pack("run_id", "agent_id"), run_alternative=pack("run_id", "alternative"))
        .join(per_agent, on="agent", how="inner")
        .group_by("run_alternative")
        .agg(**aggregations)
        .with_columns(run_id=run_of("run_alternative"), alternative=label_of("run_alternative"))
        .drop("run_alternative")
    )


def run_beliefs(
    agent_frame: pl.LazyFrame,
    alternative_frame: pl.LazyFrame,
    *,
    er: str,
    single_agent_consensus: float | None,
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    r"""Run-level consensus and ER, and the per-alternative ER belief.

    Notes
    -----
    Consensus (seed 004 §2) in closed form: with unit vectors :math:`u_i = m_i/\lVert m_i\rVert`,

    .. math:: CL = \frac{2}{n(n-1)}\sum_{i<j}\cos(m_i, m_j) = \frac{\lVert\sum_i u_i\rVert^2 - n}{n(n-1)}

    ER (Yang & Xu; analytical form of Wang, Yang & Xu 2006) over the N alternatives in the
    run's beliefs, with :math:`\bar m_{H,i} = 1 - w_i`,
    :math:`m_{H,i} = 1 - w_i\sum_n\beta_{n,i}`, :math:`P_n = \prod_i(w_i\beta_{n,i} + m_{H,i})`:

    .. math::
        k = \Big[\sum_n P_n - (N-1)\prod_i m_{H,i}\Big]^{-1},\quad
        \beta_n = \frac{k\,[P_n - \prod_i m_{H,i}]}{1 - k\prod_i \bar m_{H,i}},\quad
        \beta_H = \frac{k\,[\prod_i m_{H,i} - \prod_i \bar m_{H,i}]}{1 - k\prod_i \bar m_{H,i}}

    ``er="weighted_average"`` (crisis_mas_poc): :math:`\beta_n \propto \sum_i w_i m_{n,i} /
    \sum_a m_{a,i}`, renormalised to sum 1, and nothing is left unassigned.

    Returns ``(runs, alternatives)``: per run ``consensus_level, n_belief_agents,
    n_alternatives, er_unassigned``; per ``(run, alternative)`` ``er_belief``.
    """
    believers = agent_frame.filter("has_beliefs")
    all_h = _log_product(1.0 - pl.col("w") * pl.col("mass_total"))
    all_bar = _log_product(1.0 - pl.col("w"))
    per_run_agents = believers.group_by("run_id").agg(
        n_belief_agents=pl.len(),
        all_h_log=all_h["log"],
        all_h_zeros=all_h["zeros"],
        all_bar_log=all_bar["log"],
        all_bar_zeros=all_bar["zeros"],
    )
    per_run_alternatives = alternative_frame.group_by("run_id").agg(
        unit_square=pl.col("unit_sum").pow(2).sum(),
        n_alternatives=pl.len(),
        weighted_average_total=pl.col("weighted_average").sum(),
    )
    n = pl.col("n_belief_agents")
    runs = per_run_agents.join(per_run_alternatives, on="run_id", how="inner").with_columns(
        consensus_level=pl.when(n >= 2)
        .then((pl.col("unit_square") - n) / (n * (n - 1)))
        .otherwise(pl.lit(single_agent_consensus, pl.Float64)),
        q_h=pl.when(pl.col("all_h_zeros") > 0).then(0.0).otherwise(pl.col("all_h_log").exp()),
        q_bar=pl.when(pl.col("all_bar_zeros") > 0).then(0.0).otherwise(pl.col("all_bar_log").exp()),
    )

    if er == "weighted_average":
        alternatives = alternative_frame.join(
            runs.select("run_id", "weighted_average_total"), on="run_id", how="inner"
        ).select(*_RA, er_belief=pl.col("weighted_average") / pl.col("weighted_average_total"))
        # The renormalised average assigns all belief: crisis_mas_poc's max(0, 1 - Σβ) is 0.
        runs = runs.with_columns(er_unassigned=pl.lit(0.0))
    else:
        absent_zeros = pl.col("all_h_zeros") - pl.col("present_h_zeros")
        p_n = (
            pl.when((pl.col("with_zeros") > 0) | (absent_zeros > 0))
            .then(0.0)
            .otherwise((pl.col("with_log") + pl.col("all_h_log") - pl.col("present_h_log")).exp())
        )
        with_p = alternative_frame.join(
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
        alternatives = with_p.join(runs.select("run_id", "k"), on="run_id", how="inner").select(
            *_RA,
            er_belief=pl.col("k") * (pl.col("p_n") - pl.col("q_h")) / (1.0 - pl.col("k") * pl.col("q_bar")),
        )
    return runs.select("run_id", "consensus_level", "n_belief_agents", "n_alternatives", "er_unassigned"), alternatives


def agent_entropy(*, support: str, renormalise: bool) -> pl.Expr:
    """Normalised entropy of an agent's beliefs from the per-agent sums (needs ``n_alternatives``)."""
    # Without renormalising, the masses are taken as the probabilities (crisis_mas_poc).
    entropy = entropy_from_sums(pl.col("mass_total"), pl.col("m_log_m")) if renormalise else -pl.col("m_log_m")
    outcomes = (pl.col("n_alternatives") if support == "run" else pl.col("own_alternatives")).cast(pl.Float64)
    return pl.when(outcomes > 1).then(entropy / outcomes.log()).otherwise(entropy * 0.0)
