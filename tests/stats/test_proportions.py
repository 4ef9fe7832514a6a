"""Pass/fail statistics: pass-rate intervals, McNemar's exact test, Newcombe's paired interval, Connor's power.

Values are pinned against statsmodels (the call quoted at each test) on random tables, against
published examples (source cited), and against the paper's formula written out step by step.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from mas_eval.errors import DataError, InvalidParameterError, SchemaError
from mas_eval.stats import (
    compare,
    mcnemar_exact,
    mcnemar_power,
    paired_difference,
    pass_rates,
    proportion_interval,
)

FAST = settings(max_examples=60, deadline=None)


@st.composite
def counts(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    n = np.array(draw(st.lists(st.integers(1, 400), min_size=1, max_size=20)))
    x = np.array([draw(st.integers(0, int(k))) for k in n])
    return x, n


@FAST
@given(counts(), st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_intervals_match_statsmodels_proportion_confint(table: tuple[np.ndarray, np.ndarray], level: float) -> None:
    # statsmodels.stats.proportion.proportion_confint(x, n, alpha=1 - level, method="wilson" / "beta")
    x, n = table
    for ours, theirs in (("wilson", "wilson"), ("clopper-pearson", "beta")):
        low, high = proportion_interval(x, n, method=ours, confidence=level)
        ref_low, ref_high = proportion_confint(x, n, alpha=1 - level, method=theirs)
        np.testing.assert_allclose(low, ref_low, rtol=0, atol=1e-12)
        np.testing.assert_allclose(high, ref_high, rtol=0, atol=1e-12)


def test_intervals_at_zero_and_all_successes() -> None:
    low, high = proportion_interval([0, 20], 20, method="clopper-pearson")
    assert (low[0], high[1]) == (0.0, 1.0)
    # Clopper-Pearson at 0 of n: 1 - (alpha/2)^(1/n), the "rule of three" family.
    assert high[0] == pytest.approx(1 - 0.025 ** (1 / 20), abs=1e-12)
    assert low[1] == pytest.approx(0.025 ** (1 / 20), abs=1e-12)
    low, high = proportion_interval([0, 20], 20, method="wilson")
    z2 = scipy_stats.norm.ppf(0.975) ** 2
    assert low[0] == pytest.approx(0.0, abs=1e-15) and high[1] == pytest.approx(1.0, abs=1e-15)
    assert high[0] == pytest.approx(z2 / (20 + z2), abs=1e-12)  # Wilson at x = 0: z^2 / (n + z^2)
    assert np.isnan(proportion_interval(0, 0)[0][0])


def test_interval_refuses_more_successes_than_trials() -> None:
    with pytest.raises(InvalidParameterError, match="exceed"):
        proportion_interval([3, 5], [4, 4])
    with pytest.raises(InvalidParameterError, match="whole number"):
        proportion_interval(1.5, 4)


@FAST
@given(st.integers(0, 300), st.integers(0, 300), st.integers(0, 300), st.integers(0, 300))
def test_mcnemar_matches_statsmodels_exact(a: int, b: int, c: int, d: int) -> None:
    # statsmodels.stats.contingency_tables.mcnemar([[a, b], [c, d]], exact=True)
    reference = mcnemar(np.array([[a, b], [c, d]]), exact=True)
    row = mcnemar_exact(b, c).row(0, named=True)
    assert row["p_value"] == pytest.approx(reference.pvalue, abs=1e-12)
    assert row["statistic"] == reference.statistic
    assert row["n_discordant"] == b + c


def test_mcnemar_published_examples() -> None:
    # Armitage & Berry (1994, p. 127), as StatsDirect's help on the exact McNemar test reports it:
    # media A and B, 12 specimens grew on A only and 2 on B only: exact two-sided P = 0.0129.
    assert mcnemar_exact(12, 2)["p_value"].item() == pytest.approx(0.0129, abs=5e-5)
    # The same in closed form: 2 * (C(14,0) + C(14,1) + C(14,2)) / 2^14 = 212 / 16384.
    assert mcnemar_exact(12, 2)["p_value"].item() == pytest.approx(212 / 16384, abs=1e-15)
    # No discordant case: nothing against the null.
    assert mcnemar_exact(0, 0)["p_value"].item() == 1.0
    table = mcnemar_exact([1, 7], [7, 1])
    assert table["p_value"].to_list() == pytest.approx([18 / 256, 18 / 256], abs=1e-15)


def newcombe_by_hand(a: int, b: int, c: int, d: int, level: float) -> tuple[float, float]:
    """Newcombe (1998), method 10, written out from the paper's steps with scalars."""
    n = a + b + c + d
    z = scipy_stats.norm.ppf(1 - (1 - level) / 2)

    def wilson(x: int) -> tuple[float, float]:
        # Newcombe's eq. for the score interval: (2x + z^2 -+ z sqrt(z^2 + 4x(1 - x/n))) / (2(n + z^2)).
        root = z * math.sqrt(z * z + 4 * x * (1 - x / n))
        return (2 * x + z * z - root) / (2 * (n + z * z)), (2 * x + z * z + root) / (2 * (n + z * z))

    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = wilson(a + b)
    l2, u2 = wilson(a + c)
    e, f, g, h = a + b, c + d, a + c, b + d
    if 0 in (e, f, g, h):
        phi = 0.0
    else:
        numerator = a * d - b * c
        if numerator > n / 2:
            numerator -= n / 2
        elif numerator >= 0:
            numerator = 0.0
        phi = numerator / math.sqrt(e * f * g * h)
    delta = math.sqrt(max((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0.0))
    epsilon = math.sqrt(max((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2, 0.0))
    return p1 - p2 - delta, p1 - p2 + epsilon


@FAST
@given(st.integers(0, 60), st.integers(0, 60), st.integers(0, 60), st.integers(0, 60), st.sampled_from([0.9, 0.95]))
def test_newcombe_matches_the_paper_step_by_step(a: int, b: int, c: int, d: int, level: float) -> None:
    if a + b + c + d == 0:
        return
    row = paired_difference(a, b, c, d, confidence=level).row(0, named=True)
    low, high = newcombe_by_hand(a, b, c, d, level)
    assert row["ci_low"] == pytest.approx(low, abs=1e-12)
    assert row["ci_high"] == pytest.approx(high, abs=1e-12)
    assert -1.0 - 1e-12 <= row["ci_low"] <= row["difference"] <= row["ci_high"] <= 1.0 + 1e-12


def test_newcombe_published_example() -> None:
    # Cavo et al. (2012), complete response before/after consolidation therapy, table (59, 6, 16, 80):
    # Fagerland, Lydersen & Laake, Statistical Analysis of Contingency Tables (2017), ch. 8, print
    # "Newcombe square-and-add: estimate = -0.0621 (95% CI -0.1186 to -0.0046)".
    row = paired_difference(59, 6, 16, 80).row(0, named=True)
    assert row["difference"] == pytest.approx(-10 / 161, abs=1e-15)
    assert row["ci_low"] == pytest.approx(-0.1186, abs=5e-5)
    assert row["ci_high"] == pytest.approx(-0.0046, abs=5e-5)
    # Its McNemar exact p: 2 * P(Bin(22, 1/2) <= 6) = 2 * 110056 / 2^22.
    assert row["p_value"] == pytest.approx(2 * 110056 / 2**22, abs=1e-15)


def test_paired_difference_of_an_empty_table_is_null() -> None:
    row = paired_difference(0, 0, 0, 0).row(0, named=True)
    assert row["n"] == 0 and row["ci_low"] is None and row["difference"] is None


def test_connor_sample_size_example() -> None:
    # powerandsamplesize.com, "Compare Paired Proportions: McNemar's Z-test, 2-Sided Equality" (after
    # Connor 1987, p. 209): p01 = 0.45, p10 = 0.05, alpha 0.05, power 0.8 -> ceiling(n) = 23.
    row = mcnemar_power(0.5, difference=0.05 - 0.45, power=0.8).row(0, named=True)
    assert row["n_required"] == 23
    z_a, z_b = scipy_stats.norm.ppf(0.975), scipy_stats.norm.ppf(0.8)
    assert row["n"] == pytest.approx(((z_a * math.sqrt(0.5) + z_b * math.sqrt(0.5 - 0.16)) / 0.4) ** 2, rel=1e-12)


@FAST
@given(
    st.floats(0.05, 1.0),
    st.floats(0.05, 0.95),
    st.floats(0.55, 0.99),
    st.sampled_from(["two-sided", "larger", "smaller"]),
)
def test_power_n_and_difference_invert_one_another(psi: float, share: float, target: float, alternative: str) -> None:
    delta = share * psi * (-1 if alternative == "smaller" else 1)
    n = mcnemar_power(psi, difference=delta, power=target, alternative=alternative)["n"].item()
    if n < 5:
        return
    back = mcnemar_power(psi, difference=delta, n=n, alternative=alternative)["power"].item()
    assert back == pytest.approx(target, abs=1e-9)
    found = mcnemar_power(psi, n=n, power=target, alternative=alternative)["difference"].item()
    assert found == pytest.approx(delta, abs=1e-9)


def test_power_refuses_impossible_requests() -> None:
    with pytest.raises(InvalidParameterError, match="exactly two"):
        mcnemar_power(0.3, difference=0.1)
    with pytest.raises(InvalidParameterError, match="below p_discordant"):
        mcnemar_power(0.3, difference=0.3, n=50)
    with pytest.raises(InvalidParameterError, match="difference=0"):
        mcnemar_power(0.3, difference=0.0, power=0.8)


def test_pass_rates_columns_and_values() -> None:
    runs = pl.DataFrame(
        {
            "system": ["mas"] * 6 + ["single"] * 6,
            "case_id": ["a", "a", "b", "b", "c", "c"] * 2,
            "ok": [1, 1, 1, 0, 0, None, 1, 0, 0, 0, 0, 0],
        }
    )
    table = pass_rates(runs, "ok", cluster="case_id")
    assert table.columns[:2] == ["system", "metric"]
    mas = table.row(0, named=True)
    assert (mas["n"], mas["passes"], mas["rate"], mas["n_clusters"]) == (5, 3, 0.6, 3)
    low, high = proportion_confint(3, 5, method="wilson")
    assert (mas["wilson_low"], mas["wilson_high"]) == pytest.approx((low, high), abs=1e-12)
    low, high = proportion_confint(3, 5, method="beta")
    assert (mas["clopper_pearson_low"], mas["clopper_pearson_high"]) == pytest.approx((low, high), abs=1e-12)
    # CR1 SE of a mean: sqrt(G/(G-1) * sum_g (sum of residuals in g)^2) / n, residuals y - 0.6.
    scores = np.array([0.8, -0.2, -0.6])
    assert mas["cluster_se"] == pytest.approx(math.sqrt(1.5 * (scores**2).sum()) / 5, abs=1e-12)
    plain = pass_rates(runs, "ok")
    assert plain["cluster_se"].null_count() == plain.height


def test_pass_rates_refuses_other_values() -> None:
    runs = pl.DataFrame({"system": ["mas", "single"], "score": [0.5, 1.0], "name": ["x", "y"]})
    with pytest.raises(DataError, match="other than 0 and 1"):
        pass_rates(runs, "score")
    with pytest.raises(SchemaError, match="pass/fail"):
        pass_rates(runs, "name")


def paired_runs(treatment: list[bool], control: list[bool], epochs: int = 1) -> pl.DataFrame:
    cases = [f"case{i}" for i in range(len(treatment))]
    rows = [
        (system, case, epoch, passed)
        for system, outcomes in (("mas", treatment), ("single", control))
        for case, passed in zip(cases, outcomes, strict=True)
        for epoch in range(1, epochs + 1)
    ]
    return pl.DataFrame(rows, schema=["system", "case_id", "epoch", "passed"], orient="row")


def test_compare_chooses_mcnemar_for_a_boolean_metric() -> None:
    rng = np.random.default_rng(7)
    treatment = (rng.random(40) < 0.7).tolist()
    control = (rng.random(40) < 0.4).tolist()
    runs = paired_runs(treatment, control)
    row = compare(runs, "passed", pair_on="case_id").row(0, named=True)
    t, c = np.array(treatment), np.array(control)
    table = [[int((t & c).sum()), int((t & ~c).sum())], [int((~t & c).sum()), int((~t & ~c).sum())]]
    # statsmodels.stats.contingency_tables.mcnemar(table, exact=True)
    assert row["test"] == "mcnemar"
    assert row["p_value"] == pytest.approx(mcnemar(np.array(table), exact=True).pvalue, abs=1e-12)
    assert row["difference"] == pytest.approx(t.mean() - c.mean(), abs=1e-12)
    expected = paired_difference(table[0][0], table[0][1], table[1][0], table[1][1]).row(0, named=True)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((expected["ci_low"], expected["ci_high"]), abs=1e-12)
    assert row["ci_method"] == "newcombe"
    assert row["n_pairs"] == 40


def test_compare_keeps_the_paired_t_when_cases_repeat() -> None:
    runs = paired_runs([True, False, True, True, False], [False, False, True, False, False], epochs=3)
    row = compare(runs, "passed", pair_on="case_id").row(0, named=True)
    assert row["test"] == "paired"
    assert "McNemar" in row["warning"]


def test_compare_clusters_repeated_cases_without_pair_on() -> None:
    runs = paired_runs([True, False, True, True, False, True], [False, False, True, False, False, True], epochs=2)
    row = compare(runs, "passed").row(0, named=True)
    assert row["test"] == "ols_cluster"
    assert row["n_clusters"] == 6
    assert "clustered by 'case_id'" in row["warning"]
    same = compare(runs, "passed", cluster="case_id").row(0, named=True)
    assert row["p_value"] == same["p_value"]


def test_compare_leaves_other_metrics_alone() -> None:
    runs = paired_runs([True, False, True, True, False], [False, False, True, False, False]).with_columns(
        score=pl.Series([0.2, 0.5, 0.9, 0.4, 0.3, 0.1, 0.6, 0.7, 0.2, 0.8])
    )
    table = compare(runs, ["passed", "score"], pair_on="case_id")
    assert table["test"].to_list() == ["mcnemar", "paired"]
    alone = compare(runs, "score", pair_on="case_id").drop("p_adjusted", "significant")
    assert table.filter(pl.col("metric") == "score").drop("p_adjusted", "significant").equals(alone)


def test_explicit_mcnemar_needs_pair_on_and_a_pass_fail_metric() -> None:
    runs = paired_runs([True, False], [False, False]).with_columns(score=pl.Series([0.2, 0.5, 0.9, 0.4]))
    with pytest.raises(InvalidParameterError, match="pair_on"):
        compare(runs, "passed", test="mcnemar")
    with pytest.raises(InvalidParameterError, match="pass/fail"):
        compare(runs, "score", test="mcnemar", pair_on="case_id")
    with pytest.raises(InvalidParameterError, match="cluster"):
        compare(runs, "passed", test="mcnemar", pair_on="case_id", cluster="case_id")
