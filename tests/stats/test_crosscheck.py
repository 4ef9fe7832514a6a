"""compare/power/corrections against SciPy and statsmodels on random data (1e-10 where the method is identical)."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import polars as pl
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.regression.mixed_linear_model import MixedLM
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestIndPower, TTestPower

from mas_eval.stats import adjust_pvalues, compare, power

TOL = {"rel": 1e-10, "abs": 1e-12}


def independent_frame(seed: int, groups: int = 5) -> pl.DataFrame:
    """Runs of mas and single in ``groups`` groups, unequal sizes and variances, two metrics."""
    rng = np.random.default_rng(seed)
    parts = []
    for g in range(groups):
        n_t, n_c = rng.integers(3, 25, size=2)
        parts.append(
            pl.DataFrame(
                {
                    "g": [f"g{g}"] * (n_t + n_c),
                    "system": ["mas"] * n_t + ["single"] * n_c,
                    "y": np.r_[rng.normal(0.3, 1.0, n_t), rng.normal(0.0, 2.0, n_c)],
                    "z": np.r_[rng.gamma(2.0, 1.0, n_t), rng.gamma(2.5, 1.0, n_c)],
                    "cl": rng.integers(0, 6, n_t + n_c),
                }
            )
        )
    return pl.concat(parts)


def paired_frame(seed: int, groups: int = 4) -> pl.DataFrame:
    """Cases run by both systems 1-3 times each; a few cases run by one system only."""
    rng = np.random.default_rng(seed)
    rows = []
    for g in range(groups):
        for case in range(int(rng.integers(6, 15))):
            effect = rng.normal()
            systems = ["mas", "single"] if rng.random() > 0.15 else [str(rng.choice(["mas", "single"]))]
            for system in systems:
                for _ in range(int(rng.integers(1, 4))):
                    shift = 0.4 if system == "mas" else 0.0
                    rows.append(
                        (f"g{g}", f"c{g}-{case}", system, effect + shift + rng.normal(0, 0.7), g * 100 + case // 3)
                    )
    return pl.DataFrame(rows, schema=["g", "case", "system", "y", "cl"], orient="row")


def values(frame: pl.DataFrame, group: str, system: str, metric: str = "y") -> np.ndarray:
    return frame.filter((pl.col("g") == group) & (pl.col("system") == system))[metric].to_numpy()


def case_means(frame: pl.DataFrame, group: str) -> tuple[list[str], np.ndarray, np.ndarray, int, int]:
    """Paired cases (sorted), each system's per-case mean, and the runs they average."""
    sums: dict[tuple[str, str], list[float]] = defaultdict(list)
    for case, system, y in frame.filter(pl.col("g") == group).select("case", "system", "y").iter_rows():
        sums[(case, system)].append(y)
    cases = sorted({c for c, s in sums if (c, "mas") in sums and (c, "single") in sums})
    t = np.array([np.mean(sums[(c, "mas")]) for c in cases])
    c = np.array([np.mean(sums[(c, "single")]) for c in cases])
    runs_t = sum(len(sums[(k, "mas")]) for k in cases)
    runs_c = sum(len(sums[(k, "single")]) for k in cases)
    return cases, t, c, runs_t, runs_c


@pytest.mark.parametrize("test", ["welch", "student"])
@pytest.mark.parametrize("seed", [1, 2])
def test_independent_t_tests_match_scipy(test: str, seed: int) -> None:
    frame = independent_frame(seed)
    table = compare(frame, ["y", "z"], by="g", test=test, correction="none")
    assert table.height == 10
    for row in table.iter_rows(named=True):
        t, c = values(frame, row["g"], "mas", row["metric"]), values(frame, row["g"], "single", row["metric"])
        ref = stats.ttest_ind(t, c, equal_var=test == "student")
        ci = ref.confidence_interval(0.95)
        assert row["statistic"] == pytest.approx(ref.statistic, **TOL)
        assert row["p_value"] == pytest.approx(ref.pvalue, **TOL)
        assert row["dof"] == pytest.approx(ref.df, **TOL)
        assert (row["ci_low"], row["ci_high"]) == (pytest.approx(ci.low, **TOL), pytest.approx(ci.high, **TOL))
        assert row["difference"] == pytest.approx(t.mean() - c.mean(), **TOL)
        assert row["std_treatment"] == pytest.approx(t.std(ddof=1), **TOL)
        sp = math.sqrt(((t.size - 1) * t.var(ddof=1) + (c.size - 1) * c.var(ddof=1)) / (t.size + c.size - 2))
        assert row["cohens_d"] == pytest.approx((t.mean() - c.mean()) / sp, **TOL)
        assert (row["n_treatment"], row["n_control"]) == (t.size, c.size)


