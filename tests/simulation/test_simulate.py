"""The simulator: valid, reproducible, structured as documented, with the planted effect."""

from __future__ import annotations

import warnings
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import mas_eval
from mas_eval import Dataset, InvalidParameterError
from mas_eval.data.schema import TABLES
from mas_eval.simulation.decision import simulate
from tests.conftest import run_cli_process

DECISION_TABLES = ["runs", "agents", "beliefs", "criteria", "scores", "alt_scores"]


@pytest.fixture(scope="module")
def frames() -> dict[str, pl.DataFrame]:
    ds = simulate(2_000, seed=11, effect=0.05).validate()
    return ds.frames()


def _dqs(frames: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """DQS (criteria method: the first step of the cascade) per run, written out plainly: weighted and unweighted."""
    runs = frames["runs"].select("run_id", "system", "recommended", "correct")
    satisfaction = pl.when(pl.col("kind") == "cost").then(1 - pl.col("score")).otherwise(pl.col("score"))
    return (
        frames["scores"]
        .join(runs, left_on=["run_id", "alternative"], right_on=["run_id", "recommended"])
        .join(frames["criteria"], on=["run_id", "criterion"])
        .with_columns(s=satisfaction)
        .group_by("run_id", "system")
        .agg(
            weighted=(pl.col("weight") * pl.col("s")).sum() / pl.col("weight").sum(),
            plain=pl.col("s").mean(),
        )
        .sort("run_id")
    )


def _system_means(frame: pl.DataFrame, *columns: str) -> dict[str, dict[str, float]]:
    means = frame.group_by("system").agg(pl.col(c).mean() for c in columns).sort("system")
    return {row["system"]: row for row in means.to_dicts()}


# -- validity and reproducibility ----------------------------------------------------------------


def test_tables_are_valid_and_follow_the_schema(frames: dict[str, pl.DataFrame]) -> None:
    assert list(frames) == DECISION_TABLES
    for name, frame in frames.items():
        assert frame.schema == TABLES[name].polars_schema, name
        assert frame.height > 0
    assert frames["runs"].height == 2_000


def test_write_and_reopen_round_trip(tmp_path: Path) -> None:
    ds = simulate(200, seed=3)
    back = Dataset.open(ds.write(tmp_path / "sim")).validate()
    for name, frame in ds.frames().items():
        assert_frame_equal(back.collect(name), frame)


def test_same_seed_gives_identical_frames() -> None:
    first = simulate(300, seed=5, repeats=2, mas_share=0.6).frames()
    second = simulate(300, seed=5, repeats=2, mas_share=0.6).frames()
    for name in DECISION_TABLES:
        assert_frame_equal(first[name], second[name])


def test_different_seeds_differ() -> None:
    first = simulate(300, seed=5).frames()
    second = simulate(300, seed=6).frames()
    assert not first["scores"].equals(second["scores"])
    assert not first["beliefs"].equals(second["beliefs"])
    assert not first["runs"].select("recommended").equals(second["runs"].select("recommended"))


def test_progress_is_called_once_per_table() -> None:
    seen: list[str] = []
    simulate(50, seed=1, progress=seen.append)
    assert [step.split(":")[0] for step in seen] == DECISION_TABLES
    assert seen[0] == "runs: 50 rows"


# -- structure -----------------------------------------------------------------------------------


def test_ids_and_labels(frames: dict[str, pl.DataFrame]) -> None:
    runs = frames["runs"]
    assert runs["run_id"][:2].to_list() == ["r0000001", "r0000002"]
    assert runs["run_id"].is_unique().all()
    assert set(runs["system"]) == {"mas", "single"}
    assert set(runs["task"]) == {"task1", "task2", "task3"}
    assert set(runs["variant"]) == {"v1", "v2"}
    assert runs["case_id"].str.starts_with("case").all()
    assert set(frames["criteria"]["criterion"]) <= {f"c{i}" for i in range(1, 6)}
    assert set(frames["alt_scores"]["alternative"]) <= {f"alt{i}" for i in range(1, 7)}
    assert set(frames["agents"]["agent_id"]) <= {f"a{i}" for i in range(1, 8)}


def test_agent_counts(frames: dict[str, pl.DataFrame]) -> None:
    counts = frames["agents"].group_by("run_id").len().join(frames["runs"], on="run_id")
    assert counts.height == frames["runs"].height  # every run has agents
    mas = counts.filter(pl.col("system") == "mas")["len"]
    assert mas.min() == 3
    assert mas.max() == 7
    single = counts.filter(pl.col("system") == "single")
    assert (single["len"] == 1).all()
    roles = frames["agents"].join(frames["runs"], on="run_id").group_by("system").agg(pl.col("role").n_unique())
    assert dict(roles.iter_rows()) == {"mas": 7, "single": 1}


def test_every_case_is_run_by_both_systems(frames: dict[str, pl.DataFrame]) -> None:
    per_case = frames["runs"].group_by("case_id", "system").len()
    assert (per_case["len"] == 1).all()  # repeats=1, mas_share=0.5
    assert (per_case.group_by("case_id").len()["len"] == 2).all()
    # A case fixes task, variant and cluster; a cluster holds cases_per_cluster = 4 cases of one task.
    fixed = frames["runs"].group_by("case_id").agg(pl.col("task", "variant", "cluster").n_unique())
    assert (fixed.select(pl.all().exclude("case_id")) == 1).to_numpy().all()
    clusters = frames["runs"].group_by("cluster").agg(pl.col("case_id").n_unique(), pl.col("task").n_unique())
    assert clusters["case_id"].max() == 4
    assert (clusters["task"] == 1).all()


@pytest.mark.parametrize(("repeats", "mas_share"), [(2, 0.5), (1, 0.7), (3, 0.25)])
def test_repeats_and_mas_share(repeats: int, mas_share: float) -> None:
    runs = simulate(601, seed=2, repeats=repeats, mas_share=mas_share).collect("runs")
    assert runs.height == 601
    assert (runs["system"] == "mas").sum() == round(601 * mas_share)
    per_case = runs.group_by("case_id").agg(
        mas=(pl.col("system") == "mas").sum(), single=(pl.col("system") == "single").sum()
    )
    minority = per_case.select(pl.min_horizontal("mas", "single"))
    assert minority.to_series().min() >= repeats
    assert per_case.height == min(round(601 * mas_share), 601 - round(601 * mas_share)) // repeats


def test_alternatives_and_criteria(frames: dict[str, pl.DataFrame]) -> None:
    n_alt = frames["alt_scores"].group_by("run_id").len()["len"]
    assert n_alt.min() == 3
    assert n_alt.max() == 6
    criteria = frames["criteria"]
    n_crit = criteria.group_by("run_id").len()["len"]
    assert n_crit.min() == 2
    assert n_crit.max() == 5
    assert set(criteria["kind"]) == {"benefit", "cost"}
    assert (criteria["scale"] == "satisfaction").all()
    assert (criteria["weight"] >= 0).all()
    kinds = criteria.group_by("run_id").agg(pl.col("kind").n_unique())
    assert (kinds["kind"] == 2).all()  # every run has >= 2 criteria, hence both kinds
    # Runs of the same case share the case's criteria.
    with_case = criteria.join(frames["runs"].select("run_id", "case_id"), on="run_id")
    distinct = with_case.group_by("case_id", "criterion").agg(pl.col("weight", "kind").n_unique())
    assert (distinct["weight"] == 1).all()
    assert (distinct["kind"] == 1).all()
    # The scores table is the full alternatives x criteria grid of each run.
    grid = (
        frames["alt_scores"]
        .group_by("run_id")
        .len()
        .join(criteria.group_by("run_id").len(), on="run_id", suffix="_crit")
    )
    cells = frames["scores"].group_by("run_id").len().rename({"len": "cells"})
    grid = grid.join(cells, on="run_id")
    assert (grid["len"] * grid["len_crit"] == grid["cells"]).all()


def test_values_lie_in_their_ranges(frames: dict[str, pl.DataFrame]) -> None:
    assert frames["scores"]["score"].is_between(0, 1).all()
    assert frames["alt_scores"].select(pl.col("mcda", "final").is_between(0, 1).all()).row(0) == (True, True)
    assert frames["agents"]["confidence"].is_between(0, 1).all()
    assert (frames["beliefs"]["mass"] >= 0).all()
    totals = frames["beliefs"].group_by("run_id", "agent_id").agg(pl.col("mass").sum())["mass"]
    assert totals.max() <= 1 + 1e-9
    assert totals.min() >= 0.85
    assert (totals < 0.99).any()  # some beliefs are incomplete


def test_recommended_and_correct_are_alternatives_of_the_run(frames: dict[str, pl.DataFrame]) -> None:
    runs, alts = frames["runs"], frames["alt_scores"].select("run_id", "alternative")
    matched = runs.join(alts, left_on=["run_id", "recommended"], right_on=["run_id", "alternative"])
    assert matched.height == runs.height
    known = runs.filter(pl.col("correct").is_not_null())
    assert known.join(alts, left_on=["run_id", "correct"], right_on=["run_id", "alternative"]).height == known.height
    # correct is a property of the case: recorded for 70 % of the cases, for all their runs.
    per_case = runs.group_by("case_id").agg(
        answers=pl.col("correct").n_unique(), missing=pl.col("correct").null_count()
    )
    assert (per_case["answers"] == 1).all()
    with_truth = (per_case["missing"] == 0).sum()
    assert with_truth == round(0.7 * per_case.height)


def test_confidence_and_usage(frames: dict[str, pl.DataFrame]) -> None:
    runs = frames["runs"]
    single = runs.filter(pl.col("system") == "single").join(frames["agents"], on="run_id", suffix="_agent")
    assert single["confidence"].null_count() == 0
    assert (single["confidence"] == single["confidence_agent"]).all()
    assert runs.filter(pl.col("system") == "mas")["confidence"].null_count() == runs.height // 2
    means = _system_means(runs, "iterations", "api_calls", "seconds", "tokens", "cost_usd")
    for column in ("iterations", "api_calls", "seconds", "tokens", "cost_usd"):
        assert means["mas"][column] > means["single"][column], column
    assert runs.select(pl.col("iterations", "api_calls", "tokens").min()).row(0) >= (1, 1, 1)
    assert (runs["seed"] >= 0).all()


# -- the planted effect --------------------------------------------------------------------------


@pytest.mark.parametrize("effect", [0.1, 0.0, -0.05])
def test_realised_dqs_difference_matches_effect(effect: float) -> None:
    frames = simulate(20_000, seed=42, effect=effect).frames()
    means = _system_means(_dqs(frames), "weighted", "plain")
    for column in ("weighted", "plain"):
        diff = means["mas"][column] - means["single"][column]
        assert diff == pytest.approx(effect, abs=0.01), column
    # Quality sits mid-scale, so clipping to [0, 1] is rare.
    assert 0.4 < means["single"]["weighted"] < 0.75
    hits = (
        frames["runs"]
        .filter(pl.col("correct").is_not_null())
        .with_columns(hit=(pl.col("recommended") == pl.col("correct")).cast(pl.Float64))
    )
    hit = _system_means(hits, "hit")
    gain = hit["mas"]["hit"] - hit["single"]["hit"]
    assert gain == pytest.approx(2.5 * effect, abs=0.03)


@pytest.mark.parametrize(("effect", "seed"), [(0.05, 43), (0.0, 44), (-0.08, 45)])
def test_compare_recovers_the_effect_in_dqs_raw_within_its_ci(effect: float, seed: int) -> None:
    # Issue 9, item 10: `effect` is the difference in mean dqs_raw, what the help says; the boosted
    # dqs differs more when effect > 0, as the MAS then also matches the ground truth more often.
    # Measured over seeds 0-139 at 20,000 runs: the mean estimate of effect=0.05 was 0.04989 (SE
    # 0.00012), i.e. unbiased, and the paired 95% CI covered it for 130 of 140 seeds. A fixed seed
    # keeps the check deterministic; about 1 seed in 14 misses, as a 95% interval should now and then.
    scores = mas_eval.score(simulate(20_000, seed=seed, effect=effect))
    rows = mas_eval.compare(scores, ["dqs_raw", "dqs"], pair_on="case_id")
    raw, boosted = rows.row(0, named=True), rows.row(1, named=True)
    assert raw["ci_low"] <= effect <= raw["ci_high"]
    if effect > 0:
        assert boosted["difference"] > raw["difference"]


def test_mas_matches_correct_more_often_by_default(frames: dict[str, pl.DataFrame]) -> None:
    hits = frames["runs"].filter(pl.col("correct").is_not_null())
    rate = _system_means(hits.with_columns(hit=pl.col("recommended") == pl.col("correct")), "hit")
    assert rate["mas"]["hit"] > rate["single"]["hit"]


# -- argument validation -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("runs", "kwargs", "match"),
    [
        (1, {}, r"runs=1 is invalid; runs must be an integer in \[2, 4400000\]$"),
        (2.5, {}, r"runs=2.5 is invalid; runs must be an integer in \[2, 4400000\]$"),
        (True, {}, r"runs=True is invalid; runs must be an integer in \[2, 4400000\]$"),
        (100, {"seed": "x"}, r"seed='x' is invalid; seed must be an integer >= 0$"),
        (100, {"seed": -1}, r"seed=-1 is invalid; seed must be an integer >= 0$"),
        (100, {"effect": 1.5}, r"effect=1.5 is invalid; effect must be a number in \[-1, 1\]$"),
        (100, {"effect": float("nan")}, r"effect=nan is invalid; effect must be a number in \[-1, 1\]$"),
        (100, {"mas_share": 0.0}, r"mas_share=0.0 is invalid; mas_share must be a number in \(0, 1\)$"),
        (100, {"mas_share": 1.0}, r"mas_share=1.0 is invalid; mas_share must be a number in \(0, 1\)$"),
        (100, {"ground_truth_share": -0.1}, r"ground_truth_share=-0.1 is invalid; .* a number in \[0, 1\]$"),
        (100, {"repeats": 0}, r"repeats=0 is invalid; repeats must be an integer >= 1$"),
        (100, {"tasks": 0}, r"tasks=0 is invalid; tasks must be an integer in \[1, 4400000\]$"),
        (100, {"variants": 0}, r"variants=0 is invalid; variants must be an integer in \[1, 4400000\]$"),
        (
            100,
            {"agents": (5, 3)},
            r"agents=\(5, 3\) is invalid; agents must be a \(min, max\) pair of integers in \[2, 1000\] ",
        ),
        (
            100,
            {"agents": (1, 3)},
            r"agents=\(1, 3\) is invalid; agents must be a \(min, max\) pair of integers in \[2, 1000\] ",
        ),
        (
            100,
            {"agents": 3},
            r"agents=3 is invalid; agents must be a \(min, max\) pair of integers in \[2, 1000\] with min <= max",
        ),
        (100, {"alternatives": (1, 4)}, r"alternatives=\(1, 4\) is invalid; .* pair of integers in \[2, 1000\] "),
        (100, {"criteria": (0, 4)}, r"criteria=\(0, 4\) is invalid; .* pair of integers in \[1, 1000\] "),
        (100, {"criteria": (4, 2)}, r"criteria=\(4, 2\) is invalid; .* with min <= max$"),
        (100, {"cases_per_cluster": 0}, r"cases_per_cluster=0 is invalid; .* an integer in \[1, 4400000\]$"),
        (100, {"progress": 3}, r"progress=3 is invalid; progress must be a callable taking a description or None$"),
        (10, {"repeats": 6}, r"too few for every case"),
        (10, {"mas_share": 0.01}, r"too few for every case"),
    ],
)
def test_bad_arguments_raise_clear_errors(runs: object, kwargs: dict[str, object], match: str) -> None:
    kwargs = {"seed": 1, **kwargs}
    with pytest.raises(InvalidParameterError, match=match) as info:
        simulate(runs, **kwargs)  # type: ignore[arg-type]
    assert str(info.value).startswith("simulate_decision: ")
    assert isinstance(info.value, ValueError)


