"""The outcomes family (SPEC §3b) against its per-run oracle, its named columns through compare, shards
and the Scores folder, and the outcomes simulator's planted effects."""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import mas_eval
from mas_eval import DataError, Dataset, InvalidParameterError, Scores
from mas_eval.cli import main
from mas_eval.metrics import registry
from mas_eval.scoring.shards import score_shards
from mas_eval.simulation.outcomes import simulate_outcomes
from tests.oracles import outcomes as oracle
from tests.strategies import outcome_tables

# Labels whose sort order is not their order of creation.
_RUN_LABELS = ["r2", "r10", "R", "run é", "r1"]


_RUNS = st.lists(st.sampled_from(_RUN_LABELS), min_size=1, max_size=4, unique=True).map(
    lambda ids: pl.DataFrame(
        {"run_id": ids, "system": (["mas", "single"] * 2)[: len(ids)], "case_id": ["c1"] * len(ids)}
    )
)


def _close(got: object, want: object) -> bool:
    if want is None or got is None:
        return got is None and want is None
    if isinstance(want, bool) or isinstance(got, bool):
        return got == want
    return math.isclose(float(got), float(want), rel_tol=1e-12, abs_tol=1e-12)  # type: ignore[arg-type]


@st.composite
def _drawn(draw: st.DrawFn) -> dict[str, pl.DataFrame]:
    return draw(outcome_tables(draw(_RUNS)))


@given(frames=_drawn())
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_family_matches_its_per_run_oracle(frames: dict[str, pl.DataFrame]) -> None:
    scores = mas_eval.score(Dataset.from_frames(**frames))
    runs, usage, outcomes = (frames[name].rows(named=True) for name in ("runs", "usage", "outcomes"))
    pass_fail = {row["name"] for row in outcomes if row["passed"] is not None}
    names = sorted({row["name"] for row in outcomes})
    assert scores.named == {"outcomes": names}
    got = {row["run_id"]: row for row in scores.runs.iter_rows(named=True)}
    for run in runs:
        want = oracle.run_usage(run, [u for u in usage if u["run_id"] == run["run_id"]])
        want |= dict.fromkeys(names) | oracle.score_columns(
            [o for o in outcomes if o["run_id"] == run["run_id"]], pass_fail
        )
        row = got[run["run_id"]]
        assert row["epoch"] == run["epoch"]
        assert all(_close(row[k], v) for k, v in want.items()), (row, want)
    for name in names:
        assert scores.runs.schema[name] == (pl.Boolean if name in pass_fail else pl.Float64)
    shares = {(r["run_id"], r["agent_id"], r["model"]): r for r in scores["agent_usage"].iter_rows(named=True)}
    expected = {
        (run["run_id"], *key): value
        for run in runs
        for key, value in oracle.agent_shares([u for u in usage if u["run_id"] == run["run_id"]]).items()
    }
    assert set(shares) == set(expected)
    for key, want in expected.items():
        assert all(_close(shares[key][k], v) for k, v in want.items()), (shares[key], want)


def _simulated(runs: int = 240, **options: object) -> Dataset:
    return simulate_outcomes(runs, seed=3, epochs=3, **options)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def scored() -> Scores:
    return mas_eval.score(_simulated())


def test_a_score_is_compared_by_its_name(scored: Scores, tmp_path: Path) -> None:
    assert scored.runs.schema["match"] == pl.Boolean and scored.runs.schema["f1"] == pl.Float64
    assert scored.runs.columns[5] == "epoch" and scored.runs.columns[-2:] == ["f1", "match"]
    table = mas_eval.compare(scored.runs, ["match", "f1"], pair_on="case_id")
    assert table["metric"].to_list() == ["match", "f1"]
    folder = scored.write(tmp_path / "scores")
    assert Scores.manifest(folder)["named"] == {"outcomes": ["f1", "match"]}
    assert Scores.open(folder).named == scored.named
    with pytest.raises(SystemExit) as exited:
        main(["compare", str(folder), "--metrics", "match", "--pair-on", "case_id"])
    assert exited.value.code in (0, None)