@pytest.mark.parametrize("seed", [3, 4])
def test_paired_t_test_matches_scipy_on_case_means(seed: int) -> None:
    frame = paired_frame(seed)
    table = compare(frame, "y", by="g", pair_on="case", test="paired", correction="none")
    for row in table.iter_rows(named=True):
        cases, t, c, runs_t, runs_c = case_means(frame, row["g"])
        ref = stats.ttest_rel(t, c)
        ci = ref.confidence_interval(0.95)
        assert row["n_pairs"] == len(cases)
        assert (row["n_treatment"], row["n_control"]) == (runs_t, runs_c)
        assert row["statistic"] == pytest.approx(ref.statistic, **TOL)
        assert row["p_value"] == pytest.approx(ref.pvalue, **TOL)
        assert row["dof"] == len(cases) - 1
        assert (row["ci_low"], row["ci_high"]) == (pytest.approx(ci.low, **TOL), pytest.approx(ci.high, **TOL))
        d = t - c
        assert row["cohens_d"] == pytest.approx(d.mean() / d.std(ddof=1), **TOL)
        assert row["correlation"] == pytest.approx(np.corrcoef(t, c)[0, 1], **TOL)
        assert (row["mean_treatment"], row["mean_control"]) == (pytest.approx(t.mean()), pytest.approx(c.mean()))


def test_mann_whitney_matches_scipy() -> None:
    frame = independent_frame(5)
    table = compare(frame, ["y", "z"], by="g", test="mannwhitney", correction="none")
    for row in table.iter_rows(named=True):
        t, c = values(frame, row["g"], "mas", row["metric"]), values(frame, row["g"], "single", row["metric"])
        ref = stats.mannwhitneyu(t, c, alternative="two-sided")
        assert row["test"] == "mannwhitney"
        assert row["statistic"] == pytest.approx(ref.statistic, **TOL)
        assert row["p_value"] == pytest.approx(ref.pvalue, **TOL)
        assert row["dof"] is None
        welch = stats.ttest_ind(t, c, equal_var=False).confidence_interval(0.95)
        assert (row["ci_low"], row["ci_method"]) == (pytest.approx(welch.low, **TOL), "welch")


def test_wilcoxon_matches_scipy_on_case_differences() -> None:
    frame = paired_frame(6)
    table = compare(frame, "y", by="g", pair_on="case", test="wilcoxon", correction="none")
    for row in table.iter_rows(named=True):
        _, t, c, _, _ = case_means(frame, row["g"])
        ref = stats.wilcoxon(t - c)
        assert row["test"] == "wilcoxon"
        assert row["statistic"] == pytest.approx(ref.statistic, **TOL)
        assert row["p_value"] == pytest.approx(ref.pvalue, **TOL)


@pytest.mark.parametrize("correction", ["holm", "fdr_bh", "bonferroni"])
@pytest.mark.slow
def test_corrections_match_statsmodels_multipletests(correction: str) -> None:
    rng = np.random.default_rng(7)
    for size in (1, 2, 7, 50):
        p = rng.uniform(0, 0.2, size) ** 2
        p[rng.random(size) < 0.2] = p[0]  # ties
        want = multipletests(p, alpha=0.05, method=correction)[1]
        assert adjust_pvalues(p, correction) == pytest.approx(want, rel=1e-10, abs=1e-15)
    # NaN entries are outside the family and stay NaN.
    p = np.array([0.01, np.nan, 0.04, 0.03])
    got = adjust_pvalues(p, correction)
    assert math.isnan(got[1])
    assert got[[0, 2, 3]] == pytest.approx(multipletests(p[[0, 2, 3]], method=correction)[1], rel=1e-10)


@pytest.mark.parametrize("correction", ["holm", "fdr_bh", "bonferroni"])
def test_compare_adjusts_across_the_whole_table(correction: str) -> None:
    frame = independent_frame(8, groups=6)
    table = compare(frame, ["y", "z"], by="g", correction=correction, alpha=0.1)
    reject, adjusted, _, _ = multipletests(table["p_value"].to_numpy(), alpha=0.1, method=correction)
    assert table["p_adjusted"].to_numpy() == pytest.approx(adjusted, rel=1e-10)
    assert table["significant"].to_list() == reject.tolist()
    unadjusted = compare(frame, ["y", "z"], by="g", correction="none")
    assert unadjusted["p_adjusted"].to_list() == unadjusted["p_value"].to_list()


