"""compare: the table's shape, grouping, inputs, degenerate rows, errors, the dqs_method guard, fallbacks."""

from __future__ import annotations

import itertools
import warnings
from types import SimpleNamespace

import numpy as np
import polars as pl
import pytest
from scipy import stats as scipy_stats
from statsmodels.tools.sm_exceptions import ConvergenceWarning

import mas_eval
from mas_eval import DataError, MasEvalError, SchemaError
from mas_eval.errors import InvalidParameterError
from mas_eval.stats import MixedDqsMethodsError, compare
from mas_eval.stats.cluster import _totals
from mas_eval.stats.options import COMPARISON_COLUMNS as COLUMNS

FLOAT_COLUMNS = [
    "mean_treatment", "mean_control", "std_treatment", "std_control", "difference", "improvement_percentage",
    "statistic", "dof", "p_value", "p_adjusted", "ci_low", "ci_high", "cohens_d", "hedges_g", "d_ci_low",
    "d_ci_high", "power", "correlation",
]  # fmt: skip


def frame_of(groups: dict[str, tuple[list[float], list[float]]], **extra: list[object]) -> pl.DataFrame:
    """Runs per group ``g``: treatment ``mas`` values, then control ``single`` values."""
    rows = []
    for g, (t, c) in groups.items():
        rows += [(g, "mas", float(v)) for v in t] + [(g, "single", float(v)) for v in c]
    frame = pl.DataFrame(rows, schema=["g", "system", "y"], orient="row")
    return frame.with_columns(**{k: pl.Series(v) for k, v in extra.items()}) if extra else frame


def no_nan(table: pl.DataFrame) -> None:
    nan = table.select(pl.col(c).is_nan().any() for c in FLOAT_COLUMNS).row(0)
    assert not any(nan), dict(zip(FLOAT_COLUMNS, nan, strict=True))


def test_table_has_the_documented_columns_in_order() -> None:
    frame = frame_of({"a": ([1, 2, 3], [2, 3, 5]), "b": ([1, 5, 3], [0, 1, 1])})
    table = compare(frame, "y", by="g")
    assert table.columns == ["g", *COLUMNS]
    assert table["g"].to_list() == ["a", "b"]
    assert table.schema["n_treatment"] == pl.Int64
    assert table.schema["significant"] == pl.Boolean
    assert table.schema["warning"] == pl.String
    assert compare(frame, "y").columns == COLUMNS  # no by: no key columns


def test_rows_are_sorted_by_group_then_metrics_in_the_given_order() -> None:
    rng = np.random.default_rng(0)
    frame = pl.DataFrame(
        {
            "task": rng.choice(["t2", "t1", None], 120).tolist(),
            "variant": rng.choice([2, 1], 120),
            "system": rng.choice(["mas", "single"], 120),
            "b": rng.normal(size=120),
            "a": rng.normal(size=120),
        }
    )
    table = compare(frame, ["b", "a"], by=["task", "variant"])
    keys = table.select("task", "variant").unique(maintain_order=True).rows()
    assert keys == [("t1", 1), ("t1", 2), ("t2", 1), ("t2", 2), (None, 1), (None, 2)]
    assert table["metric"].to_list() == ["b", "a"] * 6
    assert table.schema["variant"] == frame.schema["variant"]
    no_nan(table)


