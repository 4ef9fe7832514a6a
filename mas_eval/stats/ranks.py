"""Rank tests per (group, metric) row: Mann–Whitney U (independent) and Wilcoxon signed-rank (paired).

They need the raw values, so SciPy is called once per row (never per run). The statistic and p
replace the t test's; the CI of the difference, d and power stay those of the matching t test.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import stats

from mas_eval.stats._rows import Rows
from mas_eval.stats.summaries import Sample

__all__ = ["apply_rank_test"]


def apply_rank_test(rows: Rows, samples: list[Sample], test: str) -> None:
    """Set ``statistic`` (U of the treatment, or min(W+, W-)) and ``p_value`` of the valid rows.

    ``scipy.stats.mannwhitneyu(treatment, control, alternative="two-sided")`` or
    ``scipy.stats.wilcoxon(differences)``, with SciPy's defaults (exact or asymptotic by size,
    continuity correction); ``dof`` is null.
    """
    rows.set("test", test)
    statistic = np.full(rows.size, np.nan)
    p_value = np.full(rows.size, np.nan)
    for r, sample in enumerate(samples):
        if sample is None or not rows.ok[r]:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                if test == "mannwhitney":
                    result = stats.mannwhitneyu(sample[0], sample[1], alternative="two-sided")
                else:
                    result = stats.wilcoxon(sample[0])
            except ValueError as exc:
                rows.warn(np.arange(rows.size) == r, f"{test} failed: {exc}")
                continue
        statistic[r], p_value[r] = result.statistic, result.pvalue
    rows.set("statistic", statistic)
    rows.set("p_value", p_value)
    rows.set("dof", np.nan)
