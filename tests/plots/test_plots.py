"""Figures: the artists each function draws, one colour per system, paper sizes without clipping, saving."""

from __future__ import annotations

import itertools
import struct
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import numpy as np
import polars as pl
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import Collection, LineCollection
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.text import Text
from scipy import stats as sps

import mas_eval
from mas_eval import plots
from mas_eval.errors import DataError, InvalidParameterError, OutputExistsError, SchemaError
from mas_eval.stats import calibration, compare
from tests.conftest import run_python

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"

#: gid roles (``"<role>:<system>"``) of the artists drawn in their system's colour.
SYSTEM_ROLES = {"box", "violin", "points", "cost_quality", "binned_mean", "reliability", "bin_counts"}


# --- fixtures -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dataset() -> mas_eval.Dataset:
    return mas_eval.Dataset.open(SAMPLE)


@pytest.fixture(scope="module")
def scores(dataset: mas_eval.Dataset) -> mas_eval.Scores:
    return mas_eval.score(dataset)


@pytest.fixture(scope="module")
def runs(scores: mas_eval.Scores) -> pl.DataFrame:
    # The sample's decision runs: these tests draw decision metrics (its diagnostic runs have no dqs).
    return scores.runs.filter(pl.col("dqs").is_not_null())


@pytest.fixture(scope="module")
def comparisons(scores: mas_eval.Scores) -> pl.DataFrame:
    return compare(
        scores, ["dqs", "decision_confidence"], by="task", pair_on="case_id", test="paired", correction="holm"
    )


@pytest.fixture(scope="module")
def three(runs: pl.DataFrame) -> pl.DataFrame:
    """The sample with the single-agent runs of even cases renamed to a third system, ``debate-chain``."""
    even = pl.col("case_id").str.slice(-1).cast(pl.Int32) % 2 == 0
    renamed = pl.when((pl.col("system") == "single") & even).then(pl.lit("debate-chain")).otherwise(pl.col("system"))
    return runs.with_columns(renamed.alias("system"))


@pytest.fixture(scope="module")
def makers(
    dataset: mas_eval.Dataset, runs: pl.DataFrame, comparisons: pl.DataFrame, three: pl.DataFrame
) -> dict[str, Callable[..., Figure]]:
    """Every figure of the sample, as a function of ``ax`` (None: a new figure)."""
    return {
        "distributions_three": lambda ax=None: plots.distributions(three, "dqs", by="task", ax=ax),
        "reliability_three": lambda ax=None: plots.reliability(three, ax=ax),
        "cost_quality_three": lambda ax=None: plots.cost_quality(three, cost="tokens_used", ax=ax),
        "forest": lambda ax=None: plots.forest(comparisons, ax=ax),
        "forest_hedges": lambda ax=None: plots.forest(comparisons, "hedges_g", ax=ax),
        "distributions_box": lambda ax=None: plots.distributions(runs, "dqs", by="task", ax=ax),
        "distributions_violin": lambda ax=None: plots.distributions(runs, "cost_usd", kind="violin", ax=ax),
        "paired": lambda ax=None: plots.paired(runs, "dqs", ax=ax),
        "reliability": lambda ax=None: plots.reliability(runs, ax=ax),
        "cost_quality": lambda ax=None: plots.cost_quality(runs, ax=ax),
        "consensus_scatter": lambda ax=None: plots.consensus_quality(runs, ax=ax),
        "consensus_hexbin": lambda ax=None: plots.consensus_quality(runs, hexbin_above=500, ax=ax),
        "beliefs": lambda ax=None: plots.beliefs(dataset, "r0000001", ax=ax),
    }


FIGURES = [
    "forest",
    "forest_hedges",
    "distributions_box",
    "distributions_violin",
    "paired",
    "reliability",
    "cost_quality",
    "consensus_scatter",
    "consensus_hexbin",
    "beliefs",
    "distributions_three",
    "reliability_three",
    "cost_quality_three",
]


