"""Diagnostic accuracy and clinical relevance (MedAISure's clinical metrics) on MedAISure's own test cases.

Every case of MedAISure's tests/test_metrics_known_values.py, tests/test_domain_specific_metrics.py
and tests/test_metrics_malformed_inputs.py is one run here, scored under preset ``"medaisure"``
through :func:`mas_eval.score`: the run's value is what MedAISure's ``calculate()`` returned. A
case's dictionaries become an item of the ``answers`` table (:func:`item_of`); the values are
MedAISure's by its code (worked out by hand below), the four metrics together.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import mas_eval
from mas_eval import Dataset, Scores
from mas_eval.errors import InvalidParameterError, SchemaError
from mas_eval.ingest import ingest_jsonl
from mas_eval.metrics.answers import AnswersParams, answer_scores
from mas_eval.metrics.answers.suite import scoring_options

COLUMNS = (
    "prediction", "predicted_diagnosis", "rationale", "reference", "reference_rationale", "reference_diagnosis",
    "note", "specialty",
)  # fmt: skip
#: MedAISure's keys of an expected output, and of a model output, as the answers table's columns.
EXPECTED_KEYS = {
    "answer": "reference",
    "rationale": "reference_rationale",
    "diagnosis": "reference_diagnosis",
    "note": "note",
    "specialty": "specialty",
}
OUTPUT_KEYS = {
    "prediction": "prediction",
    "summary": "prediction",
    "label": "predicted_diagnosis",
    "rationale": "rationale",
    "specialty": "specialty",
}


def _text(value: Any) -> str | None:
    """A value as MedAISure reads it: ``str(value)``, None kept."""
    return None if value is None else str(value)


def item_of(expected: dict[str, Any], output: dict[str, Any]) -> dict[str, str | None]:
    """One row of the answers table from MedAISure's pair of dictionaries (unknown keys ignored, as there)."""
    row: dict[str, str | None] = dict.fromkeys(COLUMNS)
    for key, column in OUTPUT_KEYS.items():
        if key in output:
            row[column] = _text(output[key])
    for key, column in EXPECTED_KEYS.items():  # the expected output's specialty comes first (MedAISure's `or`)
        if key in expected and (column != "specialty" or expected[key]):
            row[column] = _text(expected[key])
    return row


# -- the cases -----------------------------------------------------------------------------------------------

#: From MedAISure tests/test_metrics_known_values.py: test name -> (expected, outputs, metric, value).
KNOWN_VALUES: dict[str, tuple[list[dict], list[dict], str, float]] = {
    "test_clinical_accuracy_exact_match_yields_one": (
        [{"answer": "Pneumonia"}], [{"prediction": "pneumonia"}], "clinical_accuracy", 1.0),
    # The test asserts a score in [0, 1]: pneumonia is an entity of the reference alone, so 0 / 3 = 0.
    "test_clinical_accuracy_no_overlap_yields_zero": (
        [{"answer": "pneumonia"}], [{"prediction": "appendicitis"}], "clinical_accuracy", 0.0),
    # The test asserts a score in [0, 1]: two empty rationales have token F1 1, nothing else: 0.4 · 1.
    "test_reasoning_quality_empty_both_yields_valid_and_high_overlap": (
        [{"rationale": ""}], [{"rationale": ""}], "reasoning_quality", 0.4),
    "test_diagnostic_accuracy_exact_label_match": (
        [{"diagnosis": "myocardial infarction", "specialty": "cardiology"}],
        [{"prediction": "mi", "specialty": "cardiology"}], "diagnostic_accuracy", 1.0),
    "test_diagnostic_accuracy_mismatch_zero": (
        [{"diagnosis": "sepsis", "specialty": "infectious_disease"}],
        [{"prediction": "flu", "specialty": "infectious_disease"}], "diagnostic_accuracy", 0.0),
    "test_clinical_relevance_identical_text_yields_one": (
        [{"note": "fever cough", "specialty": "infectious_disease"}],
        [{"summary": "fever cough", "specialty": "infectious_disease"}], "clinical_relevance", 1.0),
    "test_clinical_relevance_no_overlap_zero": (
        [{"note": "fever cough"}], [{"summary": "ankle sprain"}], "clinical_relevance", 0.0),
    "test_diagnostic_accuracy_hf_synonym_match": (
        [{"diagnosis": "heart failure", "specialty": "cardiology"}],
        [{"prediction": "hf", "specialty": "cardiology"}], "diagnostic_accuracy", 1.0),
    **{
        f"test_diagnostic_accuracy_{abbreviation}_synonym_match": (
            [{"diagnosis": diagnosis}], [{"prediction": abbreviation}], "diagnostic_accuracy", 1.0)
        for abbreviation, diagnosis in (
            ("uti", "urinary tract infection"), ("copd", "chronic obstructive pulmonary disease"),
            ("htn", "hypertension"), ("cva", "stroke"), ("pna", "pneumonia"), ("hld", "hyperlipidemia"),
            ("arf", "acute renal failure"), ("pud", "peptic ulcer disease"), ("afib", "atrial fibrillation"),
            ("gerd", "gastroesophageal reflux disease"),
        )
    },
}  # fmt: skip