def test_power_column_matches_statsmodels() -> None:
    frame = independent_frame(9)
    table = compare(frame, ["y", "z"], by="g", test="student")
    for row in table.iter_rows(named=True):
        want = TTestIndPower().power(
            abs(row["cohens_d"]), row["n_treatment"], 0.05, ratio=row["n_control"] / row["n_treatment"]
        )
        assert row["power"] == pytest.approx(want, **TOL)
    paired = compare(paired_frame(10), "y", by="g", pair_on="case", test="paired", alpha=0.1)
    for row in paired.iter_rows(named=True):
        assert row["power"] == pytest.approx(TTestPower().power(abs(row["cohens_d"]), row["n_pairs"], 0.1), **TOL)
    # Welch rows: the noncentral t at the Welch statistic and df, computed directly.
    for row in compare(frame, "y", by="g").iter_rows(named=True):
        crit = stats.t.ppf(0.975, row["dof"])
        want = stats.nct.sf(crit, row["dof"], row["statistic"]) + stats.nct.cdf(-crit, row["dof"], row["statistic"])
        assert row["power"] == pytest.approx(want, **TOL)


@pytest.mark.parametrize("design", ["independent", "paired"])
def test_power_function_matches_statsmodels(design: str) -> None:
    engine = TTestIndPower() if design == "independent" else TTestPower()
    size_key = "nobs1" if design == "independent" else "nobs"
    extra = {"ratio": 1.5} if design == "independent" else {}
    kw = {"ratio": 1.5} if design == "independent" else {}
    for alternative in ("two-sided", "larger"):
        needed = power(effect_size=[0.2, 0.5, 0.8], power=0.8, design=design, alternative=alternative, **kw)
        for row in needed.iter_rows(named=True):
            want = engine.solve_power(effect_size=row["effect_size"], power=0.8, alpha=0.05, alternative=alternative,
                                      **extra)  # fmt: skip
            assert row["n"] == pytest.approx(want, rel=1e-10)
            assert row["n_required"] == math.ceil(want)
            assert row["solved_for"] == "n"
        mde = power(n=[20, 64], power=0.9, alpha=0.01, design=design, alternative=alternative, **kw)
        for row in mde.iter_rows(named=True):
            want = engine.solve_power(**{size_key: row["n"]}, power=0.9, alpha=0.01, alternative=alternative, **extra)
            assert row["effect_size"] == pytest.approx(want, rel=1e-8)
        achieved = power(effect_size=0.4, n=30, design=design, alternative=alternative, **kw)
        want = engine.power(0.4, 30, 0.05, alternative=alternative, **extra)
        assert achieved["power"].item() == pytest.approx(want, rel=1e-10)


def test_power_solution_meets_the_target_by_the_noncentral_t() -> None:
    # Independent of statsmodels: at the exact solution n, the two-sided power is the target.
    n = power(effect_size=0.5, power=0.8, ratio=2.0)["n"].item()
    n_c = 2.0 * n
    df, nc = n + n_c - 2, 0.5 * math.sqrt(n * n_c / (n + n_c))
    crit = stats.t.ppf(0.975, df)
    assert stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc) == pytest.approx(0.8, abs=1e-8)
    assert power(effect_size=0.5, power=0.8, ratio=2.0)["n_control_required"].item() == math.ceil(2 * math.ceil(n))


def test_cluster_robust_se_matches_statsmodels_ols_cluster() -> None:
    frame = independent_frame(11)
    table = compare(frame, ["y", "z"], by="g", cluster="cl", correction="none")
    for row in table.iter_rows(named=True):
        part = frame.filter(pl.col("g") == row["g"])
        y = part[row["metric"]].to_numpy()
        x = sm.add_constant((part["system"] == "mas").to_numpy().astype(float))
        fit = sm.OLS(y, x).fit(cov_type="cluster", cov_kwds={"groups": part["cl"].to_numpy()}, use_t=True)
        low, high = fit.conf_int(0.05)[1]
        assert row["test"] == "ols_cluster"
        assert row["n_clusters"] == part["cl"].n_unique()
        assert row["dof"] == row["n_clusters"] - 1
        assert row["difference"] == pytest.approx(fit.params[1], **TOL)
        assert row["statistic"] == pytest.approx(fit.tvalues[1], **TOL)
        assert row["p_value"] == pytest.approx(fit.pvalues[1], **TOL)
        assert (row["ci_low"], row["ci_high"]) == (pytest.approx(low, **TOL), pytest.approx(high, **TOL))