# --- helpers --------------------------------------------------------------------------------------


def by_gid(fig: Figure, gid: str) -> list[Any]:
    return [a for a in fig.findobj() if a.get_gid() == gid]


def colour_of(artist: Any) -> str:
    """The colour an artist is drawn in (face first, else edge), as hex without alpha."""
    if isinstance(artist, Line2D):
        return to_hex(artist.get_color())
    if isinstance(artist, Patch):
        return to_hex(artist.get_facecolor()[:3])
    if isinstance(artist, Collection):
        faces = artist.get_facecolor()
        colours = faces if len(faces) and not isinstance(artist, LineCollection) else artist.get_edgecolor()
        return to_hex(np.asarray(colours)[0][:3])
    raise TypeError(type(artist))


def legend_texts(fig: Figure) -> list[str]:
    return [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]


def renderer_of(fig: Figure) -> Any:
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def drawn_texts(fig: Figure) -> list[Text]:
    """The non-empty texts the figure draws: tick labels of ticks in view, and every other visible text."""
    tick_labels, shown = set(), []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            span = (high - low) * 1e-9
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                labels = (tick.label1, tick.label2)
                tick_labels.update(id(label) for label in labels)
                in_view = low - span <= tick.get_loc() <= high + span
                shown += [label for label in labels if in_view and label.get_visible() and label.get_text()]
    others = [
        t
        for t in fig.findobj(Text)
        if id(t) not in tick_labels and t.get_visible() and t.get_text() and t.get_text().strip()
    ]
    return shown + others


def layout_problems(fig: Figure) -> list[str]:
    """Texts that reach outside the figure, and pairs of texts that overlap (after drawing)."""
    renderer = renderer_of(fig)
    width, height = fig.bbox.width, fig.bbox.height
    texts = drawn_texts(fig)
    boxes = [t.get_window_extent(renderer) for t in texts]
    problems = []
    for text, box in zip(texts, boxes, strict=True):
        if box.x0 < -1 or box.y0 < -1 or box.x1 > width + 1 or box.y1 > height + 1:
            problems.append(f"clipped: {text.get_text()!r} at {box.bounds} in {width:.0f}x{height:.0f}")
    for (a, box_a), (b, box_b) in itertools.combinations(zip(texts, boxes, strict=True), 2):
        shrunk_a, shrunk_b = box_a.expanded(0.98, 0.9), box_b.expanded(0.98, 0.9)
        if shrunk_a.overlaps(shrunk_b):
            problems.append(f"overlap: {a.get_text()!r} and {b.get_text()!r}")
    return problems


def non_dominated(points: list[tuple[float, float]]) -> set[tuple[float, float]]:
    """Points no other point beats: cost no higher and quality no lower, one strictly (plain Python)."""
    front = set()
    for c, q in points:
        beaten = any(c2 <= c and q2 >= q and (c2 < c or q2 > q) for c2, q2 in points)
        if not beaten:
            front.add((c, q))
    return front


# --- colours and style ----------------------------------------------------------------------------


def test_system_colours_are_fixed_for_mas_and_single_and_sorted_for_the_rest() -> None:
    assert plots.system_colours(["single", "mas"]) == {"mas": "#0072B2", "single": "#E69F00"}
    others = plots.system_colours(["zeta", "mas", "alpha", "alpha"])
    assert list(others) == ["mas", "alpha", "zeta"]
    assert others["mas"] == "#0072B2"
    assert others["alpha"] == "#D55E00" and others["zeta"] == "#009E73"
    assert set(plots.system_colours(["a", "b", "c", "d", "e", "f", "mas", "single"]).values()) <= set(
        plots.OKABE_ITO.values()
    )