def test_sharded_scoring_gives_the_same_scores_even_when_a_shard_lacks_a_name(tmp_path: Path) -> None:
    ds = _simulated()
    frames = {name: ds[name].collect() for name in ds.table_names}
    # One run alone has the score "rare": every shard but its own lacks the name.
    rare = pl.DataFrame({"run_id": ["r0000007"], "name": ["rare"], "value": [2.5], "passed": [None]})
    frames["outcomes"] = pl.concat([frames["outcomes"], rare], how="diagonal_relaxed")
    whole = mas_eval.score(Dataset.from_frames(**frames))
    folder = Dataset.from_frames(**frames).write(tmp_path / "ds", shards=4)
    in_memory = mas_eval.score(Dataset.open(folder))
    on_disk = Scores.open(score_shards(Dataset.open(folder), tmp_path / "scores"))
    assert whole.named == {"outcomes": ["f1", "match", "rare"]}
    for got in (in_memory, on_disk):
        assert got.named == whole.named and got.names == whole.names
        for name in whole.names:
            assert_frame_equal(got[name], whole[name], check_exact=True)


@pytest.mark.parametrize("name", ["dqs", "epoch", "run_tokens", "system", "_run_id_outcomes"])
def test_a_score_named_like_another_column_is_an_error(name: str) -> None:
    ds = _simulated(40)
    frames = {table: ds[table].collect() for table in ds.table_names}
    frames["outcomes"] = frames["outcomes"].with_columns(pl.col("name").replace("f1", name))
    with pytest.raises(DataError, match=rf"outcomes.name: the score\(s\) '{name}' would be runs column"):
        mas_eval.score(Dataset.from_frames(**frames))


def test_a_score_pass_fail_in_some_runs_only_is_an_error() -> None:
    ds = _simulated(40)
    frames = {table: ds[table].collect() for table in ds.table_names}
    frames["outcomes"] = frames["outcomes"].with_columns(
        pl.when(pl.col("name") == "match", pl.col("run_id") == "r0000001")
        .then(None)
        .otherwise("passed")
        .alias("passed")
    )
    with pytest.raises(DataError, match=r"'match' have outcomes.passed in some runs and null in others"):
        mas_eval.score(Dataset.from_frames(**frames))


def test_the_named_columns_are_declared_in_the_registry() -> None:
    assert [entry.source for entry in registry.NAMED if entry.family == "outcomes"] == ["outcomes.name"]
    assert {"run_tokens", "run_cost_usd", "run_calls"} <= set(registry.columns("runs", "outcomes"))
    assert "epoch" in registry.reserved("runs")


def test_the_simulator_is_reproducible_and_valid() -> None:
    a, b, other = _simulated(120), _simulated(120), simulate_outcomes(120, seed=4, epochs=3)
    a.validate()
    for name in ("runs", "usage", "outcomes"):
        assert_frame_equal(a[name].collect(), b[name].collect(), check_exact=True)
    assert not a["outcomes"].collect().equals(other["outcomes"].collect())
    runs = a["runs"].collect()
    assert (
        runs.group_by("system", "case_id").agg(pl.col("epoch").sort()).get_column("epoch").to_list() == [[1, 2, 3]] * 40
    )
    usage = a["usage"].collect().group_by("run_id").agg(pl.col("input_tokens", "output_tokens", "calls").sum())
    joined = runs.join(usage, on="run_id", suffix="_usage")
    assert (joined["input_tokens"] + joined["output_tokens"] == joined["tokens"]).all()
    assert (joined["api_calls"] == joined["calls"]).all()


def test_the_simulator_refuses_a_pass_probability_outside_0_1() -> None:
    with pytest.raises(InvalidParameterError, match=r"single_pass \+ effect = 1.1"):
        simulate_outcomes(100, seed=0, single_pass=0.9, effect=0.2)