def test_accepts_lazyframes_scores_and_comma_separated_metrics() -> None:
    scores = mas_eval.score(mas_eval.simulate(300, seed=2))
    from_scores = compare(scores, "dqs,decision_confidence", by="task")
    from_lazy = compare(scores.runs.lazy(), ["dqs", "decision_confidence"], by="task")
    assert from_scores.equals(from_lazy)
    assert set(from_scores["metric"]) == {"dqs", "decision_confidence"}
    paired = compare(scores, ["dqs", "gt_match"], by="task", pair_on="case_id", test="auto", correction="holm")
    # gt_match is pass/fail (0/1), one run per case and system: "auto" gives it McNemar's test.
    assert dict(zip(paired["metric"], paired["test"], strict=False)) == {"dqs": "paired", "gt_match": "mcnemar"}
    assert (paired["n_pairs"] > 0).all()
    no_nan(paired)


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"pair_on": "case_id", "test": "paired"}, {"cluster": "case_id"},
     {"pair_on": "case_id", "test": "paired", "cluster": "variant"}],
)  # fmt: skip
@pytest.mark.slow
def test_results_are_identical_call_after_call(kwargs: dict[str, object]) -> None:
    # Polars merges per-thread partial sums, and emits group-by rows, in no fixed order; the
    # statistics layer sorts where that matters, so that two calls agree to the last bit. Ten calls:
    # the unsorted sum over clusters differed in 25 of 60 calls, which three calls missed 1 time in 5.
    runs = mas_eval.score(mas_eval.simulate(6000, seed=4, repeats=2)).runs
    first = compare(runs, ["dqs", "decision_confidence", "efficiency_score"], by="task", **kwargs)
    for _ in range(10):
        assert compare(runs, ["dqs", "decision_confidence", "efficiency_score"], by="task", **kwargs).equals(first)


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_sum_over_clusters_follows_the_cluster_key_whatever_the_row_order(order: tuple[int, ...]) -> None:
    # Group-by rows come in an order that can change from call to call (in CI two calls differed in
    # the last bit), and a float sum depends on its order. Squared cluster scores 1, 1, 1e16 sum to
    # 1e16 + 2 in cluster-key order (a, b, c); Polars sums 1, 1e16, 1 to 1e16, as 1e16 + 1 rounds
    # back to 1e16. So every row order must give 1e16 + 2.
    per_cluster = pl.DataFrame(
        {"task": ["t"] * 3, "cl": ["a", "b", "c"], "score_0": [1.0, 1.0, 1e8], "count_0": [1, 1, 1]}
    )
    arrays = _totals(per_cluster[list(order)].lazy(), pl.DataFrame({"task": ["t"]}), ["task"], "cl", 1)
    assert arrays["cluster_ss"][0, 0] == 1e16 + 2.0
    assert arrays["n_clusters"][0, 0] == 3


def test_boolean_metrics_are_compared_as_proportions() -> None:
    frame = pl.DataFrame({"system": ["mas"] * 4 + ["single"] * 4, "ok": [True, True, True, False] + [True, False] * 2})
    row = compare(frame, "ok").row(0, named=True)
    assert (row["mean_treatment"], row["mean_control"]) == (0.75, 0.5)


def test_nan_counts_as_missing() -> None:
    frame = pl.DataFrame(
        {"system": ["mas"] * 4 + ["single"] * 4, "y": [1.0, 2.0, float("nan"), 4.0, 2.0, 2.5, 3.0, None]}
    )
    row = compare(frame, "y").row(0, named=True)
    assert (row["n_treatment"], row["n_control"]) == (3, 3)
    assert row["mean_treatment"] == pytest.approx(7 / 3)


# -- degenerate rows: nulls and a warning, never an exception or a NaN -----------------------------


@pytest.mark.parametrize("test", ["welch", "student", "mannwhitney"])
def test_degenerate_independent_rows(test: str) -> None:
    frame = frame_of(
        {
            "fine": ([1, 2, 3, 4], [2, 4, 4, 5]),
            "no_control": ([1, 2, 3], []),
            "one_value": ([1, 2, 3], [4]),
            "flat": ([2, 2, 2], [3, 3]),
            "one_flat": ([2, 2, 2], [3, 4, 6]),
        }
    )
    table = compare(frame, "y", by="g", test=test)
    by_group = {row["g"]: row for row in table.iter_rows(named=True)}
    assert by_group["fine"]["warning"] is None and by_group["fine"]["p_value"] is not None
    assert by_group["one_flat"]["p_value"] is not None  # zero variance in one system only is fine
    expectations = {
        "no_control": "no values for 'single'",
        "one_value": "fewer than 2 values",
        "flat": "zero variance in both systems",
    }
    for group, text in expectations.items():
        row = by_group[group]
        assert text in row["warning"], row["warning"]
        for name in ("statistic", "p_value", "p_adjusted", "significant", "ci_low", "cohens_d", "power"):
            assert row[name] is None, (group, name)
    assert by_group["flat"]["difference"] == -1.0
    assert by_group["no_control"]["mean_treatment"] == 2.0  # descriptives are kept
    assert by_group["no_control"]["n_control"] == 0
    no_nan(table)


