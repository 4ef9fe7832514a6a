"""One suite over the registry: every metric keeps its declared range and ignores row order."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_series_equal

from mas_eval import Dataset
from mas_eval.metrics.registry import DECISION_METRICS, Metric
from mas_eval.scoring import Scores, score
from tests.strategies import Drawn, datasets

KEYS = {"runs": ["run_id"], "agents": ["run_id", "agent_id"], "alternatives": ["run_id", "alternative"]}
SLACK = 1e-12  # floating-point sums may land a hair outside a closed interval


def _column(scores: Scores, metric: Metric) -> pl.Series:
    frame = getattr(scores, metric.table)
    return frame.sort(KEYS[metric.table])[metric.name]


def test_registry_covers_every_output_column() -> None:
    from mas_eval.scoring import AGENT_COLUMNS, ALTERNATIVE_COLUMNS, RUN_COLUMNS

    declared = {(m.table, m.name) for m in DECISION_METRICS}
    produced = {("runs", c) for c in RUN_COLUMNS} | {("agents", c) for c in AGENT_COLUMNS}
    produced |= {("alternatives", c) for c in ALTERNATIVE_COLUMNS}
    assert declared == produced


@pytest.mark.parametrize("metric", DECISION_METRICS, ids=lambda m: f"{m.table}.{m.name}")
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=datasets(max_runs=3), seed=st.integers(0, 2**32 - 1))
def test_metric_range_and_order_invariance(metric: Metric, drawn: Drawn, seed: int) -> None:
    original = score(drawn.dataset())
    shuffled_frames = {
        name: frame.sample(fraction=1.0, shuffle=True, seed=seed) for name, frame in drawn.frames.items()
    }
    shuffled = score(Dataset.from_frames(**shuffled_frames))

    got, again = _column(original, metric), _column(shuffled, metric)
    if metric.order_invariant:
        if got.dtype.is_float():
            assert_series_equal(got, again, abs_tol=SLACK, rel_tol=SLACK)
        else:
            assert_series_equal(got, again)
    values = got.drop_nulls()
    if values.dtype.is_numeric() and values.len():
        if metric.low is not None:
            assert values.min() >= metric.low - SLACK, f"{metric.name} below {metric.low}: {values.min()}"
        if metric.high is not None:
            assert values.max() <= metric.high + SLACK, f"{metric.name} above {metric.high}: {values.max()}"
