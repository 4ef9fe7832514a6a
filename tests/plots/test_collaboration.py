"""The collaboration figure: TempoScore per round and credibility per agent, of one run or over runs."""

from __future__ import annotations

import struct
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np
import polars as pl
import pytest
from matplotlib.figure import Figure

import mas_eval
from mas_eval import plots
from mas_eval.data.vocabulary import DEBATE, INDEPENDENT, ROUNDS
from mas_eval.errors import DataError, InvalidParameterError, SchemaError
from tests.plots.test_plots import by_gid, colour_of, layout_problems

#: The diagnosis family's label counts and scores, as ``runs`` columns.
COUNTS = ("tp", "fp", "fn", "caa", "ae", "tm_sm")
SCORES = (
    "tp_rate", "caa_weight", "traditional_recall", "traditional_precision", "clinical_reasoning_quality",
    "diagnostic_safety", "system_safety_coverage",
)  # fmt: skip
LABELS = ("TP", "FP", "CAA", "FN", "AE", "TM-SM")
RUN_IDS = ("run_id", "system", "case_id", "task", "variant")
#: The tick labels of Local-DDx's seven rounds, in its order.
ROUND_LABELS = [
    "Specialty ranking", "Symptom management", "Independent DDx", "Master list", "Debate (refinement)",
    "Post-debate vote", "Can't-miss",
]  # fmt: skip
AGENTS = ("Dr. Sarah Chen", "Dr. Liam O'Connell", "Dr. Emily R. Thompson", "Dr. Rajiv Gupta", "Dr. Clinical Evaluator")


def ddx_scores(
    runs: int = 6,
    systems: tuple[str, ...] = ("mas", "single"),
    *,
    seed: int = 0,
    rounds: tuple[str, ...] = ROUNDS,
    diagnosis: str = "Pulmonary embolism",
) -> mas_eval.Scores:
    """Scores shaped as the diagnosis family writes them: ``runs`` with its columns, ``labels``,
    ``rounds``, ``agents`` with credibility, ``consensus_ddx``; ``runs`` runs of each system, the
    same cases for every system, ``mas`` scoring higher."""
    rng = np.random.default_rng(seed)
    ids = pl.DataFrame(
        [
            {"run_id": f"{s}-{i:02d}", "system": s, "case_id": f"case{i:02d}", "task": "ddx", "variant": "v1"}
            for s in systems
            for i in range(runs)
        ]
    )
    n = ids.height
    lift = (ids["system"] == "mas").cast(pl.Float64).to_numpy() * 0.2
    run_table = ids.with_columns(
        *(pl.Series(c, rng.integers(0, 6, n), dtype=pl.UInt32) for c in COUNTS),
        pl.Series("total_gt", rng.integers(3, 9, n), dtype=pl.Int64),
        *(pl.Series(c, np.clip(rng.uniform(0.2, 0.8, n) + lift, 0, 1)) for c in SCORES),
    )
    per_run = ids.rows(named=True)
    round_rows = []
    for run in per_run:
        for name in rounds:
            diagnoses = int(rng.integers(4, 15)) if name == INDEPENDENT else None
            curvature = float(rng.uniform(0, 2.5)) if name == DEBATE else None
            tempo = 1 + 0.1 * diagnoses if diagnoses is not None else 1.0
            tempo = min(curvature + 0.5, 2.5) if curvature is not None else tempo
            round_rows.append(
                {
                    **run, "round": name, "participants": 5, "unique_diagnoses": diagnoses,
                    "high_value_responses": None if curvature is None else round(curvature * 5),
                    "symbolic_curvature": curvature, "tempo_score": tempo,
                }
            )  # fmt: skip
    agent_rows = [
        {
            **run, "agent_id": agent, "insight": float(rng.uniform(5, 15)), "synthesis": float(rng.uniform(2, 8)),
            "action": float(rng.uniform(5, 12)), "valence": float(rng.uniform(0.8, 1.0)),
            "credibility": float(rng.uniform(15, 60)),
        }
        for run in per_run
        for agent in AGENTS
    ]  # fmt: skip
    label_rows = [
        {
            **run, "side": side, "diagnosis": f"{diagnosis}" if k == 0 else f"Diagnosis {k}", "label": label,
            "matched_to": None, "tier": None, "score": None,
        }
        for run in per_run
        for k, (side, label) in enumerate([("system", "TP"), ("system", "FP"), ("ground_truth", "FN")])
    ]  # fmt: skip
    consensus_rows = [
        {**run, "diagnosis": diagnosis if rank == 1 else f"Diagnosis {rank}", "points": 10.0 / rank, "rank": rank}
        for run in per_run
        for rank in (1, 2, 3)
    ]
    return mas_eval.Scores(
        tables={
            "runs": run_table,
            "agents": pl.DataFrame(agent_rows),
            "labels": pl.DataFrame(label_rows, schema_overrides={"tier": pl.String, "score": pl.Float64}),
            "rounds": pl.DataFrame(round_rows),
            "consensus_ddx": pl.DataFrame(consensus_rows, schema_overrides={"rank": pl.UInt32}),
        }
    )


