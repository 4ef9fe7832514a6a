"""score(): presets and overrides, parameter validation, the Scores container, and the `score` command."""

from __future__ import annotations

from pathlib import Path

import pytest
from polars.testing import assert_frame_equal

import mas_eval
from mas_eval import Dataset, InvalidParameterError, Scores
from mas_eval.cli import main
from mas_eval.constraints import describe
from mas_eval.data.schema import RUN_ID_COLUMNS
from mas_eval.metrics.decision import DecisionParams
from mas_eval.metrics.diagnosis import DiagnosisParams
from mas_eval.metrics.family import parse_override
from mas_eval.presets import PRESETS
from tests.conftest import run_cli_process


@pytest.fixture(scope="module")
def simulated() -> Dataset:
    return mas_eval.simulate(300, seed=3)


def test_every_table_leads_with_the_run_identifiers(simulated: Dataset) -> None:
    scores = mas_eval.score(simulated, pairwise=True)
    assert scores.names == ["runs", "agents", "alternatives", "pairwise", "conflicts"]
    for frame in scores.values():
        assert frame.columns[: len(RUN_ID_COLUMNS)] == RUN_ID_COLUMNS
    assert scores.runs.height == 300
    assert scores.runs["run_id"].is_sorted()
    assert scores["agents"] is scores.agents


def test_scores_round_trip(simulated: Dataset, tmp_path: Path) -> None:
    scores = mas_eval.score(simulated, preset="crisis-mas-poc", gt_boost=None)
    back = Scores.open(scores.write(tmp_path / "scores"))
    assert back.names == scores.names
    for name, frame in scores.items():
        assert_frame_equal(back[name], frame)
    assert (back.preset, back.params) == ("crisis-mas-poc", scores.params)
    assert back.params["gt_boost"] is None and back.params["mcda"] == "weighted_sum"
    assert (back.ran, back.skipped) == (
        ["decision"],
        {
            "diagnosis": "the Dataset has no 'ddx' table",
            "answers": "the Dataset has no 'answers' table",
            "outcomes": "the Dataset has no 'outcomes' table",
            "process": "the Dataset has no 'messages' or 'usage' or 'tool_calls' table",
        },
    )


def test_a_missing_table_is_a_clear_error(simulated: Dataset) -> None:
    scores = mas_eval.score(simulated)
    with pytest.raises(KeyError, match="no table 'pairwise'; they have: runs, agents, alternatives"):
        scores["pairwise"]
    with pytest.raises(AttributeError, match="no attribute or table 'pairwise'"):
        _ = scores.pairwise


def test_overrides_change_exactly_their_metric(simulated: Dataset) -> None:
    base = mas_eval.score(simulated).runs
    slower = mas_eval.score(simulated, baseline_seconds=10.0).runs
    assert (slower["time_efficiency"] > base["time_efficiency"]).all()
    assert_frame_equal(slower.select("dqs", "consensus_level"), base.select("dqs", "consensus_level"))


def test_presets_are_named_parameter_sets() -> None:
    assert set(PRESETS) == {"spec", "crisis-mas-poc", "lddx-v6", "lddx-v8", "medaisure"}
    assert DiagnosisParams.of_preset("lddx-v6").label_rules == "lddx-v6"
    v8 = DiagnosisParams.of_preset("lddx-v8")
    assert (v8.label_rules, v8.tempo_count_mentions, v8.credibility_debate) == ("lddx-v8", True, False)
    assert DiagnosisParams.of_preset("lddx-v6").credibility_debate is True
    assert DecisionParams.of_preset("medaisure") == DecisionParams()  # an answers preset
    assert DecisionParams.of_preset("lddx-v6") == DecisionParams()  # a diagnosis preset: decisions as the spec
    assert DecisionParams.of_preset("crisis-mas-poc").er == "weighted_average"
    with pytest.raises(InvalidParameterError, match="preset='lddx' is invalid; preset must be one of 'spec'"):
        DecisionParams.of_preset("lddx")
    with pytest.raises(InvalidParameterError, match="unknown parameter"):
        DecisionParams.of_preset("spec", gt_bost=0.8)
    with pytest.raises(InvalidParameterError, match="mcda='vikor' is invalid; mcda must be one of 'topsis'"):
        DecisionParams.of_preset("spec", mcda="vikor")
    assert parse_override("single_agent_consensus=1") == ("single_agent_consensus", 1.0)
    with pytest.raises(InvalidParameterError, match=r"baseline_seconds='fast' is invalid; .* a positive number"):
        DecisionParams(**dict([parse_override("baseline_seconds=fast")]))


#: A bad value for every parameter of every family.
BAD_VALUES = {
    "dqs_weighted": "yes",
    "gt_boost": "high",
    "consensus_weight": 1.5,
    "single_agent_consensus": -0.1,
    "entropy_support": "global",
    "entropy_renormalise": 1,
    "baseline_iterations": 0,
    "baseline_api_calls": -3.0,
    "baseline_seconds": float("inf"),
    "mcda": "vikor",
    "er": "dempster",
    "pairwise": "no",
    "consensus_threshold": 1.2,
    "conflict_threshold": -0.3,
    "stability_draws": 2.5,
    "stability_perturbation": 0.0,
    "stability_seed": -1,
    "stability_method": "monte-carlo",
    "stability_criterion": "",
    "stability_sweep_low": -0.1,
    "stability_sweep_high": 2,
    "label_rules": "lddx",
    "equivalence_threshold": 0.0,
    "caa_mentions": 0,
    "tempo_count_mentions": "yes",
    "credibility_debate": "no",
    "keyword_counting": "substring",
    "vote_keep_share": 1.5,
    "vote_at_most": 0,
    "synonyms_file": 3,
    "interventions_file": "",
    "judge_cache": ["a.parquet"],
}
CONSTRAINTS = DecisionParams.constraints() | DiagnosisParams.constraints()


