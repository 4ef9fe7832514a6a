"""Rank tests per (group, metric) row: Mann–Whitney U (independent) and Wilcoxon signed-rank (paired).

They need the raw values, so SciPy is called once per row (never per run). The statistic and p
replace the t test's; the CI of the difference, d and power stay those of the matching t test.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import stats

from mas_eval.stats._rows import Patch
from mas_eval.stats.summaries import Sample

__all__ = ["rank_test_step"]


def rank_test_step(samples: list[Sample], test: str, *, valid: np.ndarray) -> Patch:
    """Return the rank test's ``statistic`` (U of the treatment, or min(W+, W-)) and ``p_value`` for every row.

    ``scipy.stats.mannwhitneyu(treatment, control, alternative="two-sided")`` or
    ``scipy.stats.wilcoxon(differences)``, with SciPy's defaults (exact or asymptotic by size,
    continuity correction), on the ``valid`` rows; the others get NaN, and ``dof`` is null. A row
    where SciPy refuses the data becomes degenerate, with SciPy's reason.
    """
    size = len(samples)
    statistic = np.full(size, np.nan)
    p_value = np.full(size, np.nan)
    failed = np.zeros(size, dtype=bool)
    notes: dict[int, list[str]] = {}
    # One SciPy call per (group, metric) row, as the rank tests need the row's raw values; not per run.
    for r, sample in enumerate(samples):
        if sample is None or not valid[r]:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                if test == "mannwhitney":
                    result = stats.mannwhitneyu(sample[0], sample[1], alternative="two-sided")
                else:
                    result = stats.wilcoxon(sample[0])
            except ValueError as exc:
                failed[r] = True
                notes[r] = [f"{test} failed: {exc}"]
                continue
        statistic[r], p_value[r] = result.statistic, result.pvalue
    columns = {"test": test, "statistic": statistic, "p_value": p_value, "dof": np.nan}
    return Patch(columns=columns, warnings=notes, invalid=failed)
