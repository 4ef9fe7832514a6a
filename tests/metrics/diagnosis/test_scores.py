"""Diagnostic scores from label counts: the vectorised form equals the oracle, the ranges hold,
and Local-DDx's recorded scores are reproduced from its recorded counts."""

from __future__ import annotations

import json
import math

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mas_eval.errors import InvalidParameterError
from mas_eval.metrics.diagnosis import diagnosis_scores
from mas_eval.metrics.diagnosis.scores import COUNTS, SCORES
from tests.conftest import LDDX, needs_lddx
from tests.oracles import diagnosis as oracle

FIXTURES = sorted(LDDX.glob("ddx_results_*.json"))
#: The five files from Local-DDx's archive/previous_versions: scored by the published v6 evaluator.
V6 = [path for path in FIXTURES if "_20250709_" in path.name]
#: The eleven files of Local-DDx's v8/Transcripts/v8_5: scored by v8's deterministic evaluator.
V8 = [path for path in FIXTURES if "_20250718_" in path.name]

counts = st.integers(min_value=0, max_value=12)
runs = st.lists(st.tuples(*[counts] * 6), min_size=1, max_size=30)


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


@settings(max_examples=200, deadline=None)
@given(runs=runs, preset=st.sampled_from(["spec", "lddx-v6", "lddx-v8"]))
def test_vectorised_equals_oracle(runs: list[tuple[int, ...]], preset: str) -> None:
    columns = dict(zip(COUNTS, map(list, zip(*runs, strict=True)), strict=True))
    frame = diagnosis_scores(**columns, preset=preset)  # type: ignore[arg-type]
    for row, run in zip(frame.iter_rows(named=True), runs, strict=True):
        expected = oracle.scores(*run, preset=preset)
        for name in SCORES:
            assert _same(row[name], expected[name]), (name, run, row[name], expected[name])


@settings(max_examples=200, deadline=None)
@given(runs=runs, preset=st.sampled_from(["spec", "lddx-v6", "lddx-v8"]))
def test_scores_stay_in_their_ranges(runs: list[tuple[int, ...]], preset: str) -> None:
    columns = dict(zip(COUNTS, map(list, zip(*runs, strict=True)), strict=True))
    frame = diagnosis_scores(**columns, preset=preset)  # type: ignore[arg-type]
    for name in ("tp_rate", "traditional_recall", "traditional_precision", "diagnostic_safety"):
        assert frame[name].drop_nulls().is_between(0, 1).all(), name
    assert frame["system_safety_coverage"].drop_nulls().is_between(0, 1).all()
    crq = frame.filter(pl.col("clinical_reasoning_quality").is_not_null())
    assert (crq["clinical_reasoning_quality"] <= 1).all()
    negative = crq.filter(pl.col("clinical_reasoning_quality") < 0)
    assert (negative["caa_weight"] < 0).all(), "CRQ is negative only through a negative CAA weight"


def test_zero_denominators_give_null_not_nan() -> None:
    row = diagnosis_scores(tp=0, fp=0, fn=0).row(0, named=True)
    assert all(row[name] is None for name in SCORES if name != "total_gt")


def test_without_ground_truth_the_weighted_scores_are_undefined() -> None:
    # Found by hypothesis: one CAA and no ground truth. The CAA weight needs a TP rate, so
    # diagnostic safety is undefined rather than 0.
    row = diagnosis_scores(tp=0, fp=0, fn=0, caa=1, preset="spec").row(0, named=True)
    assert row["caa_weight"] is None and row["diagnostic_safety"] is None
    assert row["traditional_precision"] == 0.0


@needs_lddx
@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_local_ddx_crq_and_safety_are_reproduced_from_its_counts(path: object) -> None:
    # Local-DDx (Baglecake/Local-DDx, MIT) wrote these files; its own counts go in, its own
    # scores must come out. The recorded ground-truth total is passed as recorded.
    recorded = json.loads(path.read_text(encoding="utf-8"))  # type: ignore[attr-defined]
    row = diagnosis_scores(
        tp=recorded["tp_count"],
        fp=recorded["fp_count"],
        fn=recorded["fn_count"],
        caa=recorded["caa_count"],
        ae=recorded["ae_count"],
        total_gt=recorded["total_gt_diagnoses"],
        preset="lddx-v6",
    ).row(0, named=True)
    assert row["clinical_reasoning_quality"] == pytest.approx(recorded["clinical_reasoning_quality"], abs=1e-12)
    assert row["diagnostic_safety"] == pytest.approx(recorded["diagnostic_safety"], abs=1e-12)
    assert row["tp_rate"] == pytest.approx(recorded["tp_rate"], abs=1e-12)
    assert row["caa_weight"] == recorded["caa_weight_applied"]
    assert row["traditional_precision"] == pytest.approx(recorded["traditional_precision"], abs=1e-12)


