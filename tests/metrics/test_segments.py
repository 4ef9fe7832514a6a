"""Segment reductions (``mas_eval.metrics.segments``): each group's sum adds its rows in row order.

The grouping takes one of three paths (keys already sorted, direct addressing of (run, label)
slots, a sort); all must give the same groups, and sums equal to a plain loop, bit for bit.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mas_eval  # noqa: F401  (registers the `mas` namespace)
from mas_eval.metrics import segments
from mas_eval.metrics.decision import contribution
from mas_eval.metrics.segments import Groups, pack
from tests.oracles.decision import gini

rows = st.lists(
    st.tuples(st.integers(0, 5), st.integers(0, 6), st.floats(-1e3, 1e3, allow_nan=False)), min_size=1, max_size=60
)


def _by_loop(pairs: list[tuple[int, int, float]]) -> dict[tuple[int, int], list[float]]:
    groups: dict[tuple[int, int], list[float]] = {}
    for run, label, value in pairs:
        groups.setdefault((run, label), []).append(value)
    return groups


@pytest.mark.parametrize("path", ["as given", "sorted", "by sort"])
@settings(max_examples=60, deadline=None)
@given(pairs=rows)
def test_groups_reduce_in_row_order_on_every_path(pairs: list[tuple[int, int, float]], path: str) -> None:
    if path == "sorted":
        pairs = sorted(pairs, key=lambda p: (p[0], p[1]))
    run = np.array([p[0] for p in pairs], dtype=np.uint32)
    label = np.array([p[1] for p in pairs], dtype=np.uint32)
    values = np.array([p[2] for p in pairs])
    with pytest.MonkeyPatch.context() as patch:
        if path == "by sort":
            patch.setattr(segments, "DENSE_SLOTS_PER_ROW", 0)
        groups = Groups.of(pack(run, label))
    expected = _by_loop(pairs)
    assert [(int(k) >> 32, int(k) & 0xFFFFFFFF) for k in groups.keys] == sorted(expected)
    sums = groups.sum(values)
    for position, key in enumerate(sorted(expected)):
        total = 0.0
        for value in expected[key]:
            total += value  # one by one, in row order: the same bits
        assert sums[position] == total
    assert groups.count().tolist() == [len(expected[k]) for k in sorted(expected)]
    assert groups.min(values).tolist() == [min(expected[k]) for k in sorted(expected)]
    assert groups.max(values).tolist() == [max(expected[k]) for k in sorted(expected)]
    first = groups.first_row(values > 0)
    for position, key in enumerate(sorted(expected)):
        hits = [i for i, p in enumerate(pairs) if (p[0], p[1]) == key and p[2] > 0]
        assert first[position] == (hits[0] if hits else -1)


@pytest.mark.parametrize("pairwise", [True, False])
@settings(max_examples=60, deadline=None)
@given(runs=st.lists(st.lists(st.floats(0, 1), min_size=1, max_size=20), min_size=1, max_size=5))
def test_balance_pairwise_and_sorted_forms_give_the_seed_gini(runs: list[list[float]], pairwise: bool) -> None:
    run = np.repeat(np.arange(len(runs), dtype=np.uint32), [len(r) for r in runs])
    values = np.array([v for r in runs for v in r])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(contribution, "PAIRWISE_GROUP_SIZE", 1000 if pairwise else 0)
        got, valid = contribution.balance(run, values, np.ones(len(values), dtype=bool), len(runs))
    assert valid.all()
    for g, r in zip(got, runs, strict=True):
        assert math.isclose(g, gini(r), rel_tol=1e-9, abs_tol=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    st.sets(st.integers(0, 40)),
    st.sets(st.integers(0, 40)),
    st.booleans(),
)
def test_merged_is_the_union_and_each_arrays_positions_in_it(first: set[int], second: set[int], same: bool) -> None:
    a = np.array(sorted(first), dtype=np.uint64)
    b = a.copy() if same else np.array(sorted(second), dtype=np.uint64)
    keys, a_at, b_at = segments.merged(a, b)
    assert keys.tolist() == sorted(set(a.tolist()) | set(b.tolist()))
    assert keys[a_at].tolist() == a.tolist()
    assert keys[b_at].tolist() == b.tolist()


@settings(max_examples=60, deadline=None)
@given(runs=st.lists(st.lists(st.floats(0, 1), min_size=1, max_size=12), min_size=1, max_size=5))
def test_the_mas_namespace_gives_the_pipelines_gini(runs: list[list[float]]) -> None:
    # The namespace (Polars, for users' queries) and the pipeline (numpy segment sums) are two
    # implementations of one formula: they must agree.
    run = np.repeat(np.arange(len(runs), dtype=np.uint32), [len(r) for r in runs])
    values = np.array([v for r in runs for v in r])
    pipeline, _ = contribution.balance(run, values, np.ones(len(values), dtype=bool), len(runs))
    frame = pl.DataFrame({"run": run, "w": values})
    namespace = frame.group_by("run").agg(pl.col("w").mas.gini()).sort("run")["w"].to_numpy()
    np.testing.assert_allclose(namespace, pipeline, rtol=1e-12, atol=1e-15)


@settings(max_examples=60, deadline=None)
@given(
    masses=st.lists(st.lists(st.floats(0, 1), min_size=1, max_size=8), min_size=1, max_size=5),
    renormalise=st.booleans(),
)
def test_the_mas_namespace_gives_the_pipelines_normalized_entropy(masses: list[list[float]], renormalise: bool) -> None:
    agent = np.repeat(np.arange(len(masses)), [len(m) for m in masses])
    mass = np.array([v for m in masses for v in m])
    m_log_m = np.where(mass > 0, mass * np.log(np.where(mass > 0, mass, 1.0)), 0.0)
    totals = np.bincount(agent, weights=mass, minlength=len(masses))
    sums = np.bincount(agent, weights=m_log_m, minlength=len(masses))
    outcomes = np.array([len(m) for m in masses])
    pipeline, valid = contribution.normalized_entropy(totals, sums, outcomes, renormalise=renormalise)
    frame = pl.DataFrame({"agent": agent, "mass": mass})
    expr = pl.col("mass").mas.normalized_entropy(renormalise=renormalise)
    namespace = frame.group_by("agent").agg(expr).sort("agent")["mass"].to_numpy()
    assert np.array_equal(np.isnan(namespace.astype(float)), ~valid)
    np.testing.assert_allclose(namespace[valid], pipeline[valid], rtol=1e-12, atol=1e-15)