@pytest.mark.slow
def test_the_same_system_gets_the_same_colour_in_every_figure(makers: dict[str, Callable[..., Figure]]) -> None:
    expected = plots.system_colours(["mas", "single", "debate-chain"])
    assert expected["debate-chain"] == plots.OKABE_ITO["vermillion"]
    seen: dict[str, set[str]] = {system: set() for system in expected}
    for name in FIGURES:
        fig = makers[name]()
        for artist in fig.findobj():
            role, _, system = str(artist.get_gid()).partition(":")
            if role in SYSTEM_ROLES:
                seen[system].add(colour_of(artist).upper())
        for ax in fig.axes:
            legend = ax.get_legend()
            if legend is None:
                continue
            for handle, text in zip(legend.legend_handles, legend.get_texts(), strict=True):
                system = text.get_text().split(" (")[0]
                if system in expected:
                    seen[system].add(colour_of(handle).upper())
    assert seen == {s: {c} for s, c in expected.items()}


def test_paper_style_sets_the_width_each_function_reads_at_call_time(runs: pl.DataFrame) -> None:
    # Outside paper_style a figure has the width rcParams give: matplotlib's default 6.4 in here,
    # whatever a matplotlibrc on this machine (~/.config/matplotlib, MPLCONFIGDIR) says.
    with matplotlib.rc_context({"figure.figsize": (6.4, 4.8)}):
        for columns, width in ((1, 3.5), (2, 7.0)):
            with plots.paper_style(columns=columns):
                fig = plots.distributions(runs, "dqs")
            assert fig.get_figwidth() == pytest.approx(width)
            assert fig.get_layout_engine() is not None
        assert plots.distributions(runs, "dqs").get_figwidth() == pytest.approx(6.4)


def test_names_in_any_script_are_drawn_not_left_as_empty_boxes(runs: pl.DataFrame) -> None:
    # A Hebrew, Greek or Arabic system name: glyphs the serif font lacks come from DejaVu Sans,
    # so matplotlib warns of no missing glyph (it draws an empty box where it would).
    named = runs.with_columns(pl.col("system").replace({"mas": "מערכת", "single": "σύστημα نظام"}))
    with warnings.catch_warnings(record=True) as caught, plots.paper_style():
        warnings.simplefilter("always")
        FigureCanvasAgg(plots.distributions(named, "dqs")).draw()
    assert not [w for w in caught if "missing from font" in str(w.message)]


def test_figures_are_not_kept_by_pyplot(makers: dict[str, Callable[..., Figure]]) -> None:
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    makers["forest"]()
    makers["beliefs"]()
    assert plt.get_fignums() == before


@pytest.mark.subprocess
def test_importing_the_package_does_not_load_matplotlib() -> None:
    code = "import sys, mas_eval.plots; assert 'matplotlib' not in sys.modules; mas_eval.plots.forest; print('ok')"
    done = run_python("-c", code)
    assert done.stdout.strip() == "ok", done.stderr


# --- what each figure draws -----------------------------------------------------------------------


def test_run_level_figures_take_scores_and_lazy_frames_alike(scores: mas_eval.Scores, runs: pl.DataFrame) -> None:
    for data in (scores, runs.lazy()):
        fig = plots.cost_quality(data, by=None)
        assert len(by_gid(fig, "pareto_front")) == 1
        assert legend_texts(plots.distributions(data, "dqs"))[:2] == ["mas", "single"]


def test_a_system_without_values_is_named_not_drawn(runs: pl.DataFrame) -> None:
    fig = plots.distributions(runs, "consensus_level", by="variant")
    assert fig.axes[0].get_legend().get_title().get_text() == "no consensus level: single"
    assert len(by_gid(fig, "box:mas")) == 2 and not by_gid(fig, "box:single")


