"""Statistics layer: MAS-vs-baseline comparisons, power, calibration, the crisis-MAS evaluation methodology's blocks.

* :func:`compare` — one tidy row per (group, metric): Welch / Student / paired / Mann–Whitney /
  Wilcoxon tests, cluster-robust SEs, bootstrap CIs, a mixed model, Cohen's d and Hedges' g
  with CIs, power, and Holm / Benjamini–Hochberg / Bonferroni across the table.
* :func:`power` — required n, minimum detectable effect, or power of a t test.
* :func:`baseline_comparison` — the methodology's "Baseline Comparison" and significance JSON.
* :func:`calibration`, :func:`reliability_table` — is a system's confidence calibrated?
* :func:`pass_rates`, :func:`proportion_interval`, :func:`mcnemar_exact`, :func:`paired_difference`,
  :func:`mcnemar_power` — pass/fail outcomes: pass rates with Wilson / Clopper–Pearson intervals,
  McNemar's exact test, Newcombe's interval of a paired difference, Connor's power.
* :func:`pass_at_k`, :func:`cost_per_correct`, :func:`compute_matched`, :func:`accuracy_cost_frontier` —
  statistics over epochs (repeats of a case): pass@k, pass^k, majority vote, cost per correct
  answer, the single agent given the MAS's compute, and the accuracy–cost frontier.
* :func:`pass_at_k_intervals` — pass@k and pass^k per system with the SE over cases and a seeded
  bootstrap interval, and the paired difference of two systems at each k.
* :func:`variance_components`, :func:`plan`, :func:`design_power` — between-case, epoch and judge
  variance with the ICC and the design effect, and the cases × epochs that reach a power at least cost.
* :func:`agent_shares` — each agent's share of its system's tokens, turns and tool calls, over its runs.
* :func:`overhead` — each run's spending (tokens, calls, seconds, cost) as a multiple of the control
  system's mean on the same case, per run or summarised per system.
* :func:`failure_rates`, :func:`failure_differences`, :func:`annotator_agreement` — failure modes from
  annotations (MAST's, say): each system's rate per mode with Wilson's interval, the paired difference of two
  systems per mode (McNemar, Newcombe, Holm or BH across the modes), and the annotators' agreement per mode.
* :func:`cohen_kappa`, :func:`fleiss_kappa`, :func:`krippendorff_alpha` — agreement of raters on the same
  units, per group, from ratings in long form (missing ratings allowed for alpha).
* :func:`describe` — each system's mean of each metric with its interval: Wilson's for a pass/fail one,
  the t interval for a graded one, the cluster-robust one when runs repeat a case.
* :func:`ttest_from_summary`, :func:`adjust_pvalues` — the building blocks, on their own.
* :func:`margin_test`, :func:`tango_test`, :func:`farrington_manning` — non-inferiority and
  equivalence at a stated margin (``compare(..., margin=, hypothesis=)`` runs them on every row):
  TOST on means, Tango's score test of paired pass rates, Farrington and Manning's of independent ones.
* :func:`cost_effectiveness` — is the extra cost worth it? The incremental cost per extra unit of
  quality (ICER) with Fieller's and a paired-bootstrap interval, dominance, and the acceptability curve.
* :func:`display`, :func:`summary_view`, :func:`write_comparisons` — show, print and save a comparison table
  (``display(table)`` shows it in Jupyter as ``mas-eval compare`` prints it).
* :func:`sufficient_statistics`, :func:`merge_statistics` — per-shard sums that ``compare`` runs
  from once merged (:class:`SufficientStatistics`), for data that does not fit in memory.

The values each option accepts are the ``Literal`` types :data:`Test`, :data:`SummaryTest`,
:data:`Correction`, :data:`Method`, :data:`BootCI`, :data:`Design`, :data:`Alternative`,
:data:`Hypothesis` and :data:`Strategy` (:mod:`~mas_eval.stats.options`), which the checks and the CLI's help read; a
value outside them, or a combination ``compare`` cannot run
(:data:`~mas_eval.stats.options.COMPARE_RULES`), raises :class:`~mas_eval.errors.InvalidParameterError`
before any data is read:

>>> from typing import get_args
>>> import polars as pl
>>> from mas_eval.stats import Correction, compare
>>> get_args(Correction)
('holm', 'fdr_bh', 'bonferroni', 'none', 'bh', 'benjamini-hochberg')
>>> compare(pl.DataFrame(), "dqs", correction="sidak")
Traceback (most recent call last):
...
mas_eval.errors.InvalidParameterError: compare: correction='sidak' is invalid; correction must be one of 'holm', 'fdr_bh', 'bonferroni', 'none', 'bh', 'benjamini-hochberg' or None
"""  # noqa: E501

from __future__ import annotations

from typing import TYPE_CHECKING

from mas_eval._lazy import lazy_attributes
from mas_eval.errors import MixedDqsMethodsError
from mas_eval.stats.options import (
    Alternative,
    BootCI,
    Correction,
    Design,
    Hypothesis,
    Method,
    ProportionMethod,
    Strategy,
    SummaryTest,
    Test,
)

