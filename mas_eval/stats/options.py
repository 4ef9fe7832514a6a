"""The statistics layer's options.

The values each option accepts, which of ``compare``'s go together, and the columns of the table
it returns.

Each option's allowed values live in one ``Literal`` type, used in the signatures and read by
:meth:`~mas_eval.constraints.Options.of` for the checks, so the type hints, the error messages
and the CLI's help (which imports these types) cannot drift apart.
:data:`COMPARE_RULES` is the one table of the options of
:func:`~mas_eval.stats.comparison.compare` that need or exclude one another.

>>> from typing import get_args
>>> get_args(Test)
('welch', 'student', 'paired', 'mannwhitney', 'wilcoxon', 'mcnemar', 'auto')
>>> check_combinations("compare", {"test": "wilcoxon", "pair_on": "case_id", "cluster": "family", "n_boot": 0})
Traceback (most recent call last):
...
mas_eval.errors.InvalidParameterError: compare: cluster-robust inference is for the difference in means; it does not apply to test='wilcoxon'
"""  # noqa: E501

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from mas_eval.errors import InvalidParameterError

__all__ = [
    "COMPARE_RULES",
    "COMPARISON_COLUMNS",
    "CORRECTION_ALIASES",
    "GIVEN",
    "HYPOTHESIS_COLUMNS",
    "INDEPENDENT_TESTS",
    "MARGIN_TESTS",
    "PAIRED_TESTS",
    "RANK_TESTS",
    "Alternative",
    "BootCI",
    "Correction",
    "Design",
    "Hypothesis",
    "Method",
    "OptionRule",
    "ProportionMethod",
    "Strategy",
    "SummaryTest",
    "Test",
    "canonical_correction",
    "check_combinations",
]

#: The columns of a :func:`~mas_eval.stats.comparison.compare` table after its ``by`` keys, in order.
COMPARISON_COLUMNS = [
    "metric", "test", "n_treatment", "n_control", "n_pairs", "n_clusters",
    "mean_treatment", "mean_control", "std_treatment", "std_control", "difference", "improvement_percentage",
    "statistic", "dof", "p_value", "p_adjusted", "correction", "significant", "ci_low", "ci_high", "ci_method",
    "cohens_d", "hedges_g", "d_ci_low", "d_ci_high", "d_type", "effect_size", "power", "correlation", "warning",
]  # fmt: skip

#: The columns a :func:`~mas_eval.stats.comparison.compare` table gains, after ``warning``, when a ``hypothesis``
#: other than ``"superior"`` is tested: the hypothesis, its margin and what the test showed.
HYPOTHESIS_COLUMNS = ["hypothesis", "margin", "verdict"]

#: The t tests that run on group summaries alone (``ttest_from_summary``, ``baseline_comparison``).
SummaryTest = Literal["welch", "student"]
#: The tests of ``compare``; ``"auto"`` is ``"paired"`` when ``pair_on`` is given (``"mcnemar"`` for a
#: pass/fail metric with one run per case and system), else ``"welch"``.
Test = Literal[SummaryTest, "paired", "mannwhitney", "wilcoxon", "mcnemar", "auto"]
#: Multiple-comparison corrections; ``"bh"`` and ``"benjamini-hochberg"`` are ``"fdr_bh"``.
Correction = Literal["holm", "fdr_bh", "bonferroni", "none", "bh", "benjamini-hochberg"]
#: ``compare``'s model: the test's own, or a random intercept per case (``"mixed"``).
Method = Literal["default", "mixed"]
#: Bootstrap interval types.
BootCI = Literal["bca", "percentile"]
#: Designs of ``power``.
Design = Literal["independent", "paired"]
#: Alternatives of ``power``.
Alternative = Literal["two-sided", "larger", "smaller"]
#: Confidence intervals of a proportion (a pass rate): Wilson's score interval or Clopper–Pearson's exact one.
ProportionMethod = Literal["wilson", "clopper-pearson"]
#: What ``compare`` tests (higher is better): that the treatment differs from the control (``"superior"``,
#: the two-sided test of no difference), is not worse by more than a margin (``"noninferior"``:
#: difference > -margin) or lies within it (``"equivalent"``: -margin < difference < margin).
Hypothesis = Literal["superior", "noninferior", "equivalent"]
#: Binning of ``calibration`` / ``reliability_table``.
Strategy = Literal["uniform", "quantile"]

#: The aliases among :data:`Correction`, and the name each stands for.
CORRECTION_ALIASES: dict[str, str] = {"bh": "fdr_bh", "benjamini-hochberg": "fdr_bh"}

PAIRED_TESTS: tuple[str, ...] = ("paired", "wilcoxon", "mcnemar")
RANK_TESTS: tuple[str, ...] = ("mannwhitney", "wilcoxon")
#: Tests of two independent samples: ``pair_on`` means nothing to them (outside the mixed model).
INDEPENDENT_TESTS: tuple[str, ...] = tuple(t for t in get_args(Test) if t not in PAIRED_TESTS and t != "auto")

#: The hypotheses tested against a margin.
MARGIN_TESTS: tuple[str, ...] = ("noninferior", "equivalent")

#: Stands for "any value but None (or 0)" in a rule's condition.
GIVEN = "given"


