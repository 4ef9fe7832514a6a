"""``stats.overhead``: each run's spending over the control's mean on its case, against a plain-Python
oracle, a worked example, and its refusals."""

from __future__ import annotations

import math

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mas_eval.errors import DataError, InvalidParameterError, SchemaError
from mas_eval.stats import overhead
from tests.oracles import process as oracle

_VALUES = st.one_of(
    st.none(), st.sampled_from([0.0, 1.0, 2.0, 10.0, -1.0, math.inf, math.nan]), st.floats(0, 1e6, allow_nan=False)
)


@st.composite
def _runs(draw: st.DrawFn) -> pl.DataFrame:
    n = draw(st.integers(1, 12))
    return pl.DataFrame(
        {
            "run_id": [f"r{i}" for i in range(n)],
            "system": [draw(st.sampled_from(["mas", "single", "debate"])) for _ in range(n)],
            "case_id": [draw(st.sampled_from(["a", "b", "c"])) for _ in range(n)],
            "tokens": [draw(_VALUES) for _ in range(n)],
        },
        schema={"run_id": pl.String, "system": pl.String, "case_id": pl.String, "tokens": pl.Float64},
    )


# 40 random frames of up to 12 runs: each call takes milliseconds.
@given(runs=_runs(), control=st.sampled_from(["single", "mas"]))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_ratios_match_the_oracle(runs: pl.DataFrame, control: str) -> None:
    got = dict(overhead(runs, "tokens", control=control).select("run_id", "ratio").iter_rows())
    want = oracle.overhead(runs.rows(named=True), "tokens", control)
    assert set(got) == set(want)
    for run_id, value in want.items():
        assert (got[run_id] is None) == (value is None), run_id
        if value is not None:
            assert got[run_id] == pytest.approx(value, rel=1e-12)


def test_a_worked_example_and_its_summary() -> None:
    runs = pl.DataFrame(
        {
            "run_id": ["m1", "m2", "m3", "s1", "s2", "s3", "s4"],
            "system": ["mas", "mas", "mas", "single", "single", "single", "single"],
            "case_id": ["a", "b", "c", "a", "a", "b", "d"],
            "task": ["t", "t", "t", "t", "t", "t", "t"],
            "tokens": [600.0, 100.0, 50.0, 100.0, 300.0, 200.0, -5.0],
            "seconds": [3.0, 2.0, None, 1.0, 1.0, 0.0, 1.0],
        }
    )
    table = overhead(runs, ["tokens", "seconds"], by="task")
    assert table.columns == [
        "run_id", "task", "system", "case_id", "metric", "value", "control_mean", "control_runs", "ratio", "note",
    ]  # fmt: skip
    tokens = {r["run_id"]: r for r in table.filter(metric="tokens").iter_rows(named=True)}
    # Case a: the single agent's mean is (100 + 300) / 2 = 200, so m1 spent 3 times as much.
    assert (tokens["m1"]["control_mean"], tokens["m1"]["control_runs"], tokens["m1"]["ratio"]) == (200.0, 2, 3.0)
    assert tokens["m2"]["ratio"] == 0.5
    assert tokens["m3"]["ratio"] is None and tokens["m3"]["note"] == "no run of 'single' with a value on this case"
    assert tokens["s4"]["value"] is None and "set aside" in tokens["s4"]["note"]
    seconds = {r["run_id"]: r for r in table.filter(metric="seconds").iter_rows(named=True)}
    assert seconds["m2"]["ratio"] is None and seconds["m2"]["note"] == "'single''s mean on this case is 0"
    assert seconds["m3"]["note"] == "no value"
    summary = overhead(runs, ["tokens", "seconds"], by="task", level="system")
    mas = summary.filter(system="mas", metric="tokens").row(0, named=True)
    # Ratios 3 and 0.5: mean 1.75, median 1.75, geometric mean sqrt(1.5); (600 + 100) / (200 + 200).
    assert (mas["runs"], mas["matched"], mas["cases"]) == (3, 2, 2)
    assert mas["mean_ratio"] == pytest.approx(1.75) and mas["median_ratio"] == pytest.approx(1.75)
    assert mas["geometric_mean_ratio"] == pytest.approx(math.sqrt(1.5))
    assert mas["ratio_of_means"] == pytest.approx(700 / 400)
    assert mas["note"] == "1 run(s) with a value but no control mean on their case left out"
    single = summary.filter(system="single", metric="tokens").row(0, named=True)
    assert single["set_aside"] == 1 and single["ratio_of_means"] == pytest.approx(1.0)
    assert summary.filter(system="mas", metric="seconds")["matched"].item() == 1


def test_a_zero_ratio_gives_a_geometric_mean_of_zero() -> None:
    runs = pl.DataFrame({"run_id": ["m", "n", "s"], "system": ["mas", "mas", "single"], "case_id": "a",
                         "tokens": [0, 40, 10]})  # fmt: skip
    row = overhead(runs, "tokens", level="system").filter(system="mas").row(0, named=True)
    assert (row["geometric_mean_ratio"], row["mean_ratio"]) == (0.0, 2.0)


def test_it_refuses_what_it_cannot_compute() -> None:
    runs = pl.DataFrame({"run_id": ["m", "s"], "system": ["mas", "single"], "case_id": ["a", None], "tokens": [1, 2]})
    with pytest.raises(DataError, match=r"overhead: run_metrics: null values in 'case_id' \(1 runs\)"):
        overhead(runs, "tokens")
    with pytest.raises(SchemaError, match=r"overhead: metrics: no column 'tokenz' \(did you mean 'tokens'\?\)"):
        overhead(runs, "tokenz")
    with pytest.raises(InvalidParameterError, match="must name different columns"):
        overhead(runs, "case_id")
    with pytest.raises(InvalidParameterError, match=r"overhead: level='case' is invalid"):
        overhead(runs, "tokens", level="case")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match=r"overhead: control=1 is invalid"):
        overhead(runs, "tokens", control=1)  # type: ignore[arg-type]
