"""Statistics pinned to published values: R's t.test on `sleep`, effectsize on `mtcars`, the crisis-MAS methodology,
agreement of raters (Fleiss 1971, Krippendorff 2011, Cohen's kappa's textbook example), Fieller's interval (DC-Stats'
and Stata mrrobust's printed examples).

Sign convention: ``difference = mean(treatment) - mean(control)``. In R, ``t.test(extra ~ group,
data = sleep)`` reports group 1 minus group 2, so these tests pass ``treatment="1"`` and
``control="2"`` and expect R's signs (t < 0, CI below zero for the paired test).
"""

from __future__ import annotations

import math
from pathlib import Path

import krippendorff
import numpy as np
import polars as pl
import pytest
from scipy import stats as sps
from statsmodels.stats.inter_rater import cohens_kappa as statsmodels_cohen
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

from mas_eval.stats import (
    baseline_comparison,
    cohen_kappa,
    compare,
    cost_effectiveness,
    farrington_manning,
    fleiss_kappa,
    krippendorff_alpha,
    tango_test,
    ttest_from_summary,
)
from mas_eval.stats.economics import fieller_interval
from mas_eval.stats.effects import d_confidence_interval, hedges_correction

SLEEP_GROUP1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
SLEEP_GROUP2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]

# R's mtcars: mpg of the 19 automatic (am = 0) and 13 manual (am = 1) cars.
MPG_AUTOMATIC = [21.4, 18.7, 18.1, 14.3, 24.4, 22.8, 19.2, 17.8, 16.4, 17.3, 15.2, 10.4, 10.4, 14.7, 21.5, 15.5,
                 15.2, 13.3, 19.2]  # fmt: skip
MPG_MANUAL = [21.0, 21.0, 22.8, 32.4, 30.4, 33.9, 27.3, 26.0, 30.4, 15.8, 19.7, 15.0, 21.4]


@pytest.fixture
def sleep() -> pl.DataFrame:
    return pl.DataFrame(
        {"system": ["1"] * 10 + ["2"] * 10, "ID": list(range(1, 11)) * 2, "extra": SLEEP_GROUP1 + SLEEP_GROUP2}
    )


def _sleep_row(sleep: pl.DataFrame, **kwargs: object) -> dict[str, object]:
    return compare(sleep, "extra", treatment="1", control="2", **kwargs).row(0, named=True)


def test_welch_matches_r_t_test_on_sleep(sleep: pl.DataFrame) -> None:
    # R: t.test(extra ~ group, data = sleep)
    # t = -1.8608, df = 17.776, p-value = 0.07939; 95 percent CI: -3.3654832  0.2054832
    row = _sleep_row(sleep)
    assert row["test"] == "welch"
    assert row["difference"] == pytest.approx(0.75 - 2.33, abs=1e-12)
    assert row["statistic"] == pytest.approx(-1.8608, abs=5e-5)
    assert row["dof"] == pytest.approx(17.776, abs=5e-4)
    assert row["p_value"] == pytest.approx(0.07939, abs=5e-6)
    assert row["ci_low"] == pytest.approx(-3.3654832, abs=5e-8)
    assert row["ci_high"] == pytest.approx(0.2054832, abs=5e-8)
    assert (row["n_treatment"], row["n_control"], row["n_pairs"]) == (10, 10, None)


def test_student_matches_r_t_test_on_sleep(sleep: pl.DataFrame) -> None:
    # R: t.test(extra ~ group, data = sleep, var.equal = TRUE)
    # t = -1.8608, df = 18, p-value = 0.07919; 95 percent CI: -3.363874  0.203874
    row = _sleep_row(sleep, test="student")
    assert row["statistic"] == pytest.approx(-1.8608, abs=5e-5)
    assert row["dof"] == 18
    assert row["p_value"] == pytest.approx(0.07919, abs=5e-6)
    assert row["ci_low"] == pytest.approx(-3.363874, abs=5e-7)
    assert row["ci_high"] == pytest.approx(0.203874, abs=5e-7)


def test_paired_matches_r_t_test_on_sleep(sleep: pl.DataFrame) -> None:
    # R: with(sleep, t.test(extra[group == 1], extra[group == 2], paired = TRUE))
    # t = -4.0621, df = 9, p-value = 0.002833; 95 percent CI: -2.4598858 -0.7001142
    row = _sleep_row(sleep, pair_on="ID", test="paired")
    assert row["test"] == "paired"
    assert row["n_pairs"] == 10
    assert row["statistic"] == pytest.approx(-4.0621, abs=5e-5)
    assert row["dof"] == 9
    assert row["p_value"] == pytest.approx(0.002833, abs=5e-7)
    assert row["ci_low"] == pytest.approx(-2.4598858, abs=5e-8)
    assert row["ci_high"] == pytest.approx(-0.7001142, abs=5e-8)
    # `auto` with pair_on is the paired test.
    assert _sleep_row(sleep, pair_on="ID", test="auto")["statistic"] == pytest.approx(row["statistic"], abs=1e-12)


