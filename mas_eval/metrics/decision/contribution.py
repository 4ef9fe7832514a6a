r"""Expert contribution balance and diversity (seed 004, "Contribution Score", "Balance"; SPEC.md §1).

Notes
-----
.. math:: contrib_i = \frac{c_i + H_{norm}(m_i)}{2},\qquad H_{norm}(m) = \frac{-\sum_a p_a\ln p_a}{\ln N}

with N the distinct alternatives in the run's beliefs (``entropy_support="run"``; the agent's
own under ``"agent"``), :math:`p = m / \sum m` (not renormalised under
``entropy_renormalise=False``), 0 ln 0 = 0 and N = 1 → 0. ``balance_score = 1 - Gini`` of the
contributions, Gini exactly as the seed writes it (:meth:`MasExpr.gini
<mas_eval.metrics.namespace.MasExpr.gini>`); ``diversity_score`` = distinct top choices /
agents. Both formulas are the ``mas`` namespace's own (:mod:`mas_eval.metrics.namespace`).
"""

from __future__ import annotations

import numpy as np

from mas_eval.metrics.segments import Groups

__all__ = ["balance", "normalized_entropy"]


def normalized_entropy(
    mass_total: np.ndarray,
    m_log_m: np.ndarray,
    outcomes: np.ndarray,
    *,
    renormalise: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """Each agent's ``H / ln N`` from its sums ``T = Σ m`` and ``S = Σ m ln m``: ``(values, valid)``.

    ``outcomes`` is N: the run's distinct belief alternatives (``entropy_support="run"``) or
    the agent's own (``"agent"``). ``renormalise``: ``H = ln T - S / T``
    (null when T is 0), else ``H = -S``. N <= 1 gives 0. The same formula as
    :meth:`MasExpr.normalized_entropy <mas_eval.metrics.namespace.MasExpr.normalized_entropy>`.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        if renormalise:
            entropy = np.log(mass_total) - m_log_m / mass_total
            valid = mass_total > 0
        else:
            entropy, valid = -m_log_m, np.ones(len(m_log_m), dtype=bool)
        n = outcomes.astype(np.float64)
        return np.where(n > 1, entropy / np.log(n), entropy * 0.0), valid


def balance(run: np.ndarray, contribution: np.ndarray, valid: np.ndarray, runs: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Per run, the Gini coefficient of its agents' contributions (null for a run without any).

    ``run`` is per agent, sorted; ``valid`` marks agents with a contribution. The values are
    sorted within each run (ascending), then
    :math:`G = \sum_i (2i - n - 1) w_{(i)} / (n \sum_i w_i)`, 0 when the sum is 0.
    """
    order = np.lexsort((contribution[valid], run[valid]))
    values, owner = contribution[valid][order], run[valid][order]
    by_run = Groups.sorted_runs(owner, runs)
    n = by_run.count()
    starts = np.searchsorted(owner, np.arange(runs, dtype=owner.dtype))
    position = np.arange(len(values)) - starts[owner] + 1.0
    spread = by_run.sum((2.0 * position - n[owner] - 1.0) * values)
    total = by_run.sum(values)
    with np.errstate(divide="ignore", invalid="ignore"):
        gini = np.where(total > 0, spread / (n * total), 0.0)
    return gini, n > 0