@pytest.mark.subprocess
def test_the_cli_answers_bad_simulate_arguments_with_one_line_and_exit_2(tmp_path: Path) -> None:
    for args, line in (
        (["--runs", "1"], "error: simulate_decision: runs=1 is invalid; runs must be an integer in [2, 4400000]"),
        (["--effect", "5"], "error: simulate_decision: effect=5.0 is invalid; effect must be a number in [-1, 1]"),
        (["--tasks", "0"], "error: simulate_decision: tasks=0 is invalid; tasks must be an integer in [1, 4400000]"),
        (
            ["--runs", "100", "--repeats", "1000"],
            "error: simulate_decision: runs=100 with mas_share=0.5 gives 50 MAS and 50 single runs, too few for every "
            "case to be run 1000 time(s) by both systems; raise runs or lower repeats",
        ),
    ):
        done = run_cli_process("simulate", "--out", str(tmp_path / "ds"), *args)
        assert (done.returncode, done.stderr.strip().splitlines()) == (2, [line])
        assert not (tmp_path / "ds").exists()


def test_extreme_but_valid_arguments() -> None:
    ds = simulate(
        2,
        seed=0,
        agents=(2, 2),
        alternatives=(2, 2),
        criteria=(1, 1),
        ground_truth_share=0.0,
        tasks=1,
        variants=1,
        cases_per_cluster=1,
    ).validate()
    runs = ds.collect("runs")
    assert runs["system"].to_list() == ["mas", "single"]
    assert runs["correct"].null_count() == 2
    assert ds.collect("agents").height == 3
    assert ds.collect("scores").height == 4


def test_large_teams_and_choice_sets_keep_distinct_ids() -> None:
    # Codes are stored in the narrowest integer type: more than 255 labels must not wrap around.
    ds = simulate(4, seed=1, agents=(300, 300), alternatives=(260, 260), criteria=(2, 2)).validate()
    agents = ds.collect("agents")
    assert agents["agent_id"].n_unique() == 300
    assert "a300" in agents["agent_id"].to_list()
    assert ds.collect("alt_scores")["alternative"].n_unique() == 260


def test_simulate_is_the_short_name_of_simulate_decision() -> None:
    # The documented short name is the same function (no wrapper, so no deprecation warning).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert mas_eval.simulate is mas_eval.simulate_decision is simulate
    assert {"simulate", "simulate_decision"} <= set(mas_eval.__all__)
    assert mas_eval.simulate.__name__ == "simulate_decision"
