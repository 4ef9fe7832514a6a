"""``stats.describe`` (each system's mean with its interval) and ``stats.agent_shares``: against plain-Python
oracles, values pinned from statsmodels and SciPy, and their refusals."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mas_eval.errors import SchemaError
from mas_eval.stats import agent_shares, describe, pass_rates
from tests.oracles import descriptives as oracle


@st.composite
def _runs(draw: st.DrawFn) -> pl.DataFrame:
    n = draw(st.integers(1, 14))
    return pl.DataFrame(
        {
            "system": [draw(st.sampled_from(["mas", "single"])) for _ in range(n)],
            "case_id": [draw(st.sampled_from(["a", "b", "c", "d"])) for _ in range(n)],
            "ok": [draw(st.one_of(st.none(), st.booleans())) for _ in range(n)],
            "score": [draw(st.one_of(st.none(), st.floats(-5, 5, allow_nan=False))) for _ in range(n)],
        },
        schema={"system": pl.String, "case_id": pl.String, "ok": pl.Boolean, "score": pl.Float64},
    )


def _close(got: object, expected: object) -> bool:
    if got is None or expected is None:
        return got is None and expected is None
    return math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-12)  # type: ignore[arg-type]


# 40 random frames of up to 14 runs: each call takes milliseconds.
@given(runs=_runs(), clustered=st.booleans())
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_every_mean_and_interval_matches_the_oracle(runs: pl.DataFrame, clustered: bool) -> None:
    got = describe(runs, ["ok", "score"], cluster="case_id" if clustered else None)
    seen = set()
    for metric, kind in (("ok", "pass/fail"), ("score", "graded")):
        for system in ("mas", "single"):
            own = runs.filter((pl.col("system") == system) & pl.col(metric).is_not_null())
            rows = got.filter((pl.col("system") == system) & (pl.col("metric") == metric))
            if own.height == 0:
                assert rows.height == 0
                continue
            seen.add((system, metric))
            values = [float(v) for v in own[metric]]
            expected = oracle.mean_interval(values, kind, own["case_id"].to_list() if clustered else None)
            row = rows.row(0, named=True)
            assert row["kind"] == kind and row["n"] == expected["n"]
            for name in ("mean", "sd", "ci_low", "ci_high"):
                assert _close(row[name], expected[name]), (name, row, expected)
    assert got.height == len(seen)


def test_wilson_t_and_cluster_intervals_equal_statsmodels_and_scipy() -> None:
    import statsmodels.api as sm
    from scipy import stats
    from statsmodels.stats.proportion import proportion_confint

    rng = np.random.default_rng(4)
    cases = np.repeat(np.arange(12), 3)
    ok = rng.random(36) < 0.6
    score = rng.normal(0.5, 0.2, 36)
    runs = pl.DataFrame({"system": "mas", "case_id": cases, "ok": ok, "score": score})
    plain = describe(runs, ["ok", "score"])
    # statsmodels.stats.proportion.proportion_confint(count, nobs, method="wilson")
    assert plain.filter(metric="ok").select("ci_low", "ci_high").row(0) == pytest.approx(
        proportion_confint(int(ok.sum()), 36, alpha=0.05, method="wilson"), rel=1e-12
    )
    # scipy.stats.t.interval(0.95, n - 1, loc=mean, scale=sem)
    assert plain.filter(metric="score").select("ci_low", "ci_high").row(0) == pytest.approx(
        stats.t.interval(0.95, 35, loc=score.mean(), scale=stats.sem(score)), rel=1e-12
    )
    # statsmodels OLS of y on a constant, cov_type="cluster" by case, use_t=True: t with G - 1 = 11 df, and
    # its small-sample factor G/(G-1) (N-1)/(N-K) is G/(G-1) with K = 1: CR1.
    clustered = describe(runs, ["ok", "score"], cluster="case_id")
    for metric, values in (("ok", ok.astype(float)), ("score", score)):
        fit = sm.OLS(values, np.ones(36)).fit(cov_type="cluster", cov_kwds={"groups": cases}, use_t=True)
        low, high = fit.conf_int(alpha=0.05)[0]
        assert clustered.filter(metric=metric).select("ci_low", "ci_high").row(0) == pytest.approx(
            (low, high), rel=1e-9
        )
    # The same interval pass_rates gives a pass rate clustered by case.
    rates = pass_rates(runs, "ok", cluster="case_id")
    assert clustered.filter(metric="ok").select("ci_low", "ci_high").row(0) == pytest.approx(
        rates.select("cluster_low", "cluster_high").row(0), rel=1e-12
    )


def test_a_column_that_is_not_a_number_is_refused() -> None:
    runs = pl.DataFrame({"system": ["mas"], "answer": ["yes"]})
    with pytest.raises(SchemaError, match="metric 'answer' is String; a mean needs a Boolean"):
        describe(runs, "answer")
    with pytest.raises(SchemaError, match="no column 'nope'"):
        describe(runs, "nope")


@st.composite
def _agents(draw: st.DrawFn) -> pl.DataFrame:
    n = draw(st.integers(1, 12))
    counts = st.one_of(st.none(), st.integers(0, 50))
    return pl.DataFrame(
        {
            "run_id": [f"r{draw(st.integers(0, 4))}" for _ in range(n)],
            "system": [draw(st.sampled_from(["mas", "single"])) for _ in range(n)],
            "agent_id": [draw(st.sampled_from(["a", "b", "c"])) for _ in range(n)],
            "tokens": [draw(counts) for _ in range(n)],
            "turns": [draw(counts) for _ in range(n)],
            "tool_calls": [draw(counts) for _ in range(n)],
        },
        schema={"run_id": pl.String, "system": pl.String, "agent_id": pl.String, "tokens": pl.Int64,
                "turns": pl.Int64, "tool_calls": pl.Int64},
    )  # fmt: skip


# 40 random frames of up to 12 agent rows: each call takes milliseconds.
@given(agents=_agents())
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_each_agents_share_matches_the_oracle(agents: pl.DataFrame) -> None:
    got = agent_shares(agents)
    rows = agents.to_dicts()
    for measure, share in (("tokens", "token_share"), ("turns", "turn_share"), ("tool_calls", "tool_call_share")):
        expected = oracle.agent_shares(rows, measure)
        found = {(r["system"], r["agent_id"]): r[share] for r in got.iter_rows(named=True)}
        assert found.keys() == expected.keys()
        for key, value in expected.items():
            assert _close(found[key], value), (measure, key, found[key], value)
    # The shares of a system's agents add up to 1 wherever they are defined.
    for (_,), own in got.group_by("system"):
        shares = own["token_share"].drop_nulls()
        assert shares.len() == 0 or shares.sum() == pytest.approx(1.0)
