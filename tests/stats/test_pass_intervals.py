"""pass@k and pass^k with intervals: the points against Chen et al.'s formula and pass_at_k, the SE
against the plain-Python oracle, the bootstrap seeded and covering, the paired difference, bad input."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings

from mas_eval.errors import DataError, InvalidParameterError
from mas_eval.stats import pass_at_k, pass_at_k_intervals
from tests.oracles import variance as oracle
from tests.stats.test_epochs import KS, epoch_runs, frame


def chen_pass_at_k(n: int, c: int, k: int) -> float:
    """Chen et al. (2021), "Evaluating Large Language Models Trained on Code", Figure 3's numerically
    stable form: 1 - prod_{i=n-c+1}^{n} (1 - k/i)."""
    if n - c < k:
        return 1.0
    return 1.0 - float(np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def _rows(table: pl.DataFrame, **where: object) -> dict[tuple[int, str], dict[str, Any]]:
    part = table.filter(*(pl.col(k).eq_missing(v) for k, v in where.items()))
    return {(row["k"], row["measure"]): row for row in part.iter_rows(named=True)}


def test_points_match_chens_formula_and_a_worked_example() -> None:
    # n = 10 samples, c = 3 correct: pass@5 = 1 - C(7,5)/C(10,5) = 1 - 21/252 = 11/12;
    # pass^2 = C(3,2)/C(10,2) = 3/45; second case n = 4, c = 3 (tau-bench's all-k-of-k): pass^4 = 0.
    runs = pl.DataFrame({
        "system": "mas", "case_id": ["a"] * 10 + ["b"] * 4, "epoch": [*range(1, 11), *range(1, 5)],
        "ok": [1, 1, 1] + [0] * 7 + [1, 1, 1, 0],
    })  # fmt: skip
    got = _rows(pass_at_k_intervals(runs, "ok", k=[1, 2, 4], n_boot=0))
    for k in (1, 2, 4):
        want = (chen_pass_at_k(10, 3, k) + chen_pass_at_k(4, 3, k)) / 2
        assert got[(k, "pass@k")]["estimate"] == pytest.approx(want, rel=1e-12)
    assert got[(2, "pass^k")]["estimate"] == pytest.approx((3 / 45 + 3 / 6) / 2, rel=1e-12)
    assert got[(4, "pass^k")]["estimate"] == pytest.approx((0.0 + 0.0) / 2, abs=1e-15)
    alone = pass_at_k_intervals(runs.filter(pl.col("case_id") == "a").vstack(
        runs.filter(pl.col("case_id") == "a").with_columns(case_id=pl.lit("a2"))), "ok", k=5, n_boot=0)  # fmt: skip
    assert _rows(alone)[(5, "pass@k")]["estimate"] == pytest.approx(11 / 12, rel=1e-12)
    assert _rows(alone)[(5, "pass@k")]["se"] == 0.0  # two identical cases


@settings(max_examples=30)  # each example: a bootstrap-free call and an oracle walk over a few cases
@given(epoch_runs())
def test_estimates_and_ses_equal_the_oracle_and_pass_at_k(runs: list[dict[str, Any]]) -> None:
    data = frame(runs)
    if data.select("case_id").n_unique() < 2:
        return
    most = int(data.group_by("system", "case_id").len()["len"].max())
    ks = [k for k in KS if k <= most]
    if not ks:
        return
    got = pass_at_k_intervals(data, "ok", k=ks, n_boot=0)
    system_level = pass_at_k(data, "ok", k=ks, level="system")
    for system in data["system"].unique():
        epochs: dict[object, list[int]] = defaultdict(list)
        for run in sorted(runs, key=lambda r: r["epoch"]):
            if run["system"] == system:
                epochs[run["case_id"]].append(int(run["ok"]))
        rows = _rows(got, system=system)
        means = system_level.filter(pl.col("system") == system).row(0, named=True)
        for k in ks:
            want = oracle.pass_over_cases(epochs, k)
            for measure, column in (("pass@k", "pass_at"), ("pass^k", "pass_hat")):
                row = rows[(k, measure)]
                assert row["cases"] == want["cases"]
                # The same number pass_at_k gives at level="system", to the last bit.
                assert row["estimate"] == means[f"{column}_{k}"]
                if want[f"se_{measure}"] is None:
                    assert row["se"] is None and row["ci_low"] is None
                else:
                    assert row["se"] == pytest.approx(want[f"se_{measure}"], rel=1e-9, abs=1e-12)


def _planted(seed: int, cases: int = 60, epochs: int = 5, shift: float = 0.0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for system, extra in (("mas", shift), ("single", 0.0)):
        chance = np.clip(rng.beta(2, 2, cases) + extra, 0, 1)
        ok = rng.random((cases, epochs)) < chance[:, None]
        rows.append(pl.DataFrame({
            "system": system, "case_id": np.repeat(np.arange(cases), epochs),
            "epoch": np.tile(np.arange(1, epochs + 1), cases), "ok": ok.ravel(),
        }))  # fmt: skip
    return pl.concat(rows)


def test_the_bootstrap_is_reproducible_with_a_seed_and_close_to_the_t_interval() -> None:
    data = _planted(1)
    one = pass_at_k_intervals(data, "ok", k=[1, 3], treatment="mas", control="single", seed=7)
    assert one.equals(pass_at_k_intervals(data, "ok", k=[1, 3], treatment="mas", control="single", seed=7))
    shuffled = data.sample(fraction=1.0, shuffle=True, seed=2)
    assert one.equals(pass_at_k_intervals(shuffled, "ok", k=[1, 3], treatment="mas", control="single", seed=7))
    other = pass_at_k_intervals(data, "ok", k=[1, 3], treatment="mas", control="single", seed=8)
    assert not one["boot_low"].equals(other["boot_low"])
    # 60 cases: the percentile bootstrap and the t interval agree to a fraction of their width.
    width = one["ci_high"] - one["ci_low"]
    assert ((one["boot_low"] - one["ci_low"]).abs() < 0.2 * width).all()
    assert ((one["boot_high"] - one["ci_high"]).abs() < 0.2 * width).all()
    # Redrawing epochs as well only widens (it adds the epoch noise a second time) and stays centred.
    both = pass_at_k_intervals(data, "ok", k=[1, 3], treatment="mas", control="single", seed=7, resample_epochs=True)
    assert ((both["boot_high"] - both["boot_low"]) >= 0.95 * (one["boot_high"] - one["boot_low"])).all()
    centre = (both["boot_low"] + both["boot_high"]) / 2
    assert ((centre - both["estimate"]).abs() < 0.25 * (both["boot_high"] - both["boot_low"])).all()


def test_the_paired_difference_is_the_mean_of_per_case_differences_on_shared_cases() -> None:
    data = _planted(3, cases=40, epochs=4, shift=0.15)
    # A case only the MAS ran, and one where the single agent has 2 epochs (left out at k = 3).
    data = data.filter(~((pl.col("system") == "single") & (pl.col("case_id") == 0)))
    data = data.filter(~((pl.col("system") == "single") & (pl.col("case_id") == 1) & (pl.col("epoch") > 2)))
    got = _rows(pass_at_k_intervals(data, "ok", k=[1, 3], treatment="mas", control="single"), control="single")
    cases = pass_at_k(data, "ok", k=[1, 3])
    wide = cases.filter(pl.col("system") == "mas").join(cases.filter(pl.col("system") == "single"), on="case_id")
    for k in (1, 3):
        for measure, column in (("pass@k", "pass_at"), ("pass^k", "pass_hat")):
            d = (wide[f"{column}_{k}"] - wide[f"{column}_{k}_right"]).drop_nulls().to_numpy()
            row = got[(k, measure)]
            assert row["system"] == "mas" and row["cases"] == d.size
            assert row["estimate"] == pytest.approx(d.mean(), rel=1e-12)
            assert row["se"] == pytest.approx(d.std(ddof=1) / math.sqrt(d.size), rel=1e-9)
            assert "1 case(s) run by only one of the two are left out" in row["note"]
    assert got[(3, "pass@k")]["cases"] == 38 and got[(1, "pass@k")]["cases"] == 39
    assert "fewer than 3 epochs" in got[(3, "pass@k")]["note"]


@pytest.mark.slow
def test_a_planted_difference_is_covered() -> None:
    """200 seeded studies with no difference between systems: the t and bootstrap intervals of the
    paired pass@1 difference cover 0 in about 95 % (Bernoulli outcomes, 50 cases: 91-99 % allowed)."""
    rng = np.random.default_rng(99)
    sims, cases, epochs = 200, 50, 3
    chance = rng.beta(2, 2, (sims, cases))
    ok = rng.random((sims, 2, cases, epochs)) < chance[:, None, :, None]
    data = pl.DataFrame({
        "sim": np.repeat(np.arange(sims), 2 * cases * epochs),
        "system": np.tile(np.repeat(["mas", "single"], cases * epochs), sims),
        "case_id": np.tile(np.repeat(np.arange(cases), epochs), 2 * sims),
        "epoch": np.tile(np.arange(1, epochs + 1), 2 * sims * cases), "ok": ok.ravel(),
    })  # fmt: skip
    table = pass_at_k_intervals(data, "ok", k=1, by="sim", treatment="mas", control="single", n_boot=400)
    rows = table.filter(pl.col("control").is_not_null() & (pl.col("measure") == "pass@k"))
    assert rows.height == sims
    for low, high in (("ci_low", "ci_high"), ("boot_low", "boot_high")):
        covered = ((rows[low] <= 0) & (rows[high] >= 0)).mean()
        assert 0.91 <= covered <= 0.99, (low, covered)


RUNS = pl.DataFrame({"system": "mas", "case_id": ["a", "a", "b", "b"], "epoch": [1, 2, 1, 2], "ok": [1, 0, 1, 1]})


@pytest.mark.parametrize(
    ("call", "error", "text"),
    [
        (lambda: pass_at_k_intervals(RUNS, "ok", k=3), DataError, "k=3 is more than the most epochs of any case (2)"),
        (lambda: pass_at_k_intervals(RUNS.filter(pl.col("case_id") == "a"), "ok"), DataError, "1 case(s)"),
        (lambda: pass_at_k_intervals(RUNS, "ok", treatment="mas"), InvalidParameterError, "both treatment and control"),
        (lambda: pass_at_k_intervals(RUNS, "ok", treatment="mas", control="x"), DataError, "control 'x'"),
        (lambda: pass_at_k_intervals(RUNS, "ok", n_boot=-1), InvalidParameterError, "n_boot=-1"),
        (lambda: pass_at_k_intervals(RUNS, "ok", seed=-3), InvalidParameterError, "seed=-3"),
        (lambda: pass_at_k_intervals(RUNS, "ok", resample_epochs=1), InvalidParameterError, "resample_epochs=1"),
        (lambda: pass_at_k_intervals(RUNS.with_columns(ok=pl.lit(0.5)), "ok"), DataError, "must be pass/fail"),
    ],
)
def test_bad_input_is_one_named_error(call: Any, error: type[Exception], text: str) -> None:
    with pytest.raises(error) as info:
        call()
    assert text in str(info.value)
    assert "\n" not in str(info.value)


def test_non_finite_values_are_set_aside_and_counted() -> None:
    runs = RUNS.with_columns(pl.col("ok").cast(pl.Float64)).vstack(
        pl.DataFrame({"system": ["mas", "mas"], "case_id": ["a", "b"], "epoch": [3, 3], "ok": [float("nan"), math.inf]})
    )
    got = pass_at_k_intervals(runs, "ok", k=2, n_boot=0)
    want = pass_at_k_intervals(RUNS, "ok", k=2, n_boot=0)
    assert got.drop("note").equals(want.drop("note"))
    aside = "2 run(s) with a NaN or infinite 'ok' set aside"
    assert got["note"].to_list() == ["; ".join(filter(None, [aside, note])) for note in want["note"]]


def test_a_case_with_too_few_epochs_is_left_out_and_a_lone_case_has_no_interval() -> None:
    runs = RUNS.vstack(pl.DataFrame({"system": "single", "case_id": ["a", "a", "b"], "epoch": [1, 2, 1],
                                     "ok": [1, 1, 0]}))  # fmt: skip
    got = _rows(pass_at_k_intervals(runs, "ok", k=2, n_boot=100), system="single")
    row = got[(2, "pass@k")]
    assert row["cases"] == 1 and row["estimate"] == 1.0
    assert row["se"] is None and row["boot_low"] is None
    assert "1 of 2 cases have fewer than 2 epochs" in row["note"] and "no interval" in row["note"]