def test_the_planted_effects_are_recovered() -> None:
    # The MAS better run for run (0.75 against 0.65) but 7 times the tokens; the single agent's
    # majority over 7 epochs (the tokens of one MAS run) passes with probability 0.80.
    ds = simulate_outcomes(
        7_000, seed=11, epochs=7, single_pass=0.65, effect=0.1, case_sd=0.0, mas_tokens=7_000, single_tokens=1_000
    )
    runs = mas_eval.score(ds).runs
    per_system = runs.group_by("system").agg(pl.col("match").mean(), pl.col("run_tokens").mean())
    rate = dict(per_system.select("system", "match").iter_rows())
    tokens = dict(per_system.select("system", "run_tokens").iter_rows())
    assert rate["mas"] == pytest.approx(0.75, abs=0.03) and rate["single"] == pytest.approx(0.65, abs=0.03)
    assert tokens["mas"] / tokens["single"] == pytest.approx(7, rel=0.05)
    majority = (
        runs.filter(system="single")
        .group_by("case_id")
        .agg((pl.col("match").sum() * 2 > pl.len()).alias("majority"))["majority"]
        .mean()
    )
    assert majority == pytest.approx(0.80, abs=0.05) and majority > rate["mas"]
    coordinator = mas_eval.score(ds)["agent_usage"].filter(agent_id="coordinator")["token_share"].mean()
    assert 0.3 < coordinator < 0.55  # Gamma(2) against Gamma(1) for each of 2-4 solvers


def test_a_judge_s_usage_is_apart_from_the_run_s_and_cost_per_correct_says_so() -> None:
    """A judge's usage rows (evaluator true) are not the system's: out of run_tokens, run_calls,
    run_cost_usd and the shares, counted as evaluator_tokens and evaluator_cost_usd. Values by hand."""
    runs = pl.DataFrame({"run_id": ["a", "b"], "system": ["mas", "single"], "case_id": ["c1", "c1"], "epoch": [1, 1]})
    outcomes = pl.DataFrame({"run_id": ["a", "b"], "name": "ok", "value": [1.0, 1.0], "passed": [True, True]})
    usage = pl.DataFrame(
        {
            "run_id": ["a", "a", "a", "b"],
            "agent_id": ["critic", "proposer", "model_graded_fact", "single"],
            "model": "m",
            "calls": [2, 2, 1, 1],
            "input_tokens": [100, 300, 50, 80],
            "output_tokens": [0, 0, 10, 20],
            "cost_usd": [0.1, 0.3, 0.05, 0.02],
            "evaluator": [None, False, True, None],
        }
    )
    scores = mas_eval.score(Dataset.from_frames(runs=runs, outcomes=outcomes, usage=usage))
    got = {r["run_id"]: r for r in scores.runs.iter_rows(named=True)}
    assert (got["a"]["run_tokens"], got["a"]["run_calls"]) == (400, 4)
    assert got["a"]["run_cost_usd"] == pytest.approx(0.4)
    assert (got["a"]["evaluator_tokens"], got["a"]["evaluator_cost_usd"]) == (60, pytest.approx(0.05))
    assert got["b"]["evaluator_tokens"] is None and got["b"]["run_tokens"] == 100
    shares = {r["agent_id"]: r for r in scores["agent_usage"].filter(pl.col("run_id") == "a").iter_rows(named=True)}
    assert shares["critic"]["token_share"] == pytest.approx(0.25) and shares["proposer"]["call_share"] == 0.5
    assert shares["model_graded_fact"]["token_share"] is None and shares["model_graded_fact"]["tokens"] == 60
    table = mas_eval.stats.cost_per_correct(scores, "ok", cost=None)
    mas = table.filter(pl.col("system") == "mas").row(0, named=True)
    assert (mas["tokens"], mas["tokens_per_correct"], mas["evaluator_tokens"]) == (400.0, 400.0, 60.0)
    assert "a judge's tokens (evaluator_tokens) are left out" in mas["note"]
    assert table.filter(pl.col("system") == "single")["note"].to_list() == [None]