def test_paired_d_z_matches_r_effectsize_on_sleep(sleep: pl.DataFrame) -> None:
    # R: effectsize::cohens_d(Pair(extra[group == 1], extra[group == 2]) ~ 1, data = sleep)
    # Cohen's d = -1.28, 95% CI [-2.12, -0.41]; d_z = t / sqrt(n).
    row = _sleep_row(sleep, pair_on="ID", test="paired")
    assert row["d_type"] == "d_z"
    assert row["cohens_d"] == pytest.approx(-4.0621276834 / math.sqrt(10), abs=1e-9)
    assert round(row["d_ci_low"], 2) == -2.12
    assert round(row["d_ci_high"], 2) == -0.41


def test_cohens_d_and_hedges_g_match_r_effectsize_on_mtcars() -> None:
    # R: effectsize::cohens_d(mpg ~ am, data = mtcars) -> -1.48, 95% CI [-2.27, -0.67]
    #    effectsize::hedges_g(mpg ~ am, data = mtcars) -> -1.44, 95% CI [-2.21, -0.65]
    frame = pl.DataFrame(
        {"system": ["auto"] * 19 + ["manual"] * 13, "mpg": MPG_AUTOMATIC + MPG_MANUAL},
    )
    row = compare(frame, "mpg", treatment="auto", control="manual", test="student").row(0, named=True)
    assert row["d_type"] == "d_s"
    assert round(row["cohens_d"], 2) == -1.48
    assert (round(row["d_ci_low"], 2), round(row["d_ci_high"], 2)) == (-2.27, -0.67)
    assert round(row["hedges_g"], 2) == -1.44
    j = row["hedges_g"] / row["cohens_d"]
    assert (round(row["d_ci_low"] * j, 2), round(row["d_ci_high"] * j, 2)) == (-2.21, -0.65)
    # R: t.test(mpg ~ am, data = mtcars, var.equal = TRUE): t = -4.1061, df = 30, p = 0.000285
    assert row["statistic"] == pytest.approx(-4.1061, abs=5e-5)
    assert row["p_value"] == pytest.approx(0.000285, abs=5e-7)


def test_hedges_correction_is_the_exact_gamma_ratio() -> None:
    # J(df) = Γ(df/2) / (sqrt(df/2) Γ((df-1)/2)). Closed forms: J(2) = Γ(1) / (1 · Γ(1/2)) = 1/sqrt(pi),
    # J(3) = Γ(3/2) / (sqrt(3/2) · Γ(1)) = sqrt(pi)/2 / sqrt(1.5).
    assert hedges_correction(2.0) == pytest.approx(1 / math.sqrt(math.pi), abs=1e-15)
    assert hedges_correction(3.0) == pytest.approx(math.sqrt(math.pi) / 2 / math.sqrt(1.5), abs=1e-15)
    for df in (5.0, 18.0, 60.0, 400.0):
        exact = math.gamma(df / 2) / (math.sqrt(df / 2) * math.gamma((df - 1) / 2)) if df < 300 else None
        if exact is not None:
            assert hedges_correction(df) == pytest.approx(exact, rel=1e-13)
        # Hedges' approximation 1 - 3/(4 df - 1) is within O(df^-2).
        assert hedges_correction(df) == pytest.approx(1 - 3 / (4 * df - 1), abs=2 / df**2)
    assert math.isnan(float(hedges_correction(1.0)))


def test_d_ci_by_noncentral_t_matches_an_independent_root_finder() -> None:
    from scipy import optimize, stats

    def reference(t: float, df: float, scale: float, level: float) -> tuple[float, float]:
        tail = (1 - level) / 2
        width = 20 * math.sqrt(1 + t * t / (2 * df))

        def f(nc: float, target: float) -> float:
            value = stats.nct.cdf(t, df, nc)
            return (0.0 if nc > t else 1.0) - target if math.isnan(value) else value - target

        low = optimize.brentq(f, t - width, t + width, args=(1 - tail,), xtol=1e-14, rtol=1e-15)
        high = optimize.brentq(f, t - width, t + width, args=(tail,), xtol=1e-14, rtol=1e-15)
        return low / scale, high / scale

    cases = [(-4.106126983, 30, math.sqrt(19 * 13 / 32), 0.95), (2.0, 8, 2.0, 0.9), (0.0, 3, 1.0, 0.95),
             (12.5, 200, 7.0, 0.99), (-0.3, 1500, 20.0, 0.95)]  # fmt: skip
    for t, df, scale, level in cases:
        low, high = d_confidence_interval(t, df, scale, level)
        want_low, want_high = reference(t, df, scale, level)
        assert low[0] == pytest.approx(want_low, abs=1e-9)
        assert high[0] == pytest.approx(want_high, abs=1e-9)


# -- the crisis-MAS evaluation methodology and crisis_mas_poc ----------------------------------


