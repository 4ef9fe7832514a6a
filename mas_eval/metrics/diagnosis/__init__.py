"""The diagnosis family's maths (seed 000, LDDx): equivalence of diagnoses, label counts to scores.

* :mod:`~mas_eval.metrics.diagnosis.scores` — recall, precision, clinical reasoning quality,
  diagnostic safety and system safety coverage from a run's label counts, under the seed's
  rules (``"spec"``) or Local-DDx's code (``"lddx-v6"``).
"""

from mas_eval.metrics.diagnosis.scores import caa_weight, diagnosis_scores, score_expressions

__all__ = ["caa_weight", "diagnosis_scores", "score_expressions"]