@pytest.fixture(scope="module")
def scores() -> mas_eval.Scores:
    return ddx_scores()


def _ticks(fig: Figure, panel: int) -> list[str]:
    return [t.get_text() for t in fig.axes[panel].get_yticklabels()]


# --- what it draws --------------------------------------------------------------------------------


def test_one_run_draws_a_bar_per_round_in_local_ddx_order_and_agents_by_credibility(scores: mas_eval.Scores) -> None:
    fig = plots.collaboration(scores, "mas-03")
    bars = by_gid(fig, "tempo:mas")
    assert len(bars) == len(ROUNDS) == 7
    assert _ticks(fig, 0) == ROUND_LABELS
    tempo = scores["rounds"].filter(pl.col("run_id") == "mas-03")
    expected = dict(zip(tempo["round"], tempo["tempo_score"], strict=True))
    assert [bar.get_width() for bar in bars] == pytest.approx([expected[r] for r in ROUNDS])
    agents = scores["agents"].filter(pl.col("run_id") == "mas-03").sort("credibility", descending=True)
    assert _ticks(fig, 1) == agents["agent_id"].to_list()
    assert [bar.get_width() for bar in by_gid(fig, "credibility:mas")] == pytest.approx(agents["credibility"])
    assert len(by_gid(fig, "tempo_value")) == 7 and len(by_gid(fig, "credibility_value")) == len(AGENTS)
    assert fig.get_suptitle() == "Run mas-03 (mas)"


def test_many_runs_draw_one_box_per_system_per_round_and_one_per_system_for_credibility(
    scores: mas_eval.Scores,
) -> None:
    fig = plots.collaboration(scores)
    for system in ("mas", "single"):
        assert len(by_gid(fig, f"tempo:{system}")) == len(ROUNDS)
        assert len(by_gid(fig, f"credibility:{system}")) == 1
        (points,) = by_gid(fig, f"tempo_points:{system}")
        assert len(points.get_offsets()) == 6 * len(ROUNDS)
    assert _ticks(fig, 0) == ROUND_LABELS
    assert _ticks(fig, 1) == ["mas", "single"]
    legend = fig.axes[0].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["mas (6 runs)", "single (6 runs)"]
    # Each box spans its system's quartiles of the round's TempoScores.
    debate = scores["rounds"].filter((pl.col("round") == DEBATE) & (pl.col("system") == "mas"))["tempo_score"]
    box = by_gid(fig, "tempo:mas")[ROUNDS.index(DEBATE)]
    low, high = box.get_path().get_extents().x0, box.get_path().get_extents().x1
    assert (low, high) == pytest.approx(tuple(np.percentile(debate.to_numpy(), [25, 75])))


