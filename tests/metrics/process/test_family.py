"""The process family against its per-run oracle and a worked example, its registration, sharded
scoring (with the overhead statistic), and the simulator's planted imbalance and overhead."""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal, assert_series_equal

import mas_eval
from mas_eval import Dataset, Scores
from mas_eval.errors import InvalidParameterError
from mas_eval.metrics import family as families
from mas_eval.metrics import registry
from mas_eval.metrics.process.columns import SPENDING
from mas_eval.simulation.outcomes import simulate_outcomes
from mas_eval.stats import overhead
from tests.conftest import tiny_frames
from tests.oracles import process as oracle
from tests.strategies import process_tables

_RUN_LABELS = ["r2", "r10", "R", "run é", "r1"]

_RUNS = st.lists(st.sampled_from(_RUN_LABELS), min_size=1, max_size=4, unique=True).map(
    lambda ids: pl.DataFrame(
        {"run_id": ids, "system": (["mas", "single"] * 2)[: len(ids)], "case_id": ["c1", "c1", "c2", "c2"][: len(ids)]}
    )
)


def _close(got: object, want: object) -> bool:
    if want is None or got is None:
        return got is None and want is None
    return math.isclose(float(got), float(want), rel_tol=1e-12, abs_tol=1e-12)  # type: ignore[arg-type]


@st.composite
def _drawn(draw: st.DrawFn) -> tuple[dict[str, pl.DataFrame], bool]:
    return draw(process_tables(draw(_RUNS))), draw(st.booleans())


def _rows(frame: pl.DataFrame, run_id: str) -> list[dict]:
    return frame.filter(pl.col("run_id") == run_id).rows(named=True)


# 30 random Datasets of 1-4 runs, redundancy asked for or not: each scoring takes about 0.1 s.
@given(drawn=_drawn())
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_family_matches_its_per_run_oracle(drawn: tuple[dict[str, pl.DataFrame], bool]) -> None:
    frames, asked = drawn
    scores = mas_eval.score(Dataset.from_frames(**frames), redundancy=asked)
    got = {row["run_id"]: row for row in scores.runs.iter_rows(named=True)}
    agents = {(r["run_id"], r["agent_id"]): r for r in scores["agent_process"].iter_rows(named=True)}
    expected_agents = {}
    for run in frames["runs"].iter_rows(named=True):
        run_id = run["run_id"]
        tables = (_rows(frames[t], run_id) for t in ("messages", "usage", "tool_calls"))
        want, per_agent = oracle.process(run, *tables, asked=asked)
        row = got[run_id]
        assert all(_close(row[k], v) for k, v in want.items()), {k: (row[k], v) for k, v in want.items()}
        expected_agents |= {(run_id, a): v for a, v in per_agent.items()}
    assert set(agents) == set(expected_agents)
    for key, want in expected_agents.items():
        assert all(_close(agents[key][k], v) for k, v in want.items()), (agents[key], want)


# --- a worked example, by hand ---------------------------------------------------------------------


def _worked() -> Dataset:
    """Run a: agents x and y debate in round 1 (x twice), x alone in round 2; the user's prompt and a
    tool's result are not turns. Run b: one agent. Run c: no trace at all."""
    runs = pl.DataFrame({"run_id": ["a", "b", "c"], "system": ["mas", "single", "single"], "case_id": ["k"] * 3})
    messages = pl.DataFrame(
        {
            "run_id": ["a"] * 6 + ["b"],
            "round": ["1", "1", "1", "1", "1", "2", "1"],
            "agent_id": ["user", "x", "y", "tool", "x", "x", "x"],
            "turn": [0, 1, 2, 3, 4, 1, 1],
            "text": ["The plan?", "the plan is north", "The plan: south!", "north 12", "north bridge", "alone", "solo"],
            "role": ["user", "assistant", None, "tool", "assistant", None, None],
        }
    )
    usage = pl.DataFrame(
        {
            "run_id": ["a", "a", "a", "b"],
            "agent_id": ["x", "y", "judge", "x"],
            "model": ["m", "m", "m", "m"],
            "calls": [4, 1, 3, 2],
            "input_tokens": [700, 50, 5000, 90],
            "output_tokens": [100, 50, 500, 10],
            "evaluator": [None, False, True, None],
        }
    )
    tools = pl.DataFrame(
        {
            "run_id": ["a", "a", "a"],
            "agent_id": ["x", "x", "y"],
            "turn": [1, 2, 3],
            "tool": ["map"] * 3,
            "error": [None, "timeout", None],
        }
    )
    return Dataset.from_frames(runs=runs, messages=messages, usage=usage, tool_calls=tools)


def _mean_difference_gini(values: list[float]) -> float:
    """Gini's own definition (1912): the mean absolute difference over all ordered pairs, over twice the mean."""
    n = len(values)
    return sum(abs(a - b) for a in values for b in values) / (2 * n * sum(values))


