"""Parameter validation of the statistics functions: every bad value is named, with what is allowed."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any, get_args

import numpy as np
import polars as pl
import pytest

from mas_eval.constraints import describe
from mas_eval.errors import InvalidParameterError, MasEvalError
from mas_eval.presets import PRESETS
from mas_eval.stats import (
    Correction,
    adjust_pvalues,
    baseline_comparison,
    calibration,
    compare,
    power,
    reliability_table,
    ttest_from_summary,
)
from mas_eval.stats.options import COMPARE_RULES, GIVEN

RUNS = pl.DataFrame(
    {
        "system": ["mas"] * 3 + ["single"] * 3,
        "case_id": [1, 2, 3] * 2,
        "dqs": [0.8, 0.7, 0.9, 0.6, 0.5, 0.65],
        "decision_confidence": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4],
        "gt_match": [True, False, True, False, True, True],
    }
)
SUMMARY = {
    "mean_treatment": 0.745, "std_treatment": 0.082, "n_treatment": 10,
    "mean_control": 0.680, "std_control": 0.091, "n_control": 10,
}  # fmt: skip

#: function -> (the arguments of a valid call, {parameter: bad values}).
BAD_VALUES: dict[Callable[..., Any], tuple[dict[str, Any], dict[str, list[Any]]]] = {
    compare: (
        {"run_metrics": RUNS, "metrics": "dqs"},
        {
            "run_metrics": [None, 5, "runs", [{"dqs": 1.0}]],
            "metrics": [5, None, 1.5, b"dqs", {"dqs": 1}, ["dqs", 5]],
            "treatment": [5, None, ["mas"]],
            "control": [0, True],
            "by": [5, b"task", ("task", 5)],
            "seed": ["abc", -1, 1.5, True, np.random.default_rng(0)],
            "pair_on": [1, ["case_id"]],
            "cluster": [2.5],
            "test": ["ttest", "Welch", None],
            "correction": ["sidak", "Holm", 0],
            "alpha": [0, 1, 1.5, -0.1, math.nan, "0.05", True],
            "confidence": [0, 1.0, 95, math.inf],
            "n_boot": [-1, 2.5, "100", True, None],
            "method": ["bayes", None],
            "allow_mixed_methods": [1, "yes", None],
            "system": [None, 3],
            "boot_ci": ["basic", "BCa"],
            "margin": [0, -0.05, math.nan, math.inf, "0.05", True, {}, {"dqs": 0}, {"dqs": "0.1"}],
            "hypothesis": ["non-inferior", "Equivalent", "inferior", 1],
        },
    ),
    power: (
        {"effect_size": 0.5, "power": 0.8},
        {
            "effect_size": [math.nan, "0.5", [], [0.2, math.inf], True],
            "n": [1, 1.5, [20, 1], "64", [], 1e300],
            "power": [0, 1, 1.2, [0.8, 1.0], "0.8"],
            "alpha": [0, 1, 2.0, math.nan],
            "design": ["within", None],
            "ratio": [0, -1.0, math.inf, "2", 1e300],
            "alternative": ["two_sided", "less", None],
        },
    ),
    calibration: (
        {"run_metrics": RUNS},
        {
            "run_metrics": [None, [1.0]],
            "confidence": [None, 0.5],
            "outcome": [1, None],
            "bins": [0, -3, 2.5, "10", True, 10**12],
            "by": [5, [1], {"task": 1}],
            "strategy": ["kmeans", "Uniform", None],
            "system": [1, ["system"]],
        },
    ),
    reliability_table: (
        {"run_metrics": RUNS},
        {
            "run_metrics": ["runs.parquet"],
            "confidence": [None],
            "outcome": [2],
            "bins": [0, 10.0],
            "by": [5],
            "strategy": ["equal"],
            "system": [0],
        },
    ),
    baseline_comparison: (
        {"run_metrics": RUNS, "metrics": {"decision_quality": "dqs"}},
        {
            "run_metrics": [{"dqs": [1.0]}],
            "treatment": [5, None],
            "control": [["single"]],
            "metrics": [5, "dqs", ["dqs"], {"decision_quality": 5}, {"improvement": "dqs"}],
            "preset": ["nope", "Spec", None],
            "test": ["paired", "mannwhitney", "t"],
            "alpha": [0, 1, "0.05"],
            "system": [None],
            "allow_mixed_methods": [0, "no"],
            "sd_ddof": [2, -1, 0.5, True],
        },
    ),
    ttest_from_summary: (
        SUMMARY,
        {
            "mean_treatment": [math.nan, math.inf, "0.7", None],
            "std_treatment": [-0.1, math.nan],
            "n_treatment": [-1, math.inf, "10"],
            "mean_control": [-math.inf, None],
            "std_control": [-1e-9, "0.1"],
            "n_control": [-2, None],
            "test": ["paired", "auto", None],
            "alpha": [0.0, 1.0],
            "confidence": [0.0, 100],
        },
    ),
    adjust_pvalues: (
        {"p_values": [0.01, 0.04, 0.03]},
        {
            "p_values": ["abc", [0.5, "x"], [1.5], [-0.1], [[0.1]], {"a": 1}, object()],
            "correction": ["sidak", "BH", 1, True],
        },
    ),
}


def _case_id(value: object) -> str:
    """A value as a test id, the same in every process (a repr holding a memory address is not)."""
    shown = repr(value)
    return type(value).__name__ if " at 0x" in shown else shown


CASES = [
    pytest.param(func, name, value, id=f"{func.__name__}-{name}={_case_id(value)}")
    for func, (_, bad) in BAD_VALUES.items()
    for name, values in bad.items()
    for value in values
]


@pytest.mark.parametrize(("func", "name", "value"), CASES)
def test_a_bad_value_names_the_function_parameter_value_and_what_is_allowed(
    func: Callable[..., Any], name: str, value: object
) -> None:
    arguments = {**BAD_VALUES[func][0], name: value}
    with pytest.raises(InvalidParameterError) as info:
        func(**arguments)
    message = str(info.value)
    allowed = describe(func.__parameter_constraints__[name])  # type: ignore[attr-defined]
    assert message == f"{func.__name__}: {name}={value!r} is invalid; {name} must be {allowed}"
    assert isinstance(info.value, MasEvalError) and isinstance(info.value, ValueError)


@pytest.mark.parametrize("func", list(BAD_VALUES), ids=lambda func: func.__name__)
def test_every_validated_parameter_has_bad_values_above(func: Callable[..., Any]) -> None:
    assert set(BAD_VALUES[func][1]) == set(func.__parameter_constraints__)  # type: ignore[attr-defined]


@pytest.mark.parametrize("func", list(BAD_VALUES), ids=lambda func: func.__name__)
def test_the_defaults_satisfy_their_own_constraints(func: Callable[..., Any]) -> None:
    constraints = func.__parameter_constraints__  # type: ignore[attr-defined]
    parameters = inspect.signature(func).parameters
    with_default = [name for name in constraints if parameters[name].default is not inspect.Parameter.empty]
    for name in with_default:
        default = parameters[name].default
        assert any(c.is_satisfied_by(default) for c in constraints[name]), (name, default)
    # ttest_from_summary's statistics, the runs (and compare's metrics) and adjust_pvalues' p-values have no
    # default; every other validated parameter has one.
    required = {ttest_from_summary: 6, compare: 2, adjust_pvalues: 1, calibration: 1, reliability_table: 1}.get(func, 0)
    required += func is baseline_comparison
    assert len(with_default) == len(constraints) - required


@pytest.mark.parametrize("func", list(BAD_VALUES), ids=lambda func: func.__name__)
def test_the_valid_call_above_works(func: Callable[..., Any]) -> None:
    # Guards the test above: its bad values fail because of the one parameter changed.
    result = func(**BAD_VALUES[func][0])
    assert result is not None and len(result) > 0


def test_every_correction_and_alias_is_accepted() -> None:
    p = [0.01, 0.04, float("nan"), 0.03]
    results = {name: adjust_pvalues(p, name) for name in get_args(Correction)}
    np.testing.assert_array_equal(results["bh"], results["fdr_bh"])
    np.testing.assert_array_equal(results["benjamini-hochberg"], results["fdr_bh"])
    np.testing.assert_array_equal(adjust_pvalues(p, None), results["none"])
    table = compare(RUNS, "dqs", correction="bh")
    assert table["p_adjusted"].to_list() == compare(RUNS, "dqs", correction="fdr_bh")["p_adjusted"].to_list()


def test_every_preset_is_accepted_and_sets_the_test() -> None:
    for preset in PRESETS:
        out = baseline_comparison(RUNS, metrics={"decision_quality": "dqs"}, preset=preset)
        want = PRESETS[preset].get("statistics", {}).get("test", "welch")
        assert out["statistical_significance"]["decision_quality"]["test"] == want


@pytest.mark.parametrize(
    ("kwargs", "text"),
    [
        ({"effect_size": 0.5}, "give exactly two of effect_size, n and power .*missing: n, power"),
        ({"effect_size": 0.5, "n": 20, "power": 0.8}, "give exactly two of effect_size, n and power .*missing: none"),
        ({"effect_size": 0.5, "power": 0.01}, r"power: power=0.01 is invalid; power must be a number in \(0.05, 1\)"),
        ({"effect_size": [0.5, 0.0], "power": 0.8}, "effect_size=0 cannot be detected with any n"),
    ],
)
def test_power_rejects_combinations_of_parameters(kwargs: dict[str, Any], text: str) -> None:
    with pytest.raises(InvalidParameterError, match=text):
        power(**kwargs)


def test_compare_rules_name_real_options_and_values() -> None:
    parameters = inspect.signature(compare).parameters
    constraints = compare.__parameter_constraints__  # type: ignore[attr-defined]
    for rule in COMPARE_RULES:
        assert rule.option in parameters
        for name, values in rule.when:
            assert name in parameters
            if values != GIVEN:
                assert all(any(c.is_satisfied_by(v) for c in constraints[name]) for v in values), (name, values)