def test_unknown_rounds_come_after_local_ddx_rounds_sorted_and_long_names_are_cut() -> None:
    long = "an_unusually_long_round_name_for_a_tick_label"
    scores = ddx_scores(2, ("mas",), rounds=("zeta_round", DEBATE, long, INDEPENDENT))
    assert _ticks(plots.collaboration(scores, "mas-00"), 0) == [
        "Independent DDx", "Debate (refinement)", "An unusually long rou…", "Zeta round",
    ]  # fmt: skip


def test_colours_are_the_systems_colours_in_both_modes() -> None:
    scores = ddx_scores(4, ("single", "debate-chain", "mas"))
    expected = plots.system_colours(["mas", "single", "debate-chain"])
    for fig in (plots.collaboration(scores), plots.collaboration(scores, "debate-chain-01")):
        seen: dict[str, set[str]] = {}
        for artist in fig.findobj():
            role, _, system = str(artist.get_gid()).partition(":")
            if role in {"tempo", "credibility", "tempo_points", "credibility_points"}:
                seen.setdefault(system, set()).add(colour_of(artist).upper())
        legend = fig.axes[0].get_legend()
        for handle, text in zip(legend.legend_handles if legend else [], legend.get_texts() if legend else [],
                                strict=True):  # fmt: skip
            seen.setdefault(text.get_text().split(" (")[0], set()).add(colour_of(handle).upper())
        assert seen and all(colours == {expected[system]} for system, colours in seen.items()), seen


def test_max_points_samples_the_points_and_says_so(scores: mas_eval.Scores) -> None:
    fig = plots.collaboration(scores, max_points=10)
    drawn = sum(len(c.get_offsets()) for c in fig.axes[0].collections if "points" in str(c.get_gid()))
    assert drawn == 10
    assert fig.axes[0].get_legend().get_title().get_text() == "points: a sample of 10 per panel"
    bare = plots.collaboration(scores, max_points=0)
    assert not [c for c in bare.findobj() if "points" in str(c.get_gid())]


def test_runs_without_credibility_say_so_in_the_agents_panel(scores: mas_eval.Scores) -> None:
    agents = scores["agents"].with_columns(credibility=pl.lit(None, dtype=pl.Float64))
    blank = mas_eval.Scores(tables={**scores.tables, "agents": agents})
    for run_id, text in ((None, "no agent of these runs"), ("mas-00", "no agent of run mas-00")):
        fig = plots.collaboration(blank, run_id)
        (note,) = by_gid(fig, "no_values")
        assert note.get_text().startswith(text)
        assert not [a for a in fig.findobj() if str(a.get_gid()).startswith("credibility")]


def test_axes_draws_into_the_given_pair(scores: mas_eval.Scores) -> None:
    fig = Figure(figsize=(9, 3), layout="constrained")
    spare, rounds, agents = fig.subplots(1, 3)
    for run_id in (None, "single-02"):
        assert plots.collaboration(scores, run_id, axes=(rounds, agents)) is fig
    assert not (spare.patches or spare.collections)
    assert rounds.patches and agents.patches


# --- errors ---------------------------------------------------------------------------------------


def test_scores_without_rounds_or_credibility_say_how_to_get_them(scores: mas_eval.Scores) -> None:
    decision = mas_eval.score(mas_eval.simulate(20, seed=1))
    with pytest.raises(
        SchemaError, match=r"no 'rounds' table \(they have: runs, agents, alternatives, conflicts\);.*ddx and messages"
    ):
        plots.collaboration(decision)
    no_credibility = mas_eval.Scores(tables={**scores.tables, "agents": scores["agents"].drop("credibility")})
    with pytest.raises(
        SchemaError, match=r"the 'agents' table: no column 'credibility'; the columns are: .*ddx and messages"
    ):
        plots.collaboration(no_credibility)
    no_agents = mas_eval.Scores(tables={k: v for k, v in scores.tables.items() if k != "agents"})
    with pytest.raises(SchemaError, match=r"no 'agents' table .*ddx and messages"):
        plots.collaboration(no_agents, "mas-00")


