"""Statistics over epochs: against the plain-Python oracle, against inspect_ai's epoch reducers, on a
planted compute-matched answer, whatever the row order, and on bad input."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mas_eval.errors import DataError, InvalidParameterError, SchemaError
from mas_eval.stats import accuracy_cost_frontier, compute_matched, cost_per_correct, pass_at_k
from mas_eval.stats.epochs import draw_ratio
from tests.oracles import epochs as oracle

TOL = 1e-12


def close(got: object, expected: object) -> bool:
    if expected is None or got is None:
        return got is None and expected is None
    return math.isclose(float(got), float(expected), rel_tol=TOL, abs_tol=TOL)


# --- drawn runs -----------------------------------------------------------------------------------


@st.composite
def epoch_runs(draw: st.DrawFn, systems: tuple[str, ...] = ("mas", "single")) -> list[dict[str, Any]]:
    """Runs of 1-4 cases by each system, each with a random set of epochs (none to 7), in random row order."""
    cases = draw(st.lists(st.sampled_from(["c1", "c10", "c2", "é"]), min_size=1, max_size=4, unique=True))
    runs = []
    for system in systems:
        for case in cases:
            epochs = draw(st.lists(st.integers(1, 9), max_size=7, unique=True))
            for epoch in epochs:
                runs.append({
                    "system": system, "case_id": case, "epoch": epoch,
                    "ok": draw(st.integers(0, 1)),
                    "tokens": draw(st.integers(0, 400)),
                    "cost": draw(st.sampled_from([0.0, 0.1, 0.25, 1e-3, 0.7])),
                    "score": draw(st.sampled_from([0.0, 0.5, 1.0, 0.2])),
                })  # fmt: skip
    order = draw(st.permutations(range(len(runs))))
    return [runs[i] for i in order]


def frame(runs: list[dict[str, Any]]) -> pl.DataFrame:
    schema = {"system": pl.String, "case_id": pl.String, "epoch": pl.Int64, "ok": pl.Int64,
              "tokens": pl.Int64, "cost": pl.Float64, "score": pl.Float64}  # fmt: skip
    return pl.DataFrame(runs, schema=schema)


KS = [1, 2, 3, 5]
COMMON = {"tokens": "tokens", "cost": "cost"}


# --- pass@k, pass^k, majority ---------------------------------------------------------------------


@settings(max_examples=40)
@given(epoch_runs())
def test_case_level_equals_the_oracle(runs: list[dict[str, Any]]) -> None:
    data = frame(runs)
    got = pass_at_k(data, "ok", k=KS)
    expected = oracle.case_stats(runs, KS)
    assert got.height == len(expected)
    for row in got.iter_rows(named=True):
        want = expected[(row["system"], row["case_id"])]
        for name, value in want.items():
            assert close(row[name], value) if isinstance(value, float) or value is None else row[name] == value, name
        assert (row["note"] is None) == (row["n"] >= max(KS))


@settings(max_examples=25)
@given(epoch_runs())
def test_system_level_equals_the_oracle(runs: list[dict[str, Any]]) -> None:
    got = pass_at_k(frame(runs), "ok", k=KS, level="system")
    expected = oracle.system_stats(runs, KS)
    assert sorted(got["system"].to_list()) == sorted(expected)
    for row in got.iter_rows(named=True):
        for name, value in expected[row["system"]].items():
            assert close(row[name], value) if isinstance(value, float) or value is None else row[name] == value, name


def test_pass_at_k_and_pass_hat_k_equal_inspect_ai_reducers() -> None:
    """Every (n, c, k) with n <= 10 against inspect_ai 0.3.285's pass_at, pass_k, majority_score and mean_score."""
    scorer = pytest.importorskip("inspect_ai.scorer")
    triples = [(n, c) for n in range(1, 11) for c in range(n + 1)]
    runs = pl.DataFrame(
        {
            "system": "mas",
            "case_id": [f"n{n}c{c}" for n, c in triples for _ in range(n)],
            "epoch": [e for n, _ in triples for e in range(1, n + 1)],
            "ok": [int(e <= c) for n, c in triples for e in range(1, n + 1)],
        }
    )
    ks = list(range(1, 11))
    got = {row["case_id"]: row for row in pass_at_k(runs, "ok", k=ks).iter_rows(named=True)}
    for n, c in triples:
        row = got[f"n{n}c{c}"]
        scores = [scorer.Score(value=float(e <= c)) for e in range(1, n + 1)]
        for k in ks:
            at, hat = scorer.pass_at(k)(scores).value, scorer.pass_k(k)(scores).value
            if k > n:  # inspect_ai leaves these unscored (NaN); they are null here
                assert math.isnan(at) and math.isnan(hat) and row[f"pass_at_{k}"] is None
                continue
            assert math.isclose(row[f"pass_at_{k}"], at, rel_tol=TOL, abs_tol=TOL), (n, c, k)
            assert math.isclose(row[f"pass_hat_{k}"], hat, rel_tol=TOL, abs_tol=TOL), (n, c, k)
        vote = scorer.majority_score()(scores).value
        # inspect's strict majority is unscored on a tie; here a tie does not pass and is recorded.
        assert row["majority_tie"] == math.isnan(vote)
        assert row["majority"] == (vote == 1.0)
        assert math.isclose(row["mean"], scorer.mean_score()(scores).value, rel_tol=TOL)