def test_forest_draws_one_ci_per_row_sorted_and_marks_holm_significance(comparisons: pl.DataFrame) -> None:
    fig = plots.forest(comparisons)
    (ci,) = by_gid(fig, "forest_ci")
    assert isinstance(ci, LineCollection)
    assert len(ci.get_segments()) == comparisons.height
    ordered = comparisons.sort("metric", "task")
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == [f"{t} · {m}" for t, m in ordered.select("task", "metric").iter_rows()]
    for segment, (low, high) in zip(ci.get_segments(), ordered.select("ci_low", "ci_high").iter_rows(), strict=True):
        assert segment[:, 0].tolist() == pytest.approx([low, high])
    (filled,) = by_gid(fig, "forest_significant")
    assert len(filled.get_xdata()) == int((ordered["p_adjusted"] <= 0.05).sum())
    assert legend_texts(fig) == ["p (Holm) ≤ 0.05", "p (Holm) > 0.05"]
    assert len(by_gid(fig, "zero_line")) == 1


@pytest.mark.parametrize("effect", ["cohens_d", "hedges_g"])
def test_forest_effect_sizes_use_the_d_interval(comparisons: pl.DataFrame, effect: str) -> None:
    fig = plots.forest(comparisons, effect)
    (ci,) = by_gid(fig, "forest_ci")
    ordered = comparisons.sort("metric", "task")
    scale = ordered["hedges_g"] / ordered["cohens_d"] if effect == "hedges_g" else pl.Series([1.0] * ordered.height)
    lows = (ordered["d_ci_low"] * scale).to_list()
    assert [s[0, 0] for s in ci.get_segments()] == pytest.approx(lows)
    (filled,) = by_gid(fig, "forest_significant")
    assert sorted(filled.get_xdata()) == pytest.approx(sorted(ordered[effect].to_list()))


def test_forest_keeps_a_degenerate_row_labelled_without_an_interval(comparisons: pl.DataFrame) -> None:
    broken = comparisons.with_columns(
        [
            pl.when(pl.int_range(pl.len()) == 0).then(None).otherwise(pl.col(c)).alias(c)
            for c in ("difference", "ci_low", "ci_high", "p_adjusted")
        ]
    )
    fig = plots.forest(broken)
    (ci,) = by_gid(fig, "forest_ci")
    assert len(ci.get_segments()) == comparisons.height - 1
    assert len(fig.axes[0].get_yticklabels()) == comparisons.height
    assert [t.get_text() for t in by_gid(fig, "forest_no_estimate")] == ["no estimate"]


def test_distributions_draw_one_box_per_system_and_group_and_a_legend_entry_per_system(runs: pl.DataFrame) -> None:
    fig = plots.distributions(runs, "dqs", by="task")
    for system in ("mas", "single"):
        assert len(by_gid(fig, f"box:{system}")) == runs["task"].n_unique()
    assert legend_texts(fig)[:2] == ["mas", "single"]
    legend = fig.axes[0].get_legend()
    assert legend.get_title().get_text() == "2,000 of 4,000 runs shown as points"
    points = [c for s in ("mas", "single") for c in by_gid(fig, f"points:{s}")]
    assert sum(len(c.get_offsets()) for c in points) == 2000
    assert fig.axes[0].get_ylabel() == "DQS (0–1)"


def test_distributions_means_carry_t_intervals(runs: pl.DataFrame) -> None:
    fig = plots.distributions(runs, "dqs", max_points=0)
    (bars,) = [a for a in by_gid(fig, "mean_ci:mas") if isinstance(a, LineCollection)]
    values = runs.filter(pl.col("system") == "mas")["dqs"].to_numpy()
    half = sps.t.ppf(0.975, values.size - 1) * values.std(ddof=1) / np.sqrt(values.size)
    segment = bars.get_segments()[0]
    assert segment[:, 1].tolist() == pytest.approx([values.mean() - half, values.mean() + half])
    assert fig.axes[0].get_legend().get_title().get_text() == "points not drawn"