def test_seed_t_test_example_gives_the_formula_values() -> None:
    # The methodology prints t 2.341, p .0234, d .567 for means .745/.680, SDs .082/.091, n 10/10;
    # its own formulas give Welch t 1.678, p .111 and pooled-SD d .750.
    out = ttest_from_summary(0.745, 0.082, 10, 0.680, 0.091, 10)
    assert out["statistic"] == pytest.approx(1.6780131378, abs=1e-9)
    assert out["p_value"] == pytest.approx(0.1108068238, abs=1e-9)
    assert out["cohens_d"] == pytest.approx(0.7504302887, abs=1e-9)
    assert (round(out["statistic"], 3), round(out["p_value"], 3), round(out["cohens_d"], 3)) == (1.678, 0.111, 0.750)
    assert out["effect_size"] == "medium"
    assert out["significant"] is False


def test_seed_t_test_example_through_compare() -> None:
    # The same summary statistics realised as runs: compare runs the same code on group statistics.
    rng = np.random.default_rng(4)
    values = []
    for mean, sd in ((0.745, 0.082), (0.680, 0.091)):
        z = rng.normal(size=10)
        values.append(mean + sd * (z - z.mean()) / z.std(ddof=1))
    frame = pl.DataFrame({"system": ["mas"] * 10 + ["single"] * 10, "dqs": np.concatenate(values)})
    row = compare(frame, "dqs").row(0, named=True)
    assert row["statistic"] == pytest.approx(1.6780131378, abs=1e-9)
    assert row["p_value"] == pytest.approx(0.1108068238, abs=1e-9)
    assert row["cohens_d"] == pytest.approx(0.7504302887, abs=1e-9)
    sig = baseline_comparison(frame, metrics={"decision_quality": "dqs"})["statistical_significance"]
    assert sig["decision_quality"]["t_statistic"] == pytest.approx(1.6780131378, abs=1e-9)
    assert sig["decision_quality"]["n_multi"] == 10


def test_crisis_mas_poc_statistics_example() -> None:
    # crisis_mas_poc (scipy.stats.ttest_ind default, Student): [.82,.85,.81,.84] vs [.75,.73,.76,.74].
    frame = pl.DataFrame(
        {"system": ["mas"] * 4 + ["single"] * 4, "dqs": [0.82, 0.85, 0.81, 0.84, 0.75, 0.73, 0.76, 0.74]}
    )
    row = compare(frame, "dqs", test="student").row(0, named=True)
    assert row["statistic"] == pytest.approx(7.602631123, abs=1e-9)
    assert row["p_value"] == pytest.approx(0.000269641306, abs=1e-12)
    assert row["cohens_d"] == pytest.approx(5.375872022, abs=1e-9)
    out = baseline_comparison(frame, metrics={"decision_quality": "dqs"}, preset="crisis-mas-poc")
    sig = out["statistical_significance"]["decision_quality"]
    assert sig["t_statistic"] == pytest.approx(7.602631123, abs=1e-9)
    assert sig["p_value"] == pytest.approx(0.000269641306, abs=1e-12)
    assert sig["cohens_d"] == pytest.approx(5.375872022, abs=1e-9)
    assert sig["test"] == "student"
    assert (
        baseline_comparison(frame, metrics={"decision_quality": "dqs"})["statistical_significance"]["decision_quality"][
            "test"
        ]
        == "welch"
    )


def test_baseline_comparison_reproduces_the_seed_block() -> None:
    # The methodology's "Baseline Comparison": DQS .720 vs .850 -> -.130, -15.3%;
    # confidence .760 vs .820 -> -.060, -7.3%.
    frame = pl.DataFrame(
        {
            "system": ["mas", "mas", "single", "single"],
            "dqs": [0.70, 0.74, 0.84, 0.86],
            "decision_confidence": [0.75, 0.77, 0.81, 0.83],
        }
    )
    out = baseline_comparison(frame)
    dq, conf = out["decision_quality"], out["confidence"]
    assert list(dq) == ["multi_agent", "single_agent", "improvement", "improvement_percentage"]
    assert (round(dq["multi_agent"], 3), round(dq["single_agent"], 3)) == (0.720, 0.850)
    assert round(dq["improvement"], 3) == -0.130
    assert round(dq["improvement_percentage"], 1) == -15.3
    assert (round(conf["improvement"], 3), round(conf["improvement_percentage"], 1)) == (-0.060, -7.3)
    sig = out["statistical_significance"]["confidence"]
    expected_keys = {
        "t_statistic", "p_value", "significant", "alpha", "cohens_d", "effect_size", "multi_agent_mean",
        "single_agent_mean", "multi_agent_std", "single_agent_std", "n_multi", "n_single",
    }  # fmt: skip
    assert expected_keys <= set(sig)
    assert sig["alpha"] == 0.05
    # crisis_mas_poc, evaluation/metrics.py, MetricsEvaluator.compare_to_baseline: improvement =
    # np.mean([dq improvement, confidence improvement]) = (-.130 + -.060) / 2 = -.095, and
    # improvement_percentage = improvement * 100 = -9.5 (points, not relative to the baseline).
    assert out["improvement"] == pytest.approx(-0.095, abs=1e-12)
    assert out["improvement_percentage"] == pytest.approx(-9.5, abs=1e-10)
    assert list(out) == ["decision_quality", "confidence", "improvement", "improvement_percentage",
                         "statistical_significance"]  # fmt: skip


