"""The failure-mode heat map (``plots.failure_modes``), tested on what it draws: the image's data, the
cells' texts, the differences and the outlines of the significant modes."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import polars as pl
import pytest
from matplotlib.patches import Rectangle

from mas_eval import plots, stats
from mas_eval.errors import DataError, SchemaError
from tests.plots.test_plots import layout_problems

MODES = ["1.1 Disobey task specification", "1.3 Step repetition", "3.3 Incorrect verification"]


@pytest.fixture(scope="module")
def tables() -> tuple[pl.DataFrame, pl.DataFrame]:
    """Three annotators' labels of 40 cases run by a MAS and a single agent, the MAS repeating steps far more."""
    rng = np.random.default_rng(5)
    runs = pl.DataFrame(
        {
            "run_id": [f"{s}{i}" for s in ("m", "s") for i in range(40)],
            "system": ["mas"] * 40 + ["single"] * 40,
            "case_id": [f"q{i}" for i in range(40)] * 2,
        }
    )
    base = {"mas": [0.2, 0.7, 0.1], "single": [0.25, 0.05, 0.1]}
    rows = []
    for run, system in runs.select("run_id", "system").rows():
        for mode, p in zip(MODES, base[system], strict=True):
            truth = bool(rng.random() < p)
            rows += [(run, mode, who, truth if rng.random() < 0.9 else not truth) for who in "abc"]
    annotations = pl.DataFrame(rows, schema=["run_id", "mode", "annotator", "present"], orient="row")
    return stats.failure_rates(annotations, runs), stats.failure_differences(annotations, runs)


def test_the_image_holds_the_rates_modes_by_system(tables: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    rates, _ = tables
    fig = plots.failure_modes(rates)
    ax = fig.axes[0]
    [image] = [a for a in ax.images if a.get_gid() == "failure_rates"]
    want = rates.pivot(on="system", index="mode", values="rate").sort("mode").select("mas", "single").to_numpy()
    np.testing.assert_allclose(np.asarray(image.get_array()), want)
    assert [t.get_text() for t in ax.get_yticklabels()] == MODES
    assert [t.get_text() for t in ax.get_xticklabels()] == ["mas", "single"]
    cells = [t.get_text() for t in ax.texts if t.get_gid() == "failure_rate"]
    assert cells == [f"{rate:.0%}" for rate in want.ravel()]
    assert image.get_clim() == (0.0, 1.0)


def test_differences_are_written_beside_and_significant_modes_outlined(
    tables: tuple[pl.DataFrame, pl.DataFrame],
) -> None:
    rates, differences = tables
    fig = plots.failure_modes(rates, differences)
    ax = fig.axes[0]
    written = [t.get_text() for t in ax.texts if t.get_gid() == "failure_difference"]
    significant = differences.filter(pl.col("p_adjusted") < 0.05)["mode"].to_list()
    assert significant == ["1.3 Step repetition"]  # the planted effect, and only it
    for text, row in zip(written, differences.sort("mode").iter_rows(named=True), strict=True):
        number = f"{100 * row['difference']:+.0f}".replace("-", "\u2212")
        assert text == f"{number} pp" + ("*" if row["mode"] in significant else "")
    outlines = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_gid() == "significant"]
    assert [MODES[round(p.get_y() + 0.5)] for p in outlines] == significant
    header = [t.get_text() for t in ax.texts if t.get_gid() == "failure_difference_header"]
    assert header == ["mas \u2212 single"]
    # A stricter level outlines nothing.
    strict = plots.failure_modes(rates, differences, alpha=1e-9).axes[0]
    assert not [p for p in strict.patches if p.get_gid() == "significant"]


def test_a_missing_cell_is_blank_and_names_are_drawn_as_written() -> None:
    rates = pl.DataFrame({"system": ["mas", "single $x$"], "mode": ["a $\\frac{$", "b"], "rate": [0.5, 0.25]})
    ax = plots.failure_modes(rates, annotate=False).axes[0]
    data = ax.images[0].get_array()
    assert np.ma.is_masked(data[0, 1]) and np.ma.is_masked(data[1, 0])
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a \\$\\frac{\\$", "b"]
    assert not [t for t in ax.texts if t.get_gid() == "failure_rate"]


def test_nothing_is_clipped_or_overlapping_at_paper_widths(tables: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    rates, differences = tables
    for columns in (1, 2):
        with plots.paper_style(columns=columns):
            assert layout_problems(plots.failure_modes(rates, differences)) == []


def test_a_rate_broken_down_by_agent_or_a_missing_column_is_a_clear_error() -> None:
    rates = pl.DataFrame({"system": ["mas", "mas"], "mode": ["x", "x"], "agent_id": ["a", "b"], "rate": [0.1, 0.2]})
    with pytest.raises(DataError, match="several rows of one system and mode"):
        plots.failure_modes(rates)
    with pytest.raises(SchemaError, match="no column 'rate'"):
        plots.failure_modes(rates.drop("rate"))
