"""The MedAISure metrics overview's aggregates: per-task means, category aggregates and the combined score.

Hand computations pin the formula with and without renormalisation when categories are
missing; hypothesis checks it against the overview's formula written out literally, and the
properties a weighted mean must have.
"""

from __future__ import annotations

import math

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mas_eval.errors import DataError, InvalidParameterError
from mas_eval.report import (
    DEFAULT_CATEGORIES,
    category_scores,
    combined_score,
    overall_means,
    read_medaisure_report,
    task_means,
)
from mas_eval.report.combined import check_weights, parse_weights
from tests.conftest import FIXTURES

FIXTURE = FIXTURES / "medaisure" / "b95deaa7.json"
needs_medaisure = pytest.mark.skipif(not FIXTURE.is_file(), reason=f"{FIXTURE} is not beside this clone (CI has it)")

WEIGHTS = {"diagnostics": 0.4, "safety": 0.3, "communication": 0.2, "summarization": 0.1}
#: t1 has every category, t2 two, t3 one, t4 none of them.
TASKS = {
    "t1": {"clinical_accuracy": 0.9, "accuracy": 0.7, "safety": 0.6, "reasoning_quality": 0.5, "rouge_l": 0.2},
    "t2": {"clinical_accuracy": 0.8, "rouge_l": 0.4, "clinical_relevance": 0.6},
    "t3": {"coherence": 0.3},
    "t4": {"bleu": 0.5},
}


def test_combined_score_equals_the_hand_computation_with_renormalisation() -> None:
    result = combined_score(TASKS, WEIGHTS)
    # t1: diagnostics (0.9 + 0.7)/2 = 0.8, safety 0.6, communication 0.5, summarization 0.2;
    #     0.4*0.8 + 0.3*0.6 + 0.2*0.5 + 0.1*0.2 = 0.32 + 0.18 + 0.10 + 0.02 = 0.62 (Z = 1)
    # t2: diagnostics 0.8, summarization (0.4 + 0.6)/2 = 0.5; Z = 0.4 + 0.1 = 0.5;
    #     (0.4*0.8 + 0.1*0.5)/0.5 = 0.37/0.5 = 0.74
    # t3: communication 0.3 alone; Z = 0.2: 0.2*0.3/0.2 = 0.3
    # t4: no weighted category: no combined score
    assert result.per_task == pytest.approx({"t1": 0.62, "t2": 0.74, "t3": 0.3}, abs=1e-15)
    assert result.overall == pytest.approx((0.62 + 0.74 + 0.3) / 3, abs=1e-15)  # 0.55333...
    assert result.missing == ["t4"]
    assert result.categories["t2"] == pytest.approx({"diagnostics": 0.8, "summarization": 0.5})
    assert result.renormalize_missing is True


def test_combined_score_equals_the_hand_computation_without_renormalisation() -> None:
    result = combined_score(TASKS, WEIGHTS, renormalize_missing=False)
    # The divisor is the sum of all weights (1.0), so missing categories count 0:
    # t1 0.62 (nothing missing), t2 0.4*0.8 + 0.1*0.5 = 0.37, t3 0.2*0.3 = 0.06.
    assert result.per_task == pytest.approx({"t1": 0.62, "t2": 0.37, "t3": 0.06}, abs=1e-15)
    assert result.overall == pytest.approx((0.62 + 0.37 + 0.06) / 3, abs=1e-15)  # 0.35


# -- MedAISure's own cases: the task's own value under a weight key ------------------------------

#: From MedAISure tests/test_benchmark_report_combined_score_test.py (make_report).
MEDAISURE_TASKS = {"task1": {"diagnostics": 0.8, "safety": 0.6}, "task2": {"diagnostics": 0.4}}
#: The worked example of four categories (weights of MedAISure's documented --combined-weights).
FOUR_CATEGORIES = {
    "t1": {"diagnostics": 0.8, "safety": 0.6, "communication": 0.5, "summarization": 0.4},
    "t2": {"diagnostics": 0.5, "communication": 1.0},
}


def test_medaisure_combined_score_with_renormalization() -> None:
    # From MedAISure tests/test_benchmark_report_combined_score_test.py::test_combined_score_with_renormalization
    result = combined_score(MEDAISURE_TASKS, {"diagnostics": 0.5, "safety": 0.5}, renormalize_missing=True)
    assert result.per_task == pytest.approx({"task1": 0.7, "task2": 0.4}, abs=1e-9)
    assert result.overall == pytest.approx((0.7 + 0.4) / 2, abs=1e-9)
    assert result.sources == {
        "task1": {"diagnostics": "task value", "safety": "task value"},
        "task2": {"diagnostics": "task value"},
    }


