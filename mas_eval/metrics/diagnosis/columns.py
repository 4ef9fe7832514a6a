"""The diagnosis family's output columns and tables, with their declared properties (the registry's entries)."""

from __future__ import annotations

from mas_eval.metrics.registry import Metric, OutputTable

__all__ = ["COLUMNS", "TABLES"]


def _metric(table: str, name: str, description: str, low: float | None = None, high: float | None = None) -> Metric:
    """Return the output column ``name`` of ``table`` (the table first, as the listing below reads)."""
    return Metric(name, table, description, low, high)


TABLES = (
    OutputTable(
        "labels",
        (("side", None), ("diagnosis", None)),
        "One row per final-list diagnosis (side system) and ground-truth diagnosis (side ground_truth) of a run.",
    ),
    OutputTable("rounds", (("round", None),), "One row per round of a run that has messages."),
    OutputTable(
        "consensus_ddx",
        (("rank", None),),
        "The credibility-weighted vote's list of a run, best first (rank 1).",
    ),
)

COLUMNS = (
    _metric(
        "runs", "tp", "True positives: ground-truth diagnoses matched by the final list (LDDx v6 metrics guide).", 0
    ),
    _metric("runs", "fp", "False positives: final diagnoses matching no ground truth and not CAA.", 0),
    _metric("runs", "fn", "False negatives: ground truth neither matched, excluded in debate, nor treated.", 0),
    _metric("runs", "caa", "Clinically appropriate alternatives (can't-miss diagnoses; side per preset).", 0),
    _metric("runs", "ae", "Appropriately excluded: ground truth the debate ruled out.", 0),
    _metric("runs", "tm_sm", "Treated by symptom management: ground truth an intervention treats.", 0),
    _metric("runs", "total_gt", "Ground-truth diagnoses of the run's case.", 0),
    _metric("runs", "tp_rate", "TP / total_gt.", 0, 1),
    _metric("runs", "caa_weight", "CAA weight of the TP rate: 0.7, 0.3, 0.0 or -0.2.", -0.2, 0.7),
    _metric("runs", "traditional_recall", "TP / total_gt.", 0, 1),
    _metric("runs", "traditional_precision", "TP / (TP + FP + CAA).", 0, 1),
    _metric(
        "runs",
        "clinical_reasoning_quality",
        "(TP + w·CAA + AE) / labels considered (negative only through w < 0).",
        -0.2,
        1,
    ),
    _metric("runs", "diagnostic_safety", "(TP + max(0, w·CAA)) / (TP + CAA + FP).", 0, 1),
    _metric("runs", "system_safety_coverage", "(TP + TM-SM) / total_gt.", 0, 1),
    _metric("labels", "label", "TP, FP, CAA, FN, AE or TM-SM."),
    _metric(
        "labels", "matched_to", "The other side's diagnosis (TP), the can't-miss one (CAA), the treated one (TM-SM)."
    ),
    _metric("labels", "tier", "Equivalence tier of that match: exact, synonym, containment, token_set, cause, judge."),
    _metric("labels", "score", "Equivalence score of that match.", 0, 1),
    _metric("rounds", "participants", "Agents who responded in the round.", 0),
    _metric("rounds", "unique_diagnoses", "Independent round: diagnoses stated (unique, or every mention).", 0),
    _metric("rounds", "high_value_responses", "Debate round: responses with >= 3 reasoning keywords or a marker.", 0),
    _metric("rounds", "symbolic_curvature", "Debate round: high-value responses / participants.", 0),
    _metric("rounds", "tempo_score", "1 + 0.1·D (independent), min(κ + 0.5, 2.5) (debate), else 1.", 0.5),
    _metric("agents", "insight", "Mean insight component over the agent's rounds (capped at 20).", 0, 20),
    _metric("agents", "synthesis", "Mean synthesis component (capped at 20).", 0, 20),
    _metric("agents", "action", "Mean action component (capped at 20).", 0, 20),
    _metric("agents", "valence", "Mean valence multiplier (0.6 to 1.2).", 0.6, 1.2),
    _metric("agents", "credibility", "Mean of (2.5·I + 1.5·S + A) × valence over the agent's rounds.", 0, 120),
    _metric("consensus_ddx", "diagnosis", "A diagnosis the vote kept, as written."),
    _metric("consensus_ddx", "points", "Σ over agents of (L − position + 1) × credibility.", 0),
)
