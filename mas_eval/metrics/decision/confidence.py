r"""Confidence score (the crisis-MAS evaluation methodology): agent statistics and the decision's confidence.

Notes
-----
Runs with two or more agents use the MAS formula

.. math:: DC = w\,CL + (1 - w)\,\overline{c},\qquad w = 0.6

(``consensus_weight``); runs with one agent or none use the self-reported ``runs.confidence``,
else the single agent's confidence. ``uncertainty = 1 - DC``; variance and standard deviation
over agents are population ones (ddof = 0). The methodology's worked example (.82, .78, .88,
.71) prints variance .032 and std .179; its own formula gives .00382 and .0618.
"""

from __future__ import annotations

import numpy as np

from mas_eval.metrics.arrays import take
from mas_eval.metrics.segments import Groups

__all__ = ["decision_confidence", "run_terms"]


def run_terms(by_run: Groups, confidence: np.ndarray, valid: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Return the terms of each run's agents' confidences (``valid``: not null), each as ``(values, valid)``.

    The terms are the mean, population variance and standard deviation, extremes, count, and the first one.
    """
    n = by_run.count(valid)
    some = n > 0
    values = np.where(valid, confidence, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = by_run.sum(values) / n
        deviation = np.where(valid, confidence - by_run.spread(mean), 0.0)
        variance = by_run.sum(deviation * deviation) / n
    first = by_run.first_row(valid)
    return {
        "average_confidence": (mean, some),
        "confidence_variance": (variance, some),
        "confidence_std": (np.sqrt(variance), some),
        "min_confidence": (by_run.min(np.where(valid, confidence, np.inf)), some),
        "max_confidence": (by_run.max(np.where(valid, confidence, -np.inf)), some),
        "n_confidences": (n, np.ones(len(n), dtype=bool)),
        "only_confidence": (take(confidence, first, first >= 0), first >= 0),
    }


def decision_confidence(
    consensus_weight: float,
    *,
    num_agents: np.ndarray,
    consensus: tuple[np.ndarray, np.ndarray],
    average: tuple[np.ndarray, np.ndarray],
    reported: tuple[np.ndarray, np.ndarray],
    n_confidences: np.ndarray,
    only: tuple[np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """Return the run's confidence as ``(values, valid)``.

    It is the MAS formula with two or more agents, else the self-reported ``runs.confidence``,
    else a lone agent's confidence.
    """
    w = consensus_weight
    mas = (num_agents >= 2) & consensus[1] & average[1]
    lone = (num_agents == 1) & (n_confidences == 1) & only[1]
    value = np.where(mas, w * consensus[0] + (1.0 - w) * average[0], np.where(reported[1], reported[0], only[0]))
    return value, mas | reported[1] | lone