def test_medaisure_combined_score_without_renormalization() -> None:
    # From MedAISure tests/test_benchmark_report_combined_score_test.py::test_combined_score_without_renormalization
    result = combined_score(MEDAISURE_TASKS, {"diagnostics": 0.5, "safety": 0.5}, renormalize_missing=False)
    assert result.per_task == pytest.approx({"task1": 0.7, "task2": 0.2}, abs=1e-9)
    assert result.overall == pytest.approx((0.7 + 0.2) / 2, abs=1e-9)


def test_four_categories_held_by_the_tasks_themselves() -> None:
    # t1: 0.4*0.8 + 0.3*0.6 + 0.2*0.5 + 0.1*0.4 = 0.64; t2: (0.4*0.5 + 0.2*1.0) / 0.6 = 2/3 renormalised,
    # 0.4 / 1.0 = 0.4 without. Every value is the task's own: there are no member metrics to average.
    renormalised = combined_score(FOUR_CATEGORIES, WEIGHTS)
    assert renormalised.per_task == pytest.approx({"t1": 0.64, "t2": 2 / 3}, abs=1e-12)
    assert round(renormalised.per_task["t2"], 4) == 0.6667
    plain = combined_score(FOUR_CATEGORIES, WEIGHTS, renormalize_missing=False)
    assert plain.per_task == pytest.approx({"t1": 0.64, "t2": 0.4}, abs=1e-12)
    assert set(renormalised.sources["t2"]) == {"diagnostics", "communication"}
    assert set(renormalised.sources["t2"].values()) == {"task value"}


def test_the_task_value_wins_over_the_category_mean_and_the_mean_fills_in_for_a_missing_one() -> None:
    scores = {
        "own": {"diagnostics": 0.2, "clinical_accuracy": 1.0, "accuracy": 0.8},  # own 0.2, members' mean 0.9
        "mean": {"clinical_accuracy": 1.0, "accuracy": 0.8},
    }
    result = combined_score(scores, {"diagnostics": 1.0})
    assert result.per_task == pytest.approx({"own": 0.2, "mean": 0.9}, abs=1e-15)
    assert result.sources == {
        "own": {"diagnostics": "task value"},
        "mean": {"diagnostics": "category mean of [clinical_accuracy, accuracy]"},
    }
    table = result.table()
    assert table.columns == ["task", "combined_score", "diagnostics", "diagnostics source"]
    assert table["diagnostics source"].to_list() == ["task value", "category mean of [clinical_accuracy, accuracy]"]
    # A value that is missing (None, NaN) is no value: the category mean stands in.
    assert combined_score({"t": {"diagnostics": math.nan, "accuracy": 0.5}}, {"diagnostics": 1.0}).sources == {
        "t": {"diagnostics": "category mean of [accuracy]"}
    }


def test_weights_need_not_sum_to_one_and_may_name_a_metric() -> None:
    # Doubling every weight changes nothing, in either mode (the divisor doubles too).
    doubled = {k: 2 * w for k, w in WEIGHTS.items()}
    for renormalize in (True, False):
        assert combined_score(TASKS, doubled, renormalize_missing=renormalize).per_task == pytest.approx(
            combined_score(TASKS, WEIGHTS, renormalize_missing=renormalize).per_task, abs=1e-15
        )
    # A key that is not a category names a metric: bleu only in t4, accuracy (diagnostics' member) in t1.
    result = combined_score(TASKS, {"bleu": 1.0, "accuracy": 3.0})
    assert result.per_task == pytest.approx({"t1": 0.7, "t4": 0.5})
    # A zero weight: a task whose only present category has weight 0 has nothing to combine.
    result = combined_score(TASKS, {"communication": 0.0, "diagnostics": 1.0})
    assert result.per_task == pytest.approx({"t1": 0.8, "t2": 0.8})
    assert result.missing == ["t3", "t4"]


def test_a_custom_category_map_and_case_insensitive_names() -> None:
    scores = {"t": {"Rouge_L": 0.2, "bleu": 0.6, "accuracy": 1.0}}
    assert category_scores(scores) == {"t": {"diagnostics": 1.0, "summarization": 0.2}}
    custom = {"summarization": ["rouge_l", "BLEU"]}
    assert category_scores(scores, custom) == {"t": {"summarization": pytest.approx(0.4)}}
    result = combined_score(scores, {"summarization": 1.0}, categories=custom)
    assert result.per_task == pytest.approx({"t": 0.4})
    with pytest.raises(InvalidParameterError, match=r"categories\['summarization'\] is 'rouge_l'"):
        category_scores(scores, {"summarization": "rouge_l"})  # type: ignore[dict-item]