#: From MedAISure tests/test_domain_specific_metrics.py (the tests assert a score in [0, 1] and the
#: breakdown's keys; the values are MedAISure's by its code).
DOMAIN: dict[str, tuple[list[dict], list[dict], str, float]] = {
    # mi = myocardial infarction, critical in cardiology: 1.5 · 1; sepsis is critical, flu wrong: 1.5 · 0;
    # pneumonia right, not critical: 1 · 1. (1.5 + 0 + 1) / (1.5 + 1.5 + 1) = 2.5 / 4.
    "test_diagnostic_accuracy_with_specialty_weighting_and_breakdown": (
        [{"diagnosis": "myocardial infarction", "specialty": "cardiology"},
         {"diagnosis": "sepsis", "specialty": "infectious_disease"},
         {"diagnosis": "pneumonia", "specialty": "infectious_disease"}],
        [{"prediction": "mi", "specialty": "cardiology"}, {"prediction": "flu", "specialty": "infectious_disease"},
         {"prediction": "pneumonia", "specialty": "infectious_disease"}],
        "diagnostic_accuracy", 2.5 / 4),
    # Note 1 {patient, with, fever, cough, tachycardia}, summary {fever, and, cough, present, tachycardia,
    # noted}: 3 / 8, boost 3 symptoms · 0.02, threshold 0.30 met: 0.435. Note 2 {chest, pain, troponin,
    # elevated} all in the summary's 8 words: 4 / 8, boost troponin 0.02 ("chest pain" is two words),
    # threshold 0.35 met: 0.52. Mean 0.4775.
    "test_clinical_relevance_thresholds_and_boost_with_breakdown": (
        [{"note": "patient with fever cough tachycardia", "specialty": "infectious_disease"},
         {"note": "chest pain troponin elevated", "specialty": "cardiology"}],
        [{"summary": "fever and cough present; tachycardia noted"},
         {"summary": "patient has chest pain and elevated troponin levels"}],
        "clinical_relevance", (0.375 + 0.06 + 0.5 + 0.02) / 2),
}  # fmt: skip

#: From MedAISure tests/test_metrics_malformed_inputs.py::test_metrics_handle_malformed_and_unexpected_inputs:
#: metric -> (expected key, output key, value). Items: both missing, both None, 123 and 456, both "",
#: "some text" twice (and extra keys).
MALFORMED = {
    # fallback 1, 1, 0 (neither contains the other), 1, 1
    "clinical_accuracy": ("answer", "prediction", 4 / 5),
    # F1 of two empty rationales 1: 0.4, 0.4; 0; 0.4; F1 1 and "so" in "some" (1 of 3 structure markers):
    # 0.4 + 0.15 / 3 = 0.45
    "reasoning_quality": ("rationale", "rationale", (0.4 + 0.4 + 0.0 + 0.4 + 0.45) / 5),
    # only "some text" matches: an empty label never does
    "diagnostic_accuracy": ("diagnosis", "prediction", 1 / 5),
    # two empty word sets are 1; {123} and {456} 0 (below 0.25: 0 · 0.8); identical texts 1
    "clinical_relevance": ("note", "summary", 4 / 5),
}


def _malformed(exp_key: str, out_key: str) -> tuple[list[dict], list[dict]]:
    expected = [{}, {exp_key: None}, {exp_key: 123}, {exp_key: ""}, {exp_key: "some text", "extra": {"n": [1]}}]
    outputs = [{}, {out_key: None}, {out_key: 456}, {out_key: ""}, {out_key: "some text", "weird": object()}]
    return expected, outputs


CASES: dict[str, tuple[list[dict], list[dict], str, float]] = {
    **KNOWN_VALUES,
    **DOMAIN,
    **{f"malformed_{metric}": (*_malformed(e, o), metric, value) for metric, (e, o, value) in MALFORMED.items()},
}


def _dataset(cases: dict[str, tuple[list[dict], list[dict], str, float]]) -> Dataset:
    """One run per case, its items the case's pairs."""
    names = list(cases)
    runs = pl.DataFrame(
        {"run_id": names, "system": ["mas"] * len(names), "case_id": names, "task": ["medaisure"] * len(names)}
    )
    rows = [
        {"run_id": name, "item_id": f"i{index}", **item_of(expected, output)}
        for name, (expecteds, outputs, _, _) in cases.items()
        for index, (expected, output) in enumerate(zip(expecteds, outputs, strict=True))
    ]
    answers = pl.DataFrame(
        rows, schema={"run_id": pl.String, "item_id": pl.String, **dict.fromkeys(COLUMNS, pl.String)}
    )
    return Dataset.from_frames(runs=runs, answers=answers)