def test_group_with_only_one_system_present_gets_a_row() -> None:
    frame = pl.concat(
        [frame_of({"a": ([1, 2, 3], [2, 3, 4])}), pl.DataFrame({"g": ["b"], "system": ["mas"], "y": [1.0]})]
    )
    table = compare(frame, "y", by="g")
    assert table["g"].to_list() == ["a", "b"]
    assert "no values for 'single'" in table.row(1, named=True)["warning"]


def test_degenerate_paired_rows() -> None:
    runs = [
        # group g1: 3 paired cases and one case only mas ran
        ("g1", "c1", "mas", 1.0), ("g1", "c1", "single", 0.5), ("g1", "c2", "mas", 2.0), ("g1", "c2", "single", 1.0),
        ("g1", "c3", "mas", 3.5), ("g1", "c3", "single", 2.0), ("g1", "c4", "mas", 9.0),
        # group g2: no case ran by both systems
        ("g2", "c5", "mas", 1.0), ("g2", "c6", "single", 2.0),
        # group g3: every difference equal
        ("g3", "c7", "mas", 2.0), ("g3", "c7", "single", 1.0), ("g3", "c8", "mas", 5.0), ("g3", "c8", "single", 4.0),
        ("g3", "c9", "mas", 3.0), ("g3", "c9", "single", 2.0),
    ]  # fmt: skip
    frame = pl.DataFrame(runs, schema=["g", "case", "system", "y"], orient="row")
    table = compare(frame, "y", by="g", pair_on="case", test="paired")
    g1, g2, g3 = table.iter_rows(named=True)
    assert g1["n_pairs"] == 3 and g1["p_value"] is not None
    assert "1 unpaired case(s) left out" in g1["warning"]
    assert g1["mean_treatment"] == pytest.approx((1 + 2 + 3.5) / 3)  # the unpaired case is left out
    assert g2["n_pairs"] == 0 and g2["p_value"] is None
    assert "fewer than 2 paired cases" in g2["warning"]
    assert g3["p_value"] is None and "every paired difference is equal" in g3["warning"]
    assert g3["difference"] == pytest.approx(1.0)
    no_nan(table)


def test_paired_runs_are_averaged_per_case_first() -> None:
    runs = [("c1", "mas", 1.0), ("c1", "mas", 3.0), ("c1", "single", 1.0), ("c2", "mas", 4.0), ("c2", "single", 1.0),
            ("c2", "single", 2.0), ("c2", "single", 3.0), ("c3", "mas", 2.0), ("c3", "single", 0.0)]  # fmt: skip
    frame = pl.DataFrame(runs, schema=["case", "system", "y"], orient="row")
    row = compare(frame, "y", pair_on="case", test="paired").row(0, named=True)
    assert (row["n_treatment"], row["n_control"], row["n_pairs"]) == (4, 5, 3)
    # per-case differences: (2 - 1), (4 - 2), (2 - 0)
    assert row["difference"] == pytest.approx(5 / 3)
    assert row["mean_treatment"] == pytest.approx((2 + 4 + 2) / 3)


def test_fewer_than_two_clusters_is_degenerate() -> None:
    frame = frame_of({"a": ([1, 2, 3], [2, 3, 5])}, cl=[1] * 6)
    row = compare(frame, "y", cluster="cl").row(0, named=True)
    assert row["n_clusters"] == 1
    assert "fewer than 2 clusters" in row["warning"]
    assert row["p_value"] is None


def test_infinite_values_are_left_out_with_a_warning_that_counts_them() -> None:
    frame = frame_of({"a": ([1, 2, float("inf"), 4], [2, 3, 5, float("-inf")])})
    row = compare(frame, "y").row(0, named=True)
    assert "2 infinite value(s) left out" in row["warning"]
    assert (row["n_treatment"], row["n_control"]) == (3, 3)
    assert row["p_value"] is not None


