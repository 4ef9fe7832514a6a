"""compare from merged per-chunk sufficient statistics equals compare on the whole frame (issue 14, item 3)."""

from __future__ import annotations

import math
import os
from fractions import Fraction

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mas_eval.errors import DataError, InvalidParameterError, MixedDqsMethodsError
from mas_eval.stats import compare
from mas_eval.stats.sufficient import SufficientStatistics, merge_statistics, sufficient_statistics

SETTINGS = settings(
    max_examples=int(os.environ.get("MERGED_EXAMPLES", "10")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TOLERANCE = 1e-10
#: (test, pair_on, cluster) of every design that runs from sums.
DESIGNS = [
    ("welch", None, None),
    ("student", None, None),
    ("paired", "case", None),
    ("welch", None, "family"),
    ("student", None, "family"),
    ("paired", "case", "family"),
]
#: The largest differences seen between the two paths, for the record (absolute, relative). 15
#: examples per test keep the suite under its time budget (``MERGED_EXAMPLES=300`` for more);
#: 2 x 300 were run when it was written.
WORST = {"abs": 0.0, "rel": 0.0}


def assert_same_table(merged: pl.DataFrame, whole: pl.DataFrame, *, tolerance: float = TOLERANCE) -> None:
    """Same columns, types and rows; strings, booleans and integers equal; floats within ``tolerance``
    (relative, or absolute below 1), and null in the same places."""
    assert merged.columns == whole.columns
    assert merged.dtypes == whole.dtypes
    assert merged.height == whole.height
    for name in whole.columns:
        got, want = merged[name], whole[name]
        assert got.is_null().to_list() == want.is_null().to_list(), name
        if not want.dtype.is_float():
            assert got.to_list() == want.to_list(), name
            continue
        a, b = got.drop_nulls().to_numpy(), want.drop_nulls().to_numpy()
        difference = np.abs(a - b)
        relative = difference / np.maximum(np.abs(b), 1.0)
        if difference.size:
            WORST["abs"] = max(WORST["abs"], float(difference.max()))
            WORST["rel"] = max(WORST["rel"], float(relative.max()))
        assert np.all(relative <= tolerance), (name, a, b)


def merged_in_random_order(frame: pl.DataFrame, chunk: np.ndarray, rng: np.random.Generator, **options: object):
    """Each chunk's statistics, merged in a random order and a random tree (pairs first, then the rest)."""
    parts = [
        sufficient_statistics(frame.filter(pl.Series(chunk == j)), ["y", "z"], **options)
        for j in range(int(chunk.max(initial=0)) + 1)
    ]  # type: ignore[arg-type]
    order = rng.permutation(len(parts))
    parts = [parts[j] for j in order]
    if len(parts) >= 3:
        parts = [parts[0] + parts[1], *parts[2:]]
    return merge_statistics(parts[::-1])


@st.composite
def run_frames(draw: st.DrawFn, *, values: st.SearchStrategy[float]) -> pl.DataFrame:
    """Runs of several tasks, two systems (and one never compared), cases with 0-3 runs per system,
    clusters of cases, and values with nulls and NaN (``y``) or infinities (``z``)."""
    rows: dict[str, list[object]] = {"task": [], "system": [], "case": [], "family": [], "y": [], "z": []}
    tasks = draw(st.lists(st.sampled_from(["t1", "t2", "t3", None]), min_size=1, max_size=3, unique=True))
    y = st.one_of(values, values, values, st.none(), st.just(math.nan))
    z = st.one_of(values, values, values, st.none(), st.just(math.inf))
    for task in tasks:
        for case in range(draw(st.integers(1, 7))):
            for system in ("mas", "single", "other"):
                for _ in range(draw(st.integers(0, 3))):
                    rows["task"].append(task)
                    rows["system"].append(system)
                    rows["case"].append(f"c{case}")
                    rows["family"].append(case // 2)
                    rows["y"].append(draw(y))
                    rows["z"].append(draw(z))
    schema = {"task": pl.String, "system": pl.String, "case": pl.String, "family": pl.Int64, "y": pl.Float64}
    return pl.DataFrame(rows, schema={**schema, "z": pl.Float64})


# Values on a grid of 1/16: every sum is exact in any order, so the paths differ only where
# their formulas do (the variance merge against Polars' own variance).
grid = st.integers(-160, 160).map(lambda k: k / 16)
# Any three-decimal values: sums now round differently in the two paths.
decimals = st.floats(-10, 10, allow_nan=False).map(lambda v: round(v, 3))


def _check_all_designs(frame: pl.DataFrame, chunks: int, seed: int, by: str | None, correction: str) -> None:
    rng = np.random.default_rng(seed)
    chunk = rng.integers(0, chunks, size=frame.height)  # a case's runs land in different chunks
    everything = merged_in_random_order(frame, chunk, rng, by=by, pair_on="case", cluster="family")
    for test, pair_on, cluster in DESIGNS:
        options = {"by": by, "pair_on": pair_on, "cluster": cluster, "test": test, "correction": correction}
        try:
            whole = compare(frame, ["y", "z"], **options)
        except DataError as error:  # no runs of a system at all: both paths refuse alike
            with pytest.raises(DataError, match=str(error)[:40]):
                compare(everything, ["y", "z"], **options)
            continue
        assert_same_table(compare(everything, ["y", "z"], **options), whole)
        exact = merged_in_random_order(frame, chunk, rng, by=by, pair_on=pair_on, cluster=cluster)
        assert_same_table(compare(exact, ["y", "z"], **options), whole)


@SETTINGS
@given(
    frame=run_frames(values=grid),
    chunks=st.integers(1, 5),
    seed=st.integers(0, 2**32 - 1),
    by=st.sampled_from([None, "task"]),
    correction=st.sampled_from(["holm", "fdr_bh"]),
)
def test_merged_statistics_equal_in_memory_statistics(
    frame: pl.DataFrame, chunks: int, seed: int, by: str | None, correction: str
) -> None:
    _check_all_designs(frame, chunks, seed, by, correction)


@SETTINGS
@given(
    frame=run_frames(values=decimals),
    chunks=st.integers(1, 5),
    seed=st.integers(0, 2**32 - 1),
    by=st.sampled_from([None, "task"]),
    correction=st.sampled_from(["holm", "bh"]),
)
def test_merged_statistics_equal_in_memory_statistics_with_rounding(
    frame: pl.DataFrame, chunks: int, seed: int, by: str | None, correction: str
) -> None:
    _check_all_designs(frame, chunks, seed, by, correction)


def test_merge_of_a_hand_example() -> None:
    # {1, 2, 6} and {3, 8}: n = 5, mean 4, M2 = 9+4+4+1+16 = 34, variance 34/4 = 8.5. Chan, Golub &
    # LeVeque (1979): M2 = M2_a + M2_b + delta^2 n_a n_b / n = 14 + 12.5 + (5.5 - 3)^2 * 3 * 2 / 5 = 34.
    a = sufficient_statistics(pl.DataFrame({"system": ["mas"] * 3, "y": [1.0, 2.0, 6.0]}), "y")
    b = sufficient_statistics(pl.DataFrame({"system": ["mas"] * 2, "y": [3.0, 8.0]}), "y")
    assert a.moments["m2:y"].item() == pytest.approx(14.0, abs=1e-12)
    assert b.moments["m2:y"].item() == pytest.approx(12.5, abs=1e-12)
    for merged in (a + b, b + a, merge_statistics([b, a])):
        n, total, m2 = merged.moments.select("n:y", "sum:y", "m2:y").row(0)
        assert (n, total) == (5, 20.0)
        assert m2 == pytest.approx(34.0, abs=1e-12)
    control = sufficient_statistics(pl.DataFrame({"system": ["single"] * 2, "y": [0.0, 2.0]}), "y")
    row = compare(a + b + control, "y").row(0, named=True)
    assert (row["mean_treatment"], row["std_treatment"] ** 2) == pytest.approx((4.0, 8.5), abs=1e-12)
    # Welch: SE^2 = 8.5/5 + 2/2 = 2.7, t = (4 - 1) / sqrt(2.7).
    assert row["statistic"] == pytest.approx(3.0 / math.sqrt(2.7), abs=1e-12)


def test_paired_case_split_across_chunks() -> None:
    # Case c1's mas runs (1 and 3, mean 2) sit in two chunks: its difference is 2 - 0 = 2, not 1 - 0 and 3 - 0.
    frame = pl.DataFrame(
        {
            "system": ["mas", "mas", "single", "mas", "single", "mas", "single"],
            "case": ["c1", "c1", "c1", "c2", "c2", "c3", "c3"],
            "y": [1.0, 3.0, 0.0, 5.0, 4.0, 2.0, 0.5],
        }
    )
    parts = [sufficient_statistics(frame[i : i + 1], "y", pair_on="case") for i in range(frame.height)]
    row = compare(merge_statistics(parts), "y", pair_on="case").row(0, named=True)
    assert row["mean_treatment"] == pytest.approx((2 + 5 + 2) / 3)
    assert row["difference"] == pytest.approx((2 + 1 + 1.5) / 3)
    assert_same_table(compare(merge_statistics(parts), "y", pair_on="case"), compare(frame, "y", pair_on="case"))


@pytest.mark.parametrize(
    ("options", "needs"),
    [
        ({"test": "mannwhitney"}, "test='mannwhitney' ranks the values"),
        ({"test": "wilcoxon", "pair_on": "case"}, "test='wilcoxon' ranks the values"),
        ({"n_boot": 200, "seed": 1}, "n_boot=200 resamples the values"),
        ({"method": "mixed", "pair_on": "case"}, "method='mixed' fits a model"),
    ],
)
def test_tests_that_need_raw_values_are_refused(options: dict[str, object], needs: str) -> None:
    frame = pl.DataFrame({"system": ["mas", "single"] * 3, "case": ["a", "a", "b", "b", "c", "c"], "y": [1.0] * 6})
    stats = sufficient_statistics(frame, "y", pair_on="case")
    with pytest.raises(InvalidParameterError, match=needs) as caught:
        compare(stats, "y", **options)
    assert "needs the raw values" in str(caught.value)
    assert "call compare on that frame" in str(caught.value)


def test_options_the_statistics_cannot_give_are_refused() -> None:
    frame = pl.DataFrame({"task": ["t"] * 4, "system": ["mas", "single"] * 2, "y": [1.0, 2.0, 3.0, 4.0]})
    stats = sufficient_statistics(frame, "y")
    with pytest.raises(InvalidParameterError, match="by=\\['task'\\] is not available"):
        compare(stats, "y", by="task")
    with pytest.raises(InvalidParameterError, match="metrics 'z'"):
        compare(stats, "z")
    with pytest.raises(InvalidParameterError, match="pair_on='case'"):
        compare(stats, "y", pair_on="case")
    with pytest.raises(InvalidParameterError, match="different options"):
        merge_statistics([stats, sufficient_statistics(frame, "y", by="task")])
    with pytest.raises(DataError, match="no runs of system 'agent'"):
        compare(stats, "y", treatment="agent")


def test_coarser_groups_and_fewer_options_from_one_set_of_statistics() -> None:
    rng = np.random.default_rng(7)
    n = 400
    frame = pl.DataFrame(
        {
            "task": rng.choice(["t1", "t2"], n),
            "system": rng.choice(["mas", "single"], n),
            "case": rng.integers(0, 40, n),
            "y": rng.integers(0, 64, n) / 8,
        }
    ).with_columns(family=pl.col("case") // 4)
    stats = sufficient_statistics(frame, "y", by="task", pair_on="case", cluster="family")
    assert_same_table(compare(stats, "y", pair_on="case"), compare(frame, "y", pair_on="case"))
    assert_same_table(compare(stats, "y", cluster="family"), compare(frame, "y", cluster="family"))
    assert_same_table(compare(stats, "y", by="task", test="student"), compare(frame, "y", by="task", test="student"))


def test_the_dqs_method_guard_runs_on_merged_statistics() -> None:
    frame = pl.DataFrame(
        {
            "system": ["mas", "mas", "single", "single"],
            "dqs": [0.5, 0.7, 0.4, 0.6],
            "dqs_method": ["criteria", "mcda", "criteria", "criteria"],
        }
    )
    stats = merge_statistics([sufficient_statistics(frame[:2], "dqs"), sufficient_statistics(frame[2:], "dqs")])
    with pytest.raises(MixedDqsMethodsError, match="dqs_method differs"):
        compare(stats, "dqs")
    assert_same_table(compare(stats, "dqs", allow_mixed_methods=True), compare(frame, "dqs", allow_mixed_methods=True))


def test_null_cases_are_refused_like_in_memory() -> None:
    frame = pl.DataFrame({"system": ["mas", "single", "mas"], "case": ["a", "a", None], "y": [1.0, 2.0, 3.0]})
    with pytest.raises(DataError, match="null values in 'case' \\(1 runs\\)"):
        compare(sufficient_statistics(frame, "y", pair_on="case"), "y", pair_on="case")


def _large_mean_frame(noise: np.ndarray, rng: np.random.Generator) -> pl.DataFrame:
    n = noise.size
    case = np.arange(n) // 2
    return pl.DataFrame(
        {
            "system": np.where(np.arange(n) % 2 == 0, "mas", "single"),
            "case": case,
            "family": case // 8,
            "y": 1e9 + noise,
            "z": 1e9 + noise + 0.25 * (np.arange(n) % 2 == 0),
        }
    ).sample(fraction=1.0, shuffle=True, seed=int(rng.integers(1 << 31)))


def _exact_sd(values: list[float]) -> float:
    exact = [Fraction(v) for v in values]
    mean = sum(exact) / len(exact)
    return math.sqrt(float(sum((v - mean) ** 2 for v in exact) / (len(exact) - 1)))


@pytest.mark.parametrize(("test", "pair_on", "cluster"), DESIGNS)
@pytest.mark.parametrize("sd", [1.0, 4096.0])
def test_large_means_keep_their_digits(test: str, pair_on: str | None, cluster: str | None, sd: float) -> None:
    # Values near 1e9 with noise on a 1/16 grid: every sum (and Polars' mean) is exact, so the
    # paths can agree to the last digits; a merge of sums of squares (x^2 ~ 1e18, rounding ~100
    # per term) or of rounded chunk means (1e-7 each) would not.
    rng = np.random.default_rng(3)
    frame = _large_mean_frame(np.round(rng.normal(size=128) * sd * 16) / 16, rng)
    chunk = rng.integers(0, 6, size=frame.height)
    stats = merged_in_random_order(frame, chunk, rng, pair_on=pair_on, cluster=cluster)
    options = {"test": test, "pair_on": pair_on, "cluster": cluster}
    whole, merged = compare(frame, ["y", "z"], **options), compare(stats, ["y", "z"], **options)
    assert whole["p_value"].null_count() == 0
    if pair_on is None and sd == 1.0:
        # Polars' in-memory variance (Series.var / group_by var) is 1e-8 off at mean/sd = 1e9;
        # the merged one is exact here. Paired rows read the case means' variance with Polars in
        # both paths, and at sd 4096 Polars is within 1e-11: there the whole tables agree.
        want = _exact_sd(frame.filter(pl.col("system") == "mas")["y"].to_list())
        assert merged["std_treatment"][0] == pytest.approx(want, rel=1e-13)
        assert abs(whole["std_treatment"][0] / want - 1) > 1e-9  # in memory is the inexact one
        return
    assert_same_table(merged, whole)


def test_large_mean_variance_matches_exact_arithmetic() -> None:
    # Any float noise (not on a grid): the merged variance against the exact rational one.
    rng = np.random.default_rng(11)
    values = 1e9 + rng.normal(size=60)
    frame = pl.DataFrame({"system": ["mas"] * 60, "y": values})
    parts = [sufficient_statistics(frame[i::7], "y") for i in range(7)]
    m2 = merge_statistics(parts).moments["m2:y"].item()
    assert m2 == pytest.approx(_exact_sd(values.tolist()) ** 2 * 59, rel=1e-12)


def test_merged_statistics_are_a_typed_value() -> None:
    frame = pl.DataFrame({"system": ["mas", "single"], "y": [1.0, 2.0]})
    stats = sufficient_statistics(frame, "y")
    assert isinstance(stats, SufficientStatistics)
    assert stats.options == {"metrics": ("y",), "by": (), "system": "system", "pair_on": None, "cluster": None}