@pytest.fixture(scope="module")
def medaisure() -> Scores:
    return mas_eval.score(_dataset(CASES), "medaisure")


def _run(scores: Scores, name: str) -> dict[str, Any]:
    return scores["runs"].filter(pl.col("run_id") == name).row(0, named=True)


@pytest.mark.parametrize("name", list(KNOWN_VALUES))
def test_known_values(medaisure: Scores, name: str) -> None:
    # From MedAISure tests/test_metrics_known_values.py::<name>
    *_, metric, value = KNOWN_VALUES[name]
    assert _run(medaisure, name)[metric] == value


@pytest.mark.parametrize("name", list(DOMAIN))
def test_domain_specific_values_and_breakdown(medaisure: Scores, name: str) -> None:
    # From MedAISure tests/test_domain_specific_metrics.py::<name>
    *_, metric, value = DOMAIN[name]
    assert _run(medaisure, name)[metric] == pytest.approx(value, rel=1e-15)
    items = medaisure["items"].filter(pl.col("run_id") == name).sort("item_id")
    if metric == "diagnostic_accuracy":  # MedAISure's breakdown: weight, correct (and critical, known label)
        assert items["diagnostic_weight"].to_list() == [1.5, 1.5, 1.0]
        assert items["diagnostic_accuracy"].to_list() == [1.0, 0.0, 1.0]
        assert items["diagnostic_critical"].to_list() == [True, True, False]
        assert items["diagnostic_known_label"].to_list() == [True, True, True]
    else:  # MedAISure's breakdown: base_jaccard, knowledge_boost, threshold, meets_threshold, final_score
        assert items["relevance_jaccard"].to_list() == [0.375, 0.5]
        assert items["relevance_boost"].to_list() == pytest.approx([0.06, 0.02], abs=1e-15)
        assert items["relevance_threshold"].to_list() == [0.30, 0.35]
        assert items["relevance_meets_threshold"].to_list() == [True, True]
        assert items["clinical_relevance"].to_list() == pytest.approx([0.435, 0.52], abs=1e-15)


@pytest.mark.parametrize("metric", list(MALFORMED))
def test_malformed_and_unexpected_inputs(medaisure: Scores, metric: str) -> None:
    # From MedAISure tests/test_metrics_malformed_inputs.py::test_metrics_handle_malformed_and_unexpected_inputs
    value = _run(medaisure, f"malformed_{metric}")[metric]
    assert value == pytest.approx(MALFORMED[metric][2], abs=1e-15)
    assert 0.0 <= value <= 1.0


@pytest.mark.parametrize("column", ["reference_diagnosis", "note", "specialty"])
def test_a_column_that_is_not_text_is_one_clear_error(column: str) -> None:
    # MedAISure tests/test_metrics_malformed_inputs.py::test_metrics_reject_list_shape_issues refuses
    # lists of unequal length and elements that are not dictionaries. A table has neither: its
    # counterpart is a column of the wrong type, refused with the column named and the fix.
    frame = pl.DataFrame({"item_id": ["q1"], "prediction": ["mi"], "reference": ["mi"], column: [1]})
    with pytest.raises(SchemaError, match=rf"column '{column}' must hold strings, not Int64; cast it"):
        answer_scores(frame, **scoring_options(AnswersParams.of_preset("medaisure")))


# -- the document's definitions (the default preset) ----------------------------------------------------------


def test_the_synonym_cases_match_under_the_documents_normalisation_too() -> None:
    # The answers synonym map holds the diagnosis family's synonyms: every abbreviation of MedAISure's
    # known-value tests is its diagnosis there as well; "flu" is influenza, not sepsis.
    cases = {name: case for name, case in KNOWN_VALUES.items() if case[2] == "diagnostic_accuracy"}
    frame = pl.DataFrame(
        [item_of(e[0], o[0]) for e, o, _, _ in cases.values()], schema=dict.fromkeys(COLUMNS, pl.String)
    )
    got = answer_scores(frame)["diagnostic_accuracy"].to_list()
    assert got == [value for *_, value in cases.values()]
    assert len(got) == 13


