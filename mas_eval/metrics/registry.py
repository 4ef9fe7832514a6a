"""Every output column of the decision suite, with its declared properties.

The registry documents the columns (``mas-eval score --help``, the README) and drives one
parametrised test suite that checks each declared property on random datasets, as
scikit-learn does for its metrics.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DECISION_METRICS", "Metric", "metric"]


@dataclass(frozen=True)
class Metric:
    """One output column.

    Attributes
    ----------
    name, table
        Column name and the :class:`~mas_eval.scoring.Scores` frame holding it.
    description
        What it measures, and where its formula comes from.
    low, high
        Documented range (inclusive); ``None`` for unbounded.
    order_invariant
        Unchanged when the rows of the input tables are shuffled.
    """

    name: str
    table: str
    description: str
    low: float | None = None
    high: float | None = None
    order_invariant: bool = True


def _m(table: str, name: str, description: str, low: float | None = None, high: float | None = None) -> Metric:
    return Metric(name, table, description, low, high)


DECISION_METRICS: tuple[Metric, ...] = (
    _m("runs", "dqs", "Decision quality score after the ground-truth boost (seed 004 §1).", 0, 1),
    _m("runs", "dqs_raw", "DQS before the boost: criteria satisfaction, else MCDA, else final score of a*."),
    _m("runs", "dqs_method", "Which step of the cascade gave the DQS: criteria, mcda or final."),
    _m("runs", "gt_match", "Recommended == correct; null without ground truth."),
    _m("runs", "consensus_level", "Mean pairwise cosine of the agents' belief vectors (closed form).", 0, 1),
    _m("runs", "agreement_percentage", "Share of agents whose top choice is the top preference.", 0, 1),
    _m("runs", "top_preference", "Most frequent top choice; ties to the id that sorts first."),
    _m("runs", "num_agents", "Agents in the run (agents ∪ beliefs tables).", 0, None),
    _m("runs", "decision_confidence", "0.6·CL + 0.4·mean(c_i) with ≥2 agents, else self-reported.", 0, 1),
    _m("runs", "average_confidence", "Mean agent confidence.", 0, 1),
    _m("runs", "uncertainty", "1 − decision_confidence.", 0, 1),
    _m("runs", "confidence_variance", "Population variance of agent confidences (ddof=0).", 0, 0.25),
    _m("runs", "confidence_std", "Population standard deviation of agent confidences.", 0, 0.5),
    _m("runs", "min_confidence", "Lowest agent confidence.", 0, 1),
    _m("runs", "max_confidence", "Highest agent confidence.", 0, 1),
    _m("runs", "balance_score", "1 − Gini of the agents' contributions.", 0, 1),
    _m("runs", "gini_coefficient", "Gini of contributions, as written in seed 004 (no correction).", 0, 1),
    _m("runs", "diversity_score", "Distinct top choices / agents.", 0, 1),
    _m("runs", "unique_preferences", "Distinct top choices.", 0, None),
    _m("runs", "time_to_consensus", "Deliberation iterations (runs.iterations).", 0, None),
    _m("runs", "api_calls_used", "API calls (runs.api_calls).", 0, None),
    _m("runs", "processing_time_seconds", "Wall-clock seconds (runs.seconds).", 0, None),
    _m("runs", "tokens_used", "Tokens (runs.tokens).", 0, None),
    _m("runs", "cost_usd", "Cost in USD (runs.cost_usd).", 0, None),
    _m("runs", "iteration_efficiency", "1 / (1 + iterations / 1).", 0, 1),
    _m("runs", "api_efficiency", "1 / (1 + api_calls / 3).", 0, 1),
    _m("runs", "time_efficiency", "1 / (1 + seconds / 5).", 0, 1),
    _m("runs", "efficiency_score", "Mean of the three efficiencies.", 0, 1),
    _m("runs", "er_unassigned", "Belief left unassigned by evidential reasoning (β_H).", 0, 1),
    _m("agents", "contribution", "(c_i + H_norm(m_i)) / 2.", 0, 1),
    _m("agents", "normalized_entropy", "Entropy of the agent's beliefs / ln N.", 0, 1),
    _m("agents", "confidence", "The agent's confidence.", 0, 1),
    _m("agents", "top_choice", "The agent's highest-mass alternative; ties to the first id."),
    _m("alternatives", "topsis_closeness", "TOPSIS relative closeness d⁻/(d⁺+d⁻).", 0, 1),
    _m("alternatives", "topsis_distance_best", "Euclidean distance to the ideal solution.", 0, None),
    _m("alternatives", "topsis_distance_worst", "Euclidean distance to the anti-ideal solution.", 0, None),
    _m("alternatives", "topsis_rank", "1 = highest closeness; ties to the first id.", 1, None),
    _m("alternatives", "weighted_sum", "Σ w·s / Σ w of criteria satisfactions (crisis_mas_poc's MCDA).", 0, 1),
    _m("alternatives", "mcda_score", "The preset's MCDA score: TOPSIS closeness or weighted sum.", 0, 1),
    _m("alternatives", "mcda_rank", "1 = highest mcda_score; ties to the first id.", 1, None),
    _m("alternatives", "er_belief", "Combined belief in the alternative (evidential reasoning).", 0, 1),
    _m("alternatives", "er_rank", "1 = highest er_belief; ties to the first id.", 1, None),
    _m(
        "alternatives",
        "criteria_satisfaction",
        "Mean (or weighted mean) criteria satisfaction: what DQS averages.",
        0,
        1,
    ),
)

_BY_NAME = {(m.table, m.name): m for m in DECISION_METRICS}


def metric(table: str, name: str) -> Metric:
    """The registry entry of column ``name`` in frame ``table``."""
    return _BY_NAME[table, name]
