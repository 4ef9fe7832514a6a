"""score(): presets and overrides, the Scores container, and the `score` command."""

from __future__ import annotations

from pathlib import Path

import pytest
from polars.testing import assert_frame_equal

import mas_eval
from mas_eval import Dataset, MasEvalError, Scores
from mas_eval.cli import main
from mas_eval.presets import PRESETS, parse_override, resolve
from mas_eval.scoring import RUN_ID_COLUMNS


@pytest.fixture(scope="module")
def simulated() -> Dataset:
    return mas_eval.simulate(300, seed=3)


def test_every_frame_leads_with_the_run_identifiers(simulated: Dataset) -> None:
    scores = mas_eval.score(simulated, pairwise=True)
    for frame in scores.frames().values():
        assert frame.columns[: len(RUN_ID_COLUMNS)] == RUN_ID_COLUMNS
    assert scores.runs.height == 300
    assert scores.runs["run_id"].is_sorted()


def test_scores_round_trip(simulated: Dataset, tmp_path: Path) -> None:
    scores = mas_eval.score(simulated, preset="crisis-mas-poc", gt_boost=None)
    back = Scores.open(scores.write(tmp_path / "scores"))
    for name, frame in scores.frames().items():
        assert_frame_equal(back.frames()[name], frame)
    assert (back.preset, back.params) == ("crisis-mas-poc", scores.params)
    assert back.params["gt_boost"] is None and back.params["mcda"] == "weighted_sum"


def test_overrides_change_exactly_their_metric(simulated: Dataset) -> None:
    base = mas_eval.score(simulated).runs
    slower = mas_eval.score(simulated, baseline_seconds=10.0).runs
    assert (slower["time_efficiency"] > base["time_efficiency"]).all()
    assert_frame_equal(slower.select("dqs", "consensus_level"), base.select("dqs", "consensus_level"))


def test_presets_are_named_parameter_sets() -> None:
    assert set(PRESETS) == {"spec", "crisis-mas-poc"}
    assert resolve("crisis-mas-poc").er == "weighted_average"
    with pytest.raises(MasEvalError, match="unknown preset 'lddx'"):
        resolve("lddx")
    with pytest.raises(MasEvalError, match="unknown parameter"):
        resolve("spec", {"gt_bost": 0.8})
    with pytest.raises(MasEvalError, match="mcda='vikor' is not one of"):
        resolve("spec", {"mcda": "vikor"})
    assert parse_override("single_agent_consensus=1") == ("single_agent_consensus", 1.0)
    with pytest.raises(MasEvalError, match="takes a number"):
        parse_override("baseline_seconds=fast")


def test_score_command(simulated: Dataset, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = simulated.write(tmp_path / "ds", validate=False)
    with pytest.raises(SystemExit) as exited:
        main(["score", str(folder), "--out", str(tmp_path / "s"), "--preset", "crisis-mas-poc",
              "--set", "gt_boost=none", "--pairwise"])  # fmt: skip
    assert exited.value.code in (0, None)
    scores = Scores.open(tmp_path / "s")
    assert scores.params["gt_boost"] is None and scores.pairwise is not None
    assert "scored 300 runs" in capsys.readouterr().out


def test_score_command_rejects_a_bad_override(simulated: Dataset, tmp_path: Path) -> None:
    folder = simulated.write(tmp_path / "ds", validate=False)
    with pytest.raises(SystemExit) as exited:
        main(["score", str(folder), "--out", str(tmp_path / "s"), "--set", "nonsense=1"])
    assert exited.value.code == 2
    assert not (tmp_path / "s").exists()