def test_the_document_takes_a_plain_mean_and_leaves_items_without_a_reference_unscored() -> None:
    expected, outputs, _, _ = DOMAIN["test_diagnostic_accuracy_with_specialty_weighting_and_breakdown"]
    rows = [item_of(e, o) for e, o in zip(expected, outputs, strict=True)]
    rows.append({**dict.fromkeys(COLUMNS), "prediction": "sepsis"})  # no reference diagnosis, no note
    frame = pl.DataFrame(rows, schema=dict.fromkeys(COLUMNS, pl.String))
    got = answer_scores(frame)
    assert got["diagnostic_weight"].to_list() == [1.0, 1.0, 1.0, None]  # no critical weight
    assert got["diagnostic_accuracy"].to_list() == [1.0, 0.0, 1.0, None]
    assert got["clinical_relevance"].null_count() == 4  # no note: nothing to be relevant to
    # Under MedAISure's code the last item counts, as an empty reference: never a match.
    medaisure = answer_scores(frame, **scoring_options(AnswersParams.of_preset("medaisure")))
    assert medaisure["diagnostic_accuracy"].to_list() == [1.0, 0.0, 1.0, 0.0]
    assert medaisure["clinical_relevance"].to_list() == [0.0, 0.0, 0.0, 0.0]  # empty note, non-empty summary


def test_the_document_relevance_is_the_plain_word_jaccard() -> None:
    expected, outputs, _, _ = DOMAIN["test_clinical_relevance_thresholds_and_boost_with_breakdown"]
    frame = pl.DataFrame(
        [item_of(e, o) for e, o in zip(expected, outputs, strict=True)], schema=dict.fromkeys(COLUMNS, pl.String)
    )
    got = answer_scores(frame)
    # The document's words: "patient", "with", "fever", "cough", "tachycardia" against "fever", "and",
    # "cough", "present", "tachycardia", "noted" (3 of 8); no boost, no adjustment.
    assert got["clinical_relevance"].to_list() == [3 / 8, 4 / 8]
    assert got["relevance_boost"].to_list() == [0.0, 0.0]


def test_the_run_values_are_the_weighted_and_plain_means_of_the_items(medaisure: Scores) -> None:
    items = medaisure["items"]
    runs = medaisure["runs"]
    for name in CASES:
        own = items.filter(pl.col("run_id") == name)
        row = _run(medaisure, name)
        weight = own["diagnostic_weight"].drop_nulls()
        if weight.len():
            weighted = (own["diagnostic_weight"] * own["diagnostic_accuracy"]).sum() / weight.sum()
            assert row["diagnostic_accuracy"] == pytest.approx(weighted, abs=1e-15)
        relevance = own["clinical_relevance"].drop_nulls()
        if relevance.len():
            assert row["clinical_relevance"] == pytest.approx(relevance.mean(), abs=1e-15)
    assert runs.height == len(CASES)


def test_the_new_parameters_are_checked() -> None:
    with pytest.raises(InvalidParameterError, match="relevance_threshold"):
        AnswersParams(relevance_threshold=1.5)
    with pytest.raises(InvalidParameterError, match="diagnostic_critical_weight"):
        AnswersParams(diagnostic_critical_weight=-1.0)


def test_a_label_apart_from_the_answer_is_what_diagnostic_accuracy_compares() -> None:
    # MedAISure reads the model output's "label" before its "prediction" (DiagnosticAccuracyMetric).
    frame = pl.DataFrame(
        {
            "prediction": ["The patient has heart failure.", "HF", "HF"],
            "predicted_diagnosis": ["HF", "sepsis", "  "],
            "reference": ["heart failure"] * 3,
            "reference_diagnosis": ["heart failure"] * 3,
        }
    )
    assert answer_scores(frame)["diagnostic_accuracy"].to_list() == [1.0, 0.0, 1.0]  # no words: the answer
    medaisure = answer_scores(frame, **scoring_options(AnswersParams.of_preset("medaisure")))
    assert medaisure["diagnostic_accuracy"].to_list() == [1.0, 0.0, 0.0]  # "  " is given there, and empty


def test_run_records_carry_the_label_note_and_specialty_into_the_answers(tmp_path: Path) -> None:
    record = {
        "run_id": "r1", "system": "mas", "case_id": "c1",
        "answers": [{"item_id": "q1", "prediction": "An MI.", "predicted_diagnosis": "MI", "reference": "mi",
                     "reference_diagnosis": "myocardial infarction", "note": "chest pain troponin",
                     "specialty": "cardiology"}],
    }  # fmt: skip
    (tmp_path / "r.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    ingest_jsonl([tmp_path / "r.jsonl"], tmp_path / "ds")
    ds = Dataset.open(tmp_path / "ds")
    answers = ds.collect("answers")
    assert answers.select("predicted_diagnosis", "note", "specialty").row(0) == (
        "MI",
        "chest pain troponin",
        "cardiology",
    )
    row = mas_eval.score(ds, "medaisure")["items"].row(0, named=True)
    assert (row["diagnostic_accuracy"], row["diagnostic_weight"], row["diagnostic_critical"]) == (1.0, 1.5, True)
    # {an, mi} against {chest, pain, troponin}: nothing shared, 0 below the threshold 0.35 stays 0.
    assert (row["clinical_relevance"], row["relevance_threshold"]) == (0.0, 0.35)