def test_the_overall_improvement_is_the_mean_of_the_blocks_present() -> None:
    # One block: its own difference, 0.78 - 0.74 = 0.04 (crisis_mas_poc averages the blocks it has).
    frame = pl.DataFrame({"system": ["mas", "mas", "single", "single"], "dqs": [0.8, 0.76, 0.75, 0.73]})
    out = baseline_comparison(frame, metrics={"decision_quality": "dqs"})
    assert out["improvement"] == pytest.approx(0.04, abs=1e-12)
    assert out["improvement_percentage"] == pytest.approx(4.0, abs=1e-10)
    # A block with no control runs has no difference: it is left out, and with none left both are None.
    only_mas = pl.DataFrame({"system": ["mas", "mas", "single"], "dqs": [0.8, 0.76, None]})
    empty = baseline_comparison(only_mas, metrics={"decision_quality": "dqs"})
    assert empty["decision_quality"]["improvement"] is None
    assert (empty["improvement"], empty["improvement_percentage"]) == (None, None)


def test_improvement_percentage_is_null_when_the_baseline_is_zero() -> None:
    frame = pl.DataFrame({"system": ["mas"] * 3 + ["single"] * 3, "y": [1.0, 2.0, 3.0, -1.0, 0.0, 1.0]})
    row = compare(frame, "y").row(0, named=True)
    assert row["improvement_percentage"] is None
    assert "improvement_percentage undefined" in row["warning"]
    assert row["p_value"] is not None  # only the percentage is undefined


def test_crisis_mas_poc_block_reports_population_sds() -> None:
    # crisis_mas_poc's significance block reports np.std (ddof 0) of each group; its t and d use ddof 1.
    mas, single = [0.82, 0.85, 0.81, 0.84], [0.75, 0.73, 0.76, 0.74]
    frame = pl.DataFrame({"system": ["mas"] * 4 + ["single"] * 4, "dqs": mas + single})
    metrics = {"decision_quality": "dqs"}
    poc = baseline_comparison(frame, metrics=metrics, preset="crisis-mas-poc")["statistical_significance"]
    assert poc["decision_quality"]["multi_agent_std"] == pytest.approx(np.std(mas), abs=1e-12)
    assert poc["decision_quality"]["single_agent_std"] == pytest.approx(np.std(single), abs=1e-12)
    assert poc["decision_quality"]["cohens_d"] == pytest.approx(5.375872022, abs=1e-9)
    spec = baseline_comparison(frame, metrics=metrics)["statistical_significance"]["decision_quality"]
    assert spec["multi_agent_std"] == pytest.approx(np.std(mas, ddof=1), abs=1e-12)
    chosen = baseline_comparison(frame, metrics=metrics, sd_ddof=0)["statistical_significance"]["decision_quality"]
    assert chosen["single_agent_std"] == pytest.approx(np.std(single), abs=1e-12)
    assert chosen["t_statistic"] == spec["t_statistic"]


# --- variance components: Shrout & Fleiss (1979) through R's psych::ICC ------------------------------

# Shrout & Fleiss (1979), "Intraclass correlations: uses in assessing rater reliability", Table 2:
# six targets (rows) rated by four judges (columns); psych's ICC help page and tests use it as `sf`.
SHROUT_FLEISS = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]


def _shrout_fleiss() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "case_id": [i for i, row in enumerate(SHROUT_FLEISS) for _ in row],
            "judge": [j for row in SHROUT_FLEISS for j in range(len(row))],
            "score": [float(v) for row in SHROUT_FLEISS for v in row],
        }
    )


def test_one_way_icc_matches_r_psych_icc_on_shrout_fleiss() -> None:
    # R: psych::ICC(ratings) on the Shrout & Fleiss matrix, as printed in dwoll/RExRepos md/interRaterICC.md:
    #   Single_raters_absolute ICC1 0.17 F 1.8 df1 5 df2 18 p 0.16477 lower bound -0.133 upper bound 0.72
    # (psych's tests/testthat/test_ICC.R: round(ICC(1,1), 2) == .17; Shrout & Fleiss Table 4: .17).
    from mas_eval.stats import variance_components

    table = variance_components(_shrout_fleiss().with_columns(epoch=pl.col("judge")), "score")
    icc = table.filter(pl.col("quantity") == "icc").row(0, named=True)
    assert icc["estimate"] == pytest.approx(0.17, abs=5e-3)
    assert icc["estimate"] == pytest.approx((11.241667 - 6.263889) / (11.241667 + 3 * 6.263889), abs=1e-6)
    assert icc["ci_low"] == pytest.approx(-0.133, abs=5e-4)
    assert icc["ci_high"] == pytest.approx(0.72, abs=5e-3)
    case = table.filter(pl.col("quantity") == "case").row(0, named=True)
    epoch = table.filter(pl.col("quantity") == "epoch").row(0, named=True)
    # The one-way mean squares of Shrout & Fleiss Table 3: BMS = 11.24, WMS = 6.26 on 5 and 18 df.
    assert epoch["estimate"] == pytest.approx(6.26, abs=5e-3) and epoch["dof"] == 18
    assert case["estimate"] == pytest.approx((11.24 - 6.26) / 4, abs=5e-3)


