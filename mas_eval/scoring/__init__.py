"""Scoring: :func:`score` runs every metric family whose tables are present; :class:`Scores` holds the result.

Orchestration only: the formulas live in :mod:`mas_eval.metrics`. ``score``'s ``progress`` is a
:class:`Progress`, called with each :class:`Step`.
"""

from mas_eval.scoring.pipeline import Scores, score
from mas_eval.scoring.request import Progress, Step

__all__ = ["Progress", "Scores", "Step", "score"]
