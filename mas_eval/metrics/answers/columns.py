"""The answers family's output columns and tables, with their declared properties (the registry's entries)."""

from __future__ import annotations

from mas_eval.metrics.answers.vocabulary import CATEGORIES
from mas_eval.metrics.registry import Metric, OutputTable

__all__ = ["COLUMNS", "COMPONENTS", "ITEM_METRICS", "RUN_METRICS", "SCORES", "TABLES"]


def _metric(table: str, name: str, description: str, low: float | None = None, high: float | None = None) -> Metric:
    """Return the output column ``name`` of ``table`` (the table first, as the listing below reads)."""
    return Metric(name, table, description, low, high)


TABLES = (
    OutputTable(
        "items",
        (("item_id", None),),
        "One row per benchmark answer of a run (its task is the answer's own, else the run's).",
    ),
)

#: The item columns, in their order: the four scores, then every component (MedAISure's per-sample breakdown).
ITEM_METRICS = (
    _metric(
        "items", "clinical_accuracy", "Pooled weighted Jaccard of the entity sets; fallback if none (MedAISure).", 0, 1
    ),
    _metric("items", "reasoning_quality", "clamp(0.4·F1 + 0.15·S + 0.2·E + 0.25·F − fallacy) (MedAISure).", 0, 1),
    _metric(
        "items",
        "diagnostic_accuracy",
        "1 if the normalised prediction is the reference diagnosis, else 0 (MedAISure).",
        0,
        1,
    ),
    _metric(
        "items",
        "clinical_relevance",
        "Word Jaccard of summary and note, boosted, threshold-adjusted (MedAISure).",
        0,
        1,
    ),
    *(
        _metric("items", f"entity_jaccard_{c}", f"|P∩R| / |P∪R| of the {c}; null when neither side has one.", 0, 1)
        for c in CATEGORIES
    ),
    _metric("items", "accuracy_fallback_used", "No entity on either side: clinical accuracy compared the texts."),
    _metric("items", "token_f1", "Token-multiset F1 of the predicted and reference reasoning.", 0, 1),
    _metric("items", "structure", "min(1, distinct structure markers / 3).", 0, 1),
    _metric("items", "evidence", "min(1, distinct evidence markers / 3).", 0, 1),
    _metric("items", "factual_consistency", "Share of the reference diagnosis's facts found; else evidence.", 0, 1),
    _metric("items", "fallacy_penalty", "min(0.4, 0.15 · distinct fallacy markers).", 0, 0.4),
    _metric("items", "diagnostic_weight", "The item's weight in diagnostic accuracy: the critical weight or 1.", 0),
    _metric("items", "diagnostic_critical", "The reference diagnosis is critical in the item's specialty."),
    _metric(
        "items", "diagnostic_known_label", "The prediction is a label the specialty knows (informative, MedAISure)."
    ),
    _metric("items", "relevance_jaccard", "Jaccard of the note's and the summary's word sets.", 0, 1),
    _metric("items", "relevance_boost", "min(cap, per-term boost · shared one-word lexicon terms).", 0, 1),
    _metric(
        "items", "relevance_threshold", "The specialty's threshold (else the parameter) of clinical relevance.", 0, 1
    ),
    _metric("items", "relevance_meets_threshold", "min(1, Jaccard + boost) reaches the threshold (else scaled down)."),
)

#: The item scores, one run column each.
SCORES = tuple(m.name for m in ITEM_METRICS[:4])
#: The item columns that are parts of the scores (the breakdown), not scores of their own.
COMPONENTS = tuple(m.name for m in ITEM_METRICS[4:])

#: Per-run means of the item scores, beside every other family's run columns.
RUN_METRICS = (
    _metric("runs", "clinical_accuracy", "Mean clinical accuracy over the run's answers (MedAISure).", 0, 1),
    _metric("runs", "reasoning_quality", "Mean reasoning quality over the run's answers (MedAISure).", 0, 1),
    _metric(
        "runs",
        "diagnostic_accuracy",
        "Weighted share of the run's answers with the reference diagnosis (MedAISure).",
        0,
        1,
    ),
    _metric(
        "runs", "clinical_relevance", "Mean clinical relevance over the run's answers with a note (MedAISure).", 0, 1
    ),
    _metric("runs", "num_items", "Answers of the run (null without any).", 1),
)

COLUMNS = (*ITEM_METRICS, *RUN_METRICS)