def test_a_worked_example() -> None:
    scores = mas_eval.score(_worked(), redundancy=True)
    a, b, c = scores.runs.iter_rows(named=True)
    # Turns of run a: x's two in round 1 and one in round 2, y's one (the prompt and the tool result are not).
    assert (a["agents_active"], a["turns"], a["rounds"]) == (2, 4, 2)
    assert a["message_density"] == 4 / (2 * 2)
    # Round 1: x {the, plan, is, north} and y {the, plan, south} share 2 of 5 words; y and x's
    # {north, bridge} none: (0.4 + 0) / 2. Round 2 has one agent: no pair.
    assert a["redundancy"] == pytest.approx(0.2)
    # The judge's usage is the evaluator's: neither an agent nor the system's tokens.
    assert (a["system_tokens"], a["system_calls"]) == (900, 5)
    assert (a["tool_calls"], a["tool_errors"], a["tool_error_rate"]) == (3, 1, 1 / 3)
    # Turns 3 and 1, tokens 800 and 100, tool calls 2 and 1: Gini's mean difference gives the same.
    assert a["turn_gini"] == pytest.approx(_mean_difference_gini([3, 1])) == pytest.approx(0.25)
    assert a["token_gini"] == pytest.approx(_mean_difference_gini([800, 100])) == pytest.approx(7 / 18)
    assert a["tool_call_gini"] == pytest.approx(_mean_difference_gini([2, 1]))
    assert a["turn_balance"] == pytest.approx(0.75)
    assert (b["agents_active"], b["turns"], b["turn_gini"], b["turn_balance"], b["redundancy"]) == (
        1,
        1,
        0.0,
        1.0,
        None,
    )
    assert (b["tool_calls"], b["tool_error_rate"], b["tool_call_gini"]) == (0, None, None)
    assert all(c[name] is None for name in ("agents_active", "turns", "rounds", "tool_calls", "system_tokens"))
    shares = (
        scores["agent_process"]
        .filter(pl.col("run_id") == "a")
        .select("agent_id", "turns", "tokens", "tool_calls", "turn_share", "token_share", "tool_call_share")
    )
    assert shares.rows() == [("x", 3, 800, 2, 0.75, 800 / 900, 2 / 3), ("y", 1, 100, 1, 0.25, 100 / 900, 1 / 3)]


def test_redundancy_is_computed_only_when_asked_for() -> None:
    asked, default = mas_eval.score(_worked(), redundancy=True), mas_eval.score(_worked())
    assert (default.params["redundancy"], asked.params["redundancy"]) == (False, True)
    assert default.runs["redundancy"].null_count() == default.runs.height
    assert asked.runs["redundancy"].to_list() == [pytest.approx(0.2), None, None]
    # Nothing else changes.
    for name in asked.names:
        assert_frame_equal(default[name].drop("redundancy", strict=False), asked[name].drop("redundancy", strict=False))
    assert families.parse_override("redundancy=true") == ("redundancy", True)
    with pytest.raises(InvalidParameterError, match="redundancy must be True or False"):
        mas_eval.score(_worked(), redundancy="yes")


def test_the_gini_of_a_long_vector_is_the_pinned_one() -> None:
    # R's ineq::Gini help-page vector: Gini(x, corr = FALSE) = 0.4620911. One agent per value, each
    # with that many turns (the family sorts them: no pairwise shortcut beyond 16 agents either).
    x = [541, 1463, 2445, 3438, 4437, 5401, 6392, 8304, 11904, 22261] * 2
    messages = pl.DataFrame(
        {"run_id": "r", "round": "1", "agent_id": [f"g{i:02d}" for i in range(len(x))], "turn": 1, "text": "x"}
    ).with_columns(pl.col("turn").cast(pl.Int64))
    usage = messages.select("run_id", "agent_id", model=pl.lit("m"), input_tokens=pl.Series(x, dtype=pl.Int64))
    runs = pl.DataFrame({"run_id": ["r"], "system": ["mas"], "case_id": ["k"]})
    row = mas_eval.score(Dataset.from_frames(runs=runs, messages=messages, usage=usage)).runs.row(0, named=True)
    # Repeating a vector leaves the uncorrected Gini unchanged.
    assert row["token_gini"] == pytest.approx(0.4620911, abs=1e-7)
    assert row["turn_gini"] == 0.0 and row["turn_balance"] == 1.0


# --- registration and the manifest -----------------------------------------------------------------


def test_the_family_is_registered_and_skipped_without_a_trace(tmp_path: Path) -> None:
    family = families.get("process")
    assert family.needs == ("runs", ("messages", "usage", "tool_calls"))
    assert set(family.reads) == {"messages", "usage", "tool_calls"}
    assert registry.OUTPUT_TABLES["agent_process"].family == "process"
    assert {"turn_gini", "redundancy", "system_tokens"} <= set(registry.columns("runs", "process"))
    assert set(SPENDING) <= set(registry.columns("runs", "process"))
    without = mas_eval.score(Dataset.from_frames(**tiny_frames()))
    reason = "the Dataset has no 'messages' or 'usage' or 'tool_calls' table"
    assert "process" not in without.ran and without.skipped["process"] == reason
    assert "agent_process" not in without and "turns" not in without.runs.columns
    folder = mas_eval.score(_worked(), out=tmp_path / "scores").source
    manifest = Scores.manifest(folder)
    assert "process" in manifest["families"]["ran"] and "agent_process" in manifest["tables"]
    # One of the three tables is enough.
    for name in ("messages", "usage", "tool_calls"):
        ds = _worked()
        only = Dataset.from_frames(runs=ds.collect("runs"), **{name: ds.collect(name)})
        assert "process" in mas_eval.score(only).ran


