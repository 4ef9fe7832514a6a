"""The decision family's output columns and tables, with their declared properties (the registry's entries)."""

from __future__ import annotations

from mas_eval.metrics.registry import Metric, OutputTable

__all__ = ["COLUMNS", "TABLES"]


def _metric(
    table: str,
    name: str,
    description: str,
    low: float | None = None,
    high: float | None = None,
    codes: str | None = None,
) -> Metric:
    """Return the output column ``name`` of ``table`` (the table first, as the listing below reads)."""
    return Metric(name, table, description, low, high, codes=codes)


TABLES = (
    OutputTable("agents", (("agent_id", "agent_id"),), "One row per agent of a run."),
    OutputTable("alternatives", (("alternative", "alternative"),), "One row per alternative of a run."),
    OutputTable(
        "pairwise",
        (("agent_a", "agent_id"), ("agent_b", "agent_id")),
        "One row per pair of agents of a run with beliefs (agent_a < agent_b), on request.",
    ),
    OutputTable(
        "conflicts",
        (("agent_a", "agent_id"), ("agent_b", "agent_id")),
        "One row per pair of agents of a run in conflict (agent_a < agent_b): crisis_mas_poc's consensus model.",
    ),
)

COLUMNS = (
    _metric("runs", "dqs", "Decision quality score after the ground-truth boost (the crisis-MAS methodology).", 0, 1),
    _metric("runs", "dqs_raw", "DQS before the boost: criteria satisfaction, else MCDA, else final score of a*."),
    _metric("runs", "dqs_method", "Which step of the cascade gave the DQS: criteria, mcda or final."),
    _metric("runs", "gt_match", "Recommended == correct; null without ground truth."),
    _metric("runs", "consensus_level", "Mean pairwise cosine of the agents' belief vectors (closed form).", 0, 1),
    _metric("runs", "agreement_percentage", "Share of agents whose top choice is the top preference.", 0, 1),
    _metric(
        "runs", "top_preference", "Most frequent top choice; ties to the id that sorts first.", codes="alternative"
    ),
    _metric("runs", "num_agents", "Agents in the run (agents ∪ beliefs tables).", 0, None),
    _metric("runs", "decision_confidence", "0.6·CL + 0.4·mean(c_i) with ≥2 agents, else self-reported.", 0, 1),
    _metric("runs", "average_confidence", "Mean agent confidence.", 0, 1),
    _metric("runs", "uncertainty", "1 − decision_confidence.", 0, 1),
    _metric("runs", "confidence_variance", "Population variance of agent confidences (ddof=0).", 0, 0.25),
    _metric("runs", "confidence_std", "Population standard deviation of agent confidences.", 0, 0.5),
    _metric("runs", "min_confidence", "Lowest agent confidence.", 0, 1),
    _metric("runs", "max_confidence", "Highest agent confidence.", 0, 1),
    _metric("runs", "balance_score", "1 − Gini of the agents' contributions.", 0, 1),
    _metric(
        "runs", "gini_coefficient", "Gini of contributions as the crisis-MAS methodology writes it, uncorrected.", 0, 1
    ),
    _metric("runs", "diversity_score", "Distinct top choices / agents.", 0, 1),
    _metric("runs", "unique_preferences", "Distinct top choices.", 0, None),
    _metric("runs", "time_to_consensus", "Deliberation iterations (runs.iterations).", 0, None),
    _metric("runs", "api_calls_used", "API calls (runs.api_calls).", 0, None),
    _metric("runs", "processing_time_seconds", "Wall-clock seconds (runs.seconds).", 0, None),
    _metric("runs", "tokens_used", "Tokens (runs.tokens).", 0, None),
    _metric("runs", "cost_usd", "Cost in USD (runs.cost_usd).", 0, None),
    _metric("runs", "iteration_efficiency", "1 / (1 + iterations / 1).", 0, 1),
    _metric("runs", "api_efficiency", "1 / (1 + api_calls / 3).", 0, 1),
    _metric("runs", "time_efficiency", "1 / (1 + seconds / 5).", 0, 1),
    _metric("runs", "efficiency_score", "Mean of the three efficiencies.", 0, 1),
    _metric("runs", "er_unassigned", "Belief left unassigned by evidential reasoning (β_H).", 0, 1),
    _metric("runs", "consensus_reached", "consensus_level ≥ consensus_threshold."),
    _metric("runs", "num_conflicts", "Pairs of agents in conflict (rows of the conflicts table).", 0, None),
    _metric(
        "runs", "ranking_stability", "Share of seeded weight perturbations that keep the MCDA top alternative.", 0, 1
    ),
    _metric(
        "runs", "num_winner_changes", "Steps of the weight sweep whose MCDA winner is not the step before's.", 0, None
    ),
    _metric("agents", "contribution", "(c_i + H_norm(m_i)) / 2.", 0, 1),
    _metric("agents", "normalized_entropy", "Entropy of the agent's beliefs / ln N.", 0, 1),
    _metric("agents", "confidence", "The agent's confidence.", 0, 1),
    _metric("agents", "top_choice", "The agent's highest-mass alternative; ties to the first id.", codes="alternative"),
    _metric("alternatives", "topsis_closeness", "TOPSIS relative closeness d⁻/(d⁺+d⁻).", 0, 1),
    _metric("alternatives", "topsis_distance_best", "Euclidean distance to the ideal solution.", 0, None),
    _metric("alternatives", "topsis_distance_worst", "Euclidean distance to the anti-ideal solution.", 0, None),
    _metric("alternatives", "topsis_rank", "1 = highest closeness; ties to the first id.", 1, None),
    _metric("alternatives", "weighted_sum", "Σ w·s / Σ w of criteria satisfactions (crisis_mas_poc's MCDA).", 0, 1),
    _metric("alternatives", "mcda_score", "The preset's MCDA score: TOPSIS closeness or weighted sum.", 0, 1),
    _metric("alternatives", "mcda_rank", "1 = highest mcda_score; ties to the first id.", 1, None),
    _metric("alternatives", "er_belief", "Combined belief in the alternative (evidential reasoning).", 0, 1),
    _metric("alternatives", "er_rank", "1 = highest er_belief; ties to the first id.", 1, None),
    _metric(
        "alternatives",
        "criteria_satisfaction",
        "Mean (or weighted mean) criteria satisfaction: what DQS averages.",
        0,
        1,
    ),
    _metric("pairwise", "similarity", "Cosine similarity of the two agents' belief vectors.", 0, 1),
    _metric("conflicts", "top_choice_a", "agent_a's top choice.", codes="alternative"),
    _metric("conflicts", "top_choice_b", "agent_b's top choice (not agent_a's).", codes="alternative"),
    _metric("conflicts", "belief_a", "agent_a's mass on its top choice.", 0, 1),
    _metric("conflicts", "belief_b", "agent_b's mass on its top choice.", 0, 1),
    _metric(
        "conflicts", "disagreement", "Mean of how much more each believes its own top choice than the other's.", 0, 1
    ),
    _metric("conflicts", "severity", "1 − cosine of the two agents' belief vectors.", 0, 1),
    _metric("conflicts", "severity_level", "low (< 0.3), moderate (< 0.6) or high."),
    _metric("conflicts", "compromise", "Highest 0.6·mean + 0.4·min of the two beliefs.", codes="alternative"),
    _metric("conflicts", "compromise_score", "0.6·mean + 0.4·min of the two agents' beliefs in the compromise.", 0, 1),
)