def test_judge_icc_matches_r_psych_icc_on_shrout_fleiss() -> None:
    # R: psych::ICC(ratings), same source:
    #   Single_random_raters ICC2 0.29 F 11.0 df1 5 df2 15 p 0.00013 lower bound 0.019 upper bound 0.76
    # (Shrout & Fleiss Table 4: ICC(2,1) = .29; two-way mean squares JMS = 32.49, EMS = 1.02).
    from mas_eval.stats import variance_components

    table = variance_components(_shrout_fleiss().with_columns(epoch=pl.lit(1)), "score", judge="judge")
    row = table.filter(pl.col("quantity") == "judge_icc").row(0, named=True)
    assert row["estimate"] == pytest.approx(0.29, abs=5e-3)
    assert row["ci_low"] == pytest.approx(0.019, abs=5e-4)
    assert row["ci_high"] == pytest.approx(0.76, abs=5e-3)
    residual = table.filter(pl.col("quantity") == "residual").row(0, named=True)
    judge = table.filter(pl.col("quantity") == "judge").row(0, named=True)
    assert residual["estimate"] == pytest.approx(1.02, abs=5e-3) and residual["dof"] == 15
    assert judge["estimate"] == pytest.approx((32.49 - 1.02) / 6, abs=5e-3)


# --- non-inferiority and equivalence ------------------------------------------------------------------

# pingouin's documented example (pingouin.tost): a = [4, 7, 8, 6, 3, 2], b = [6, 8, 7, 10, 11, 9].
TOST_A = [4.0, 7.0, 8.0, 6.0, 3.0, 2.0]
TOST_B = [6.0, 8.0, 7.0, 10.0, 11.0, 9.0]


def _two_systems(treatment: list[float], control: list[float], paired: bool = False) -> pl.DataFrame:
    cases = list(range(len(treatment))) + list(range(len(control)))
    frame = pl.DataFrame({"system": ["a"] * len(treatment) + ["b"] * len(control), "x": treatment + control})
    return frame.with_columns(case=pl.Series(cases)) if paired else frame


def test_tost_matches_pingouin_documented_example() -> None:
    # pingouin docs, pingouin.tost: pg.tost(a, b) -> bound 1, dof 10, pval 0.965097 (Student's pooled t);
    # pg.tost(a, b, bound=0.5, paired=True) -> bound 0.5, dof 5, pval 0.954854.
    independent = compare(
        _two_systems(TOST_A, TOST_B), "x", treatment="a", control="b", test="student", margin=1.0,
        hypothesis="equivalent",
    ).row(0, named=True)  # fmt: skip
    assert (independent["dof"], round(independent["p_value"], 6)) == (10, 0.965097)
    paired = compare(
        _two_systems(TOST_A, TOST_B, paired=True), "x", treatment="a", control="b", pair_on="case", margin=0.5,
        hypothesis="equivalent",
    ).row(0, named=True)  # fmt: skip
    assert (paired["dof"], round(paired["p_value"], 6)) == (5, 0.954854)


@pytest.mark.parametrize(("test", "usevar"), [("welch", "unequal"), ("student", "pooled")])
def test_tost_and_non_inferiority_match_statsmodels_on_sleep(sleep: pl.DataFrame, test: str, usevar: str) -> None:
    # statsmodels.stats.weightstats.ttost_ind(group1, group2, -2, 2, usevar=usevar): the TOST p; and
    # ttest_ind(group1, group2, alternative="larger", value=-2, usevar=usevar): the non-inferiority p.
    from statsmodels.stats.weightstats import ttest_ind, ttost_ind

    x1, x2 = np.array(SLEEP_GROUP1), np.array(SLEEP_GROUP2)
    equivalent = _sleep_row(sleep, test=test, margin=2.0, hypothesis="equivalent")
    assert equivalent["p_value"] == pytest.approx(ttost_ind(x1, x2, -2.0, 2.0, usevar=usevar)[0], rel=1e-10)
    noninferior = _sleep_row(sleep, test=test, margin=2.0, hypothesis="noninferior")
    t, p, _ = ttest_ind(x1, x2, alternative="larger", value=-2.0, usevar=usevar)
    assert (noninferior["statistic"], noninferior["p_value"]) == (
        pytest.approx(t, rel=1e-10),
        pytest.approx(p, rel=1e-10),
    )
    # Pinned from statsmodels 0.15.0: Welch t_L = (-1.58 + 2)/0.849091 = 0.494647 on 17.78 df, p = 0.313454.
    if test == "welch":
        assert (round(noninferior["statistic"], 6), round(noninferior["p_value"], 6)) == (0.494647, 0.313454)