@pytest.mark.parametrize("method", ["default", "mixed"])
def test_nan_values_left_out_are_counted_per_group_and_metric(method: str) -> None:
    # Issue 9, item 9: NaN went silently (n 100 -> 97) while inf got a warning; now both are counted.
    nan = float("nan")
    frame = frame_of(
        {"a": ([1, 2, nan, 4, 5], [2, 3, 5, 4, nan]), "b": ([1, 2, 3, 4, 6], [2, 3, 5, 1, 2])},
        case=[1, 2, 3, 4, 5] * 4,
    ).with_columns(z=pl.col("y") * 2)
    options = {"pair_on": "case", "method": "mixed"} if method == "mixed" else {}
    table = compare(frame, ["y", "z"], by="g", **options)
    warnings = dict(zip(zip(table["g"], table["metric"], strict=True), table["warning"], strict=True))
    assert "2 NaN value(s) left out" in warnings["a", "y"]
    assert "2 NaN value(s) left out" in warnings["a", "z"]
    assert warnings["b", "y"] is None or "left out" not in warnings["b", "y"]


def test_all_null_metric_in_a_group() -> None:
    frame = frame_of({"a": ([1, 2, 3], [2, 3, 5]), "b": ([1, 2], [3, 4])}).with_columns(
        y=pl.when(pl.col("g") == "b").then(None).otherwise(pl.col("y"))
    )
    table = compare(frame, "y", by="g")
    # Neither system has a value in b while a has some: y does not apply to b, which has no row.
    assert table["g"].to_list() == ["a"]
    no_nan(table)
    # One system without values is a degenerate comparison, kept with its warning.
    one_sided = frame_of({"a": ([1, 2, 3], [2, 3, 5]), "b": ([1, 2], [3, 4])}).with_columns(
        y=pl.when((pl.col("g") == "b") & (pl.col("system") == "mas")).then(None).otherwise(pl.col("y"))
    )
    table = compare(one_sided, "y", by="g")
    assert "no values for 'mas'" in table.row(1, named=True)["warning"]
    no_nan(table)
    # A metric with no value anywhere keeps its rows, each saying so.
    nothing = frame.with_columns(y=pl.lit(None, dtype=pl.Float64))
    assert compare(nothing, "y", by="g").height == 2


def test_metrics_that_apply_to_other_groups_leave_no_rows_and_keep_the_correction_family() -> None:
    decision = frame_of({"t1": ([1, 2, 3, 4], [2, 3, 5, 7])}).with_columns(recall=pl.lit(None, dtype=pl.Float64))
    diagnosis = frame_of({"d1": ([0.2, 0.4, 0.5, 0.6], [0.5, 0.6, 0.8, 0.9])}).rename({"y": "recall"})
    runs = pl.concat([decision, diagnosis.with_columns(y=pl.lit(None, dtype=pl.Float64))], how="diagonal_relaxed")
    table = compare(runs, ["y", "recall"], by="g", correction="bonferroni")
    assert table.select("g", "metric").rows() == [("d1", "recall"), ("t1", "y")]
    alone = [compare(runs.filter(pl.col("g") == g), m, correction="none")["p_value"].item() for g, m in
             (("d1", "recall"), ("t1", "y"))]  # fmt: skip
    assert table["p_adjusted"].to_list() == pytest.approx([min(1.0, 2 * p) for p in alone])


# -- options and errors ------------------------------------------------------------------------


def test_pair_on_with_an_independent_test_is_an_error() -> None:
    frame = frame_of({"a": ([1, 2, 3], [2, 3, 5])}, case=[1, 2, 3, 1, 2, 3])
    with pytest.raises(InvalidParameterError, match="pair_on='case' is only used by paired tests"):
        compare(frame, "y", pair_on="case", test="welch")
    with pytest.raises(InvalidParameterError, match="test='paired' pairs runs by case: pass pair_on"):
        compare(frame, "y", test="paired")
    with pytest.raises(InvalidParameterError, match="test='wilcoxon' pairs runs by case: pass pair_on"):
        compare(frame, "y", test="wilcoxon")
    assert compare(frame, "y", test="auto")["test"][0] == "welch"