@pytest.mark.parametrize("kind", ["box", "violin"])
def test_a_pass_fail_metric_is_drawn_as_its_share(runs: pl.DataFrame, kind: str) -> None:
    # A box of 0s and 1s spans 0 to 1 whatever the share; the bar's height is the share of 1s.
    passed = runs.with_columns(passed=(pl.col("dqs") > 0.6).cast(pl.Float64))
    fig = plots.distributions(passed, "passed", by="task", kind=kind)
    shares = passed.group_by("task", "system").agg(pl.col("passed").mean()).sort("task")
    for system in ("mas", "single"):
        bars = by_gid(fig, f"share:{system}")
        expected = shares.filter(pl.col("system") == system)["passed"].to_list()
        assert [bar.get_height() for bar in bars] == pytest.approx(expected)
        assert not by_gid(fig, f"box:{system}") and not by_gid(fig, f"violin:{system}")
        assert not by_gid(fig, f"points:{system}")
    title = fig.axes[0].get_legend().get_title().get_text()
    assert title == "every value 0 or 1: bars are the share of 1s among the runs"


def test_distributions_violins_and_the_subsample_is_seeded(runs: pl.DataFrame) -> None:
    fig = plots.distributions(runs, "cost_usd", by="variant", kind="violin", max_points=300, seed=3)
    for system in ("mas", "single"):
        assert len(by_gid(fig, f"violin:{system}")) == 2
    again = plots.distributions(runs, "cost_usd", by="variant", kind="violin", max_points=300, seed=3)
    first, second = (by_gid(f, "points:mas")[0].get_offsets() for f in (fig, again))
    assert np.array_equal(first, second)
    assert fig.axes[0].get_ylabel() == "Cost (USD)"


def test_paired_marks_the_mean_difference_and_its_t_interval(runs: pl.DataFrame) -> None:
    fig = plots.paired(runs, "dqs")
    means = runs.group_by("case_id", "system").agg(pl.col("dqs").mean()).pivot(on="system", index="case_id")
    diff = (means["mas"] - means["single"]).drop_nulls().to_numpy()
    half = sps.t.ppf(0.975, diff.size - 1) * diff.std(ddof=1) / np.sqrt(diff.size)
    (line,) = by_gid(fig, "mean_difference")
    assert line.get_xdata()[0] == pytest.approx(diff.mean())
    (band,) = by_gid(fig, "mean_difference_ci")
    ends = (band.get_x(), band.get_x() + band.get_width())
    assert ends == pytest.approx((diff.mean() - half, diff.mean() + half))
    assert len(by_gid(fig, "zero_line")) == 1
    assert sum(p.get_height() for p in by_gid(fig, "paired_histogram")) == diff.size
    assert fig.axes[0].get_legend().get_title().get_text() == f"n = {diff.size:,} pairs (case_id values run by both)"


def test_reliability_puts_each_systems_ece_in_the_legend(runs: pl.DataFrame) -> None:
    fig = plots.reliability(runs, bins=10)
    ece = dict(calibration(runs, bins=10).select("system", "ece").iter_rows())
    assert legend_texts(fig) == [f"mas (ECE {ece['mas']:.3f})", f"single (ECE {ece['single']:.3f})", "calibrated"]
    assert len(by_gid(fig, "diagonal")) == 1
    sizes = by_gid(fig, "bin_counts:mas")[0].get_sizes()
    assert sizes.max() > sizes.min()


def test_reliability_leaves_sparse_bins_off_the_line() -> None:
    # mas: 20 runs near 0.85 and one at 0.15; the lone run is an open marker, not on the line.
    runs = pl.DataFrame(
        {
            "system": ["mas"] * 21,
            "decision_confidence": [0.85] * 20 + [0.15],
            "gt_match": [True] * 17 + [False] * 3 + [True],
        }
    )
    fig = plots.reliability(runs, min_count=10)
    (line,) = by_gid(fig, "reliability:mas")
    assert line.get_xydata().tolist() == [[0.85, 0.85]]
    (sparse,) = by_gid(fig, "sparse_bins:mas")
    assert sparse.get_offsets().tolist() == [[0.15, 1.0]]
    assert "open: < 10 runs" in fig.axes[0].get_legend().get_title().get_text()
    assert not by_gid(plots.reliability(runs, min_count=1), "sparse_bins:mas")


