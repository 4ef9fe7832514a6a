"""Figures of the margin and of cost-effectiveness: the forest plot's margin lines, the cost-effectiveness
plane and the acceptability curve, tested on what they draw (artists and their data), not on pixels."""

from __future__ import annotations

from typing import Any

import matplotlib

matplotlib.use("Agg")

import numpy as np
import polars as pl
import pytest
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

from mas_eval import plots
from mas_eval.errors import DataError
from mas_eval.stats import compare, cost_effectiveness


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


# --- the cost-effectiveness plane and the acceptability curve ---------------------------------------------


def trial(n: int = 300, seed: int = 1, tasks: int = 1) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    cost = rng.gamma(4.0, 0.005, n)
    return pl.DataFrame(
        {
            "task": [f"t{i % tasks}" for i in range(n)] * 2,
            "system": ["mas"] * n + ["single"] * n,
            "case_id": list(range(n)) * 2,
            "passed": np.r_[rng.random(n) < 0.8, rng.random(n) < 0.55],
            "run_cost_usd": np.r_[3 * cost, cost],
        }
    )


def test_the_plane_draws_the_cloud_the_estimate_its_intervals_the_quadrants_and_the_price() -> None:
    runs = trial()
    table = cost_effectiveness(runs, "passed", n_boot=300, seed=2)
    cloud = cost_effectiveness(runs, "passed", n_boot=300, seed=2, level="replicates")
    fig = plots.cost_effectiveness_plane(table, cloud, price=0.1)
    (points,) = by_gid(fig, "plane_replicates")
    np.testing.assert_array_equal(points.get_offsets(), cloud.select("delta_effect", "delta_cost").to_numpy())
    assert to_hex(points.get_facecolor()[0][:3]) == plots.system_colours(["mas"])["mas"].lower()
    row = table.row(0, named=True)
    (estimate,) = by_gid(fig, "plane_estimate")
    assert estimate.get_xydata().tolist() == [[row["delta_effect"], row["delta_cost"]]]
    x_bar, y_bar = by_gid(fig, "plane_estimate_ci")
    np.testing.assert_allclose(
        x_bar.get_segments()[0],
        [[row["delta_effect_low"], row["delta_cost"]], [row["delta_effect_high"], row["delta_cost"]]],
    )
    np.testing.assert_allclose(
        y_bar.get_segments()[0],
        [[row["delta_effect"], row["delta_cost_low"]], [row["delta_effect"], row["delta_cost_high"]]],
    )
    (axes,) = by_gid(fig, "plane_axes")
    horizontal, vertical = axes.get_segments()
    assert horizontal[:, 1].tolist() == [0.0, 0.0] and vertical[:, 0].tolist() == [0.0, 0.0]
    assert sorted(t.get_text() for t in by_gid(fig, "plane_quadrant")) == [
        "cheaper, worse", "dearer, better", "dominant", "dominated",
    ]  # fmt: skip
    (price,) = by_gid(fig, "plane_price")
    (start, end) = price.get_segments()[0]
    assert start[1] == pytest.approx(0.1 * start[0]) and end[1] == pytest.approx(0.1 * end[0])
    ax = fig.axes[0]
    assert ax.get_xlabel() == "Passed difference, mas − single"
    assert ax.get_ylabel() == "Cost difference, mas − single (USD)"
    # Every replicate lies inside the view.
    (x_low, x_high), (y_low, y_high) = ax.get_xlim(), ax.get_ylim()
    assert x_low < cloud["delta_effect"].min() and cloud["delta_effect"].max() < x_high
    assert y_low < min(0.0, cloud["delta_cost"].min()) and cloud["delta_cost"].max() < y_high


def test_the_plane_without_a_cloud_or_price_draws_the_estimate_only() -> None:
    table = cost_effectiveness(trial(), "passed", n_boot=0)
    fig = plots.cost_effectiveness_plane(table)
    assert by_gid(fig, "plane_replicates") == [] and by_gid(fig, "plane_price") == []
    assert len(by_gid(fig, "plane_estimate")) == 1


def test_the_plane_refuses_several_groups() -> None:
    table = cost_effectiveness(trial(tasks=2), "passed", by="task", n_boot=0)
    with pytest.raises(DataError, match="cost_effectiveness_plane: summary holds 2 groups of 'task'; filter it"):
        plots.cost_effectiveness_plane(table)


def test_the_acceptability_curve_draws_one_line_per_group_through_its_points() -> None:
    runs = trial(tasks=2)
    curve = cost_effectiveness(runs, "passed", by="task", n_boot=200, seed=1, level="acceptability")
    fig = plots.acceptability_curve(curve)
    lines = by_gid(fig, "acceptability")
    assert [line.get_label() for line in lines] == ["task=t0", "task=t1"]
    for line, task in zip(lines, ["t0", "t1"], strict=True):
        part = curve.filter(pl.col("task") == task).sort("price")
        np.testing.assert_array_equal(line.get_xydata(), part.select("price", "probability").to_numpy())
    assert len({to_hex(line.get_color()) for line in lines}) == 2
    (half,) = by_gid(fig, "acceptability_half")
    assert list(half.get_ydata()) == [0.5, 0.5]
    assert fig.axes[0].get_ylim() == (-0.02, 1.02)
    one = plots.acceptability_curve(curve.filter(pl.col("task") == "t0").drop("task"))
    (line,) = by_gid(one, "acceptability")
    assert to_hex(line.get_color()) == plots.system_colours(["mas"])["mas"].lower() and line.get_label() == "mas"


def test_a_group_name_is_drawn_as_text() -> None:
    runs = trial(tasks=1).with_columns(task=pl.lit("$x$ cost"))
    curve = cost_effectiveness(runs, "passed", by="task", n_boot=50, seed=1, level="acceptability")
    (line,) = by_gid(plots.acceptability_curve(curve), "acceptability")
    assert line.get_label() == r"task=\$x\$ cost"