@dataclass(frozen=True)
class OptionRule:
    """When every option of ``when`` takes one of its values, ``option`` must be given (``needed``) or not.

    ``when`` pairs an option with the values that trigger the rule, or with :data:`GIVEN`; an
    option missing from the checked mapping counts as not given. ``reason`` is the error message,
    formatted with the options (``{test!r}``).

    Examples
    --------
    >>> rule = OptionRule(when=(("test", ("wilcoxon",)),), option="cluster", needed=False,
    ...                   reason="cluster-robust inference does not apply to test={test!r}")
    >>> check_combinations("compare", {"test": "wilcoxon", "cluster": "case_id"}, rules=(rule,))
    Traceback (most recent call last):
    ...
    mas_eval.errors.InvalidParameterError: compare: cluster-robust inference does not apply to test='wilcoxon'
    """

    when: tuple[tuple[str, tuple[str, ...] | str], ...]
    option: str
    needed: bool
    reason: str

    def applies(self, options: Mapping[str, Any]) -> bool:
        """Return whether ``options`` meet every condition of ``when``.

        Examples
        --------
        >>> rule = OptionRule(when=(("test", ("wilcoxon",)),), option="cluster", needed=False, reason="no")
        >>> rule.applies({"test": "wilcoxon"}), rule.applies({"test": "welch"})
        (True, False)
        """
        return all(
            _given(options.get(name)) if values == GIVEN else options.get(name) in values for name, values in self.when
        )

    def broken(self, options: Mapping[str, Any]) -> bool:
        """Return whether ``options`` meet ``when`` and then give ``option`` when they must not, or the reverse.

        Examples
        --------
        >>> rule = OptionRule(when=(("test", ("wilcoxon",)),), option="cluster", needed=False, reason="no")
        >>> rule.broken({"test": "wilcoxon"}), rule.broken({"test": "wilcoxon", "cluster": "case_id"})
        (False, True)
        """
        return self.applies(options) and _given(options.get(self.option)) != self.needed


def _given(value: object) -> bool:
    # n_boot=0 means "no bootstrap", as None means "no cluster".
    return value is not None and not (isinstance(value, numbers.Integral) and value == 0)


#: Which options of ``compare`` need or exclude one another, checked in this order (the first broken
#: rule is reported). Single values are checked by ``compare``'s parameter constraints first.
COMPARE_RULES: tuple[OptionRule, ...] = (
    OptionRule((("test", RANK_TESTS),), "cluster", False,
               "cluster-robust inference is for the difference in means; it does not apply to test={test!r}"),
    OptionRule((("n_boot", GIVEN),), "cluster", False,
               "cluster and n_boot cannot be combined (a cluster bootstrap is not implemented); drop one"),
    OptionRule((("method", ("mixed",)),), "pair_on", True,
               "method='mixed' fits a random intercept per case: pass pair_on (e.g. pair_on='case_id')"),
    OptionRule((("method", ("mixed",)),), "cluster", False, "method='mixed' cannot be combined with cluster"),
    OptionRule((("method", ("mixed",)),), "n_boot", False, "method='mixed' cannot be combined with n_boot"),
    OptionRule((("test", ("mcnemar",)),), "cluster", False,
               "test='mcnemar' counts discordant cases, one run each; it takes no cluster (use test='paired')"),
    OptionRule((("test", ("mcnemar",)),), "n_boot", False,
               "test='mcnemar' has Newcombe's interval for the difference; it takes no n_boot (use test='paired')"),
    OptionRule((("test", ("mcnemar",)), ("method", ("mixed",))), "method", False,
               "test='mcnemar' cannot be combined with method='mixed'"),
    OptionRule((("test", PAIRED_TESTS),), "pair_on", True,
               "test={test!r} pairs runs by case: pass pair_on (e.g. pair_on='case_id')"),
    # With method="mixed", pair_on names the case of the random intercept, whatever the test.
    OptionRule((("test", INDEPENDENT_TESTS), ("method", ("default",))), "pair_on", False,
               "pair_on={pair_on!r} is only used by paired tests: use test='paired', 'wilcoxon' or 'auto'"),
    OptionRule((("hypothesis", MARGIN_TESTS),), "margin", True,
               "hypothesis={hypothesis!r} is tested against a margin: pass margin (> 0, in the metric's units, "
               "e.g. margin=0.05 for a pass rate)"),
    OptionRule((("hypothesis", (None, "superior")),), "margin", False,
               "margin={margin!r} is the margin of a non-inferiority or equivalence test: pass "
               "hypothesis='noninferior' or 'equivalent' (or drop margin)"),
    OptionRule((("test", RANK_TESTS), ("hypothesis", MARGIN_TESTS)), "hypothesis", False,
               "hypothesis={hypothesis!r} shifts a difference of means or proportions by the margin; a rank test "
               "has none: use test='auto', 'welch', 'student' or 'paired'"),
)  # fmt: skip


def check_combinations(where: str, options: Mapping[str, Any], rules: tuple[OptionRule, ...] = COMPARE_RULES) -> None:
    """Raise :class:`~mas_eval.errors.InvalidParameterError` with the reason of the first broken rule.

    Examples
    --------
    >>> check_combinations("compare", {"test": "welch", "cluster": "case_id"}) is None
    True
    >>> check_combinations("compare", {"test": "wilcoxon", "cluster": "case_id"})
    Traceback (most recent call last):
    ...
    mas_eval.errors.InvalidParameterError: compare: cluster-robust inference is for the difference in means; it does not apply to test='wilcoxon'
    """  # noqa: E501
    for rule in rules:
        if rule.broken(options):
            msg = f"{where}: {rule.reason.format(**options)}"
            raise InvalidParameterError(msg)


def canonical_correction(correction: Correction | None) -> str:
    """Return the name a (validated) correction stands for: aliases resolved, ``None`` as ``"none"``.

    Examples
    --------
    >>> canonical_correction("bh"), canonical_correction(None), canonical_correction("holm")
    ('fdr_bh', 'none', 'holm')
    """
    key = "none" if correction is None else correction
    return CORRECTION_ALIASES.get(key, key)