@pytest.mark.parametrize(("n", "c", "k"), [(10**6, 999_000, 3), (2000, 1000, 1000), (200, 0, 50), (7, 7, 7)])
def test_the_ratio_needs_no_factorial(n: int, c: int, k: int) -> None:
    want = [float(oracle.pass_at(n, c, k)), float(oracle.pass_hat(n, c, k))]
    got = [1.0 - draw_ratio(np.array([n]), np.array([n - c]), np.array([k]))[0], draw_ratio([n], [c], [k])[0]]
    assert got == pytest.approx(want, rel=1e-9, abs=1e-300)


def test_a_metric_that_is_not_pass_fail_has_a_mean_only() -> None:
    runs = pl.DataFrame({"system": "mas", "case_id": "a", "epoch": [1, 2, 3], "dqs": [0.2, 0.5, 0.8]})
    with pytest.raises(DataError, match=r"'dqs' must be pass/fail .*3 runs are not \(e\.g\. 0\.2\)"):
        pass_at_k(runs, "dqs")
    got = pass_at_k(runs, "dqs", k=())
    assert got.select("n", "passed", "mean", "majority").rows() == [(3, None, pytest.approx(0.5), None)]
    assert pass_at_k(runs, "dqs", k=[], level="system")["mean"].to_list() == [pytest.approx(0.5)]


def test_by_groups_and_null_metric_runs() -> None:
    runs = pl.DataFrame(
        {"system": "mas", "task": ["t1", "t1", "t2", "t2"], "case_id": "a", "epoch": [1, 2, 1, 2],
         "ok": [True, None, False, True]}
    )  # fmt: skip
    got = pass_at_k(runs, "ok", k=[1, 2], by="task")
    assert got.select("task", "n", "passed", "pass_at_2").rows() == [("t1", 1, 1, None), ("t2", 2, 1, 1.0)]
    assert got["note"].to_list() == ["k=2 > 1 epochs: pass@2 undefined", None]
    system = pass_at_k(runs, "ok", k=2, by="task", level="system")
    assert system.select("task", "cases", "pass_at_2").rows() == [("t1", 1, None), ("t2", 1, 1.0)]
    assert system["note"][0] == "pass@2 and pass^2 over the 0 of 1 cases with at least 2 epochs"


# --- cost per correct -----------------------------------------------------------------------------


@settings(max_examples=20)
@given(epoch_runs())
def test_cost_per_correct_equals_the_oracle(runs: list[dict[str, Any]]) -> None:
    data = frame(runs)
    if data.height == 0:
        return
    got = cost_per_correct(data, "ok", **COMMON)
    expected = oracle.cost_per_correct(runs)
    for row in got.iter_rows(named=True):
        for name, value in expected[row["system"]].items():
            assert close(row[name], value), name
        assert (row["note"] is None) == (row["passed"] > 0)


# --- compute-matched ------------------------------------------------------------------------------


@settings(max_examples=40)
@given(epoch_runs(), st.sampled_from(["majority", "best"]), st.sampled_from(["first", "mean"]),
       st.sampled_from(["tokens", "cost"]))  # fmt: skip