def test_the_default_test_is_auto_as_on_the_command_line() -> None:
    # Issue 9, item 13: the API defaulted to "welch", so pair_on raised in Python where the CLI paired.
    frame = frame_of({"a": ([1, 2, 3], [2, 3, 5])}, case=[1, 2, 3, 1, 2, 3])
    assert compare(frame, "y", pair_on="case")["test"][0] == "paired"
    assert compare(frame, "y")["test"][0] == "welch"
    assert compare(frame, "y", pair_on="case", test="auto")["test"][0] == "paired"
    # With the mixed model, pair_on names the case of the random intercept, whatever the test.
    assert compare(frame, "y", pair_on="case", method="mixed")["n_treatment"][0] == 3


@pytest.mark.parametrize(
    ("kwargs", "error", "text"),
    [
        ({"test": "ttest"}, InvalidParameterError, "test='ttest' is invalid; test must be one of 'welch'"),
        ({"correction": "sidak"}, InvalidParameterError, "correction='sidak' is invalid; correction must be one of"),
        ({"alpha": 1.5}, InvalidParameterError, r"alpha=1.5 is invalid; alpha must be a number in \(0, 1\)"),
        ({"confidence": 0}, InvalidParameterError, r"confidence=0 is invalid; confidence must be a number in \(0, 1\)"),
        ({"n_boot": -1}, InvalidParameterError, r"n_boot=-1 is invalid; n_boot must be an integer in \[0, 1000000\]"),
        ({"treatment": "single"}, InvalidParameterError, "both 'single'"),
        ({"treatment": "MAS"}, DataError, "no runs of system 'MAS'.*'mas', 'single'"),
        ({"metrics": "nope"}, SchemaError, "no column 'nope'"),
        ({"metrics": "label"}, SchemaError, "must be numeric"),
        ({"by": "nope"}, SchemaError, "by: no column 'nope'"),
        ({"metrics": "y", "by": "y"}, InvalidParameterError, "cannot be both"),
        ({"method": "bayes"}, InvalidParameterError, "method='bayes' is invalid; method must be one of"),
        ({"method": "mixed"}, InvalidParameterError, "method='mixed' fits a random intercept per case: pass pair_on"),
        (
            {"method": "mixed", "pair_on": "cl", "cluster": "cl"},
            InvalidParameterError,
            "method='mixed' cannot be combined with cluster",
        ),
        (
            {"method": "mixed", "pair_on": "cl", "n_boot": 10},
            InvalidParameterError,
            "method='mixed' cannot be combined with n_boot",
        ),
        ({"pair_on": "cl", "by": "cl", "test": "paired"}, InvalidParameterError, "also a by column"),
        ({"cluster": "cl", "test": "mannwhitney"}, InvalidParameterError, "does not apply to test='mannwhitney'"),
        ({"cluster": "cl", "n_boot": 100}, InvalidParameterError, "cluster and n_boot cannot be combined"),
        ({"boot_ci": "basic"}, InvalidParameterError, "boot_ci='basic' is invalid; boot_ci must be one of"),
        ({"metrics": []}, InvalidParameterError, "name at least one column"),
        ({"metrics": ["y", "y"]}, InvalidParameterError, "metrics names y more than once"),
        ({"run_metrics": {"y": [1]}}, InvalidParameterError, "must be a Polars DataFrame"),
    ],
)
def test_bad_options_raise_clear_errors(kwargs: dict[str, object], error: type[Exception], text: str) -> None:
    frame = frame_of({"a": ([1, 2, 3], [2, 3, 5])}, cl=[1, 2, 1, 2, 1, 2], label=list("abcdef"))
    arguments: dict[str, object] = {"run_metrics": frame, "metrics": "y", **kwargs}
    with pytest.raises(error, match=text):
        compare(**arguments)  # type: ignore[arg-type]


def test_nulls_in_pair_on_or_cluster_are_an_error() -> None:
    frame = frame_of({"a": ([1, 2, 3], [2, 3, 5])}, case=[1, None, 3, 1, 2, 3])
    with pytest.raises(DataError, match="null values in 'case'"):
        compare(frame, "y", pair_on="case", test="paired")


def test_cases_spanning_clusters_are_an_error_when_paired() -> None:
    frame = frame_of({"a": ([1, 2, 3], [2, 3, 5])}, case=[1, 2, 3, 1, 2, 3], cl=[1, 1, 2, 2, 1, 2])
    with pytest.raises(DataError, match="not constant within 'case'"):
        compare(frame, "y", pair_on="case", test="paired", cluster="cl")