def test_paired_tost_matches_statsmodels_ttost_paired_on_sleep(sleep: pl.DataFrame) -> None:
    # statsmodels.stats.weightstats.ttost_paired(group1, group2, -2, 2) -> (p, (t1, p1, 9), (t2, p2, 9)).
    from statsmodels.stats.weightstats import ttost_paired

    expected = ttost_paired(np.array(SLEEP_GROUP1), np.array(SLEEP_GROUP2), -2.0, 2.0)
    row = _sleep_row(sleep, pair_on="ID", margin=2.0, hypothesis="equivalent")
    assert row["p_value"] == pytest.approx(expected[0], rel=1e-10)
    # The lower test binds (d = -1.58 is nearer -2 than +2): its t is the row's statistic.
    assert row["statistic"] == pytest.approx(expected[1][0], rel=1e-10)
    # Pinned from statsmodels 0.15.0: t_L = 1.079806, p_L = 0.154157 (t_U = -9.2041, p_U = 3.6e-6):
    # not equivalent within 2 hours at 5%.
    assert (round(row["statistic"], 6), round(row["p_value"], 6)) == (1.079806, 0.154157)
    assert row["verdict"] == "not shown"


# Tango's (1998) score interval for paired proportions, published values as (a, b, c, d), level, (low, high);
# the same tables the R package ratesci pins (pairbinci(..., method_RD = "Score", skew = FALSE, bcf = FALSE)).
TANGO_PUBLISHED = [
    ((43, 0, 1, 0), 0.90, (-0.096, 0.037)),  # Tango 1998, 44 patients, two diagnostic procedures
    ((4, 9, 3, 16), 0.95, (-0.027, 0.390)),  # Tango 1998
    ((1, 1, 7, 12), 0.95, (-0.517, -0.026)),  # Fagerland, Lydersen & Laake 2014, airway hyper-responsiveness
    ((53, 16, 8, 9), 0.95, (-0.020, 0.207)),  # Agresti & Min 2005
    ((7, 25, 2, 68), 0.95, (0.139, 0.321)),  # Chang et al. 2024
]


@pytest.mark.parametrize(("table", "level", "expected"), TANGO_PUBLISHED)
def test_tango_interval_matches_published_examples(
    table: tuple[int, int, int, int], level: float, expected: tuple[float, float]
) -> None:
    row = tango_test(*table, margin=0.1, confidence=level).row(0, named=True)
    assert (round(row["ci_low"], 3), round(row["ci_high"], 3)) == expected


def test_tango_interval_matches_tang_2010_to_four_places() -> None:
    # Tang, Ling, Ling & Tian (2010) example (8, 3, 1, 2): Tango's interval -0.1670 to 0.4327.
    row = tango_test(8, 3, 1, 2, margin=0.1).row(0, named=True)
    assert (round(row["ci_low"], 4), round(row["ci_high"], 4)) == (-0.1670, 0.4327)


def test_newcombe_method_10_matches_newcombe_1998_and_fagerland() -> None:
    # Newcombe (1998), "Improved confidence intervals for the difference between binomial proportions
    # based on paired data", worked example (20, 12, 2, 16): method 10 gives 0.0562 to 0.3292.
    row = tango_test(20, 12, 2, 16, margin=0.1).row(0, named=True)
    assert (round(row["newcombe_low"], 4), round(row["newcombe_high"], 4)) == (0.0562, 0.3292)
    # Fagerland et al. (2014), airway hyper-responsiveness (1, 1, 7, 12): -0.507 to -0.026.
    row = tango_test(1, 1, 7, 12, margin=0.1).row(0, named=True)
    assert (round(row["newcombe_low"], 3), round(row["newcombe_high"], 3)) == (-0.507, -0.026)


def test_tango_equivalence_of_tango_1998_example_through_compare() -> None:
    # Tango (1998): 44 patients, 43 positive by both procedures, one by the second only. His 90% interval
    # (-0.096, 0.037) lies within +-0.1, so the procedures are equivalent at 5% with delta = 0.1.
    runs = pl.DataFrame(
        {"system": ["new"] * 44 + ["standard"] * 44, "case_id": list(range(44)) * 2,
         "positive": [True] * 43 + [False] + [True] * 44}
    )  # fmt: skip
    row = compare(
        runs, "positive", treatment="new", control="standard", pair_on="case_id", confidence=0.9, margin=0.1,
        hypothesis="equivalent",
    ).row(0, named=True)  # fmt: skip
    assert row["test"] == "tango"
    assert (round(row["ci_low"], 3), round(row["ci_high"], 3)) == (-0.096, 0.037)
    assert row["verdict"] == "equivalent within ±0.1"


def test_farrington_manning_interval_matches_newcombe_1998_mee() -> None:
    # Newcombe (1998), "Interval estimation for the difference between independent proportions",
    # example (d), 5/56 against 0/29: Mee's score interval (Farrington and Manning's test inverted,
    # no N/(N-1) factor) -0.0313 to 0.1926 (also ratesci::scoreci(5, 56, 0, 29, skew=F, bcf=F)).
    row = farrington_manning(5, 56, 0, 29, margin=0.05).row(0, named=True)
    assert (round(row["ci_low"], 4), round(row["ci_high"], 4)) == (-0.0313, 0.1926)