def test_missing_scores_are_left_out_and_infinite_ones_refused() -> None:
    scores = {"t": {"accuracy": None, "exact_match": math.nan, "clinical_accuracy": 0.5}}
    assert category_scores(scores)["t"] == {"diagnostics": 0.5}
    assert overall_means({"a": {"m": None}, "b": {"m": 0.25}}) == {"m": 0.25}
    with pytest.raises(DataError, match=r"task_scores\['t'\]\['accuracy'\] is inf; a score must be finite"):
        combined_score({"t": {"accuracy": math.inf}}, {"diagnostics": 1})
    with pytest.raises(DataError, match=r"is '0\.5', not a number"):
        combined_score({"t": {"accuracy": "0.5"}}, {"diagnostics": 1})  # type: ignore[dict-item]


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ({}, "weights is empty"),
        ({"diagnostics": -0.1, "safety": 1.0}, r"weight diagnostics=-0\.1 is invalid; .* must be a number >= 0"),
        ({"diagnostics": math.nan}, "weight diagnostics=nan is invalid"),
        ({"diagnostics": math.inf}, "weight diagnostics=inf is invalid"),
        ({"diagnostics": -math.inf}, "weight diagnostics=-inf is invalid"),
        ({"diagnostics": 0.0, "safety": 0}, "weights diagnostics=0,safety=0 sum to 0; at least one weight"),
        ({"diagnostics": "0.4"}, "weight diagnostics='0.4' is invalid"),
        ({"diagnostics": True}, "weight diagnostics=True is invalid"),
        ({"diagnostic": 1.0}, "weights name 'diagnostic', neither a category .* nor a metric of any task"),
    ],
)
def test_bad_weights_are_a_clear_error(weights: dict[str, float], message: str) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        combined_score(TASKS, weights)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("diagnostics", "'diagnostics' is not key=number"),
        ("diagnostics=high", "'diagnostics=high' is not key=number"),
        ("=0.4", "'=0.4' is not key=number"),
        ("safety=0.5,safety=0.5", "'safety' is given twice"),
        ("safety=-1", r"weight safety=-1\.0 is invalid"),
        ("safety=0,diagnostics=0", "sum to 0"),
        ("", "weights is empty"),
    ],
)
def test_weights_as_the_command_line_writes_them(text: str, message: str) -> None:
    assert parse_weights(" diagnostics=0.4 , safety=0.3,") == {"diagnostics": 0.4, "safety": 0.3}
    with pytest.raises(InvalidParameterError, match=message):
        parse_weights(text)


def test_task_means_and_the_overall_mean_across_tasks() -> None:
    items = pl.DataFrame(
        {
            "run_id": ["r1", "r1", "r1", "r2"],
            "task": ["qa", "qa", "qa", "summary"],
            "clinical_accuracy": [1.0, 0.5, None, 0.2],
            "reasoning_quality": [0.3, float("nan"), 0.6, None],
            "seed": [1, 2, 3, 4],  # an integer column is not a metric unless named
        }
    )
    means = task_means(items)
    # qa: clinical_accuracy (1.0 + 0.5)/2, reasoning_quality (0.3 + 0.6)/2 (NaN and null left out);
    # summary: reasoning_quality has no value, so no entry.
    assert means == {
        "qa": {"clinical_accuracy": 0.75, "reasoning_quality": pytest.approx(0.45, abs=1e-15)},
        "summary": {"clinical_accuracy": 0.2},
    }
    # Overall: the mean of the task means (0.75 + 0.2)/2, not of the three items (0.5667).
    assert overall_means(means) == pytest.approx({"clinical_accuracy": 0.475, "reasoning_quality": 0.45})
    assert task_means(items.lazy(), metrics=["seed"]) == {"qa": {"seed": 2.0}, "summary": {"seed": 4.0}}
    # The answers family's breakdown columns are parts of the two scores: left out unless named.
    with_parts = items.with_columns(factual_consistency=pl.lit(1.0), token_f1=pl.lit(0.0))
    assert task_means(with_parts) == means
    assert task_means(with_parts, metrics=["token_f1"]) == {"qa": {"token_f1": 0.0}, "summary": {"token_f1": 0.0}}
    with pytest.raises(InvalidParameterError, match=r"items: no column 'case'; the columns are: run_id, task.*task="):
        task_means(items, task="case")
    with pytest.raises(InvalidParameterError, match=r"the items: no column 'nope'; .*pass metrics=\[\.\.\.\]"):
        task_means(items, metrics=["nope"])
    with pytest.raises(InvalidParameterError, match="metric 'run_id' of the items is String, not numeric"):
        task_means(items, metrics=["run_id"])
    with pytest.raises(DataError, match="some items have no 'task' \\(null\\)"):
        task_means(items.with_columns(task=pl.when(pl.col("seed") == 2).then(None).otherwise("task")))