if TYPE_CHECKING:
    from mas_eval.stats.agreement import cohen_kappa, fleiss_kappa, krippendorff_alpha
    from mas_eval.stats.baseline import baseline_comparison
    from mas_eval.stats.comparison import compare
    from mas_eval.stats.comparison_table import display, summary_view, write_comparisons
    from mas_eval.stats.compute import compute_matched, cost_per_correct
    from mas_eval.stats.coordination import agent_shares, overhead
    from mas_eval.stats.corrections import adjust_pvalues
    from mas_eval.stats.descriptives import describe
    from mas_eval.stats.designs import ttest_from_summary
    from mas_eval.stats.economics import cost_effectiveness
    from mas_eval.stats.epochs import pass_at_k, pass_at_k_intervals
    from mas_eval.stats.equivalence import farrington_manning, margin_test, tango_test
    from mas_eval.stats.failures import annotator_agreement, failure_differences, failure_rates
    from mas_eval.stats.frontier import accuracy_cost_frontier
    from mas_eval.stats.planning import design_power, plan
    from mas_eval.stats.power_analysis import power
    from mas_eval.stats.proportions import (
        mcnemar_exact,
        mcnemar_power,
        paired_difference,
        pass_rates,
        proportion_interval,
    )
    from mas_eval.stats.reliability import calibration, reliability_table
    from mas_eval.stats.sufficient import SufficientStatistics, merge_statistics, sufficient_statistics
    from mas_eval.stats.variance import variance_components

# SciPy and statsmodels load with the first function used, not with the package.
__getattr__, __dir__ = lazy_attributes(
    __name__,
    {
        "baseline_comparison": "mas_eval.stats.baseline",
        "cohen_kappa": "mas_eval.stats.agreement",
        "fleiss_kappa": "mas_eval.stats.agreement",
        "krippendorff_alpha": "mas_eval.stats.agreement",
        "annotator_agreement": "mas_eval.stats.failures",
        "failure_differences": "mas_eval.stats.failures",
        "failure_rates": "mas_eval.stats.failures",
        "compare": "mas_eval.stats.comparison",
        "adjust_pvalues": "mas_eval.stats.corrections",
        "cost_effectiveness": "mas_eval.stats.economics",
        "ttest_from_summary": "mas_eval.stats.designs",
        "describe": "mas_eval.stats.descriptives",
        "accuracy_cost_frontier": "mas_eval.stats.frontier",
        "compute_matched": "mas_eval.stats.compute",
        "cost_per_correct": "mas_eval.stats.compute",
        "pass_at_k": "mas_eval.stats.epochs",
        "pass_at_k_intervals": "mas_eval.stats.epochs",
        "farrington_manning": "mas_eval.stats.equivalence",
        "margin_test": "mas_eval.stats.equivalence",
        "tango_test": "mas_eval.stats.equivalence",
        "overhead": "mas_eval.stats.coordination",
        "agent_shares": "mas_eval.stats.coordination",
        "power": "mas_eval.stats.power_analysis",
        "mcnemar_exact": "mas_eval.stats.proportions",
        "mcnemar_power": "mas_eval.stats.proportions",
        "paired_difference": "mas_eval.stats.proportions",
        "pass_rates": "mas_eval.stats.proportions",
        "proportion_interval": "mas_eval.stats.proportions",
        "calibration": "mas_eval.stats.reliability",
        "reliability_table": "mas_eval.stats.reliability",
        "summary_view": "mas_eval.stats.comparison_table",
        "display": "mas_eval.stats.comparison_table",
        "write_comparisons": "mas_eval.stats.comparison_table",
        "SufficientStatistics": "mas_eval.stats.sufficient",
        "merge_statistics": "mas_eval.stats.sufficient",
        "sufficient_statistics": "mas_eval.stats.sufficient",
        "design_power": "mas_eval.stats.planning",
        "plan": "mas_eval.stats.planning",
        "variance_components": "mas_eval.stats.variance",
    },
)

__all__ = [
    "Alternative",
    "BootCI",
    "Correction",
    "Design",
    "Hypothesis",
    "Method",
    "MixedDqsMethodsError",
    "ProportionMethod",
    "Strategy",
    "SufficientStatistics",
    "SummaryTest",
    "Test",
    "accuracy_cost_frontier",
    "adjust_pvalues",
    "agent_shares",
    "annotator_agreement",
    "baseline_comparison",
    "calibration",
    "cohen_kappa",
    "compare",
    "compute_matched",
    "cost_effectiveness",
    "cost_per_correct",
    "describe",
    "design_power",
    "display",
    "failure_differences",
    "failure_rates",
    "farrington_manning",
    "fleiss_kappa",
    "krippendorff_alpha",
    "margin_test",
    "mcnemar_exact",
    "mcnemar_power",
    "merge_statistics",
    "overhead",
    "paired_difference",
    "pass_at_k",
    "pass_at_k_intervals",
    "pass_rates",
    "plan",
    "power",
    "proportion_interval",
    "reliability_table",
    "sufficient_statistics",
    "summary_view",
    "tango_test",
    "ttest_from_summary",
    "variance_components",
    "write_comparisons",
]
