"""The figures of a report of logs: pass rates, cost per correct answer, a system's profile, agents' shares.

Each is tested on what it draws (its artists and their data), never on pixels.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from matplotlib.collections import LineCollection

import mas_eval
from mas_eval import plots
from mas_eval.errors import DataError, SchemaError
from mas_eval.stats import agent_shares, cost_per_correct, describe, pass_rates


@pytest.fixture(scope="module")
def scores() -> mas_eval.Scores:
    return mas_eval.score(mas_eval.simulate_outcomes(400, seed=11, epochs=4, tasks=2, trace=True))


def _segments(ax: object, gid: str) -> list[float]:
    """The x ends of each segment of the LineCollection ``gid``, in order: low, high, low, high, ..."""
    (found,) = [c for c in ax.collections if c.get_gid() == gid]  # type: ignore[attr-defined]
    assert isinstance(found, LineCollection)
    return [float(seg[end][0]) for seg in found.get_segments() for end in (0, 1)]


def test_pass_rates_draw_each_systems_rate_and_interval_per_task(scores: mas_eval.Scores) -> None:
    rates = pass_rates(scores.runs, "match", by="task", cluster="case_id")
    for interval in ("wilson", "cluster", "clopper_pearson"):
        fig = plots.pass_rates(rates, interval=interval)  # type: ignore[arg-type]
        (ax,) = fig.axes
        for system in ("mas", "single"):
            own = rates.filter(system=system).sort("task")
            (dots,) = [line for line in ax.lines if line.get_gid() == f"pass_rate:{system}"]
            assert dots.get_xdata().tolist() == pytest.approx(own["rate"].to_list())
            expected = [v for row in own.select(f"{interval}_low", f"{interval}_high").rows() for v in row]
            assert _segments(ax, f"pass_rate_ci:{system}") == pytest.approx(expected)
        # The MAS sits above the single agent in each task's row.
        mas_y = next(line for line in ax.lines if line.get_gid() == "pass_rate:mas").get_ydata()
        single_y = next(line for line in ax.lines if line.get_gid() == "pass_rate:single").get_ydata()
        assert (mas_y < single_y).all()
        assert [t.get_text() for t in ax.get_yticklabels()] == ["task1 · match", "task2 · match"]
        assert ax.get_xlim() == pytest.approx((-0.02, 1.02))


def test_pass_rates_of_several_scores_are_rows_and_names_are_drawn_as_written() -> None:
    runs = pl.DataFrame({"system": ["$x$"] * 4 + ["single"] * 4, "a": [True, False] * 4, "b": [True] * 8})
    rates = pl.concat([pass_rates(runs, "a"), pass_rates(runs, "b")])
    fig = plots.pass_rates(rates)
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["single", "\\$x\\$"]
    with pytest.raises(DataError, match="more than one rate of a group, metric and system"):
        plots.pass_rates(pl.concat([rates, rates]))
    # Rates without clusters have no cluster-robust interval: the dots alone.
    unclustered = plots.pass_rates(rates, interval="cluster").axes[0]
    assert _segments(unclustered, "pass_rate_ci:single") == [] and len(unclustered.lines) == 2
    with pytest.raises(SchemaError, match="wilson_low"):
        plots.pass_rates(rates.drop("wilson_low"))


def test_cost_per_correct_draws_bars_per_correct_answer_and_ticks_per_run(scores: mas_eval.Scores) -> None:
    table = cost_per_correct(scores.runs, "match", by="task")
    fig = plots.cost_per_correct(table)
    assert [ax.get_xlabel() for ax in fig.axes] == ["Tokens per correct answer", "Cost (USD) per correct answer"]
    for ax, name in zip(fig.axes, ("tokens", "cost"), strict=True):
        for system in ("mas", "single"):
            own = table.filter(system=system).sort("task")
            bars = [p for p in ax.patches if p.get_gid() == f"per_correct:{name}:{system}"]
            assert [p.get_width() for p in bars] == pytest.approx(own[f"{name}_per_correct"].to_list())
            (ticks,) = [line for line in ax.lines if line.get_gid() == f"per_run:{name}:{system}"]
            assert ticks.get_xdata().tolist() == pytest.approx(own[f"{name}_per_run"].to_list())
    # A system with no correct answer has no bar: T/c is undefined.
    none = pl.DataFrame({"system": ["mas", "single"], "case_id": ["a", "a"], "epoch": 1, "ok": [1, 0],
                         "run_tokens": [10, 20]})  # fmt: skip
    fig = plots.cost_per_correct(cost_per_correct(none, "ok", cost=None))
    assert [p.get_gid() for p in fig.axes[0].patches] == ["per_correct:tokens:mas"]


def test_system_profile_draws_each_mean_and_interval_in_its_own_panel(scores: mas_eval.Scores) -> None:
    table = describe(scores.runs, ["match", "turns", "token_balance"], cluster="case_id")
    fig = plots.system_profile(table)
    assert [ax.get_title(loc="left") for ax in fig.axes] == ["Match", "Turns", "Token balance (0–1)"]
    for ax, metric in zip(fig.axes, ("match", "turns", "token_balance"), strict=True):
        for system in ("mas", "single"):
            row = table.filter(metric=metric, system=system).row(0, named=True)
            (dot,) = [line for line in ax.lines if line.get_gid() == f"profile:{metric}:{system}"]
            assert dot.get_xdata().tolist() == pytest.approx([row["mean"]])
            if row["ci_low"] is not None:
                assert _segments(ax, f"profile_ci:{metric}:{system}") == pytest.approx([row["ci_low"], row["ci_high"]])
    assert fig.axes[0].get_xlim() == pytest.approx((-0.02, 1.02))  # a pass rate's panel spans 0 to 1
    picked = plots.system_profile(table, ["turns"], labels={"turns": "Turns per run"})
    assert [ax.get_title(loc="left") for ax in picked.axes] == ["Turns per run"]
    with pytest.raises(DataError, match="no mean of 'dqs' in the summary"):
        plots.system_profile(table, ["dqs"])
    with pytest.raises(DataError, match="holds 2 groups of task; filter it to one"):
        plots.system_profile(describe(scores.runs, "match", by="task"))


def test_agent_shares_draw_each_agents_share_and_fold_the_rest(scores: mas_eval.Scores) -> None:
    shares = agent_shares(scores["agent_process"])
    fig = plots.agent_shares(shares)
    assert [ax.get_xlabel() for ax in fig.axes] == ["Share of tokens", "Share of turns", "Share of tool calls"]
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    expected = [f"{s} · {a}" for s, a in shares.select("system", "agent_id").iter_rows()]
    assert labels == expected
    for ax, share in zip(fig.axes, ("token_share", "turn_share", "tool_call_share"), strict=True):
        widths = [p.get_width() for p in ax.patches]
        assert widths == pytest.approx(shares[share].fill_null(0.0).to_list())
        assert {p.get_gid() for p in ax.patches} == {f"share:{share}:mas", f"share:{share}:single"}
    # Past `top` agents per system, the rest is one bar holding their shares.
    folded = plots.agent_shares(shares, top=2)
    labels = [t.get_text() for t in folded.axes[0].get_yticklabels()]
    mas = shares.filter(system="mas")
    assert labels[:3] == [*(f"mas · {a}" for a in mas["agent_id"][:2]), f"mas · {mas.height - 2} other agents"]
    assert folded.axes[0].patches[2].get_width() == pytest.approx(mas["token_share"][2:].sum())
    # A measure no agent recorded has no panel.
    no_tools = shares.with_columns(tool_call_share=pl.lit(None, pl.Float64))
    assert len(plots.agent_shares(no_tools).axes) == 2
    with pytest.raises(DataError, match="filter it to one"):
        plots.agent_shares(agent_shares(scores["agent_process"], by="task"))


def test_every_new_figure_keeps_one_colour_per_system(scores: mas_eval.Scores) -> None:
    expected = plots.system_colours(["mas", "single"])
    runs = scores.runs
    figures = [
        plots.pass_rates(pass_rates(runs, "match")),
        plots.cost_per_correct(cost_per_correct(runs, "match")),
        plots.system_profile(describe(runs, ["match", "turns"])),
        plots.agent_shares(agent_shares(scores["agent_process"])),
    ]
    from matplotlib.colors import to_hex

    checked = {system: 0 for system in expected}
    for fig in figures:
        for artist in fig.findobj():
            gid = str(artist.get_gid())
            system = gid.rpartition(":")[2]
            if system in expected and ":" in gid:
                colour = artist.get_facecolor() if hasattr(artist, "get_width") else artist.get_color()
                if isinstance(artist, LineCollection):
                    colour = artist.get_colors()[0]
                rgb = np.asarray(colour).ravel()[:3] if not isinstance(colour, str) else colour
                if gid.startswith("per_run:"):
                    continue  # the white tick inside a bar
                assert to_hex(rgb) == expected[system].lower(), gid
                checked[system] += 1
    assert min(checked.values()) >= 10, checked