@needs_lddx
def test_local_ddx_v6_files_record_recall_over_the_whole_ground_truth() -> None:
    # The published v6 evaluator's recall is TP / |GT| (the LDDx v6 metrics guide's formula); the later v8_5
    # files record v8's TP / (TP + FN) instead (preset "lddx-v8", the next test).
    assert len(V6) == 5
    for path in V6:
        recorded = json.loads(path.read_text(encoding="utf-8"))
        row = diagnosis_scores(
            tp=recorded["tp_count"], fp=recorded["fp_count"], fn=recorded["fn_count"],
            caa=recorded["caa_count"], ae=recorded["ae_count"], preset="lddx-v6",
        ).row(0, named=True)  # fmt: skip
        assert row["total_gt"] == recorded["total_gt_diagnoses"], path.name
        assert row["traditional_recall"] == pytest.approx(recorded["traditional_recall"], abs=1e-12), path.name


@needs_lddx
def test_local_ddx_v8_files_are_reproduced_from_their_counts_by_v8_s_rules() -> None:
    # v8's evaluator gives no CAA and divides recall by TP + FN: AE and TM-SM are left out of it.
    assert len(V8) == 11
    for path in V8:
        recorded = json.loads(path.read_text(encoding="utf-8"))
        row = diagnosis_scores(
            tp=recorded["tp_count"], fp=recorded["fp_count"], fn=recorded["fn_count"],
            caa=recorded["caa_count"], ae=recorded["ae_count"], total_gt=recorded["total_gt_diagnoses"],
            preset="lddx-v8",
        ).row(0, named=True)  # fmt: skip
        for ours, theirs in (
            ("traditional_recall", "traditional_recall"), ("traditional_precision", "traditional_precision"),
            ("clinical_reasoning_quality", "clinical_reasoning_quality"), ("diagnostic_safety", "diagnostic_safety"),
            ("tp_rate", "tp_rate"), ("caa_weight", "caa_weight_applied"),
        ):  # fmt: skip
            assert row[ours] == pytest.approx(recorded[theirs], abs=1e-12), (path.name, ours)


def test_v8_recall_leaves_the_excluded_ground_truth_out() -> None:
    v6 = diagnosis_scores(tp=2, fp=1, fn=1, ae=2, tm_sm=1, preset="lddx-v6").row(0, named=True)
    v8 = diagnosis_scores(tp=2, fp=1, fn=1, ae=2, tm_sm=1, preset="lddx-v8").row(0, named=True)
    assert (v6["traditional_recall"], v8["traditional_recall"]) == (pytest.approx(2 / 6), pytest.approx(2 / 3))
    assert v8["tp_rate"] == v6["tp_rate"] == pytest.approx(2 / 6)
    assert v8["clinical_reasoning_quality"] == v6["clinical_reasoning_quality"]


def test_the_two_rule_sets_differ_where_spec_md_says() -> None:
    # One CAA, one TM-SM: the spec counts CAA on the system side and TM-SM in the CRQ denominator.
    spec = diagnosis_scores(tp=3, fp=1, fn=1, caa=1, ae=1, tm_sm=1, preset="spec").row(0, named=True)
    v6 = diagnosis_scores(tp=3, fp=1, fn=1, caa=1, ae=1, tm_sm=1, preset="lddx-v6").row(0, named=True)
    assert (spec["total_gt"], v6["total_gt"]) == (6, 7)
    assert spec["clinical_reasoning_quality"] == pytest.approx((3 + 0.3 * 1 + 1) / 8)  # rate 3/6 -> w 0.3
    assert v6["clinical_reasoning_quality"] == pytest.approx((3 + 0.0 * 1 + 1) / 7)  # rate 3/7 -> w 0.0
    assert spec["system_safety_coverage"] == pytest.approx(4 / 6)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tp": 1, "fp": 0, "fn": 0, "preset": "v8"}, "preset='v8' is invalid"),
        ({"tp": [1, 2], "fp": [0], "fn": 0}, "different lengths"),
        ({"tp": 1, "fp": -1, "fn": 0}, "fp has a negative value"),
    ],
)
def test_bad_counts_are_one_clear_error(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        diagnosis_scores(**kwargs)  # type: ignore[arg-type]