@needs_medaisure
def test_the_medaisure_fixture_combines_its_one_category() -> None:
    report = read_medaisure_report(FIXTURE)
    # Its tasks hold rouge_l and clinical_relevance (and MedAISure's own summarization aggregate of them).
    result = combined_score(report.task_scores, WEIGHTS)
    assert result.categories == {t: {"summarization": 0.0} for t in report.task_scores}
    assert result.per_task == dict.fromkeys(report.task_scores, 0.0) and result.overall == 0.0
    assert set(DEFAULT_CATEGORIES) == set(WEIGHTS)


# -- against the overview's formula, and the properties of a weighted mean ----------------------

_METRICS = [m for members in DEFAULT_CATEGORIES.values() for m in members[:3]] + ["bleu"]
_values = st.one_of(st.sampled_from([0.0, 0.25, 0.5, 1.0]), st.floats(0, 1))
_task_scores = st.dictionaries(
    st.sampled_from(["t1", "t2", "t3", "task é"]), st.dictionaries(st.sampled_from(_METRICS), _values), min_size=1
)
_weights = st.dictionaries(
    # Zero or normal floats: a subnormal weight times a scale below 1 rounds to 0, which is not a scaling.
    st.sampled_from(list(DEFAULT_CATEGORIES)),
    st.one_of(st.sampled_from([0.0, 0.1, 1.0]), st.floats(1e-6, 100)),
).filter(lambda w: sum(w.values()) > 0)


def _seed_formula(task_scores: dict[str, dict[str, float]], weights: dict[str, float], renormalize: bool) -> dict:
    """The overview's "Combined Score Formula" literally: combined_t = sum over present k of (w_k / Z_t) v_{t,k}.

    v_{t,k} is the task's own value under k when it has one (MedAISure's ``if k in metrics``),
    else the category aggregate MedAISure would have stored under k: the mean of its members.
    """
    out = {}
    for task, scores in task_scores.items():
        present = {}
        for k in weights:
            values = [v for m, v in scores.items() if m in DEFAULT_CATEGORIES[k]]
            if k in scores:
                present[k] = scores[k]
            elif values:
                present[k] = sum(values) / len(values)
        z = sum(weights[k] for k in present) if renormalize else sum(weights.values())
        if present and z > 0:
            out[task] = sum(weights[k] / z * v for k, v in present.items())
    return out


@settings(max_examples=200, deadline=None)
@given(_task_scores, _weights, st.booleans())
def test_combined_score_matches_the_seed_formula(task_scores: dict, weights: dict, renormalize: bool) -> None:
    result = combined_score(task_scores, weights, renormalize_missing=renormalize)
    expected = _seed_formula(task_scores, weights, renormalize)
    assert result.per_task == pytest.approx(expected, rel=1e-12, abs=1e-15)
    if expected:
        assert result.overall == pytest.approx(sum(expected.values()) / len(expected), rel=1e-12, abs=1e-15)
    else:
        assert result.overall is None


@settings(max_examples=200, deadline=None)
@given(_task_scores, _weights, st.floats(1e-3, 1e3))
def test_renormalised_score_lies_between_its_categories_and_ignores_the_weights_scale(
    task_scores: dict, weights: dict, scale: float
) -> None:
    result = combined_score(task_scores, weights)
    for task, value in result.per_task.items():
        present = result.categories[task].values()
        assert min(present) - 1e-12 <= value <= max(present) + 1e-12
    scaled = combined_score(task_scores, {k: w * scale for k, w in weights.items()})
    assert scaled.per_task == pytest.approx(result.per_task, rel=1e-9, abs=1e-15)
    # Without renormalisation a missing category counts 0: never above the renormalised score.
    plain = combined_score(task_scores, weights, renormalize_missing=False)
    assert all(plain.per_task[t] <= v + 1e-12 for t, v in result.per_task.items())


def test_check_weights_returns_floats() -> None:
    assert check_weights({"safety": 1, "diagnostics": 0}) == {"safety": 1.0, "diagnostics": 0.0}