def test_an_unknown_run_is_named_with_runs_that_exist(scores: mas_eval.Scores) -> None:
    with pytest.raises(DataError, match=r"no run 'nope' in these Scores; runs with rounds are, e\.g\., 'mas-00', 'mas-01', 'mas-02'"):  # fmt: skip  # noqa: E501
        plots.collaboration(scores, "nope")
    rounds = scores["rounds"].filter(pl.col("run_id") != "mas-04")
    with pytest.raises(DataError, match=r"run 'mas-04' has no rows in the rounds table \(runs with rounds are"):
        plots.collaboration(mas_eval.Scores(tables={**scores.tables, "rounds": rounds}), "mas-04")
    empty = mas_eval.Scores(tables={**scores.tables, "rounds": scores["rounds"].clear()})
    with pytest.raises(DataError, match="the rounds table has no rows with a tempo_score"):
        plots.collaboration(empty)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"scores": pl.DataFrame()}, "scores must be the Scores mas_eval.score returned"),
        ({"run_id": 3}, "run_id=3 is invalid; run_id must be a run id"),
        ({"max_points": -1}, "max_points=-1 is invalid"),
        ({"axes": "ax"}, "axes must be a pair of matplotlib Axes"),
    ],
)
def test_bad_parameters_are_invalid_parameter_errors(scores: mas_eval.Scores, kwargs: dict, message: str) -> None:
    call = {"scores": scores, **kwargs}
    with pytest.raises(InvalidParameterError, match=message):
        plots.collaboration(**call)


# --- paper widths and files -----------------------------------------------------------------------


@pytest.mark.parametrize("columns", [1, 2])
@pytest.mark.parametrize("run_id", [None, "mas-01"])
@pytest.mark.parametrize("systems", [("mas",), ("mas", "single", "debate-chain")])
def test_no_text_is_clipped_or_overlapping_at_paper_widths(
    columns: int, run_id: str | None, systems: tuple[str, ...]
) -> None:
    long = "an_unusually_long_round_name_for_a_tick_label"
    scores = ddx_scores(30, systems, rounds=(*ROUNDS, long))
    with plots.paper_style(columns=columns), warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        fig = plots.collaboration(scores, run_id)
        assert fig.get_figwidth() == pytest.approx({1: 3.5, 2: 7.0}[columns])
        assert layout_problems(fig) == []


def test_panels_are_stacked_in_one_column_and_side_by_side_in_two(scores: mas_eval.Scores) -> None:
    with plots.paper_style(columns=1):
        top, bottom = plots.collaboration(scores).axes
    assert top.get_position().y0 > bottom.get_position().y1
    with plots.paper_style(columns=2):
        left, right = plots.collaboration(scores).axes
    assert left.get_position().x1 < right.get_position().x0


def test_save_writes_png_svg_and_pdf(scores: mas_eval.Scores, tmp_path: Path) -> None:
    with plots.paper_style(columns=1):
        fig = plots.collaboration(scores)
        dpi = matplotlib.rcParams["savefig.dpi"]
        png = plots.save(fig, tmp_path / "collaboration.png")
        svg = plots.save(plots.collaboration(scores, "mas-00"), tmp_path / "collaboration.svg")
        pdf = plots.save(fig, tmp_path / "collaboration.pdf")
    data = png.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert struct.unpack(">II", data[16:24]) == pytest.approx((3.5 * dpi, fig.get_figheight() * dpi), abs=2)
    assert ET.parse(svg).getroot().tag == "{http://www.w3.org/2000/svg}svg"
    assert pdf.read_bytes().startswith(b"%PDF")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["collaboration.pdf", "collaboration.png", "collaboration.svg"]