@pytest.mark.parametrize("by", ["variant", None])
def test_cost_quality_front_is_exactly_the_non_dominated_points(runs: pl.DataFrame, by: str | None) -> None:
    fig = plots.cost_quality(runs, by=by)
    keys = ["system", *([by] if by else [])]
    means = runs.group_by(keys).agg(pl.col("cost_usd").mean(), pl.col("dqs").mean())
    points = [(round(c, 12), round(q, 12)) for c, q in means.select("cost_usd", "dqs").iter_rows()]
    (front,) = by_gid(fig, "pareto_front")
    assert front.get_label() == "Pareto front"
    drawn = {(round(float(c), 12), round(float(q), 12)) for c, q in front.get_xydata()}
    assert drawn == non_dominated(points)
    assert len(front.get_xydata()) == len(drawn)
    assert fig.axes[0].get_xlabel() == "Mean cost per run (USD)"
    expected = ["mas", "single", *(sorted(runs[by].unique().to_list()) if by else []), "Pareto front"]
    assert legend_texts(fig) == expected


def test_consensus_quality_scatters_below_the_threshold_and_hexbins_above(runs: pl.DataFrame) -> None:
    scatter = plots.consensus_quality(runs)
    assert by_gid(scatter, "points:mas") and not by_gid(scatter, "hexbin")
    assert len(by_gid(scatter, "binned_mean:mas")) == 1
    assert "no consensus level: single" in scatter.axes[0].get_legend().get_title().get_text()
    dense = plots.consensus_quality(runs, hexbin_above=100)
    assert by_gid(dense, "hexbin") and not by_gid(dense, "points:mas")
    assert len(dense.axes) == 2  # the panel and its colour bar
    assert legend_texts(dense) == ["mas"]


def test_beliefs_heatmap_labels_confidences_and_marks_the_recommendation(dataset: mas_eval.Dataset) -> None:
    fig = plots.beliefs(dataset, "r0000001")
    ax = fig.axes[0]
    agents = dataset["agents"].filter(pl.col("run_id") == "r0000001").sort("agent_id").collect()
    expected = [f"{a} (conf {c:.2f})" for a, c in agents.select("agent_id", "confidence").iter_rows()]
    assert [t.get_text() for t in ax.get_yticklabels()] == expected
    masses = dataset["beliefs"].filter(pl.col("run_id") == "r0000001").collect()
    assert len(by_gid(fig, "belief_value")) == masses.height
    recommended = dataset["runs"].filter(pl.col("run_id") == "r0000001").collect()["recommended"][0]
    bold = [t.get_text() for t in ax.get_xticklabels() if t.get_fontweight() == "bold"]
    assert bold == [recommended]
    assert len(by_gid(fig, "recommended")) == 1
    assert recommended in ax.get_title()


@pytest.mark.parametrize("name", FIGURES)
def test_ax_draws_into_the_given_axes(makers: dict[str, Callable[..., Figure]], name: str) -> None:
    fig = Figure(figsize=(8, 3), layout="constrained")
    left, right = fig.subplots(1, 2)
    assert makers[name](ax=right) is fig
    assert not (left.lines or left.patches or left.collections or left.images or left.texts)
    assert right.lines or right.patches or right.collections or right.images


# --- paper widths: nothing clipped or overlapping -------------------------------------------------


@pytest.mark.parametrize("columns", [1, 2])
@pytest.mark.parametrize("name", FIGURES)
def test_no_text_is_clipped_or_overlapping_at_paper_widths(
    makers: dict[str, Callable[..., Figure]], name: str, columns: int
) -> None:
    # A glyph missing from the fonts, or a layout that cannot fit, is a warning: here an error.
    with plots.paper_style(columns=columns), warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        fig = makers[name]()
        assert fig.get_figwidth() == pytest.approx({1: 3.5, 2: 7.0}[columns])
        assert layout_problems(fig) == []


