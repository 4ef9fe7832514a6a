"""Figures of the margin and of cost-effectiveness: the forest plot's margin lines, the cost-effectiveness
plane and the acceptability curve, tested on what they draw (artists and their data), not on pixels."""

from __future__ import annotations

from typing import Any

import matplotlib

matplotlib.use("Agg")

import numpy as np
import polars as pl
import pytest
from matplotlib.figure import Figure

from mas_eval import plots
from mas_eval.stats import compare


def by_gid(fig: Figure, gid: str) -> list[Any]:
    return [a for a in fig.findobj() if a.get_gid() == gid]


def scores_by_task(seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    n = 60
    case = rng.normal(0.7, 0.1, n)
    return pl.DataFrame(
        {
            "task": [f"t{i % 3}" for i in range(n)] * 2,
            "system": ["mas"] * n + ["single"] * n,
            "case_id": list(range(n)) * 2,
            "dqs": np.r_[case + rng.normal(0, 0.03, n), case + rng.normal(0, 0.03, n)],
            "confidence": rng.normal(0.6, 0.1, 2 * n),
        }
    )


# --- the forest plot's margin ---------------------------------------------------------------------------


@pytest.mark.parametrize(("hypothesis", "per_row"), [("noninferior", 1), ("equivalent", 2)])
def test_forest_draws_the_margin_of_each_row(hypothesis: str, per_row: int) -> None:
    table = compare(
        scores_by_task(), ["dqs", "confidence"], by="task", pair_on="case_id",
        margin={"dqs": 0.05, "confidence": 0.1}, hypothesis=hypothesis,
    )  # fmt: skip
    fig = plots.forest(table)
    (lines,) = by_gid(fig, "forest_margin")
    segments = lines.get_segments()
    assert len(segments) == per_row * table.height
    # Rows are drawn sorted by metric, then task: confidence rows (margin 0.1) first, top to bottom.
    drawn = table.sort(["metric", "task"])
    expected = sorted(
        [(-m, y) for y, m in enumerate(drawn["margin"])]
        + ([(m, y) for y, m in enumerate(drawn["margin"])] if per_row == 2 else [])
    )
    got = sorted((float(seg[0][0]), float((seg[0][1] + seg[1][1]) / 2)) for seg in segments)
    np.testing.assert_allclose(np.array(got), np.array(expected))
    assert all(seg[0][0] == seg[1][0] and seg[1][1] - seg[0][1] == pytest.approx(1.0) for seg in segments)
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    shown = "non-inferior" if hypothesis == "noninferior" else "equivalent"
    assert legend == [f"{shown}: p (Holm) ≤ 0.05", "not shown: p (Holm) > 0.05", "margin"]
    # The circles are filled where the hypothesis was shown.
    (filled,) = by_gid(fig, "forest_significant")
    assert len(filled.get_xdata()) == int(drawn["significant"].sum())


def test_forest_names_a_single_margin_and_draws_none_on_the_d_scale() -> None:
    table = compare(scores_by_task(), "dqs", pair_on="case_id", margin=0.05, hypothesis="equivalent")
    legend = [t.get_text() for t in plots.forest(table).axes[0].get_legend().get_texts()]
    assert legend[-1] == "margin ±0.05"
    assert by_gid(plots.forest(table, "cohens_d"), "forest_margin") == []
    plain = compare(scores_by_task(), "dqs", pair_on="case_id")
    assert by_gid(plots.forest(plain), "forest_margin") == []
