"""plots.frontier_curve: the points it draws are the frontier's, in each system's colour, labelled by k."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import polars as pl
import pytest
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

from mas_eval import plots
from mas_eval.errors import DataError, InvalidParameterError, SchemaError
from mas_eval.stats import accuracy_cost_frontier
from tests.stats.test_epochs import planted


@pytest.fixture(scope="module")
def frontier() -> pl.DataFrame:
    runs = planted(cases=120).with_columns(run_cost_usd=pl.col("run_tokens") * 2e-6)
    return accuracy_cost_frontier(runs, "passed", ks=[1, 2, 4, 8, 12])


def test_each_system_is_one_line_through_its_points_in_k_order(frontier: pl.DataFrame) -> None:
    fig = plots.frontier_curve(frontier)
    ax = fig.axes[0]
    lines = {line.get_gid(): line for line in ax.lines}
    assert set(lines) == {"frontier:mas", "frontier:single"}
    colours = plots.system_colours(["mas", "single"])
    for system in ("mas", "single"):
        mine = frontier.filter(pl.col("system") == system).sort("k")
        expected = mine.select("tokens_per_case", "majority_rate").to_numpy()
        assert np.array_equal(lines[f"frontier:{system}"].get_xydata(), expected)
        assert to_hex(lines[f"frontier:{system}"].get_color()) == colours[system].lower()
        labels = [t for t in ax.texts if t.get_gid() == f"frontier_k:{system}"]
        assert [t.get_text() for t in labels] == ["k=1", *map(str, mine["k"].to_list()[1:])]
        assert [t.xy for t in labels] == [tuple(p) for p in expected]
    # Tokens from ~1,000 to ~12,000: more than a factor of 10, so a log axis.
    assert ax.get_xscale() == "log"
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("Mean tokens per case", "Pass rate, majority of k epochs")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["mas", "single"]


def test_cost_and_pass_at_k_axes_and_a_given_ax(frontier: pl.DataFrame) -> None:
    fig = Figure()
    ax = fig.add_subplot()
    assert plots.frontier_curve(frontier, x="cost", y="pass_at_k", log_x=False, ax=ax) is fig
    (line,) = [line for line in ax.lines if line.get_gid() == "frontier:single"]
    single = frontier.filter(pl.col("system") == "single").sort("k")
    assert np.array_equal(line.get_xydata(), single.select("cost_per_case", "pass_at_k").to_numpy())
    assert ax.get_xscale() == "linear" and ax.get_xlabel() == "Mean cost per case (USD)"


def test_a_system_name_is_drawn_as_written() -> None:
    points = pl.DataFrame({"system": ["$x$ team"] * 2, "k": [1, 2], "tokens_per_case": [1.0, 2.0],
                           "majority_rate": [0.5, 0.6]})  # fmt: skip
    ax = plots.frontier_curve(points).axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [r"\$x\$ team"]


def test_bad_frontiers_are_named(frontier: pl.DataFrame) -> None:
    with pytest.raises(SchemaError, match="'cost_per_case'"):
        plots.frontier_curve(frontier.drop("cost_per_case"), x="cost")
    with pytest.raises(DataError, match="more than one row of a system and k"):
        plots.frontier_curve(pl.concat([frontier, frontier]))
    with pytest.raises(DataError, match="no rows"):
        plots.frontier_curve(frontier.with_columns(majority_rate=pl.lit(None, pl.Float64)))
    with pytest.raises(InvalidParameterError, match="x='time'"):
        plots.frontier_curve(frontier, x="time")


def test_the_figure_saves(frontier: pl.DataFrame, tmp_path) -> None:
    with plots.paper_style(1):
        fig = plots.frontier_curve(frontier)
    path = plots.save(fig, tmp_path / "frontier.png")
    assert path.stat().st_size > 0


def test_the_old_name_warns_and_draws_the_same_figure(frontier: pl.DataFrame) -> None:
    # plots.accuracy_cost_frontier was the table's name too; kept one release as an alias that warns.
    with pytest.warns(DeprecationWarning, match=r"plots\.frontier_curve"):
        old = plots.accuracy_cost_frontier(frontier, x="cost")
    new = plots.frontier_curve(frontier, x="cost")
    assert [(line.get_gid(), line.get_xydata().tolist()) for line in old.axes[0].lines] == [
        (line.get_gid(), line.get_xydata().tolist()) for line in new.axes[0].lines
    ]
