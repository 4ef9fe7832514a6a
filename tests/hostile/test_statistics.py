"""NaN and infinite values in the runs a statistic reads: one rule in every function.

Before, ``cost_per_correct`` and ``accuracy_cost_frontier`` accepted an infinite cost (an
infinite cost per correct answer) and refused a NaN one; ``pass_at_k``, ``pass_rates`` and
``calibration`` dropped a NaN outcome without a word and refused an infinite one. Now every
function sets the run aside, computes the rest exactly as without it, and its note column counts
what was set aside (``docs/statistics.md``, "One rule for values a statistic cannot use").
"""

from __future__ import annotations

import math
from collections.abc import Callable

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mas_eval import stats

NON_FINITE = [math.nan, math.inf, -math.inf]


def _runs() -> pl.DataFrame:
    rows = []
    for system in ("mas", "single"):
        for case in range(6):
            for epoch in (1, 2, 3):
                rows.append(
                    {
                        "system": system,
                        "case_id": f"c{case}",
                        "epoch": epoch,
                        "ok": float((case + epoch + (system == "mas")) % 2 == 0 or case == 0),
                        "dqs": 0.4 + 0.1 * ((case * epoch) % 4) + (0.05 if system == "mas" else 0.0),
                        "run_tokens": 100.0 + 10 * case + epoch,
                        "run_cost_usd": 0.01 * (case + 1) * epoch,
                        "conf": 0.2 + 0.1 * (case % 6),
                    }
                )
    return pl.DataFrame(rows)


RUNS = _runs()

#: Each function, the columns it reads per run, its note column and the keys of its output rows.
CALLS: dict[str, tuple[Callable[[pl.DataFrame], pl.DataFrame], list[str], str]] = {
    "pass_at_k": (lambda f: stats.pass_at_k(f, "ok", k=[1, 2], level="system"), ["ok"], "note"),
    "pass_at_k_intervals": (lambda f: stats.pass_at_k_intervals(f, "ok", k=2, n_boot=0), ["ok"], "note"),
    "cost_per_correct": (lambda f: stats.cost_per_correct(f, "ok"), ["ok", "run_tokens", "run_cost_usd"], "note"),
    "compute_matched": (
        lambda f: stats.compute_matched(f, "ok", level="summary"),
        ["ok", "run_tokens"],
        "note",
    ),
    "accuracy_cost_frontier": (
        lambda f: stats.accuracy_cost_frontier(f, "ok", ks=[1]),
        ["ok", "run_tokens", "run_cost_usd"],
        "note",
    ),
    "pass_rates": (lambda f: stats.pass_rates(f, "ok"), ["ok"], "note"),
    "calibration": (lambda f: stats.calibration(f, "conf", "ok"), ["conf", "ok"], "warning"),
    "reliability_table": (lambda f: stats.reliability_table(f, "conf", "ok", bins=3), ["conf", "ok"], "note"),
    "cost_effectiveness": (
        lambda f: stats.cost_effectiveness(f, "dqs", n_boot=0),
        ["dqs", "run_cost_usd"],
        "warning",
    ),
    "compare": (lambda f: stats.compare(f, "dqs"), ["dqs"], "warning"),
}


def _spoiled(column: str, value: float, rows: list[int]) -> pl.DataFrame:
    marked = pl.int_range(pl.len()).is_in(rows)
    return RUNS.with_columns(pl.when(marked).then(pl.lit(value)).otherwise(pl.col(column)).alias(column))


@pytest.mark.parametrize("name", list(CALLS))
@pytest.mark.parametrize("value", NON_FINITE, ids=["nan", "inf", "-inf"])
def test_a_non_finite_value_is_set_aside_the_rest_computed_and_the_count_reported(name: str, value: float) -> None:
    call, columns, note = CALLS[name]
    # The last run of the first case of the MAS (epoch 3 of c0): every function still has its cases.
    for column in columns:
        got = call(_spoiled(column, value, [2]))
        want = call(RUNS.filter(pl.int_range(pl.len()) != 2))
        assert got.drop(note).equals(want.drop(note)), (name, column)
        said = [n for n in got[note].to_list() if n]
        assert said, (name, column)
        assert any("1 run(s) with a NaN or infinite" in n or "1 NaN" in n or "1 infinite" in n or "1 run(s)" in n
                   for n in said), said  # fmt: skip


@settings(max_examples=25, deadline=None)  # 25: each draw runs one statistic twice on 36 runs
@given(
    name=st.sampled_from(["pass_at_k", "cost_per_correct", "accuracy_cost_frontier", "pass_rates", "calibration"]),
    value=st.sampled_from(NON_FINITE),
    rows=st.sets(st.integers(0, 35), min_size=1, max_size=6),
    pick=st.integers(0, 2),
)
def test_any_runs_with_non_finite_values_are_set_aside_and_counted(
    name: str, value: float, rows: set[int], pick: int
) -> None:
    call, columns, note = CALLS[name]
    column = columns[pick % len(columns)]
    spoiled = _spoiled(column, value, sorted(rows))
    kept = RUNS.filter(~pl.int_range(pl.len()).is_in(sorted(rows)))
    try:
        want = call(kept)
    except Exception as refused:  # too few runs left for this statistic: the same error, with or without them
        with pytest.raises(type(refused)):
            call(spoiled)
        return
    got = call(spoiled)
    common = [c for c in want.columns if c != note]
    assert got.select(common).equals(want.select(common))
    notes = [part for text in got[note].drop_nulls() for part in text.split("; ")]
    counts = [int(part.split(" run(s)")[0]) for part in notes if " run(s) with a NaN" in part]
    assert sum(counts) == len(rows)


def test_a_finite_value_out_of_place_is_still_named() -> None:
    # Set aside is for what no run can be; a pass/fail column holding 0.5 is the wrong column.
    with pytest.raises(Exception, match="must be pass/fail"):
        stats.pass_at_k(RUNS.with_columns(pl.lit(0.5).alias("ok")), "ok")