def test_the_layout_check_finds_clipped_and_overlapping_text() -> None:
    fig = Figure(figsize=(2, 2))
    ax = fig.add_subplot()
    ax.set_xlabel("a label far too long to fit into a figure two inches wide")
    ax.text(0.5, 0.5, "one")
    ax.text(0.5, 0.5, "two")
    problems = layout_problems(fig)
    assert any(p.startswith("clipped") for p in problems)
    assert "overlap: 'one' and 'two'" in problems


# --- saving ---------------------------------------------------------------------------------------


def test_save_writes_pdf_svg_and_png(makers: dict[str, Callable[..., Figure]], tmp_path: Path) -> None:
    with plots.paper_style(columns=1):
        fig = makers["cost_quality"]()
        dpi = matplotlib.rcParams["savefig.dpi"]
        pdf = plots.save(fig, tmp_path / "f.pdf")
        svg = plots.save(fig, tmp_path / "f.svg")
        png = plots.save(fig, tmp_path / "f.PNG")
    assert pdf.read_bytes().startswith(b"%PDF")
    assert ET.parse(svg).getroot().tag == "{http://www.w3.org/2000/svg}svg"
    data = png.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = struct.unpack(">II", data[16:24])
    assert width == pytest.approx(3.5 * dpi, abs=2) and height == pytest.approx(fig.get_figheight() * dpi, abs=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.PNG", "f.pdf", "f.svg"]  # no staging files left


def test_fonts_are_embedded_as_truetype_inside_paper_style(
    makers: dict[str, Callable[..., Figure]], tmp_path: Path
) -> None:
    with plots.paper_style(columns=1):
        fig = makers["forest"]()
        data = plots.save(fig, tmp_path / "forest.pdf").read_bytes()
    assert b"/FontFile2" in data
    assert b"/Type3" not in data


def test_save_refuses_an_unknown_suffix_and_an_existing_file(tmp_path: Path) -> None:
    fig = Figure(figsize=(1, 1))
    with pytest.raises(InvalidParameterError, match=r"\.pdf, \.svg or \.png"):
        plots.save(fig, tmp_path / "figure.jpg")
    plots.save(fig, tmp_path / "figure.png")
    with pytest.raises(OutputExistsError, match="overwrite"):
        plots.save(fig, tmp_path / "figure.png")
    plots.save(fig, tmp_path / "figure.png", overwrite=True)
    with pytest.raises(InvalidParameterError, match="matplotlib Figure"):
        plots.save("not a figure", tmp_path / "other.png")  # type: ignore[arg-type]


# --- bad inputs -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "column"),
    [
        (lambda r: plots.distributions(r, "dsq"), "dsq"),
        (lambda r: plots.distributions(r, "dqs", by="taks"), "taks"),
        (lambda r: plots.paired(r, "dqs", pair_on="case"), "case"),
        (lambda r: plots.reliability(r, confidence="conf"), "conf"),
        (lambda r: plots.cost_quality(r, cost="price"), "price"),
        (lambda r: plots.consensus_quality(r, consensus="consensus"), "consensus"),
    ],
)
def test_a_missing_column_is_named_with_the_columns_that_exist(
    runs: pl.DataFrame, call: Callable[[pl.DataFrame], Figure], column: str
) -> None:
    with pytest.raises(SchemaError, match=rf"run_metrics: no column '{column}'.*the columns are: run_id, system"):
        call(runs)


def test_forest_names_a_missing_column_of_the_comparisons(comparisons: pl.DataFrame) -> None:
    with pytest.raises(SchemaError, match=r"forest: comparisons: no column 'ci_low'.*the columns are: task, metric"):
        plots.forest(comparisons.drop("ci_low"))