def test_farrington_manning_matches_statsmodels_where_its_restricted_estimate_is_right() -> None:
    # statsmodels.stats.proportion.test_proportions_2indep(30, 50, 35, 50, value=0, method="score",
    # compare="diff", correction=False): at a difference of 0 the restricted estimate is the pooled rate,
    # which statsmodels gets right (at other values its cubic has a count for a sample size: issue #10269;
    # tests/stats/test_equivalence.py checks those against a numerical maximum of the likelihood).
    from statsmodels.stats.proportion import test_proportions_2indep

    from mas_eval.stats.equivalence import farrington_manning_tests

    for x_t, n_t, x_c, n_c in [(30, 50, 35, 50), (12, 56, 4, 29), (48, 60, 40, 45)]:
        ours = farrington_manning_tests(*(np.array([float(v)]) for v in (x_t, n_t, x_c, n_c)), np.array([0.0]))
        theirs = test_proportions_2indep(x_t, n_t, x_c, n_c, value=0, method="score", compare="diff",
                                         alternative="larger", correction=False)  # fmt: skip
        assert ours["t_lower"][0] == pytest.approx(theirs.statistic, rel=1e-12)
        assert ours["p_lower"][0] == pytest.approx(theirs.pvalue, rel=1e-10)


FLEISS_1971 = Path(__file__).parents[1] / "data" / "annotations" / "fleiss1971.csv"


def _ratings_of(matrix: np.ndarray) -> pl.DataFrame:
    """A raters x units matrix (NaN: no rating) as one row per unit and rater."""
    raters, units = matrix.shape
    return pl.DataFrame(
        {
            "unit": np.tile(np.arange(units), raters),
            "rater": np.repeat([f"r{i}" for i in range(raters)], units),
            "value": matrix.ravel(),
        }
    )


# -- agreement of raters: published worked examples -------------------------------------------------


def test_fleiss_1971_table_1_gives_his_kappa_and_statsmodels() -> None:
    """Fleiss (1971), Table 1: 30 patients, 6 psychiatrists each, 5 diagnoses; he reports kappa = .430.
    statsmodels: ``fleiss_kappa(table, method="fleiss")`` on the same counts."""
    counts = pl.read_csv(FLEISS_1971).fill_null(0)
    table = counts.to_numpy()
    # Each patient's six diagnoses as six ratings (Fleiss' raters differ from patient to patient, so a
    # rating's rater is only its place among the patient's six).
    rows = [
        (patient, category)
        for patient, row in enumerate(table)
        for category, times in zip(counts.columns, row, strict=True)
        for _ in range(int(times))
    ]
    ratings = pl.DataFrame(rows, schema=["unit", "value"], orient="row").with_columns(
        pl.int_range(pl.len()).over("unit").alias("rater")
    )
    got = fleiss_kappa(ratings).row(0, named=True)
    assert (got["n_units"], got["n_left_out"], got["ratings_per_unit"]) == (30, 0, 6)
    assert round(got["kappa"], 3) == 0.430
    assert got["kappa"] == pytest.approx(statsmodels_fleiss(table, method="fleiss"), abs=1e-12)