def test_compute_matched_equals_the_oracle(runs: list[dict[str, Any]], rule: str, first: str, budget: str) -> None:
    data = frame(runs)
    if not (data["system"] == "mas").any():
        with pytest.raises(DataError, match="no run of the treatment 'mas'"):
            compute_matched(data, "ok", rule=rule, score="score", treatment_runs=first, budget=budget, **COMMON)
        return
    args = {"rule": rule, "score": "score", "treatment_runs": first, "budget": budget, **COMMON}
    got = compute_matched(data, "ok", **args)
    expected = oracle.compute_matched(runs, "mas", "single", budget, rule, first)
    assert sorted(got["case_id"].to_list()) == sorted(expected)
    for row in got.iter_rows(named=True):
        want = expected[row["case_id"]]
        assert row["k"] == want["k"]
        assert (row["note"] is None) == want["matched"]
        for name in ("treatment_outcome", "treatment_budget", "control_budget", "control_outcome", "control_tie"):
            if want["matched"] or name.startswith("treatment"):
                assert close(row[name], want.get(name)), name
        if want["matched"]:
            assert row["control_outcome_1"] == want["control_outcome_1"]
    summary = compute_matched(data, "ok", **args, level="summary")
    assert summary["comparison"].to_list() == ["k=1", "compute-matched"]
    for row in summary.iter_rows(named=True):
        want = oracle.matched_summary(expected)[row["comparison"]]
        assert row["cases"] == want["cases"]
        assert close(row["difference"], want["difference"])
        if first == "first":
            assert (row["treatment_only"], row["control_only"]) == (want["treatment_only"], want["control_only"])
            b, c = want["treatment_only"], want["control_only"]
            # McNemar's exact p, written out: twice the lower binomial tail of the discordant cases at 1/2.
            tail = sum(math.comb(b + c, i) for i in range(min(b, c) + 1)) / 2 ** (b + c)
            assert close(row["mcnemar_p"], min(1.0, 2 * tail) if want["cases"] else None)  # no case: no test
        else:
            assert row["treatment_only"] is None and row["mcnemar_p"] is None
        if want["sd"]:
            assert close(row["statistic"], want["difference"] / (want["sd"] / math.sqrt(want["cases"])))
            assert row["ci_low"] < row["difference"] < row["ci_high"]
        else:
            assert row["statistic"] is None and row["note"] is not None


def planted(seed: int = 7, cases: int = 500) -> pl.DataFrame:
    """A MAS right 80% of the time at 8,600-8,900 tokens a run; a single agent right 70% at 990-1,000 tokens.

    Nine single-agent runs (at least 8,910 tokens) are the least that reach any MAS run's tokens
    (eight spend at most 8,000), and the majority of nine independent 70% answers is right
    P(Bin(9, 0.7) >= 5) = 90.1% of the time: the MAS wins one run against one, loses on equal tokens.
    The last 20 cases have three single-agent epochs only: they cannot be matched.
    """
    rng = np.random.default_rng(seed)
    mas_epochs, single_epochs = 3, np.where(np.arange(cases) < cases - 20, 12, 3)
    mas = pl.DataFrame({
        "system": "mas", "case_id": np.repeat(np.arange(cases), mas_epochs),
        "epoch": np.tile(np.arange(1, mas_epochs + 1), cases),
        "passed": rng.random(cases * mas_epochs) < 0.8,
        "run_tokens": rng.integers(8600, 8901, cases * mas_epochs),
    })  # fmt: skip
    n = int(single_epochs.sum())
    single = pl.DataFrame({
        "system": "single", "case_id": np.repeat(np.arange(cases), single_epochs),
        "epoch": np.concatenate([np.arange(1, e + 1) for e in single_epochs]),
        "passed": rng.random(n) < 0.7,
        "run_tokens": rng.integers(990, 1001, n),
    })  # fmt: skip
    return pl.concat([mas, single]).sample(fraction=1.0, shuffle=True, seed=seed)