@pytest.mark.parametrize(
    "call",
    [
        lambda r, c: plots.forest(c.clear()),
        lambda r, c: plots.distributions(r.clear(), "dqs"),
        lambda r, c: plots.paired(r.clear(), "dqs"),
        lambda r, c: plots.reliability(r.clear()),
        lambda r, c: plots.cost_quality(r.clear()),
        lambda r, c: plots.consensus_quality(r.clear()),
        lambda r, c: plots.consensus_quality(r.filter(pl.col("system") == "single")),
    ],
)
def test_an_empty_input_is_a_clear_error(
    runs: pl.DataFrame, comparisons: pl.DataFrame, call: Callable[..., Figure]
) -> None:
    with pytest.raises(DataError, match="nothing to draw"):
        call(runs, comparisons)


@pytest.mark.parametrize(
    ("call", "text"),
    [
        (lambda r, c: plots.forest(c, "odds_ratio"), "effect='odds_ratio' is invalid; effect must be one of"),
        (lambda r, c: plots.distributions(r, "dqs", kind="strip"), "kind='strip' is invalid"),
        (lambda r, c: plots.distributions(r, "dqs", max_points=-1), "max_points=-1 is invalid"),
        (lambda r, c: plots.reliability(r, bins=0), "bins=0 is invalid"),
        (lambda r, c: plots.paired(r, "dqs", treatment="mas", control="mas"), "both 'mas'"),
        (lambda r, c: plots.distributions([1, 2], "dqs"), "must be a Polars DataFrame"),
        (lambda r, c: plots.forest(c.to_dicts()), "comparisons must be the Polars DataFrame"),
        (lambda r, c: plots.distributions(r, "dqs", ax="left"), "ax must be a matplotlib Axes"),
    ],
)
def test_a_bad_parameter_is_an_invalid_parameter_error(
    runs: pl.DataFrame, comparisons: pl.DataFrame, call: Callable[..., Figure], text: str
) -> None:
    with pytest.raises(InvalidParameterError, match=text.replace("(", r"\(").replace(")", r"\)")):
        call(runs, comparisons)


def test_paper_style_refuses_other_column_counts() -> None:
    with (
        pytest.raises(InvalidParameterError, match="columns=3 is invalid; columns must be one of 1, 2"),
        plots.paper_style(columns=3),  # type: ignore[arg-type]
    ):
        pass


def test_paired_names_the_systems_present_when_one_is_missing(runs: pl.DataFrame) -> None:
    with pytest.raises(DataError, match=r"no runs of system 'debate'.*present are: 'mas', 'single'"):
        plots.paired(runs, "dqs", control="debate")
    unpaired = runs.with_columns(pl.concat_str(pl.col("case_id"), pl.col("system")).alias("case_id"))
    with pytest.raises(DataError, match="no 'case_id' has a value of 'dqs' from both"):
        plots.paired(unpaired, "dqs")


def test_a_non_numeric_metric_is_a_schema_error(runs: pl.DataFrame) -> None:
    with pytest.raises(SchemaError, match="'task' has type String"):
        plots.distributions(runs, "task")


def test_beliefs_needs_a_dataset_and_names_an_unknown_run(dataset: mas_eval.Dataset, scores: mas_eval.Scores) -> None:
    with pytest.raises(InvalidParameterError, match=r"Scores hold no belief masses.*pass the Dataset"):
        plots.beliefs(scores, "r0000001")
    with pytest.raises(DataError, match=r"no run 'r9999999' in the runs table nor in the beliefs table.*'r0000001'"):
        plots.beliefs(dataset, "r9999999")
    no_beliefs = mas_eval.Dataset.from_frames(runs=dataset.collect("runs").head(2))
    with pytest.raises(SchemaError, match="has no beliefs table"):
        plots.beliefs(no_beliefs, "r0000001")
