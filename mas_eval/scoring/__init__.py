"""Scoring: :func:`score` runs every metric family whose tables are present; :class:`Scores` holds the result.

Orchestration only: the formulas live in :mod:`mas_eval.metrics`.
"""

from mas_eval.scoring.pipeline import Scores, score

__all__ = ["Scores", "score"]
