"""Non-inferiority and equivalence in ``compare``: planted truths, the table's shape, corrections, groups, bad input.

Golden values from independent sources (statsmodels, pingouin's documentation, Tango 1998, Newcombe 1998,
Fagerland et al. 2014) are in ``tests/stats/test_pinned.py``.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy import optimize
from scipy import stats as sps

from mas_eval.errors import InvalidParameterError
from mas_eval.stats import adjust_pvalues, compare, farrington_manning, margin_test, merge_statistics, tango_test
from mas_eval.stats.equivalence import farrington_manning_tests, tango_tests
from mas_eval.stats.options import COMPARISON_COLUMNS, HYPOTHESIS_COLUMNS
from mas_eval.stats.sufficient import sufficient_statistics


def paired_pass_fail(n: int, rate_t: float, rate_c: float, seed: int, *, agree: float = 0.6) -> pl.DataFrame:
    """One run per case and system: pass/fail outcomes that agree on a share ``agree`` of cases (drawn once)."""
    rng = np.random.default_rng(seed)
    shared = rng.random(n) < agree
    common = rng.random(n)
    t = np.where(shared, common < rate_t, rng.random(n) < rate_t)
    c = np.where(shared, common < rate_c, rng.random(n) < rate_c)
    return pl.DataFrame(
        {
            "system": ["mas"] * n + ["single"] * n,
            "case_id": [f"c{i}" for i in range(n)] * 2,
            "passed": np.r_[t, c],
            "run_cost_usd": np.r_[np.full(n, 0.01), np.full(n, 0.03)] * rng.uniform(0.8, 1.2, 2 * n),
        }
    )


def paired_scores(n: int, shift: float, seed: int, *, tasks: int = 1) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    case = rng.normal(0.7, 0.1, n)
    return pl.DataFrame(
        {
            "task": [f"t{i % tasks}" for i in range(n)] * 2,
            "system": ["mas"] * n + ["single"] * n,
            "case_id": list(range(n)) * 2,
            "dqs": np.r_[case + shift + rng.normal(0, 0.05, n), case + rng.normal(0, 0.05, n)],
            "confidence": np.r_[rng.normal(0.6, 0.1, n), rng.normal(0.6, 0.1, n)],
        }
    )


# --- planted truths ---------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_mas_as_good_at_a_third_of_the_cost_is_non_inferior_and_not_equivalent_at_a_tight_margin(seed: int) -> None:
    # Both systems pass 70% of 3,000 cases; the MAS costs a third. The SE of the difference is about
    # 0.0095, so non-inferiority at 0.05 is shown by a wide berth, equivalence within 0.005 cannot be.
    runs = paired_pass_fail(3000, 0.7, 0.7, seed)
    assert (
        runs.group_by("system").agg(pl.col("run_cost_usd").mean()).sort("system")["run_cost_usd"].to_list()[0] < 0.0105
    )
    loose = compare(runs, "passed", pair_on="case_id", margin=0.05, hypothesis="noninferior").row(0, named=True)
    assert loose["test"] == "tango" and loose["ci_method"] == "tango"
    assert loose["verdict"] == "non-inferior at δ=0.05" and loose["significant"] is True
    assert loose["p_value"] < 1e-5
    tight = compare(runs, "passed", pair_on="case_id", margin=0.005, hypothesis="equivalent").row(0, named=True)
    assert tight["verdict"] == "not shown" and tight["significant"] is False
    # The same runs unpaired: Farrington and Manning's test of two independent pass rates.
    unpaired = compare(runs.drop("case_id"), "passed", margin=0.05, hypothesis="noninferior").row(0, named=True)
    assert unpaired["test"] == "farrington_manning" and unpaired["verdict"] == "non-inferior at δ=0.05"


def test_a_mas_worse_by_the_margin_is_not_shown_non_inferior() -> None:
    # True difference -0.10, margin 0.05: non-inferiority must fail, for means and for pass rates.
    means = compare(paired_scores(400, -0.10, 5), "dqs", pair_on="case_id", margin=0.05, hypothesis="noninferior")
    assert means["verdict"].item() == "not shown" and means["p_value"].item() > 0.5
    rates = paired_pass_fail(2000, 0.6, 0.7, 6)
    table = compare(rates, "passed", pair_on="case_id", margin=0.05, hypothesis="noninferior")
    assert table["verdict"].item() == "not shown"


def test_non_inferiority_keeps_its_level_under_the_null_at_the_margin() -> None:
    # At the boundary (true difference = -margin) a 5% test rejects about 5% of the time. 300 seeded
    # replicates of 40 paired cases: the binomial 99.9% range of the rejection count is 6..27.
    rng = np.random.default_rng(11)
    rejections = 0
    for _ in range(300):
        d = rng.normal(-0.05, 0.1, 40)
        se = d.std(ddof=1) / np.sqrt(40)
        rejections += margin_test(d.mean(), se, 39, margin=0.05)["p_value"].item() <= 0.05
    assert 6 <= rejections <= 27


# --- the table ----------------------------------------------------------------------------------------


DESIGNS = [
    {},
    {"test": "student"},
    {"pair_on": "case_id"},
    {"pair_on": "case_id", "cluster": "task"},
    {"by": "task"},
    {"cluster": "case_id"},
]


@pytest.mark.parametrize("options", DESIGNS, ids=lambda o: ",".join(o) or "welch")
def test_superior_and_none_leave_the_table_exactly_as_before(options: dict[str, str]) -> None:
    runs = paired_scores(60, 0.02, 1, tasks=3)
    plain = compare(runs, ["dqs", "confidence"], **options)
    for hypothesis in (None, "superior"):
        again = compare(runs, ["dqs", "confidence"], hypothesis=hypothesis, **options)
        assert again.columns == plain.columns and again.equals(plain)
    assert plain.columns[-1] == "warning" and "verdict" not in plain.columns


def test_pass_fail_tables_are_unchanged_without_a_hypothesis() -> None:
    runs = paired_pass_fail(200, 0.6, 0.55, 2)
    for options in ({"pair_on": "case_id"}, {}):
        plain = compare(runs, "passed", **options)
        assert compare(runs, "passed", hypothesis="superior", **options).equals(plain)


@pytest.mark.parametrize("hypothesis", ["noninferior", "equivalent"])
def test_a_tested_table_gains_three_columns_and_its_p_is_the_shifted_test(hypothesis: str) -> None:
    runs = paired_scores(80, 0.01, 2)
    table = compare(runs, "dqs", pair_on="case_id", margin=0.04, hypothesis=hypothesis)
    assert table.columns == [*COMPARISON_COLUMNS, *HYPOTHESIS_COLUMNS]
    row = table.row(0, named=True)
    assert (row["hypothesis"], row["margin"], row["power"]) == (hypothesis, 0.04, None)
    d = (runs.filter(pl.col("system") == "mas")["dqs"] - runs.filter(pl.col("system") == "single")["dqs"]).to_numpy()
    se = d.std(ddof=1) / np.sqrt(d.size)
    lower = sps.t.sf((d.mean() + 0.04) / se, d.size - 1)
    upper = sps.t.cdf((d.mean() - 0.04) / se, d.size - 1)
    expected = lower if hypothesis == "noninferior" else max(lower, upper)
    assert row["p_value"] == pytest.approx(expected, rel=1e-10)
    # The interval stays the design's (a 95% paired t interval), the difference too.
    two_sided = compare(runs, "dqs", pair_on="case_id").row(0, named=True)
    assert (row["ci_low"], row["ci_high"], row["difference"]) == (
        two_sided["ci_low"], two_sided["ci_high"], two_sided["difference"],
    )  # fmt: skip


def test_the_verdict_agrees_with_the_interval_at_twice_alpha() -> None:
    # Uncorrected, non-inferiority at alpha is shown exactly when the (1 - 2 alpha) interval lies above -margin,
    # and equivalence when it lies within (-margin, margin) (Schuirmann 1987).
    runs = paired_scores(300, 0.0, 3, tasks=6)
    margins = {"dqs": 0.02, "confidence": 0.05}
    for hypothesis in ("noninferior", "equivalent"):
        table = compare(
            runs, ["dqs", "confidence"], by="task", pair_on="case_id", correction="none", confidence=0.9,
            margin=margins, hypothesis=hypothesis,
        )  # fmt: skip
        low, high = table["ci_low"].to_numpy(), table["ci_high"].to_numpy()
        delta = table["margin"].to_numpy()
        inside = (low > -delta) & ((high < delta) if hypothesis == "equivalent" else True)
        assert table["significant"].to_list() == inside.tolist()
        assert 0 < inside.sum() < table.height  # the check is not vacuous


def test_the_correction_adjusts_the_tests_against_the_margin_across_groups_and_metrics() -> None:
    runs = paired_scores(240, 0.0, 4, tasks=4)
    table = compare(runs, ["dqs", "confidence"], by="task", pair_on="case_id", margin=0.03, hypothesis="noninferior")
    assert table.height == 8 and table["correction"].unique().to_list() == ["holm"]
    np.testing.assert_allclose(table["p_adjusted"].to_numpy(), adjust_pvalues(table["p_value"].to_numpy(), "holm"))
    assert table["significant"].to_list() == (table["p_adjusted"] <= 0.05).to_list()
    shown = table.filter(pl.col("significant"))["verdict"].unique().to_list()
    assert shown in ([], ["non-inferior at δ=0.03"])
    assert set(table.filter(~pl.col("significant"))["verdict"].to_list()) <= {"not shown"}


def test_a_margin_per_metric_is_used_for_its_rows() -> None:
    runs = paired_scores(120, 0.0, 5, tasks=2)
    margins = {"dqs": 0.05, "confidence": 0.2}
    table = compare(runs, ["dqs", "confidence"], by="task", pair_on="case_id", margin=margins, hypothesis="equivalent")
    assert table.select("task", "metric", "margin").rows() == [
        ("t0", "dqs", 0.05), ("t0", "confidence", 0.2), ("t1", "dqs", 0.05), ("t1", "confidence", 0.2),
    ]  # fmt: skip
    for row in table.iter_rows(named=True):
        if row["significant"]:
            assert row["verdict"] == f"equivalent within ±{margins[row['metric']]:g}"


def test_clustered_and_welch_rows_shift_their_own_standard_error() -> None:
    runs = paired_scores(90, 0.0, 6, tasks=9)
    for options in ({"cluster": "task"}, {}, {"test": "student"}):
        table = compare(runs, "dqs", margin=0.05, hypothesis="noninferior", **options)
        base = compare(runs, "dqs", **options).row(0, named=True)
        se = (base["ci_high"] - base["ci_low"]) / (2 * sps.t.ppf(0.975, base["dof"]))
        expected = margin_test(base["difference"], se, base["dof"], margin=0.05)["p_value"].item()
        assert table["p_value"].item() == pytest.approx(expected, rel=1e-9)
        assert table["test"].item() == base["test"] and table["dof"].item() == base["dof"]


def test_sufficient_statistics_give_the_same_tested_table() -> None:
    runs = paired_scores(100, 0.01, 7, tasks=2)
    shards = [runs.filter(pl.col("case_id") % 2 == k) for k in (0, 1)]
    merged = merge_statistics([sufficient_statistics(s, ["dqs"], by="task", pair_on="case_id") for s in shards])
    options = {"by": "task", "pair_on": "case_id", "margin": 0.03, "hypothesis": "equivalent"}
    in_memory = compare(runs, "dqs", **options)
    from_sums = compare(merged, "dqs", **options)
    assert from_sums["verdict"].to_list() == in_memory["verdict"].to_list()
    np.testing.assert_allclose(from_sums["p_value"].to_numpy(), in_memory["p_value"].to_numpy(), rtol=1e-9)


def test_a_degenerate_row_has_no_verdict() -> None:
    runs = pl.DataFrame({"system": ["mas", "single", "single"], "dqs": [0.5, 0.4, 0.6]})
    row = compare(runs, "dqs", margin=0.1, hypothesis="noninferior").row(0, named=True)
    assert row["p_value"] is None and row["verdict"] is None and row["margin"] == 0.1
    assert "fewer than 2 values" in row["warning"]


def test_tango_and_farrington_manning_in_compare_equal_the_functions() -> None:
    runs = paired_pass_fail(300, 0.65, 0.6, 8)
    t = runs.filter(pl.col("system") == "mas")["passed"].to_numpy()
    c = runs.filter(pl.col("system") == "single")["passed"].to_numpy()
    a, b, cc, d = (int(np.sum(x)) for x in (t & c, t & ~c, ~t & c, ~t & ~c))
    for hypothesis in ("noninferior", "equivalent"):
        row = compare(runs, "passed", pair_on="case_id", margin=0.05, hypothesis=hypothesis).row(0, named=True)
        ref = tango_test(a, b, cc, d, margin=0.05, hypothesis=hypothesis).row(0, named=True)
        for name in ("statistic", "p_value", "ci_low", "ci_high"):
            assert row[name] == pytest.approx(ref[name], abs=1e-12)
        row = compare(runs.drop("case_id"), "passed", margin=0.05, hypothesis=hypothesis).row(0, named=True)
        ref = farrington_manning(int(t.sum()), t.size, int(c.sum()), c.size, margin=0.05, hypothesis=hypothesis)
        for name in ("statistic", "p_value", "ci_low", "ci_high"):
            assert row[name] == pytest.approx(ref.row(0, named=True)[name], abs=1e-12)
        assert row["dof"] is None


def test_an_explicit_t_test_on_pass_fail_outcomes_stays_a_t_test() -> None:
    runs = paired_pass_fail(200, 0.6, 0.6, 9)
    assert (
        compare(runs, "passed", pair_on="case_id", test="paired", margin=0.05, hypothesis="noninferior")["test"].item()
        == "paired"
    )
    assert (
        compare(runs.drop("case_id"), "passed", test="welch", margin=0.05, hypothesis="noninferior")["test"].item()
        == "welch"
    )


# --- the score tests' pieces ----------------------------------------------------------------------------


def restricted_mle(x_t: int, n_t: int, x_c: int, n_c: int, theta: float) -> tuple[float, float]:
    """The rates maximising the binomial likelihood under p_T - p_C = theta, by a bounded 1-d search."""

    def minus_log_likelihood(p_c: float) -> float:
        p_t = p_c + theta
        return -(
            sps.binom.logpmf(x_t, n_t, min(max(p_t, 1e-300), 1 - 1e-16))
            + sps.binom.logpmf(x_c, n_c, min(max(p_c, 1e-300), 1 - 1e-16))
        )

    bounds = (max(0.0, -theta), min(1.0, 1.0 - theta))
    best = optimize.minimize_scalar(minus_log_likelihood, bounds=bounds, method="bounded", options={"xatol": 1e-13})
    return best.x + theta, best.x


@pytest.mark.parametrize(
    ("x_t", "n_t", "x_c", "n_c"), [(30, 50, 35, 50), (5, 56, 0, 29), (10, 40, 12, 40), (0, 20, 3, 25), (48, 50, 45, 60)]
)
@pytest.mark.parametrize("margin", [0.05, 0.2])
def test_farrington_manning_equals_the_score_test_with_a_numerically_maximised_likelihood(
    x_t: int, n_t: int, x_c: int, n_c: int, margin: float
) -> None:
    # The closed-form cubic root against a numerical maximum of the restricted likelihood, then the
    # score statistic straight from its definition (Farrington & Manning 1990, eq. 2).
    got = farrington_manning_tests(*(np.array([float(v)]) for v in (x_t, n_t, x_c, n_c)), np.array([margin]))
    for side, theta in (("lower", -margin), ("upper", margin)):
        p_t, p_c = restricted_mle(x_t, n_t, x_c, n_c, theta)
        z = (x_t / n_t - x_c / n_c - theta) / np.sqrt(p_t * (1 - p_t) / n_t + p_c * (1 - p_c) / n_c)
        assert got[f"t_{side}"][0] == pytest.approx(z, rel=1e-6)


def test_tango_is_the_interval_inverted_one_sided_at_each_limit() -> None:
    # At Tango's 95% limits the one-sided score tests have p = 0.025: interval and test are one.
    for table in [(59, 6, 16, 80), (1, 1, 7, 12), (20, 12, 2, 16)]:
        row = tango_test(*table, margin=0.1).row(0, named=True)
        n = float(sum(table))
        b, c = np.array([float(table[1])]), np.array([float(table[2])])
        at_low = tango_tests(b, c, np.array([n]), np.array([-row["ci_low"]]))
        at_high = tango_tests(b, c, np.array([n]), np.array([row["ci_high"]]))
        assert at_low["p_lower"][0] == pytest.approx(0.025, abs=1e-9)
        assert at_high["p_upper"][0] == pytest.approx(0.025, abs=1e-9)


# --- bad input -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "text"),
    [
        ({"margin": 0, "hypothesis": "noninferior"}, "compare: margin=0 is invalid; margin must be a positive number"),
        ({"margin": -0.05, "hypothesis": "equivalent"}, "compare: margin=-0.05 is invalid"),
        ({"hypothesis": "noninferior"}, "compare: hypothesis='noninferior' is tested against a margin: pass margin"),
        ({"hypothesis": "equivalent", "margin": None}, "compare: hypothesis='equivalent' is tested against a margin"),
        ({"margin": 0.05}, "compare: margin=0.05 is the margin of a non-inferiority or equivalence test"),
        ({"margin": 0.05, "hypothesis": "superior"}, "compare: margin=0.05 is the margin of"),
        ({"margin": 0.05, "hypothesis": "equivalent", "test": "wilcoxon", "pair_on": "case_id"},
         "compare: hypothesis='equivalent' shifts a difference of means or proportions by the margin"),
        ({"margin": {"dqs": 0.05}, "hypothesis": "noninferior"}, "compare: margin: no margin for 'confidence'"),
    ],
)  # fmt: skip
def test_bad_options_are_one_clear_line(options: dict[str, object], text: str) -> None:
    with pytest.raises(InvalidParameterError) as info:
        compare(paired_scores(10, 0.0, 1), ["dqs", "confidence"], **options)
    message = str(info.value)
    assert message.startswith(text) and "\n" not in message


def test_the_building_blocks_refuse_a_margin_that_is_not_positive() -> None:
    for call in (
        lambda: margin_test(0.1, 0.05, 10, margin=0.0),
        lambda: tango_test(1, 2, 3, 4, margin=-0.1),
        lambda: farrington_manning(3, 10, 4, 10, margin=float("nan")),
        lambda: tango_test(1, 2, 3, 4, margin=0.1, hypothesis="superior"),
    ):
        with pytest.raises(InvalidParameterError, match=r"is invalid; (margin|hypothesis) must be"):
            call()


def test_mixed_model_rows_shift_their_z_and_bootstrap_rows_keep_their_interval() -> None:
    runs = paired_scores(80, 0.0, 3)
    base = compare(runs, "dqs", pair_on="case_id", method="mixed").row(0, named=True)
    tested = compare(runs, "dqs", pair_on="case_id", method="mixed", margin=0.05, hypothesis="noninferior")
    se = (base["ci_high"] - base["ci_low"]) / (2 * sps.norm.ppf(0.975))
    expected = margin_test(base["difference"], se, np.inf, margin=0.05)["p_value"].item()
    assert tested["test"].item() == "mixed" and tested["p_value"].item() == pytest.approx(expected, rel=1e-9)
    booted = compare(runs, "dqs", pair_on="case_id", n_boot=300, seed=1, margin=0.05, hypothesis="equivalent")
    plain = compare(runs, "dqs", pair_on="case_id", n_boot=300, seed=1)
    assert booted["ci_method"].item() == "bootstrap_bca"
    assert (booted["ci_low"].item(), booted["ci_high"].item()) == (plain["ci_low"].item(), plain["ci_high"].item())