def test_compute_matched_recovers_a_planted_answer() -> None:
    runs = planted()
    cases = compute_matched(runs, "passed")
    matched = cases.filter(pl.col("k").is_not_null())
    assert matched.height == 480 and set(matched["k"].to_list()) == {9}
    unmatched = cases.filter(pl.col("k").is_null())
    assert unmatched.height == 20 and unmatched["note"].str.contains("not matched").all()
    one, equal = compute_matched(runs, "passed", level="summary").iter_rows(named=True)
    assert one["comparison"] == "k=1" and equal["comparison"] == "compute-matched"
    assert one["cases"] == equal["cases"] == 480 and one["unmatched"] == equal["unmatched"] == 20
    # One run against one: the MAS is better (0.8 - 0.7), clearly.
    assert one["difference"] == pytest.approx(0.1, abs=0.06) and one["ci_low"] > 0 and one["p_value"] < 0.01
    assert one["treatment_only"] > one["control_only"]
    # On equal tokens the single agent's majority of nine wins (0.8 - 0.901).
    assert equal["difference"] == pytest.approx(-0.101, abs=0.06) and equal["ci_high"] < 0 and equal["p_value"] < 0.01
    assert equal["control_only"] > equal["treatment_only"] and equal["mean_k"] == 9.0
    assert one["mcnemar_p"] < 0.01 and equal["mcnemar_p"] < 0.01
    assert equal["control_budget"] >= equal["treatment_budget"]
    # The frontier tells the same story: the single agent's majority climbs with k, past the MAS at k = 1.
    front = accuracy_cost_frontier(runs, "passed", ks=[1, 9], cost=None)
    rate = {(s, k): r for s, k, r in front.select("system", "k", "majority_rate").iter_rows()}
    assert rate[("single", 1)] < rate[("mas", 1)] < rate[("single", 9)]


def test_best_of_takes_the_highest_score_and_the_earliest_among_equals() -> None:
    runs = pl.DataFrame(
        {"system": ["mas"] + ["single"] * 4, "case_id": "a", "epoch": [1, 4, 3, 2, 1],
         "ok": [0, 0, 1, 0, 1], "run_tokens": [350, 100, 100, 100, 100], "judge": [0.0, 0.9, 0.5, 0.9, 0.1]}
    )  # fmt: skip
    # Epochs 1-4 in order: scores 0.1, 0.9, 0.5, 0.9; the best is epoch 2 (failed), not the later tie.
    got = compute_matched(runs, "ok", rule="best", score="judge")
    assert got.select("k", "control_outcome", "control_tie", "control_outcome_1").row(0) == (4, 0, None, 1)
    with pytest.raises(InvalidParameterError, match="score="):
        compute_matched(runs, "ok", rule="best")


# --- frontier -------------------------------------------------------------------------------------


@settings(max_examples=25)
@given(epoch_runs())
def test_frontier_equals_the_oracle(runs: list[dict[str, Any]]) -> None:
    data = frame(runs)
    got = accuracy_cost_frontier(data, "ok", ks=[1, 2, 4], **COMMON)
    expected = oracle.frontier(runs, [1, 2, 4])
    assert sorted(got.select("system", "k").rows()) == sorted(expected)
    for row in got.iter_rows(named=True):
        for name, value in expected[(row["system"], row["k"])].items():
            assert close(row[name], value), name


def test_frontier_default_ks_are_powers_of_two_up_to_the_most_epochs() -> None:
    runs = pl.DataFrame({"system": "s", "case_id": ["a"] * 5 + ["b"] * 2, "epoch": [1, 2, 3, 4, 5, 1, 2],
                         "ok": [1, 0, 1, 1, 0, 1, 1], "run_tokens": 10})  # fmt: skip
    got = accuracy_cost_frontier(runs, "ok", cost=None)
    assert got.select("k", "cases", "tokens_per_case").rows() == [(1, 2, 10.0), (2, 2, 20.0), (4, 1, 40.0)]
    assert got["note"].to_list() == [None, None, "1 of 2 cases have at least k epochs; the others are left out"]


# --- reproducible, whatever the row order ---------------------------------------------------------


@settings(max_examples=10)
@given(epoch_runs(systems=("mas", "single", "debate")), st.randoms(use_true_random=False))
def test_row_order_does_not_change_a_bit(runs: list[dict[str, Any]], random: Any) -> None:
    data = frame(runs)
    shuffled = data.sample(fraction=1.0, shuffle=True, seed=random.randint(0, 10**6))
    calls = [
        lambda d: pass_at_k(d, "ok", k=KS),
        lambda d: pass_at_k(d, "ok", k=KS, level="system"),
        lambda d: cost_per_correct(d, "ok", **COMMON) if d.height else None,
        lambda d: accuracy_cost_frontier(d, "ok", **COMMON),
    ]
    if (data["system"] == "mas").any():
        calls.append(lambda d: compute_matched(d, "ok", budget="cost", level="summary", **COMMON))
    for call in calls:
        a, b = call(data), call(shuffled)
        assert (a is None and b is None) or a.equals(b, null_equal=True)


