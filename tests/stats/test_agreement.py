"""Agreement of raters (``mas_eval.stats.agreement``): Cohen's and Fleiss' kappa, Krippendorff's alpha.

Checked against the references (statsmodels' ``cohens_kappa`` and ``fleiss_kappa``; the
``krippendorff`` package, Castro 2017, a test dependency only) on random data, and against the
plain-Python oracle (``tests/oracles/failures.py``) on random groups. The published worked examples
(Fleiss 1971, Table 1; Krippendorff 2011's nominal example; Cohen's kappa's textbook 2x2) are
pinned in ``tests/stats/test_pinned.py``.
"""

from __future__ import annotations

import krippendorff
import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa

from mas_eval.errors import DataError, SchemaError
from mas_eval.stats import cohen_kappa as cohen
from mas_eval.stats import fleiss_kappa as fleiss
from mas_eval.stats import krippendorff_alpha as alpha
from tests.oracles import failures as oracle


def _long(matrix: np.ndarray) -> pl.DataFrame:
    """A raters x units matrix (NaN: no rating) as one row per unit and rater."""
    raters, units = matrix.shape
    return pl.DataFrame(
        {
            "unit": np.tile(np.arange(units), raters),
            "rater": np.repeat([f"r{i}" for i in range(raters)], units),
            "value": matrix.ravel(),
        }
    )


# -- the references, on random data ---------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_the_three_equal_statsmodels_and_krippendorff_on_random_ratings(seed: int) -> None:
    rng = np.random.default_rng(seed)
    raters, units, categories = int(rng.integers(2, 6)), int(rng.integers(5, 60)), int(rng.integers(2, 5))
    full = rng.integers(0, categories, size=(raters, units)).astype(float)
    table, _ = aggregate_raters(full.T.astype(int))
    assert fleiss(_long(full))["kappa"].item() == pytest.approx(fleiss_kappa(table, method="fleiss"), abs=1e-12)
    two = np.zeros((categories, categories))
    np.add.at(two, (full[0].astype(int), full[1].astype(int)), 1)
    got = cohen(_long(full[:2]))["kappa"].item()
    assert got == pytest.approx(cohens_kappa(two).kappa, abs=1e-12)
    holes = full.copy()
    holes[rng.random(full.shape) < 0.25] = np.nan
    expected = krippendorff.alpha(holes, level_of_measurement="nominal")
    assert alpha(_long(holes))["alpha"].item() == pytest.approx(expected, abs=1e-12)


# -- the oracle, per group -----------------------------------------------------------------------

ratings_strategy = st.lists(
    st.tuples(
        st.sampled_from(["g1", "g2"]),  # group
        st.integers(0, 7),  # unit
        st.sampled_from(["a", "b", "c"]),  # rater
        st.one_of(st.none(), st.sampled_from([True, False])),  # value (None: missing)
    ),
    min_size=1,
    max_size=60,
    unique_by=lambda r: (r[0], r[1], r[2]),
)


def _frame(ratings: list[tuple]) -> pl.DataFrame:
    return pl.DataFrame(ratings, schema=["group", "unit", "rater", "value"], orient="row")


def _by_group(table: pl.DataFrame, column: str) -> dict[object, float | None]:
    return dict(table.select("group", column).rows())


def _close(got: dict[object, float | None], want: dict[object, float | None]) -> None:
    assert set(got) == set(want)
    for group, value in want.items():
        assert (got[group] is None) == (value is None), (group, got[group], value)
        if value is not None:
            assert got[group] == pytest.approx(value, abs=1e-12)


@settings(max_examples=40, deadline=None)  # each example runs three group-by queries
@given(ratings_strategy)
def test_alpha_and_fleiss_equal_the_oracle_in_every_group(ratings: list[tuple]) -> None:
    frame = _frame(ratings)
    _close(_by_group(alpha(frame, by="group"), "alpha"), oracle.krippendorff_alpha(ratings))
    _close(_by_group(fleiss(frame, by="group"), "kappa"), oracle.fleiss_kappa(ratings))


@settings(max_examples=30, deadline=None)
@given(ratings_strategy)
def test_cohen_equals_the_oracle_for_two_raters(ratings: list[tuple]) -> None:
    # The groups that have exactly two raters with a rating (Cohen's kappa is of two).
    two = [r for r in ratings if r[2] != "c"]
    raters = _frame(two).drop_nulls("value").group_by("group").agg(pl.col("rater").n_unique())
    keep = set(raters.filter(pl.col("rater") == 2)["group"].to_list())
    two = [r for r in two if r[0] in keep]
    if two:
        _close(_by_group(cohen(_frame(two), by="group"), "kappa"), oracle.cohen_kappa(two))


def test_results_do_not_depend_on_row_order() -> None:
    rng = np.random.default_rng(7)
    frame = _long(rng.integers(0, 3, size=(4, 300)).astype(float))
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=3)
    for function in (alpha, fleiss):
        assert function(frame).equals(function(shuffled))
    pair = frame.filter(pl.col("rater").is_in(["r0", "r1"]))
    assert cohen(pair).equals(cohen(pair.sample(fraction=1.0, shuffle=True, seed=4)))


# -- bad inputs ----------------------------------------------------------------------------------


def test_cohen_needs_two_raters_and_a_rater_rates_a_unit_once() -> None:
    three = _long(np.array([[1.0, 2.0], [1.0, 1.0], [2.0, 2.0]]))
    with pytest.raises(DataError, match="has 3 rater"):
        cohen(three)
    twice = pl.DataFrame({"unit": [1, 1], "rater": ["a", "a"], "value": [1, 0]})
    with pytest.raises(DataError, match="a rater rated a unit twice"):
        alpha(twice)
    with pytest.raises(SchemaError, match="no column 'rating'"):
        fleiss(twice, value="rating")


def test_one_category_throughout_leaves_the_coefficients_undefined() -> None:
    same = _long(np.zeros((3, 5)))
    assert alpha(same)["alpha"].item() is None
    assert fleiss(same)["kappa"].item() is None
    row = cohen(_long(np.zeros((2, 5)))).row(0, named=True)
    assert (row["observed"], row["kappa"]) == (1.0, None)
