"""The vectorised decision metrics equal the per-run oracle on random datasets (to 1e-9)."""

from __future__ import annotations

import math
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mas_eval.metrics.decision import DecisionParams
from mas_eval.metrics.registry import columns
from mas_eval.presets import PRESETS
from mas_eval.scoring import score
from tests.oracles.decision import Run, score_run
from tests.strategies import Drawn, datasets

TOLERANCE = 1e-9


def assert_same(got: object, expected: object, where: str) -> None:
    if expected is None or got is None:
        assert got is None and expected is None, f"{where}: got {got!r}, oracle {expected!r}"
    elif isinstance(expected, float) or isinstance(got, float):
        assert math.isclose(got, expected, rel_tol=TOLERANCE, abs_tol=TOLERANCE), (
            f"{where}: got {got!r}, oracle {expected!r}"
        )
    else:
        assert got == expected, f"{where}: got {got!r}, oracle {expected!r}"


RUN_COLUMNS, AGENT_COLUMNS, ALTERNATIVE_COLUMNS, CONFLICT_COLUMNS = (
    columns(t, "decision") for t in ("runs", "agents", "alternatives", "conflicts")
)


def check_against_oracle(drawn: Drawn, preset: str, **overrides: object) -> None:
    params = DecisionParams.of_preset(preset, **overrides).as_dict()
    scores = score(drawn.dataset(), preset=preset, **overrides)
    by_run = {row["run_id"]: row for row in scores.runs.to_dicts()}
    agents = {(r["run_id"], r["agent_id"]): r for r in scores.agents.to_dicts()}
    alternatives = {(r["run_id"], r["alternative"]): r for r in scores.alternatives.to_dicts()}
    conflicts = {(r["run_id"], r["agent_a"], r["agent_b"]): r for r in scores.conflicts.to_dicts()}
    assert set(by_run) == set(drawn.runs)
    expected_agents, expected_alternatives, expected_conflicts = set(), set(), set()
    for run_id, run in drawn.runs.items():
        expected = score_run(run, params)
        for column in RUN_COLUMNS:
            assert_same(by_run[run_id][column], expected["run"][column], f"{run_id}.{column}")
        for agent, values in expected["agents"].items():
            expected_agents.add((run_id, agent))
            for column in AGENT_COLUMNS:
                assert_same(agents[run_id, agent][column], values[column], f"{run_id}/{agent}.{column}")
        for alternative, values in expected["alternatives"].items():
            if all(v is None for v in values.values()):
                continue  # only logged scores: not an alternative any metric describes
            expected_alternatives.add((run_id, alternative))
            for column in ALTERNATIVE_COLUMNS:
                got = alternatives[run_id, alternative][column]
                assert_same(got, values[column], f"{run_id}/{alternative}.{column}")
        for (agent_a, agent_b), values in expected["conflicts"].items():
            expected_conflicts.add((run_id, agent_a, agent_b))
            for column in CONFLICT_COLUMNS:
                got = conflicts[run_id, agent_a, agent_b][column]
                assert_same(got, values[column], f"{run_id}/{agent_a}-{agent_b}.{column}")
    assert set(conflicts) == expected_conflicts
    assert set(agents) == expected_agents
    assert set(alternatives) == expected_alternatives


@pytest.mark.parametrize("preset", list(PRESETS))
@settings(
    max_examples=int(os.environ.get("ORACLE_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(drawn=datasets())
def test_vectorised_equals_oracle(drawn: Drawn, preset: str) -> None:
    check_against_oracle(drawn, preset)


@pytest.mark.parametrize("preset", list(PRESETS))
@settings(
    max_examples=int(os.environ.get("ORACLE_EXAMPLES", "60")) // 2,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    drawn=datasets(),
    draws=st.integers(1, 40),
    perturbation=st.sampled_from([0.05, 0.2, 0.5, 1.0]),
    seed=st.integers(0, 2**70),
    criterion=st.sampled_from(["cost", "c2", "C", "ç", "absent"]),
    sweep=st.sampled_from([(0.0, 1.0), (0.1, 0.6), (0.5, 0.5)]),
)
def test_ranking_stability_equals_oracle(
    drawn: Drawn, preset: str, draws: int, perturbation: float, seed: int, criterion: str, sweep: tuple[float, float]
) -> None:
    # Preset crisis-mas-poc sweeps one criterion's weight; the others perturb every weight at random.
    check_against_oracle(
        drawn,
        preset,
        stability_draws=draws,
        stability_perturbation=perturbation,
        stability_seed=seed,
        stability_criterion=criterion,
        stability_sweep_low=sweep[0],
        stability_sweep_high=sweep[1],
    )


def test_the_oracle_covers_every_registered_column() -> None:
    # The loops above read every registered column from the oracle: a column it lacks would be a KeyError there.
    expected = score_run(Run(run_id="r", recommended="x", beliefs={"g": {"x": 1.0}}, scores={"x": {"c": 0.5}}),
                         DecisionParams().as_dict())  # fmt: skip
    assert set(expected["run"]) == set(RUN_COLUMNS)
    assert set(expected["agents"]["g"]) == set(AGENT_COLUMNS)
    assert set(expected["alternatives"]["x"]) == set(ALTERNATIVE_COLUMNS)
    clash = Run(run_id="r", beliefs={"g": {"x": 1.0}, "h": {"y": 1.0}})
    assert set(score_run(clash, DecisionParams().as_dict())["conflicts"]["g", "h"]) == set(CONFLICT_COLUMNS)
