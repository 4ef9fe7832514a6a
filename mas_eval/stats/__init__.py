"""Statistics layer: grouped MAS-vs-baseline comparisons, power, calibration, seed 004's blocks.

* :func:`compare` — one tidy row per (group, metric): Welch / Student / paired / Mann–Whitney /
  Wilcoxon tests, cluster-robust SEs, bootstrap CIs, a mixed model, Cohen's d and Hedges' g
  with CIs, power, and Holm / Benjamini–Hochberg / Bonferroni across the table.
* :func:`power` — required n, minimum detectable effect, or power of a t test.
* :func:`baseline_comparison` — seed 004's "Baseline Comparison" and significance JSON.
* :func:`calibration`, :func:`reliability_table` — is a system's confidence calibrated?
* :func:`ttest_from_summary`, :func:`adjust_pvalues` — the building blocks, on their own.
* :func:`summary_view`, :func:`write_comparisons` — print and save a comparison table.

>>> import mas_eval
>>> from mas_eval.stats import compare
>>> scores = mas_eval.score(mas_eval.simulate(400, seed=3))
>>> table = compare(scores, ["dqs", "decision_confidence"], by="task", pair_on="case_id", test="auto")
>>> table.select("metric", "test").unique().sort("metric").rows()
[('decision_confidence', 'paired'), ('dqs', 'paired')]
"""

from __future__ import annotations

from mas_eval.stats.baseline import baseline_comparison
from mas_eval.stats.comparison import compare
from mas_eval.stats.corrections import adjust_pvalues
from mas_eval.stats.designs import ttest_from_summary
from mas_eval.stats.guard import MixedDqsMethodsError
from mas_eval.stats.power_analysis import power
from mas_eval.stats.reliability import calibration, reliability_table
from mas_eval.stats.report import summary_view, write_comparisons

__all__ = [
    "MixedDqsMethodsError",
    "adjust_pvalues",
    "baseline_comparison",
    "calibration",
    "compare",
    "power",
    "reliability_table",
    "summary_view",
    "ttest_from_summary",
    "write_comparisons",
]
