"""The diagnosis family's maths (the LDDx v6 metrics guide): equivalence of diagnoses, label counts to scores.

* :mod:`~mas_eval.metrics.diagnosis.scores` — recall, precision, clinical reasoning quality,
  diagnostic safety and system safety coverage from a run's label counts, under the guide's
  rules (``"spec"``) or Local-DDx's code (``"lddx-v6"``).
* :mod:`~mas_eval.metrics.diagnosis.equivalence` — whether two diagnosis strings name the same
  thing: normalisation, a shipped synonym table, deterministic tiers and an optional cached
  judge (:func:`match_pairs`), and one-to-one matches from them (:func:`assign`).
* :mod:`~mas_eval.metrics.diagnosis.labels` — TP/FP/CAA/FN/AE/TM-SM for every run (:func:`classify`,
  :func:`label_counts`).
* :mod:`~mas_eval.metrics.diagnosis.collaboration` — TempoScore per round, credibility per agent.
* :mod:`~mas_eval.metrics.diagnosis.vote` — the credibility-weighted vote (:func:`credibility_vote`).
* :mod:`~mas_eval.metrics.diagnosis.suite` — all of it for :func:`mas_eval.score` (:data:`FAMILY`);
  parameters :class:`~mas_eval.metrics.diagnosis.params.DiagnosisParams`, output columns
  :mod:`~mas_eval.metrics.diagnosis.columns`.
"""

from mas_eval.metrics.diagnosis.columns import COLUMNS, TABLES
from mas_eval.metrics.diagnosis.equivalence import assign, match_pairs, normalise, synonym_table
from mas_eval.metrics.diagnosis.labels import classify, label_counts
from mas_eval.metrics.diagnosis.params import DiagnosisParams
from mas_eval.metrics.diagnosis.scores import caa_weight, diagnosis_scores, score_expressions
from mas_eval.metrics.diagnosis.suite import compute
from mas_eval.metrics.diagnosis.vote import credibility_vote
from mas_eval.metrics.family import Family

FAMILY = Family(
    name="diagnosis",
    needs=("runs", "ddx"),
    reads=("ground_truth", "messages", "interventions"),
    params=DiagnosisParams,
    compute=compute,
    description="Differential diagnosis: labels, recall, CRQ, safety, TempoScore, credibility (LDDx v6 metrics guide).",
    columns=COLUMNS,
    output_tables=TABLES,
    compared=("traditional_recall", "clinical_reasoning_quality", "diagnostic_safety", "system_safety_coverage"),
)

__all__ = [
    "FAMILY",
    "DiagnosisParams",
    "assign",
    "caa_weight",
    "classify",
    "credibility_vote",
    "diagnosis_scores",
    "label_counts",
    "match_pairs",
    "normalise",
    "score_expressions",
    "synonym_table",
]
