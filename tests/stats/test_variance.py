"""Variance components and design planning: against a plain-Python ANOVA, statsmodels' MixedLM on
balanced designs, a planted ICC's coverage, the planner's power in simulation, and bad input.

Shrout & Fleiss's example against R's psych::ICC is pinned in test_stats_pinned.py."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from mas_eval.errors import DataError, InvalidParameterError, SchemaError
from mas_eval.stats import design_power, plan, variance_components
from tests.oracles import variance as oracle


def _row(table: pl.DataFrame, quantity: str) -> dict[str, Any]:
    return table.filter(pl.col("quantity") == quantity).row(0, named=True)


def _balanced(seed: int, cases: int, epochs: int, case_var: float, epoch_var: float) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    y = rng.normal(0, math.sqrt(case_var), (cases, 1)) + rng.normal(0, math.sqrt(epoch_var), (cases, epochs))
    return pl.DataFrame({
        "case_id": np.repeat(np.arange(cases), epochs), "epoch": np.tile(np.arange(1, epochs + 1), cases),
        "y": y.ravel(),
    })  # fmt: skip


# --- against the formula, written out ---------------------------------------------------------------


@st.composite
def unbalanced(draw: st.DrawFn) -> list[tuple[object, object, float]]:
    """2-6 cases, each with 1-5 epochs (at least one case with 2), scores on a coarse grid."""
    sizes = draw(st.lists(st.integers(1, 5), min_size=2, max_size=6))
    if max(sizes) < 2:
        sizes[0] = 2
    values = st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0, -1.5])
    return [(f"c{i}", e, draw(values)) for i, n in enumerate(sizes) for e in range(1, n + 1)]


@settings(max_examples=40)  # each example is one small ANOVA; 40 cover the shapes (ties, one-epoch cases)
@given(unbalanced())
def test_one_way_equals_the_oracle_on_unbalanced_designs(scores: list[tuple[object, object, float]]) -> None:
    frame = pl.DataFrame(scores, schema=["case_id", "epoch", "y"], orient="row")
    want = oracle.one_way(scores)
    got = variance_components(frame, "y")
    assert _row(got, "epoch")["estimate"] == pytest.approx(want["epoch"], rel=1e-9, abs=1e-12)
    assert _row(got, "case")["estimate"] == pytest.approx(want["case"], rel=1e-9, abs=1e-12)
    icc = _row(got, "icc")["estimate"]
    if want["icc"] is None:  # every score equal: F = 0/0
        assert icc is None
        return
    assert icc == pytest.approx(want["icc"], rel=1e-9, abs=1e-12)
    epochs = len(scores) / len({c for c, _, _ in scores})
    assert _row(got, "design_effect")["estimate"] == pytest.approx(1 + (epochs - 1) * icc, rel=1e-9, abs=1e-12)


def test_anova_equals_mixedlm_reml_on_a_balanced_design() -> None:
    """On a balanced design whose components are positive REML equals ANOVA (Searle, Casella & McCulloch 1992, §6.7)."""
    from statsmodels.regression.mixed_linear_model import MixedLM

    data = _balanced(3, cases=30, epochs=4, case_var=1.0, epoch_var=2.0)
    # statsmodels 0.15: MixedLM(y, 1, groups=case).fit(reml=True): cov_re is the case variance, scale the epoch's.
    fit = MixedLM(data["y"].to_numpy(), np.ones((data.height, 1)), groups=data["case_id"].to_numpy()).fit(reml=True)
    anova = variance_components(data, "y")
    assert _row(anova, "case")["estimate"] == pytest.approx(float(np.asarray(fit.cov_re).ravel()[0]), rel=1e-4)
    assert _row(anova, "epoch")["estimate"] == pytest.approx(float(fit.scale), rel=1e-4)
    reml = variance_components(data, "y", method="reml")
    for quantity in ("case", "epoch", "icc", "design_effect"):
        assert _row(reml, quantity)["estimate"] == pytest.approx(_row(anova, quantity)["estimate"], rel=1e-4)
        assert _row(reml, quantity)["ci_low"] is None


@pytest.mark.slow
def test_judge_components_equal_mixedlm_reml_with_crossed_judges() -> None:
    from statsmodels.regression.mixed_linear_model import MixedLM, VCSpec

    rng = np.random.default_rng(11)
    cases, epochs, judges = 25, 3, 3
    case = np.repeat(np.arange(cases), epochs * judges)
    run = np.repeat(np.arange(cases * epochs), judges)
    judge = np.tile(np.arange(judges), cases * epochs)
    y = (rng.normal(0, 1.0, cases)[case] + rng.normal(0, 0.8, cases * epochs)[run]
         + np.array([-0.6, 0.1, 0.7])[judge] + rng.normal(0, 0.5, case.size))  # fmt: skip
    frame = pl.DataFrame({"case_id": case, "epoch": run % epochs, "judge": judge, "y": y})
    # statsmodels 0.15: one group, the case, run and judge indicators as variance components.
    mats = [[(codes[:, None] == np.arange(codes.max() + 1)).astype(float)] for codes in (case, run, judge)]
    spec = VCSpec(["case", "run", "judge"], [[[str(i) for i in range(m[0].shape[1])]] for m in mats], mats)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = MixedLM(y, np.ones((y.size, 1)), groups=np.zeros(y.size), exog_re=np.zeros((y.size, 0)),
                      exog_vc=spec).fit(reml=True)  # fmt: skip
    got = variance_components(frame, "y", judge="judge")
    for quantity, want in zip(("case", "epoch", "judge"), fit.vcomp, strict=True):
        assert _row(got, quantity)["estimate"] == pytest.approx(float(want), rel=2e-3), quantity
    assert _row(got, "residual")["estimate"] == pytest.approx(float(fit.scale), rel=2e-3)
    assert _row(got, "judge")["judges"] == 3 and _row(got, "judge")["runs"] == cases * epochs
    reml = variance_components(frame, "y", judge="judge", method="reml")
    assert _row(reml, "judge")["estimate"] == pytest.approx(float(fit.vcomp[2]), rel=1e-6)


# --- planted truths ---------------------------------------------------------------------------------


def test_a_planted_icc_is_inside_its_interval_95_percent_of_the_time() -> None:
    """1,000 seeded simulations of 30 cases x 4 epochs at ICC 0.3, in one call (the simulation is a `by` group)."""
    sims, cases, epochs, icc = 1000, 30, 4, 0.3
    rng = np.random.default_rng(20241101)
    y = rng.normal(0, math.sqrt(icc), (sims, cases, 1)) + rng.normal(0, math.sqrt(1 - icc), (sims, cases, epochs))
    frame = pl.DataFrame({
        "sim": np.repeat(np.arange(sims), cases * epochs),
        "case_id": np.tile(np.repeat(np.arange(cases), epochs), sims),
        "epoch": np.tile(np.arange(epochs), sims * cases), "y": y.ravel(),
    })  # fmt: skip
    rows = variance_components(frame, "y", by="sim").filter(pl.col("quantity") == "icc")
    assert rows.height == sims
    covered = ((rows["ci_low"] <= icc) & (rows["ci_high"] >= icc)).mean()
    assert 0.93 <= covered <= 0.97, covered
    # The point is unbiased enough to centre the intervals: its mean is within 0.02 of the truth.
    assert abs(rows["estimate"].mean() - icc) < 0.02


def _simulated_rejections(
    sims: int, cases: int, epochs: int, mde: float, case_var: float, epoch_var: float, paired: bool, seed: int
) -> float:
    """The share of simulated studies whose two-sided t test at 0.05 rejects, all simulations as arrays."""
    rng = np.random.default_rng(seed)
    if paired:
        # The difference's own components: a case effect and epoch noise around mde.
        d = mde + rng.normal(0, math.sqrt(case_var), (sims, cases, 1)) + rng.normal(
            0, math.sqrt(epoch_var), (sims, cases, epochs))  # fmt: skip
        means = d.mean(axis=2)
        t = means.mean(axis=1) / (means.std(axis=1, ddof=1) / math.sqrt(cases))
        dof = cases - 1
    else:

        def arm(shift: float) -> np.ndarray:
            y = shift + rng.normal(0, math.sqrt(case_var), (sims, cases, 1)) + rng.normal(
                0, math.sqrt(epoch_var), (sims, cases, epochs))  # fmt: skip
            return y.mean(axis=2)

        a, b = arm(mde), arm(0.0)
        pooled = (a.var(axis=1, ddof=1) + b.var(axis=1, ddof=1)) / 2
        t = (a.mean(axis=1) - b.mean(axis=1)) / np.sqrt(2 * pooled / cases)
        dof = 2 * cases - 2
    return float((np.abs(t) > stats.t.ppf(0.975, dof)).mean())


@pytest.mark.parametrize("paired", [True, False])
def test_the_chosen_design_reaches_its_power_in_simulation(paired: bool) -> None:
    case_var, epoch_var, mde = 0.04, 0.5, 0.25
    components = pl.DataFrame({
        "quantity": ["case", "epoch"], "estimate": [case_var, epoch_var], "judges": 1,
        "difference": "mas - single" if paired else None,
    })  # fmt: skip
    table = plan(components, mde=mde, power=0.8, cost_per_run=1.0, cost_per_case=4.0, max_epochs=8, paired=paired)
    chosen = table.filter("chosen").row(0, named=True)
    assert chosen["reaches"] and chosen["power"] >= 0.8
    # With cases costing 4 runs the optimum has several epochs (Cochran's m* = sqrt(4 * 0.5 / 0.04) ~ 7).
    assert chosen["epochs"] > 1
    assert chosen["cost"] == table.filter("reaches")["cost"].min()
    sims = 4000
    rate = _simulated_rejections(sims, chosen["cases"], chosen["epochs"], mde, case_var, epoch_var, paired, seed=5)
    tolerance = 3 * math.sqrt(chosen["power"] * (1 - chosen["power"]) / sims)
    assert abs(rate - chosen["power"]) < tolerance, (rate, chosen)
    # One case fewer falls short of the target: the chosen n is the fewest.
    fewer = _simulated_rejections(sims, chosen["cases"] - 1, chosen["epochs"], mde, case_var, epoch_var, paired, 6)
    assert fewer < chosen["power"] + tolerance


def test_without_a_cost_per_case_one_epoch_is_cheapest_unless_cases_run_out() -> None:
    components = pl.DataFrame({"quantity": ["case", "epoch"], "estimate": [0.02, 0.2], "judges": 1,
                               "difference": "mas - single"})  # fmt: skip
    free = plan(components, mde=0.06, max_epochs=6)
    assert free.filter("chosen")["epochs"].item() == 1
    few = plan(components, mde=0.06, max_epochs=6, max_cases=150)
    assert few.filter("chosen")["epochs"].item() == 5
    assert few.filter(pl.col("epochs") < 5)["reaches"].to_list() == [False] * 4
    curves = design_power(components, mde=0.06, epochs=[1, 5], cases=[133, 150])
    power = {(e, n): p for e, n, p in curves.select("epochs", "cases", "power").iter_rows()}
    assert power[(5, 133)] == pytest.approx(few.filter("chosen")["power"].item(), rel=1e-12)
    assert power[(1, 150)] < 0.8 <= power[(5, 133)]


def test_paired_components_are_those_of_the_differences() -> None:
    rng = np.random.default_rng(2)
    cases, epochs = 12, 3
    mas = rng.normal(size=(cases, epochs))
    single = rng.normal(size=(cases, epochs))
    frame = pl.DataFrame({
        "system": ["mas"] * (cases * epochs) + ["single"] * (cases * epochs),
        "case_id": np.tile(np.repeat(np.arange(cases), epochs), 2),
        "epoch": np.tile(np.arange(epochs), 2 * cases), "y": np.concatenate([mas.ravel(), single.ravel()]),
    })  # fmt: skip
    # One control run missing: its treatment run is set aside, and counted.
    frame = frame.filter(~((pl.col("system") == "single") & (pl.col("case_id") == 0) & (pl.col("epoch") == 0)))
    got = variance_components(frame, "y", paired=("mas", "single"))
    d = mas - single
    scores = [(i, e, float(d[i, e])) for i in range(cases) for e in range(epochs) if (i, e) != (0, 0)]
    want = oracle.one_way(scores)
    assert _row(got, "case")["estimate"] == pytest.approx(want["case"], rel=1e-9)
    assert _row(got, "epoch")["estimate"] == pytest.approx(want["epoch"], rel=1e-9)
    assert set(got["difference"]) == {"mas - single"}
    assert "1 score(s) without the other system's" in _row(got, "case")["note"]
    assert plan(got, mde=0.5)["chosen"].any()
    with pytest.raises(InvalidParameterError, match="paired=False needs one system's components"):
        plan(got, mde=0.5, paired=False)


def test_by_groups_are_estimated_apart_and_in_order() -> None:
    a = _balanced(1, 8, 3, 1.0, 1.0).with_columns(task=pl.lit("t2"))
    b = _balanced(2, 6, 2, 1.0, 1.0).with_columns(task=pl.lit("t1"))
    both = variance_components(pl.concat([a, b]), "y", by="task")
    assert both["task"].unique(maintain_order=True).to_list() == ["t1", "t2"]
    alone = variance_components(a, "y")
    assert both.filter(pl.col("task") == "t2").drop("task").equals(alone)
    shuffled = pl.concat([a, b]).sample(fraction=1.0, shuffle=True, seed=3)
    assert variance_components(shuffled, "y", by="task").equals(both)


# --- bad input -------------------------------------------------------------------------------------

SCORES = _balanced(0, 5, 3, 1.0, 1.0)
COMPONENTS = pl.DataFrame({"quantity": ["case", "epoch"], "estimate": [0.1, 0.5], "judges": 1,
                           "difference": "mas - single"})  # fmt: skip


@pytest.mark.parametrize(
    ("call", "error", "text"),
    [
        (lambda: variance_components(SCORES.filter(pl.col("case_id") == 0), "y"), DataError, "fewer than 2 cases"),
        (lambda: variance_components(SCORES.filter(pl.col("epoch") == 1), "y"), DataError, "every case has one epoch"),
        (lambda: variance_components(SCORES, "yy"), SchemaError, "no column 'yy'; the columns are: case_id, epoch, y"),
        (lambda: variance_components(SCORES, "y", method="ml"), InvalidParameterError, "method='ml'"),
        (lambda: variance_components(SCORES, "y", paired=("a", "a")), InvalidParameterError, "paired=('a', 'a')"),
        (lambda: variance_components(SCORES, "y", confidence=1.5), InvalidParameterError, "confidence=1.5"),
        (lambda: variance_components(pl.concat([SCORES, SCORES]), "y"), DataError, "more than one score"),
        (
            lambda: variance_components(SCORES.with_columns(system=pl.lit("mas")), "y", paired=("mas", "x")),
            DataError,
            "no score of the control 'x'",
        ),
        (lambda: plan(COMPONENTS, mde=0.0), InvalidParameterError, "mde=0.0 is invalid"),
        (lambda: plan(COMPONENTS, mde=-1.0), InvalidParameterError, "mde=-1.0 is invalid"),
        (lambda: plan(COMPONENTS, mde=0.1, power=1.0), InvalidParameterError, "power=1.0"),
        (lambda: plan(COMPONENTS, mde=0.1, max_cases=1), InvalidParameterError, "max_cases=1"),
        (lambda: plan(COMPONENTS.drop("judges"), mde=0.1), SchemaError, "pass the output of variance_components"),
        (
            lambda: plan(COMPONENTS.with_columns(difference=pl.lit(None, pl.String)), mde=0.1),
            InvalidParameterError,
            "paired=True needs the components of the paired difference",
        ),
        (lambda: design_power(COMPONENTS, mde=0.1, epochs=[0]), InvalidParameterError, "epochs=[0]"),
    ],
)
def test_bad_input_is_one_named_error(call: Any, error: type[Exception], text: str) -> None:
    with pytest.raises(error) as info:
        call()
    assert text in str(info.value)
    assert "\n" not in str(info.value) and "_g" not in str(info.value)


def test_non_finite_scores_are_set_aside_and_counted() -> None:
    bad = SCORES.with_columns(
        y=pl.when(pl.int_range(pl.len()) == 0).then(float("nan"))
        .when(pl.int_range(pl.len()) == 1).then(float("inf")).otherwise(pl.col("y"))
    )  # fmt: skip
    got = variance_components(bad, "y")
    want = variance_components(SCORES.slice(2), "y")
    assert _row(got, "case")["estimate"] == pytest.approx(_row(want, "case")["estimate"], rel=1e-12)
    assert "2 non-finite score(s) set aside" in _row(got, "case")["note"]
    assert bad["y"].is_nan().sum() == 1  # the input is left as it was