# --- bad input ------------------------------------------------------------------------------------

RUNS = pl.DataFrame({"system": ["mas", "single", "single"], "case_id": "a", "epoch": [1, 1, 2], "ok": [1, 0, 1],
                     "run_tokens": [10, 5, 6], "run_cost_usd": [0.1, 0.05, 0.06]})  # fmt: skip


@pytest.mark.parametrize(
    ("call", "error", "text"),
    [
        (lambda: pass_at_k(RUNS, "ok", k=0), InvalidParameterError, "k=0 is invalid"),
        (lambda: pass_at_k(RUNS, "ok", k=[2, 2]), InvalidParameterError, "distinct"),
        (lambda: pass_at_k(RUNS, "ok", k=True), InvalidParameterError, "k=True"),
        (lambda: pass_at_k(RUNS, "ok", level="run"), InvalidParameterError, "level='run'"),
        (lambda: pass_at_k(RUNS, "okk"), SchemaError, "did you mean 'ok'"),
        (lambda: pass_at_k(RUNS, "ok", epoch="round"), SchemaError, "'round'"),
        (lambda: pass_at_k(RUNS.with_columns(epoch=1), "ok"), DataError, "more than one run"),
        (
            lambda: pass_at_k(RUNS.with_columns(pl.col("epoch").cast(pl.Int8).replace(2, None)), "ok"),
            DataError,
            "null values in 'epoch'",
        ),
        (lambda: pass_at_k(RUNS.with_columns(pl.col("epoch").cast(pl.String)), "ok"), SchemaError, "integers"),
        (lambda: cost_per_correct(RUNS, "ok", tokens=None, cost=None), InvalidParameterError, "both None"),
        (lambda: cost_per_correct(RUNS.with_columns(run_tokens=-1), "ok"), DataError, "negative"),
        (lambda: compute_matched(RUNS, "ok", control="mas"), InvalidParameterError, "both 'mas'"),
        (lambda: compute_matched(RUNS, "ok", budget="time"), InvalidParameterError, "budget='time'"),
        (lambda: compute_matched(RUNS, "ok", treatment="debate"), DataError, "the systems are: 'mas', 'single'"),
        (
            lambda: compute_matched(RUNS.with_columns(run_tokens=pl.lit(None, pl.Int64)), "ok"),
            DataError,
            "no 'run_tokens'",
        ),
        (lambda: compute_matched(RUNS, "ok", confidence=1.0), InvalidParameterError, "confidence=1.0"),
        (lambda: accuracy_cost_frontier(RUNS, "ok", ks="1,2"), InvalidParameterError, "ks='1,2'"),
        (lambda: accuracy_cost_frontier(RUNS.drop("run_cost_usd"), "ok"), SchemaError, "'run_cost_usd'"),
        (lambda: accuracy_cost_frontier(RUNS, "ok", by=5), InvalidParameterError, "by=5"),
        (lambda: pass_at_k([1, 2], "ok"), InvalidParameterError, "run_metrics=[1, 2] is invalid"),
    ],
)
def test_bad_input_is_one_named_error(call: Any, error: type[Exception], text: str) -> None:
    with pytest.raises(error, match=None) as info:
        call()
    assert text in str(info.value)


def test_scores_like_objects_and_lazy_frames_are_read() -> None:
    class Scores:
        runs = RUNS

    a = compute_matched(Scores(), "ok")
    assert a.equals(compute_matched(RUNS.lazy(), "ok"))
    assert a.select("k", "control_budget", "control_outcome", "control_tie").row(0) == (2, 11.0, 0, True)


def test_the_frontier_without_spending_columns_has_the_rates_alone() -> None:
    import mas_eval

    runs = mas_eval.score(mas_eval.simulate_outcomes(40, seed=1, epochs=3)).runs
    table = accuracy_cost_frontier(runs, "match", tokens=None, cost=None)
    assert table.columns == [
        "system",
        "k",
        "cases",
        "majority_rate",
        "majority_ties",
        "pass_at_k",
        "pass_hat_k",
        "note",
    ]
    assert table.height > 0 and table["majority_rate"].is_between(0, 1).all()