def test_a_row_the_rank_test_refuses_is_degenerate_and_draws_nothing_from_the_bootstrap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def mannwhitneyu(t: np.ndarray, c: np.ndarray, **kwargs: object) -> object:
        if 100.0 in t:
            msg = "refused"
            raise ValueError(msg)
        return scipy_stats.mannwhitneyu(t, c, **kwargs)

    frame = frame_of({"a": ([100, 101, 102], [1, 2, 3]), "b": ([1.5, 2.5, 3.7, 4.1], [1, 2, 2.2, 3])})
    options = {"test": "mannwhitney", "n_boot": 200, "seed": 5}
    alone = compare(frame.filter(pl.col("g") == "b"), "y", **options).row(0, named=True)
    monkeypatch.setattr("mas_eval.stats.ranks.stats", SimpleNamespace(mannwhitneyu=mannwhitneyu))
    refused, tested = compare(frame, "y", by="g", **options).iter_rows(named=True)
    assert "mannwhitney failed: refused" in refused["warning"]
    assert (refused["p_value"], refused["ci_low"], refused["ci_method"]) == (None, None, None)
    assert refused["mean_treatment"] == 101.0  # descriptives are kept
    # Group b's resamples are the generator's first draws, as if group a were not there.
    assert {k: v for k, v in tested.items() if k != "g"} == alone
    assert tested["ci_method"] == "bootstrap_bca"


# -- the dqs_method guard: no comparing DQS of different cascade steps ---------------------------


def _dqs_frame() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "task": ["t1"] * 6 + ["t2"] * 6,
            "system": ["mas", "mas", "mas", "single", "single", "single"] * 2,
            "dqs": [0.8, 0.7, 0.9, 0.6, 0.65, 0.7, 0.5, 0.6, 0.7, 0.6, 0.5, 0.4],
            "dqs_method": ["criteria"] * 6 + ["criteria"] * 3 + ["final", "final", "mcda"],
            "decision_confidence": [0.5, 0.6, 0.7, 0.8, 0.9, 0.7] * 2,
        }
    )


def test_dqs_across_different_methods_is_refused() -> None:
    with pytest.raises(MixedDqsMethodsError) as info:
        compare(_dqs_frame(), ["dqs", "decision_confidence"], by="task")
    message = str(info.value)
    assert "(task='t2') mas: criteria; single: final, mcda" in message
    assert "t1" not in message
    assert "allow_mixed_methods=True" in message
    assert isinstance(info.value, MasEvalError)


def test_allow_mixed_methods_compares_with_a_warning() -> None:
    table = compare(_dqs_frame(), ["dqs", "decision_confidence"], by="task", allow_mixed_methods=True)
    warnings_by = {(r["task"], r["metric"]): r["warning"] for r in table.iter_rows(named=True)}
    assert "dqs_method differs" in warnings_by[("t2", "dqs")]
    assert warnings_by[("t1", "dqs")] is None
    assert warnings_by[("t2", "decision_confidence")] is None
    assert table.filter(pl.col("metric") == "dqs")["p_value"].null_count() == 0


def test_other_metrics_and_per_method_groups_pass_the_guard() -> None:
    # dqs not compared: no guard, and no note.
    other = compare(_dqs_frame(), "decision_confidence", by="task")
    assert other["metric"].to_list() == ["decision_confidence"] * 2
    assert other["warning"].null_count() == 2 and other["p_value"].null_count() == 0
    # One method within the compared runs: compared without a note.
    one = compare(_dqs_frame().filter(pl.col("task") == "t1"), "dqs").row(0, named=True)
    assert one["warning"] is None and one["p_value"] is not None
    assert (one["n_treatment"], one["n_control"]) == (3, 3)
    # dqs_method as a by column: each group holds one method, so nothing is refused.
    table = compare(_dqs_frame(), "dqs", by=["task", "dqs_method"])
    assert table.select("task", "dqs_method").rows() == [
        ("t1", "criteria"), ("t2", "criteria"), ("t2", "final"), ("t2", "mcda"),
    ]  # fmt: skip
    assert not table["warning"].drop_nulls().str.contains("dqs_method").any()