# --- shards and workers ------------------------------------------------------------------------------


@pytest.mark.slow
def test_sharded_scoring_and_the_overhead_are_those_of_an_unsharded_scoring(tmp_path: Path) -> None:
    ds = simulate_outcomes(240, seed=5, epochs=3, trace=True, lead_share=0.6)
    whole = mas_eval.score(ds, redundancy=True)
    assert whole.runs["redundancy"].count() > 0
    folder = ds.write(tmp_path / "ds", shards=4)
    # Shard by shard in this process, and in two worker processes writing a Scores folder.
    in_memory = mas_eval.score(Dataset.open(folder), workers=1, redundancy=True)
    on_disk = mas_eval.score(Dataset.open(folder), out=tmp_path / "scores", workers=2, redundancy=True)
    for got in (in_memory, on_disk):
        assert got.names == whole.names and got.ran == whole.ran
        for name in whole.names:
            assert_frame_equal(got[name], whole[name], check_exact=True)
        for level in ("run", "system"):
            assert_frame_equal(
                overhead(got, level=level),
                overhead(whole, level=level),
                check_exact=True,  # type: ignore[arg-type]
            )


def test_redundancy_does_not_depend_on_how_the_runs_are_batched(monkeypatch: pytest.MonkeyPatch) -> None:
    # Batches of about 64 MB of text hold every run here; at 1 byte each run is a batch of its own.
    ds = simulate_outcomes(120, seed=3, trace=True, rounds=3)
    whole = mas_eval.score(ds, redundancy=True).runs["redundancy"]
    monkeypatch.setattr("mas_eval.metrics.process.redundancy._BATCH_BYTES", 1)
    assert whole.count() > 0
    assert_series_equal(mas_eval.score(ds, redundancy=True).runs["redundancy"], whole, check_exact=True)


# --- the simulator's planted imbalance and overhead --------------------------------------------------


def test_the_planted_imbalance_and_overhead_are_recovered() -> None:
    # Teams of 3; the coordinator takes 80 % of the turns (each solver 10 %) over 20 rounds; the MAS
    # spends 5 times the single agent's tokens.
    ds = simulate_outcomes(
        2_000, seed=7, epochs=5, trace=True, rounds=20, lead_share=0.8, agents=(3, 3), mas_tokens=5_000,
        single_tokens=1_000,
    )  # fmt: skip
    scores = mas_eval.score(ds)
    mas = scores.runs.filter(system="mas")
    coordinator = scores["agent_process"].filter(system="mas", agent_id="coordinator")
    assert coordinator["turn_share"].mean() == pytest.approx(0.8, abs=0.01)
    # Shares (0.1, 0.1, 0.8): G = (-2 * 0.1 + 0 * 0.1 + 2 * 0.8) / 3.
    assert mas["turn_gini"].mean() == pytest.approx(1.4 / 3, abs=0.02)
    assert mas["turns"].unique().to_list() == [60] and mas["agents_active"].unique().to_list() == [3]
    summary = overhead(scores, "system_tokens", level="system").filter(system="mas").row(0, named=True)
    assert summary["ratio_of_means"] == pytest.approx(5, rel=0.03)
    assert summary["mean_ratio"] == pytest.approx(5, rel=0.05) and summary["matched"] == 1_000
    # The default: every agent speaks once a round, a balance of 1.
    balanced = mas_eval.score(simulate_outcomes(200, seed=7, trace=True)).runs
    assert balanced.filter(system="mas")["turn_balance"].unique().to_list() == [1.0]


def test_the_simulated_trace_is_valid_and_reproducible() -> None:
    a, b = (simulate_outcomes(120, seed=2, trace=True, tool_rate=1.0) for _ in range(2))
    a.validate()
    for name in a.table_names:
        assert_frame_equal(a.collect(name), b.collect(name), check_exact=True)
    plain = simulate_outcomes(120, seed=2)
    for name in plain.table_names:  # the trace draws after everything else: the other tables are unchanged
        expected = plain.collect(name)
        assert_frame_equal(a.collect(name).select(expected.columns).drop("tool_calls", "tool_errors", strict=False),
                           expected.drop("tool_calls", "tool_errors", strict=False), check_exact=True)  # fmt: skip
    runs = a.collect("runs")
    counted = a.collect("tool_calls").group_by("run_id").agg(pl.len().alias("n"), pl.col("error").count().alias("e"))
    joined = runs.join(counted, on="run_id", how="left").with_columns(pl.col("n", "e").fill_null(0))
    assert (joined["tool_calls"] == joined["n"]).all() and (joined["tool_errors"] == joined["e"]).all()