def test_every_parameter_has_a_bad_value_here() -> None:
    assert set(BAD_VALUES) == set(CONSTRAINTS)


@pytest.mark.parametrize(("name", "value"), BAD_VALUES.items())
def test_score_rejects_a_bad_parameter_naming_it_and_what_is_allowed(
    simulated: Dataset, name: str, value: object
) -> None:
    allowed = describe(CONSTRAINTS[name])
    with pytest.raises(InvalidParameterError) as info:
        mas_eval.score(simulated, **{name: value})
    assert str(info.value) == f"score: {name}={value!r} is invalid; {name} must be {allowed}"
    assert isinstance(info.value, ValueError)


def test_score_rejects_unknown_presets_and_parameters(simulated: Dataset) -> None:
    with pytest.raises(InvalidParameterError, match="preset='lddx' is invalid"):
        mas_eval.score(simulated, preset="lddx")
    with pytest.raises(InvalidParameterError, match=r"unknown parameter.*gt_bost; the parameters are: .*gt_boost"):
        mas_eval.score(simulated, gt_bost=0.8)


@pytest.mark.parametrize("params", [DecisionParams, DiagnosisParams])
def test_defaults_satisfy_their_constraints(params: type) -> None:
    defaults = params().as_dict()
    for name, constraints in params.constraints().items():
        assert any(c.is_satisfied_by(defaults[name]) for c in constraints), name


def test_score_command(simulated: Dataset, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = simulated.write(tmp_path / "ds", validate=False)
    with pytest.raises(SystemExit) as exited:
        main(["score", str(folder), "--out", str(tmp_path / "s"), "--preset", "crisis-mas-poc",
              "--set", "gt_boost=none", "--pairwise"])  # fmt: skip
    assert exited.value.code in (0, None)
    scores = Scores.open(tmp_path / "s")
    assert scores.params["gt_boost"] is None and "pairwise" in scores
    assert "scored 300 runs" in capsys.readouterr().out


def test_score_command_rejects_a_bad_override(simulated: Dataset, tmp_path: Path) -> None:
    folder = simulated.write(tmp_path / "ds", validate=False)
    with pytest.raises(SystemExit) as exited:
        main(["score", str(folder), "--out", str(tmp_path / "s"), "--set", "nonsense=1"])
    assert exited.value.code == 2
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--set", "gt_boost=high"],
            "error: score: gt_boost='high' is invalid; gt_boost must be a number in [0, 1] or None",
        ),
        (
            ["--set", "mcda=vikor"],
            "error: score: mcda='vikor' is invalid; mcda must be one of 'topsis', 'weighted_sum'",
        ),
        (
            ["--preset", "lddx"],
            "error: preset='lddx' is invalid; preset must be one of 'spec', 'crisis-mas-poc', 'lddx-v6', 'lddx-v8', "
            "'medaisure'",
        ),
        (
            ["--set", "label_rules=lddx"],
            "error: score: label_rules='lddx' is invalid; label_rules must be one of 'spec', 'lddx-v6', 'lddx-v8'",
        ),
    ],
)
@pytest.mark.subprocess
def test_the_cli_answers_a_bad_parameter_with_one_line_and_exit_2(
    tiny: Dataset, tmp_path: Path, args: list[str], message: str
) -> None:
    folder = tiny.write(tmp_path / "ds")
    done = run_cli_process("score", str(folder), "--out", str(tmp_path / "s"), *args)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [message]
    assert not (tmp_path / "s").exists()


def test_score_checks_and_resolves_its_arguments_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # One Request per call: the parameters are resolved once, not again per shard or per path.
    from mas_eval.scoring import Step, request

    calls: list[str] = []
    real = request.resolve_params
    monkeypatch.setattr(
        request, "resolve_params", lambda preset, overrides: calls.append(preset) or real(preset, overrides)
    )
    folder = mas_eval.simulate(40, seed=1).write(tmp_path / "ds", shards=3)
    steps: list[Step] = []
    scores = mas_eval.score(Dataset.open(folder), workers=1, validate=True, progress=steps.append, gt_boost=None)
    assert calls == ["spec"] and scores.params["gt_boost"] is None
    # Every step is a Step: its name, and counts only where it counts shards (none here: one process).
    assert steps and all(isinstance(step, Step) and step.total is None for step in steps)
    assert steps.count("encoding keys") == 3
    written = mas_eval.score(Dataset.open(folder), out=tmp_path / "scores", progress=steps.append)
    assert calls == ["spec", "spec"] and isinstance(written, Scores)
    assert [(step.done, step.total) for step in steps if step.total is not None] == [(k, 3) for k in range(4)]