# -- the mixed model and its fallback -------------------------------------------------------------


def _repeated(seed: int, case_sd: float) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    case = np.repeat(np.arange(20), 4)
    mas = np.tile([True, True, False, False], 20)
    y = 0.5 * mas + case_sd * rng.normal(size=20)[case] + rng.normal(scale=0.5, size=80)
    return pl.DataFrame({"case": case, "system": np.where(mas, "mas", "single"), "y": y})


def test_mixed_model_runs_on_repeated_runs() -> None:
    row = compare(_repeated(1, 1.0), "y", pair_on="case", method="mixed").row(0, named=True)
    assert row["test"] == "mixed" and row["ci_method"] == "mixed"
    assert row["n_clusters"] == 20 and row["n_treatment"] == 40
    assert row["ci_low"] < row["difference"] < row["ci_high"]
    assert row["warning"] is None


def _no_case_effect(cases: int = 30) -> pl.DataFrame:
    """Two runs per case and system whose four values average exactly 0 in every case.

    The treatment effect varies by case (so the paired differences have a spread), but the case
    means are all equal, so nothing is left for a random intercept: the REML estimate of its
    variance is 0, on the boundary, by construction. Every value is a binary fraction, so the
    case means are exactly 0 in floating point too.
    """
    rng = np.random.default_rng(2)
    shift = rng.integers(-8, 9, cases) / 16  # the case's treatment effect, around 0.5
    spread = rng.integers(1, 9, (cases, 2)) / 32  # the within-case noise of each system
    mas = 0.25 + shift
    single = -0.25 - shift
    y = np.stack([mas + spread[:, 0], mas - spread[:, 0], single + spread[:, 1], single - spread[:, 1]], axis=1)
    assert (y.sum(axis=1) == 0.0).all()
    return pl.DataFrame(
        {
            "case": np.repeat(np.arange(cases), 4),
            "system": np.tile(["mas", "mas", "single", "single"], cases),
            "y": y.reshape(-1),
        }
    )


def test_singular_mixed_fit_falls_back_with_a_warning() -> None:
    # Whether statsmodels reports the boundary (a singular fit) or gives up ("did not converge")
    # differs between machines; either way the mixed model is not used, and that is what is tested.
    frame = _no_case_effect()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing may leak out of compare
        row = compare(frame, "y", pair_on="case", method="mixed", test="auto").row(0, named=True)
    assert row["test"] == "paired"
    assert row["ci_method"] == "paired"
    assert row["p_value"] is not None
    assert row["n_pairs"] == 30
    assert row["warning"].startswith("mixed model not used (")
    assert "fell back to paired" in row["warning"]
    # The fallback is exactly the paired test.
    assert row == compare(frame, "y", pair_on="case", test="paired").row(0, named=True) | {"warning": row["warning"]}


def test_non_converging_mixed_fit_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    class NotConverging:
        def __init__(self, *args: object, **kwargs: object) -> None:
            pass

        def fit(self, **kwargs: object) -> object:
            warnings.warn("Gradient optimization failed", ConvergenceWarning, stacklevel=1)
            return type("Result", (), {"converged": False})()

    monkeypatch.setattr("statsmodels.regression.mixed_linear_model.MixedLM", NotConverging)
    row = compare(_repeated(3, 1.0), "y", pair_on="case", method="mixed", test="welch").row(0, named=True)
    assert row["test"] == "welch"
    assert "did not converge: Gradient optimization failed" in row["warning"]


def test_failing_mixed_fit_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    class Failing:
        def __init__(self, *args: object, **kwargs: object) -> None:
            pass

        def fit(self, **kwargs: object) -> object:
            msg = "Singular matrix"
            raise np.linalg.LinAlgError(msg)

    monkeypatch.setattr("statsmodels.regression.mixed_linear_model.MixedLM", Failing)
    row = compare(_repeated(4, 1.0), "y", pair_on="case", method="mixed").row(0, named=True)
    assert "fit failed: LinAlgError: Singular matrix" in row["warning"]
    assert row["p_value"] is not None