def test_paired_cluster_robust_se_matches_statsmodels_ols_cluster() -> None:
    frame = paired_frame(12)
    table = compare(frame, "y", by="g", pair_on="case", test="paired", cluster="cl", correction="none")
    for row in table.iter_rows(named=True):
        cases, t, c, _, _ = case_means(frame, row["g"])
        cluster_of = dict(frame.filter(pl.col("g") == row["g"]).select("case", "cl").unique().iter_rows())
        groups = np.array([cluster_of[k] for k in cases])
        fit = sm.OLS(t - c, np.ones(len(cases))).fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
        low, high = fit.conf_int(0.05)[0]
        assert row["test"] == "paired_cluster"
        assert row["n_clusters"] == np.unique(groups).size
        assert row["statistic"] == pytest.approx(fit.tvalues[0], **TOL)
        assert row["p_value"] == pytest.approx(fit.pvalues[0], **TOL)
        assert (row["ci_low"], row["ci_high"]) == (pytest.approx(low, **TOL), pytest.approx(high, **TOL))


@pytest.mark.parametrize("method", ["bca", "percentile"])
def test_bootstrap_matches_scipy_bootstrap_draw_for_draw(method: str) -> None:
    rng = np.random.default_rng(13)
    t, c = rng.normal(0.5, 1.0, 17), rng.exponential(1.0, 23)
    frame = pl.DataFrame({"system": ["mas"] * 17 + ["single"] * 23, "y": np.r_[t, c]})
    row = compare(frame, "y", n_boot=999, seed=42, boot_ci=method).row(0, named=True)

    def diff(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        return a.mean(axis=axis) - b.mean(axis=axis)

    ref = stats.bootstrap(
        (t, c), diff, n_resamples=999, method="BCa" if method == "bca" else "percentile",
        rng=np.random.default_rng(42), vectorized=True,
    ).confidence_interval  # fmt: skip
    assert row["ci_method"] == f"bootstrap_{method}"
    assert (row["ci_low"], row["ci_high"]) == (pytest.approx(ref.low, **TOL), pytest.approx(ref.high, **TOL))

    # Paired: cases are resampled, i.e. the per-case differences (one run per case and system here, so
    # that both sides hold bit-identical differences: BCa's bias correction counts exact ties).
    pt, pc = rng.normal(0.3, 1.0, 15), rng.normal(0.0, 1.0, 15)
    cases = [f"c{i:02d}" for i in range(15)]
    paired = pl.DataFrame({"system": ["mas"] * 15 + ["single"] * 15, "case": cases * 2, "y": np.r_[pt, pc]})
    row = compare(paired, "y", pair_on="case", test="paired", n_boot=999, seed=5, boot_ci=method).row(0, named=True)
    ref = stats.bootstrap(
        (pt - pc,), np.mean, n_resamples=999, method="BCa" if method == "bca" else "percentile",
        rng=np.random.default_rng(5),
    ).confidence_interval  # fmt: skip
    assert (row["ci_low"], row["ci_high"]) == (pytest.approx(ref.low, **TOL), pytest.approx(ref.high, **TOL))


def test_mixed_model_matches_statsmodels_mixedlm() -> None:
    rng = np.random.default_rng(15)
    case = np.repeat(np.arange(25), 6)
    treated = np.tile([1.0, 1.0, 1.0, 0.0, 0.0, 0.0], 25)
    y = 0.3 * treated + rng.normal(0, 1.0, 25)[case] + rng.normal(0, 0.6, case.size)
    frame = pl.DataFrame({"system": np.where(treated == 1, "mas", "single"), "case": case.astype(str), "y": y})
    row = compare(frame, "y", pair_on="case", method="mixed").row(0, named=True)
    fit = MixedLM(y, sm.add_constant(treated), groups=case.astype(str)).fit(reml=True)
    assert row["test"] == "mixed"
    assert row["warning"] is None
    assert row["n_clusters"] == 25
    assert row["difference"] == pytest.approx(fit.fe_params[1], rel=1e-8)
    assert row["statistic"] == pytest.approx(fit.tvalues[1], rel=1e-8)
    assert row["p_value"] == pytest.approx(fit.pvalues[1], rel=1e-7)
    low, high = fit.conf_int(0.05)[1]
    assert (row["ci_low"], row["ci_high"]) == (pytest.approx(low, rel=1e-8), pytest.approx(high, rel=1e-8))


def test_clustering_paired_cases_on_the_case_itself_is_the_paired_t_test() -> None:
    # One case per cluster: G/(G-1) * sum(e_i^2) / n^2 = s_d^2 / n exactly, with G - 1 = n - 1 df.
    frame = paired_frame(16)
    plain = compare(frame, "y", by="g", pair_on="case", test="paired")
    clustered = compare(frame, "y", by="g", pair_on="case", test="paired", cluster="case")
    assert set(clustered["test"]) == {"paired_cluster"}
    assert clustered["n_clusters"].to_list() == plain["n_pairs"].to_list()
    for name in ("statistic", "dof", "p_value", "ci_low", "ci_high"):
        assert clustered[name].to_numpy() == pytest.approx(plain[name].to_numpy(), rel=1e-10), name
