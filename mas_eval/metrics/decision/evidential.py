r"""Evidential reasoning (the crisis-MAS evaluation methodology): the agents' beliefs combined per alternative.

Yang & Xu's ER algorithm in the analytical form of Wang, Yang & Xu (2006), with the unassigned
belief :math:`\beta_H`; preset ``crisis-mas-poc`` uses that code's normalised weighted average.
Its products over agents are held as group sums (:class:`LogProduct`), so that they ride along
in the fused passes over beliefs (:mod:`~mas_eval.metrics.decision.beliefs`) and merge across
shards.

Notes
-----
With attribute weights :math:`w_i`, :math:`\bar m_{H,i} = 1 - w_i`,
:math:`m_{H,i} = 1 - w_i\sum_n\beta_{n,i}` and :math:`P_n = \prod_i(w_i\beta_{n,i} + m_{H,i})`
over the run's agents, N the alternatives in the run's beliefs:

.. math::
    k = \Big[\sum_n P_n - (N-1)\prod_i m_{H,i}\Big]^{-1},\quad
    \beta_n = \frac{k\,[P_n - \prod_i m_{H,i}]}{1 - k\prod_i \bar m_{H,i}},\quad
    \beta_H = \frac{k\,[\prod_i m_{H,i} - \prod_i \bar m_{H,i}]}{1 - k\prod_i \bar m_{H,i}}

An agent with no row for alternative n contributes :math:`m_{H,i}` to :math:`P_n`: the product
over all agents is assembled from the product over the agents present and the per-run product
of :math:`m_{H,i}` over all agents, divided by that over the agents present, each held as a
log-sum and a count of zeros.

``er="weighted_average"`` (crisis_mas_poc): :math:`\beta_n \propto \sum_i w_i m_{n,i} /
\sum_a m_{a,i}`, renormalised to sum 1, and nothing is left unassigned.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mas_eval.metrics.decision.params import ER
from mas_eval.metrics.segments import Groups

__all__ = ["Combined", "LogProduct", "combine"]


@dataclass(frozen=True)
class LogProduct:
    """A product per group as two sums: of the logs of its positive factors, and a count of its zeros.

    The zero count lets a product be divided by a sub-product without dividing by zero.
    """

    log: np.ndarray
    zeros: np.ndarray

    @classmethod
    def of(cls, groups: Groups, factor: np.ndarray) -> LogProduct:
        """Return the product of ``factor`` over each of ``groups``, as its log and its count of zeros."""
        positive = factor > 0
        return cls(
            log=groups.sum(np.log(np.where(positive, factor, 1.0))),
            zeros=groups.count(~positive),
        )

    def value(self) -> np.ndarray:
        """Return the products themselves: 0 where a factor is 0, else the exponential of the log."""
        return np.where(self.zeros > 0, 0.0, np.exp(self.log))


@dataclass(frozen=True)
class Combined:
    """Per run ``er_unassigned``; per (run, alternative) of the beliefs ``er_belief``."""

    unassigned: np.ndarray
    belief: np.ndarray


def combine(
    er: ER,
    *,
    rows: Groups,
    runs_of_alternatives: Groups,
    w: np.ndarray,
    mass: np.ndarray,
    total: np.ndarray,
    believers: Groups,
    agent_w: np.ndarray,
    agent_total: np.ndarray,
) -> Combined:
    """Combine the beliefs of each run's agents.

    ``rows`` groups the belief rows by (run, alternative) and ``runs_of_alternatives`` those
    groups by run (a group per run code); ``w``, ``mass`` and ``total`` are per belief row (its
    agent's weight and mass total). ``believers`` groups the agents with
    beliefs by run, with their ``agent_w`` and ``agent_total``. Runs without beliefs get 0:
    the caller masks them.
    """
    by_run = runs_of_alternatives
    with np.errstate(divide="ignore", invalid="ignore"):
        if er == "weighted_average":
            average = rows.sum(w * mass / total)
            normaliser = by_run.sum(average)
            # The renormalised average assigns all belief: crisis_mas_poc's max(0, 1 - Σβ) is 0.
            return Combined(unassigned=np.zeros(len(by_run)), belief=average / by_run.spread(normaliser))

        m_h = 1.0 - w * total
        with_grade = LogProduct.of(rows, w * mass + m_h)
        present_h = LogProduct.of(rows, m_h)
        all_h = LogProduct.of(believers, 1.0 - agent_w * agent_total)
        all_bar = LogProduct.of(believers, 1.0 - agent_w)
        q_h, q_bar = all_h.value(), all_bar.value()
        alternative_run = by_run.index
        absent_zeros = all_h.zeros[alternative_run] - present_h.zeros
        p_n = np.where(
            (with_grade.zeros > 0) | (absent_zeros > 0),
            0.0,
            np.exp(with_grade.log + all_h.log[alternative_run] - present_h.log),
        )
        n_alternatives = by_run.count()
        k = 1.0 / (by_run.sum(p_n) - (n_alternatives - 1) * q_h)
        denominator = 1.0 - k * q_bar
        unassigned = k * (q_h - q_bar) / denominator
        belief = k[alternative_run] * (p_n - q_h[alternative_run]) / denominator[alternative_run]
    return Combined(unassigned=unassigned, belief=belief)
