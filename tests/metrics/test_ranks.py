"""Ranks of alternatives within a run: ties within the tolerance go to the id that sorts first."""

from __future__ import annotations

import math

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mas_eval
from mas_eval.metrics.ranks import SMALL_GROUP_SIZE, TIE_TOLERANCE, with_descending_ranks
from tests.oracles.decision import ranked_descending

#: Padding rows that push a run past SMALL_GROUP_SIZE, onto the as-of join and window-rank path.
LARGE = SMALL_GROUP_SIZE + 4


def ranks_of(values: list[float | None], *, padding: int = 0) -> dict[str, int | None]:
    """Ranks of one run's values, labelled v0, v1, ...; ``padding`` low rows (p00, ...) follow."""
    labels = [f"v{i}" for i in range(len(values))] + [f"p{i:02d}" for i in range(padding)]
    frame = pl.DataFrame(
        {"run": [1] * len(labels), "label": labels, "value": [*values, *[-1.0 - i for i in range(padding)]]},
        schema={"run": pl.Int64, "label": pl.String, "value": pl.Float64},
    ).sort("run", "label")
    ranked = with_descending_ranks(frame, {"rank": "value"}, group="run")
    return {label: rank for label, rank in zip(ranked["label"], ranked["rank"], strict=True) if label[0] == "v"}


@pytest.mark.parametrize("padding", [0, LARGE])
def test_a_tie_split_by_a_rounding_boundary_goes_to_the_first_id(padding: int) -> None:
    # 0.3000000000005 and the next double up round to 0.3 and 0.300000000001: rounding to 12
    # decimals (the rule before) ranked v1 first although the values differ by one ulp.
    low = 0.3000000000005
    high = math.nextafter(low, 1.0)
    assert round(low, 12) != round(high, 12)
    assert ranks_of([low, high], padding=padding) == {"v0": 1, "v1": 2}


@pytest.mark.parametrize("padding", [0, LARGE])
def test_values_apart_by_more_than_the_tolerance_are_not_tied(padding: int) -> None:
    assert ranks_of([0.5, 0.5 + 3 * TIE_TOLERANCE], padding=padding) == {"v0": 2, "v1": 1}
    assert ranks_of([1e6, 1e6 * (1 + 3 * TIE_TOLERANCE)], padding=padding) == {"v0": 2, "v1": 1}


@pytest.mark.parametrize("padding", [0, LARGE])
def test_a_chain_of_near_ties_still_ranks_one_to_n(padding: int) -> None:
    # Each value ties with the next but the ends do not: every value counts as the largest one
    # tying with it from above (v0 -> v1's value, v1 and v2 -> v2's), and ranks stay 1..n.
    step = 0.6 * TIE_TOLERANCE
    assert ranks_of([0.2, 0.2 + step, 0.2 + 2 * step], padding=padding) == {"v0": 3, "v1": 1, "v2": 2}


@pytest.mark.parametrize("padding", [0, LARGE])
def test_nulls_are_not_ranked_and_nan_ranks_highest(padding: int) -> None:
    assert ranks_of([0.1, None, float("nan"), 0.9], padding=padding) == {"v0": 3, "v1": None, "v2": 1, "v3": 2}


near_ties = st.lists(
    st.tuples(st.sampled_from([0.0, 0.25, 0.5, 1.0]), st.integers(-3, 3)).map(
        lambda pair: pair[0] + pair[1] * 0.45 * TIE_TOLERANCE
    )
    | st.floats(0.0, 1.0),
    min_size=1,
    max_size=14,
)


@settings(max_examples=150, deadline=None)
@given(runs=st.lists(near_ties, min_size=1, max_size=4))
def test_ranks_equal_the_oracle_on_both_paths(runs: list[list[float]]) -> None:
    # Runs of up to 14 values clustered within a few tolerances: groups above SMALL_GROUP_SIZE take
    # the as-of join path, the others the counting path; both must follow the oracle's rule.
    rows = [(r, f"a{i:02d}", v) for r, values in enumerate(runs) for i, v in enumerate(values)]
    frame = pl.DataFrame(rows, schema=["run", "label", "value"], orient="row").sort("run", "label")
    ranked = with_descending_ranks(frame, {"rank": "value"}, group="run")
    for r, values in enumerate(runs):
        order = ranked_descending({f"a{i:02d}": v for i, v in enumerate(values)})
        expected = {label: position for position, label in enumerate(order, start=1)}
        got = dict(ranked.filter(pl.col("run") == r).select("label", "rank").iter_rows())
        assert got == expected


def test_exact_ties_at_scale_follow_the_id_rule_on_every_call() -> None:
    # 20,000 runs in which alt2 copies alt1's scores and every agent's mass, rows shuffled: the
    # computed values of a tied pair differ in the last bits in thousands of runs (Polars adds
    # partial sums in no fixed order), and every rank must still put alt1 first, on every call.
    ds = mas_eval.simulate(20_000, seed=5, alternatives=(4, 4), criteria=(3, 3), agents=(5, 5))
    frames = ds.frames()

    def copy_alt1_to_alt2(frame: pl.DataFrame, key: list[str], value: str) -> pl.DataFrame:
        alt1 = frame.filter(pl.col("alternative") == "alt1").select(*key, _alt1=pl.col(value))
        return (
            frame.join(alt1, on=key, how="left", maintain_order="left")
            .with_columns(pl.when(pl.col("alternative") == "alt2").then("_alt1").otherwise(value).alias(value))
            .drop("_alt1")
        )

    frames["scores"] = copy_alt1_to_alt2(frames["scores"], ["run_id", "criterion"], "score").sample(
        fraction=1.0, shuffle=True, seed=1
    )
    # Copying alt1's mass onto alt2 can push an agent's sum over 1, which scoring refuses; one
    # factor per agent brings it back and keeps the copies bit-equal.
    beliefs = copy_alt1_to_alt2(frames["beliefs"], ["run_id", "agent_id"], "mass")
    total = pl.col("mass").sum().over("run_id", "agent_id")
    frames["beliefs"] = beliefs.with_columns(mass=pl.col("mass") / pl.max_horizontal(total, 1.0)).sample(
        fraction=1.0, shuffle=True, seed=2
    )
    tied = mas_eval.Dataset.from_frames(**frames)
    ranks = ["topsis_rank", "er_rank", "mcda_rank"]
    calls = []
    for _ in range(2):
        pair = mas_eval.score(tied).alternatives.filter(pl.col("alternative").is_in(["alt1", "alt2"]))
        wide = pair.pivot(on="alternative", index="run_id", values=ranks)
        assert wide.height == 20_000
        for rank in ranks:
            assert (wide[f"{rank}_alt1"] + 1 == wide[f"{rank}_alt2"]).all(), rank
        calls.append(pair.select("run_id", "alternative", *ranks))
    assert calls[0].equals(calls[1])
