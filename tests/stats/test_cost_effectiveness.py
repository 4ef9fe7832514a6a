"""Cost-effectiveness: Fieller's interval, the paired bootstrap, the acceptability curve, planted truths, bad input.

Independent references: Fieller's set is the set of ratios R at which the t test of c - R e does not
reject (``scipy.stats.ttest_1samp`` paired; statsmodels' Welch ``CompareMeans`` unpaired); the
bootstrap's interval is ``scipy.stats.bootstrap(paired=True, method="percentile")``'s with the same
generator; the differences' intervals are ``scipy.stats.ttest_rel`` / ``ttest_ind(equal_var=False)``'s.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy import stats as sps

from mas_eval.errors import DataError, InvalidParameterError, SchemaError
from mas_eval.stats import cost_effectiveness
from mas_eval.stats.economics import (
    ACCEPTABILITY_COLUMNS,
    COST_EFFECTIVENESS_COLUMNS,
    REPLICATE_COLUMNS,
    fieller_interval,
)


def trial(
    n: int, rate_t: float, rate_c: float, cost_ratio: float, seed: int, *, tasks: int = 1, paired_noise: float = 0.5
) -> pl.DataFrame:
    """One run per case and system: pass/fail outcomes, and costs the treatment's ``cost_ratio`` times the control's."""
    rng = np.random.default_rng(seed)
    difficulty = rng.random(n)
    passed_t = np.where(rng.random(n) < paired_noise, difficulty < rate_t, rng.random(n) < rate_t)
    passed_c = np.where(rng.random(n) < paired_noise, difficulty < rate_c, rng.random(n) < rate_c)
    base = rng.gamma(4.0, 0.005, n)
    return pl.DataFrame(
        {
            "task": [f"t{i % tasks}" for i in range(n)] * 2,
            "system": ["mas"] * n + ["single"] * n,
            "case_id": list(range(n)) * 2,
            "passed": np.r_[passed_t, passed_c],
            "run_cost_usd": np.r_[cost_ratio * base * rng.uniform(0.9, 1.1, n), base * rng.uniform(0.9, 1.1, n)],
        }
    )


def differences(runs: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    t, c = runs.filter(pl.col("system") == "mas"), runs.filter(pl.col("system") == "single")
    d_e = t["passed"].cast(pl.Float64).to_numpy() - c["passed"].cast(pl.Float64).to_numpy()
    return d_e, t["run_cost_usd"].to_numpy() - c["run_cost_usd"].to_numpy()


# --- independent references -----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2])
def test_fieller_limits_are_where_the_paired_t_test_of_c_minus_r_e_just_rejects(seed: int) -> None:
    # Fieller (1954): R is in the set when |mean(c - R e)| / (sd(c - R e)/sqrt(n)) <= t_{n-1}. At each limit
    # scipy.stats.ttest_1samp(c - R e, 0) has p = 1 - confidence exactly; inside it is larger, outside smaller.
    runs = trial(150, 0.8, 0.55, 3.0, seed)
    row = cost_effectiveness(runs, "passed", n_boot=0).row(0, named=True)
    assert row["fieller"] == "bounded"
    d_e, d_c = differences(runs)
    for limit in (row["fieller_low"], row["fieller_high"]):
        assert sps.ttest_1samp(d_c - limit * d_e, 0.0).pvalue == pytest.approx(0.05, abs=1e-10)
    middle = (row["fieller_low"] + row["fieller_high"]) / 2
    assert sps.ttest_1samp(d_c - middle * d_e, 0.0).pvalue > 0.05
    assert sps.ttest_1samp(d_c - 1.1 * row["fieller_high"] * d_e, 0.0).pvalue < 0.05
    assert row["icer"] == pytest.approx(d_c.mean() / d_e.mean(), rel=1e-12)


def test_fieller_exclusive_and_unbounded_sets_are_what_the_test_keeps() -> None:
    # A difference in effect whose interval contains 0: the set is two half-lines (or every ratio).
    runs = trial(60, 0.62, 0.58, 3.0, 4)
    row = cost_effectiveness(runs, "passed", n_boot=0).row(0, named=True)
    d_e, d_c = differences(runs)
    keeps = lambda r: sps.ttest_1samp(d_c - r * d_e, 0.0).pvalue >= 0.05  # noqa: E731
    assert row["fieller"] in ("exclusive", "unbounded")
    assert "Fieller's set is" in row["warning"]
    if row["fieller"] == "exclusive":
        low, high = row["fieller_low"], row["fieller_high"]
        assert keeps(low - 1.0) and keeps(high + 1.0) and not keeps((low + high) / 2)
        for limit in (low, high):
            assert sps.ttest_1samp(d_c - limit * d_e, 0.0).pvalue == pytest.approx(0.05, abs=1e-10)
    else:
        assert all(keeps(r) for r in (-100.0, 0.0, 100.0))
    # The shapes from the quadratic directly: ΔE = 0.01 with SE 0.1 and a tight cost is two half-lines;
    # with a loose cost too, every ratio.
    one = lambda *v: [np.array([x]) for x in v]  # noqa: E731
    assert fieller_interval(*one(1.0, 0.01, 0.01, 0.01, 0.0, 1.96))[2][0] == "exclusive"
    assert fieller_interval(*one(0.1, 0.01, 1.0, 0.01, 0.0, 1.96))[2][0] == "unbounded"


def test_unpaired_fieller_limits_are_where_welchs_statistic_of_c_minus_r_e_meets_the_critical_value() -> None:
    # Unpaired: V(ΔC - R ΔE) = Σ_s var(c_s - R e_s)/n_s, the Welch variance of the runs' c - R e. At
    # Fieller's limits statsmodels' CompareMeans(...).ttest_ind(usevar="unequal") statistic is +-t,
    # t the quantile at the Welch df of ΔE (what the interval of ΔE uses).
    from statsmodels.stats.weightstats import CompareMeans, DescrStatsW

    runs = trial(300, 0.8, 0.5, 3.0, 5)
    row = cost_effectiveness(runs, "passed", pair_on=None, n_boot=0).row(0, named=True)
    t, c = runs.filter(pl.col("system") == "mas"), runs.filter(pl.col("system") == "single")
    e_t, e_c = t["passed"].cast(pl.Float64).to_numpy(), c["passed"].cast(pl.Float64).to_numpy()
    effect = CompareMeans(DescrStatsW(e_t), DescrStatsW(e_c))
    _, _, dof = effect.ttest_ind(usevar="unequal")
    critical = sps.t.ppf(0.975, dof)
    for limit in (row["fieller_low"], row["fieller_high"]):
        y_t, y_c = t["run_cost_usd"].to_numpy() - limit * e_t, c["run_cost_usd"].to_numpy() - limit * e_c
        statistic, _, _ = CompareMeans(DescrStatsW(y_t), DescrStatsW(y_c)).ttest_ind(usevar="unequal")
        assert abs(statistic) == pytest.approx(critical, rel=1e-9)
    # The difference in effect's interval is Welch's (scipy.stats.ttest_ind(equal_var=False)).
    welch = sps.ttest_ind(e_t, e_c, equal_var=False).confidence_interval(0.95)
    assert (row["delta_effect_low"], row["delta_effect_high"]) == (
        pytest.approx(welch.low, rel=1e-10),
        pytest.approx(welch.high, rel=1e-10),
    )
    assert row["n_pairs"] is None and (row["n_treatment"], row["n_control"]) == (300, 300)


def test_the_paired_bootstrap_interval_is_scipys_paired_percentile_bootstrap() -> None:
    # scipy.stats.bootstrap((c, e), mean(c)/mean(e), paired=True, method="percentile", n_resamples=999,
    # rng=default_rng(5)) draws the same case indices from the same generator: the same interval.
    runs = trial(200, 0.85, 0.5, 3.0, 3)
    row = cost_effectiveness(runs, "passed", n_boot=999, seed=5).row(0, named=True)
    d_e, d_c = differences(runs)
    reference = sps.bootstrap(
        (d_c, d_e), lambda c, e, axis=-1: c.mean(axis=axis) / e.mean(axis=axis), paired=True, vectorized=True,
        n_resamples=999, method="percentile", rng=np.random.default_rng(5),
    ).confidence_interval  # fmt: skip
    assert row["bootstrap_low"] == pytest.approx(reference.low, rel=1e-12)
    assert row["bootstrap_high"] == pytest.approx(reference.high, rel=1e-12)
    paired_t = sps.ttest_rel(d_c + 0.0, np.zeros_like(d_c)).confidence_interval(0.95)
    assert (row["delta_cost_low"], row["delta_cost_high"]) == (
        pytest.approx(paired_t.low, rel=1e-10),
        pytest.approx(paired_t.high, rel=1e-10),
    )


def test_net_benefit_excludes_zero_exactly_outside_fiellers_set() -> None:
    # Heitjan (2000): the prices at which λΔE - ΔC is not significantly different from 0 are Fieller's set.
    runs = trial(150, 0.8, 0.55, 3.0, 6)
    row = cost_effectiveness(runs, "passed", n_boot=0).row(0, named=True)
    curve = cost_effectiveness(
        runs, "passed", n_boot=50, seed=1, level="acceptability", prices=list(np.linspace(0, 0.2, 401))
    )
    inside = (curve["price"] >= row["fieller_low"]) & (curve["price"] <= row["fieller_high"])
    contains_zero = (curve["net_benefit_low"] <= 0) & (curve["net_benefit_high"] >= 0)
    assert inside.to_list() == contains_zero.to_list()
    assert 0 < inside.sum() < curve.height


# --- planted truths -------------------------------------------------------------------------------------


def test_a_mas_as_good_at_a_third_of_the_cost_is_cheaper_with_no_difference_in_effect() -> None:
    runs = trial(2000, 0.7, 0.7, 1 / 3, 7)
    row = cost_effectiveness(runs, "passed", n_boot=500, seed=1).row(0, named=True)
    assert row["cost_treatment"] == pytest.approx(row["cost_control"] / 3, rel=0.05)
    assert row["verdict"] == "cheaper, no difference in effect shown"
    assert row["share_dominant"] + row["share_cheaper_worse"] == pytest.approx(1.0, abs=0.01)
    curve = cost_effectiveness(runs, "passed", n_boot=500, seed=1, prices=[0.0], level="acceptability")
    assert curve["probability"].item() == 1.0  # at no value per correct answer, cheaper always wins


def test_a_planted_icer_is_recovered_and_its_bootstrap_interval_is_reproducible() -> None:
    # The MAS passes 80% against 50% at three times the cost: ΔE = 0.3, ΔC = 2 x mean cost (0.02 x 2 = 0.04):
    # a planted ICER of about 0.133 dollars per extra correct answer.
    runs = trial(800, 0.8, 0.5, 3.0, 8)
    first = cost_effectiveness(runs, "passed", n_boot=2000, seed=42)
    again = cost_effectiveness(runs, "passed", n_boot=2000, seed=42)
    assert first.equals(again)
    other = cost_effectiveness(runs, "passed", n_boot=2000, seed=43).row(0, named=True)
    row = first.row(0, named=True)
    assert other["bootstrap_low"] != row["bootstrap_low"]
    planted = 2 * 0.02 / 0.3
    assert row["quadrant"] == "dearer and better" and row["verdict"] == "trade-off: dearer and better"
    assert row["fieller"] == "bounded" and row["fieller_low"] < planted < row["fieller_high"]
    assert row["bootstrap_low"] < planted < row["bootstrap_high"]
    assert row["bootstrap_low"] == pytest.approx(row["fieller_low"], rel=0.1)
    assert row["share_dearer_better"] == 1.0
    curve = cost_effectiveness(runs, "passed", n_boot=2000, seed=42, level="acceptability")
    probability = curve["probability"].to_numpy()
    assert probability[0] == 0.0 and probability[-1] > 0.97 and np.all(np.diff(probability) >= 0)
    at_icer = cost_effectiveness(runs, "passed", n_boot=2000, seed=42, prices=[row["icer"]], level="acceptability")
    assert at_icer["probability"].item() == pytest.approx(0.5, abs=0.05)


def test_the_curve_is_the_share_of_replicates_with_a_positive_net_benefit() -> None:
    runs = trial(300, 0.75, 0.6, 2.0, 9, tasks=2)
    options = {"by": "task", "n_boot": 400, "seed": 3}
    replicates = cost_effectiveness(runs, "passed", level="replicates", **options)
    assert replicates.columns == ["task", *REPLICATE_COLUMNS] and replicates.height == 800
    assert replicates.group_by("task").len().sort("task")["len"].to_list() == [400, 400]
    prices = [0.0, 0.05, 0.1, 0.3]
    curve = cost_effectiveness(runs, "passed", level="acceptability", prices=prices, **options)
    assert curve.columns == ["task", *ACCEPTABILITY_COLUMNS]
    expected = (
        replicates.join(pl.DataFrame({"price": prices}), how="cross")
        .group_by("task", "price")
        .agg(((pl.col("price") * pl.col("delta_effect") - pl.col("delta_cost")) > 0).mean().alias("p"))
        .sort("task", "price")
    )
    assert curve.sort("task", "price")["probability"].to_list() == expected["p"].to_list()
    summary = cost_effectiveness(runs, "passed", **options)
    assert summary.columns == ["task", *COST_EFFECTIVENESS_COLUMNS] and summary["task"].to_list() == ["t0", "t1"]


# --- bad input -------------------------------------------------------------------------------------------


def test_runs_without_a_usable_cost_are_set_aside_with_a_note() -> None:
    runs = trial(100, 0.8, 0.5, 3.0, 10)
    broken = runs.with_columns(
        pl.when(pl.int_range(pl.len()) == 0).then(float("nan"))
        .when(pl.int_range(pl.len()) == 1).then(float("inf"))
        .when(pl.int_range(pl.len()) == 2).then(-1.0)
        .when(pl.int_range(pl.len()) == 3).then(None)
        .otherwise(pl.col("run_cost_usd")).alias("run_cost_usd")
    )  # fmt: skip
    before = broken.clone()
    row = cost_effectiveness(broken, "passed", n_boot=0).row(0, named=True)
    assert broken.equals(before, null_equal=True)
    assert "4 run(s) with a missing, non-finite or negative cost set aside" in row["warning"]
    assert "4 unpaired case(s) left out" in row["warning"]
    assert row["n_pairs"] == 96
    clean = cost_effectiveness(runs.filter(pl.col("case_id") >= 4), "passed", n_boot=0).row(0, named=True)
    assert row["icer"] == pytest.approx(clean["icer"], rel=1e-12)


@pytest.mark.parametrize(
    ("options", "error", "text"),
    [
        ({"prices": [1.0]}, InvalidParameterError, "cost_effectiveness: prices are the prices per unit of effect"),
        (
            {"level": "acceptability", "n_boot": 0},
            InvalidParameterError,
            "cost_effectiveness: level='acceptability' is",
        ),
        ({"prices": [-1.0], "level": "acceptability"}, InvalidParameterError, "cost_effectiveness: prices=[-1.0] is"),
        ({"control": "mas"}, InvalidParameterError, "cost_effectiveness: treatment and control are both 'mas'"),
        ({"treatment": "debate"}, DataError, "cost_effectiveness: no runs of system 'debate'"),
        ({"cost": "task"}, SchemaError, "cost_effectiveness: cost 'task' has type String"),
        ({"cost": "tokens"}, SchemaError, "cost_effectiveness: cost: no column 'tokens'"),
        ({"n_boot": -1}, InvalidParameterError, "cost_effectiveness: n_boot=-1 is invalid"),
        ({"level": "curve"}, InvalidParameterError, "cost_effectiveness: level='curve' is invalid"),
    ],
)
def test_bad_input_is_one_clear_line(options: dict[str, object], error: type[Exception], text: str) -> None:
    with pytest.raises(error) as info:
        cost_effectiveness(trial(20, 0.7, 0.6, 2.0, 1), "passed", **options)
    assert str(info.value).startswith(text) and "\n" not in str(info.value)


def test_nulls_in_the_case_column_are_an_error() -> None:
    runs = trial(20, 0.7, 0.6, 2.0, 1).with_columns(
        pl.when(pl.col("case_id") == 3).then(None).otherwise(pl.col("case_id")).alias("case_id")
    )
    with pytest.raises(DataError, match="cost_effectiveness: pair_on: null values in 'case_id'"):
        cost_effectiveness(runs, "passed")


def test_a_group_with_too_few_cases_keeps_its_row_without_intervals() -> None:
    runs = pl.concat([trial(50, 0.8, 0.5, 3.0, 2, tasks=1), trial(1, 0.8, 0.5, 3.0, 3).with_columns(task=pl.lit("x"))])
    runs = runs.with_columns(pl.when(pl.col("task") == "x").then(pl.col("case_id") + 1000).otherwise("case_id"))
    table = cost_effectiveness(runs, "passed", by="task", n_boot=100, seed=1)
    small = table.filter(pl.col("task") == "x").row(0, named=True)
    assert small["n_pairs"] == 1 and small["delta_effect_low"] is None and small["fieller"] is None
    assert small["bootstrap_low"] is None and small["n_boot"] == 0
    assert "fewer than 2 paired cases" in small["warning"]
    assert table.filter(pl.col("task") == "t0")["fieller"].item() == "bounded"


def test_the_function_is_not_shadowed_by_its_module() -> None:
    import importlib

    import mas_eval
    import mas_eval.stats

    importlib.import_module("mas_eval.stats.economics")
    assert callable(mas_eval.stats.cost_effectiveness) and callable(mas_eval.cost_effectiveness)