def test_krippendorffs_nominal_example_is_0_743() -> None:
    """Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", C: nominal data, 4 observers,
    12 units, missing values: alpha = .743 (also the ``krippendorff`` package's docstring and R irr's
    ``kripp.alpha`` on the same "C" data)."""
    nan = np.nan
    data = np.array(
        [
            [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
            [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
        ]
    )
    got = krippendorff_alpha(_ratings_of(data)).row(0, named=True)
    assert (got["n_units"], got["n_values"]) == (11, 40)  # unit 12 has one value: not pairable
    assert round(got["alpha"], 3) == 0.743
    assert got["alpha"] == pytest.approx(krippendorff.alpha(data, level_of_measurement="nominal"), abs=1e-12)


def test_cohens_kappa_of_the_textbook_two_by_two() -> None:
    """50 units, both raters yes on 20, no on 15, split 5 and 10: p_o = 0.7, p_e = 0.5, kappa = 0.4
    (the worked example of Cohen's kappa's Wikipedia article; statsmodels ``cohens_kappa`` agrees)."""
    cells = [("yes", "yes")] * 20 + [("yes", "no")] * 5 + [("no", "yes")] * 10 + [("no", "no")] * 15
    ratings = pl.DataFrame(
        [(u, rater, pair[i]) for u, pair in enumerate(cells) for i, rater in enumerate("AB")],
        schema=["unit", "rater", "value"],
        orient="row",
    )
    got = cohen_kappa(ratings).row(0, named=True)
    assert (got["observed"], got["expected"]) == (0.7, 0.5)
    assert got["kappa"] == pytest.approx(0.4, abs=1e-12)
    assert got["kappa"] == pytest.approx(statsmodels_cohen(np.array([[20, 5], [10, 15]])).kappa, abs=1e-12)


# -- Fieller's interval of a ratio: two independent programs' printed examples -----------------------------
#
# No cost-effectiveness paper's worked example (inputs and printed limits) could be reached; these two
# programs print Fieller's limits for stated estimates, standard errors, correlation and critical value.
# mas_eval's ICER interval is ``fieller_interval`` (cost_effectiveness calls nothing else), so they pin it.


def _fieller(numerator: float, denominator: float, se_num: float, se_den: float, critical: float) -> tuple:
    """Fieller's set of numerator/denominator for independent estimates (covariance 0), as plain values."""
    low, high, shape = fieller_interval(
        *(np.array([v], dtype=float) for v in (numerator, denominator, se_num**2, se_den**2, 0.0, critical))
    )
    return float(low[0]), float(high[0]), shape[0]


def test_fieller_matches_dc_stats_printed_example() -> None:
    # DC-Stats (D. Colquhoun's FIELLER program in Python, github.com/DCPROGS/DCSTATS, MIT): a = 14, b = 7,
    # SD(a) = 3, SD(b) = 2, r = 0, df = 10. example-Fieller.ipynb (commit ec88cfc47ddc3eae97a753e70348760653ea43fe)
    # prints, for t(10) = 1.812461 (a 90% interval), g = 0.268164 and limits 1.051413 to 4.414296.
    low, high, shape = _fieller(14, 7, 3, 2, 1.812461)
    assert shape == "bounded"
    assert (round(low, 6), round(high, 6)) == (1.051413, 4.414296)
    # Its tests/test_fieller.py (commit 02c06623187596fe11f4711d3a51ce205e391f7f) asserts, at alpha 0.05,
    # g = 0.405273 and limits 0.889734 to 5.836045. Its t comes from bisecting the t CDF to 1e-7 and is
    # 2.2281379 against scipy's 2.2281389, which moves its upper limit down by 4e-6: 5 places there.
    low, high, _ = _fieller(14, 7, 3, 2, sps.t.ppf(0.975, 10))
    assert round(low, 6) == 0.889734
    assert high == pytest.approx(5.836045, abs=5e-6)


def test_fieller_matches_stata_mrrobust_mrratio_in_all_three_shapes() -> None:
    # Stata: mrrobust's `mrratio #gd #gdse #gp #gpse, fieller` (T. Palmer, github.com/remlapmot/mrrobust,
    # cscripts/mrratio.log, commit 12c991c6a706f1572e5d7156c7be30497f7e4b3f), normal critical value:
    # `mrratio 1 .5 1 .25, fieller` -> e(lowerci) = .0199691608403421, e(upperci) = 2.611925531794721;
    # with level(90) -> [.1744505, 2.232568];
    # `mrratio 1 .0007 2000 10000, fieller` -> (-Inf, -.00005682], [.0000463, +Inf);
    # `mrratio .0007 10000 2000 10000, fieller` -> no finite interval other than the entire real line.
    low, high, shape = _fieller(1, 1, 0.5, 0.25, sps.norm.ppf(0.975))
    assert shape == "bounded"
    assert low == pytest.approx(0.0199691608403421, abs=1e-12)
    assert high == pytest.approx(2.611925531794721, abs=1e-12)
    low, high, _ = _fieller(1, 1, 0.5, 0.25, sps.norm.ppf(0.95))
    assert (round(low, 7), round(high, 6)) == (0.1744505, 2.232568)
    low, high, shape = _fieller(1, 2000, 0.0007, 10000, sps.norm.ppf(0.975))
    assert shape == "exclusive"
    assert (round(low, 8), round(high, 7)) == (-0.00005682, 0.0000463)
    low, high, shape = _fieller(0.0007, 2000, 10000, 10000, sps.norm.ppf(0.975))
    assert shape == "unbounded" and math.isnan(low) and math.isnan(high)


def test_cost_effectiveness_reproduces_dc_stats_example_from_paired_cases() -> None:
    # DC-Stats' example as an ICER: 11 cases whose per-case differences have means 14 (cost) and 7 (effect),
    # standard errors 3 and 2 (sample SD / sqrt(11)) and covariance 0 (cosine and sine deviations are
    # orthogonal, each with sum of squares 11/2), so the paired t has DC-Stats' 10 df: its limits at 90%
    # (t = 1.812461: 1.051413, 4.414296) and at 95% (0.889734, 5.836045, the upper one to 5 places as above).
    n = 11
    angle = 2 * np.pi * np.arange(n) / n
    d_cost = 14 + math.sqrt(9 * n * (n - 1) / (n / 2)) * np.cos(angle)
    d_effect = 7 + math.sqrt(4 * n * (n - 1) / (n / 2)) * np.sin(angle)
    runs = pl.DataFrame(
        {
            "system": ["mas"] * n + ["single"] * n,
            "case_id": list(range(n)) * 2,
            "score": np.r_[d_effect, np.zeros(n)],
            "run_cost_usd": np.r_[10 + d_cost, np.full(n, 10.0)],
        }
    )
    row = cost_effectiveness(runs, "score", n_boot=0, confidence=0.90).row(0, named=True)
    assert row["n_pairs"] == n and row["fieller"] == "bounded"
    assert (row["delta_cost"], row["delta_effect"], row["icer"]) == pytest.approx((14, 7, 2), abs=1e-12)
    assert (round(row["fieller_low"], 6), round(row["fieller_high"], 6)) == (1.051413, 4.414296)
    row = cost_effectiveness(runs, "score", n_boot=0).row(0, named=True)
    assert round(row["fieller_low"], 6) == 0.889734
    assert row["fieller_high"] == pytest.approx(5.836045, abs=5e-6)
