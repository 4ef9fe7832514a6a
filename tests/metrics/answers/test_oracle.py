"""Answer metrics (MedAISure metrics overview): vectorised scores equal the per-answer oracle and keep their properties.

Texts are drawn from pieces that exercise every rule: lexicon terms and their synonyms in any
case, multi-word terms and the terms inside them, markers, facts, fallacy phrases, possessives,
punctuation and whitespace of every kind, ambiguous abbreviations, non-ASCII letters, nulls and
empty strings.
"""

from __future__ import annotations

import os
from functools import cache

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mas_eval.metrics.answers import (
    AnswersParams,
    Vocabulary,
    answer_scores,
    answer_synonyms,
    fact_table,
    lexicon_table,
    marker_table,
    normalise_text,
)
from mas_eval.metrics.answers.columns import ITEM_METRICS
from mas_eval.metrics.answers.suite import scoring_options
from mas_eval.metrics.diagnosis.tables import shipped_table
from tests.oracles import answers as oracle

#: ``ANSWERS_EXAMPLES=500 pytest tests/metrics/answers/test_oracle.py`` for a longer hunt than the suite's 40
#: (a draw costs a scoring, about 0.15 s: the four oracle tests were a minute of the suite at 60).
SETTINGS = settings(
    max_examples=int(os.environ.get("ANSWERS_EXAMPLES", "30")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TEXTS = (
    "prediction", "rationale", "reference", "reference_rationale", "reference_diagnosis", "predicted_diagnosis",
    "note", "specialty",
)  # fmt: skip
METRICS = [m.name for m in ITEM_METRICS]
#: Specialties as items write them: the tables' two in several spellings, another, none.
_SPECIALTIES = [None, "", "cardiology", "Cardiology", "infectious_disease", "Infectious Disease", "infectious-disease",
                "neurology", " (cardiology) ", "()"]  # fmt: skip
#: Labels a diagnosis is written as (their synonyms among them), for the predictions that are labels.
_LABELS = ["MI", "mi", "myocardial infarction", "Myocardial Infarction.", "heart failure", "HF", "CHF", "sepsis",
           "Sepsis", "flu", "influenza", "pneumonia", "PNA", "htn", "hypertension", "", "(mi)", "m.i."]  # fmt: skip


def _labelled(draw: st.DrawFn, row: dict) -> dict:
    """Some items get a label as their reference diagnosis and prediction; every item a specialty."""
    row["specialty"] = draw(st.sampled_from(_SPECIALTIES))
    if draw(st.integers(0, 2)) == 0:
        row["reference_diagnosis"] = draw(st.sampled_from(_LABELS))
        row["prediction"] = draw(st.sampled_from([*_LABELS, row["reference_diagnosis"]]))
    if draw(st.integers(0, 2)) == 0:  # a label apart from the answer: it, not the answer, is compared
        row["predicted_diagnosis"] = draw(st.sampled_from([*_LABELS, None, " ", row["reference_diagnosis"]]))
    else:
        row["predicted_diagnosis"] = None
    if draw(st.integers(0, 3)) == 0:
        row["note"] = row["prediction"]
    return row


_PIECES = [
    "sepsis", "Septic shock", "IV fluids", "iv fluid", "insulin", "MI", "heart attack", "acute MI",
    "myocardial infarction", "heart failure", "congestive heart failure", "failure", "COPD", "COPD exacerbation",
    "SOB", "shortness of breath",
    "dyspnoea", "Tylenol", "paracetamol", "acetaminophen", "antibiotics", "abx", "pneumonia", "CAP", "x-ray", "X ray",
    "chest xray", "CT", "CT scan", "acute", "lactate", "troponin", "WBC", "white blood cells", "fever", "pyrexia",
    "hypotension", "tachycardia", "because", "therefore", "Thus", "so", "first", "Firstly", "second", "step", "steps",
    "in conclusion", "lab", "labs", "imaging", "findings", "evidence", "everyone knows", "post hoc",
    "because I say so", "obviously true", "the", "patient", "and", "of", "with", "Crohn's disease", "it's", "HIV",
    "HIV infection", "type 2 diabetes", "diabetes", "500 mg", "i.e.", "all", "ALL", "hit", "aspirin", "heparin",
    "ecg", "EKG", "infiltrate", "consolidation", "D-dimer", "anemia", "anaemia", "stroke", "CVA", "MRI", "alteplase",
]  # fmt: skip
_GLUE = [" ", "  ", ", ", "; ", ". ", " - ", "\n", "\t", " (", ") ", "’s ", "'s ", "/", " — ", ": ", "!", "", "…"]
_ODD = st.text(alphabet="aeisxtéüßİΩ'’ -.,;/\t\n", max_size=6)


@st.composite
def answer_text(draw: st.DrawFn) -> str | None:
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return None
    if kind == 1:
        return draw(st.sampled_from(["", " ", " ; ", "\n"]))
    parts = []
    for _ in range(draw(st.integers(1, 10))):
        piece = draw(st.one_of(st.sampled_from(_PIECES), _ODD) if kind == 2 else st.sampled_from(_PIECES))
        piece = draw(st.sampled_from([piece, piece.upper(), piece.lower(), piece.title()]))
        parts.append(piece + draw(st.sampled_from(_GLUE)))
    return "".join(parts)


@st.composite
def answer_frames(draw: st.DrawFn, max_items: int = 6) -> pl.DataFrame:
    n = draw(st.integers(1, max_items))
    rows = []
    for i in range(n):
        row = {"item_id": f"q{i}"} | {column: draw(answer_text()) for column in TEXTS}
        if draw(st.integers(0, 4)) == 0:
            row["reference"] = row["prediction"]  # identical answers happen
        rows.append(_labelled(draw, row))
    return pl.DataFrame(rows, schema={"item_id": pl.String, **dict.fromkeys(TEXTS, pl.String)})


@cache
def shipped_oracle() -> oracle.Vocabulary:
    return oracle.compile_vocabulary(
        answer_synonyms().rows(), lexicon_table().rows(), marker_table().rows(), fact_table().rows()
    )


def assert_matches_oracle(frame: pl.DataFrame, got: pl.DataFrame, vocabulary: oracle.Vocabulary, **options) -> None:
    assert got.columns == ["item_id", *METRICS]
    for item, row in zip(frame.iter_rows(named=True), got.iter_rows(named=True), strict=True):
        want = oracle.score_item(item, vocabulary, **options)
        for name in METRICS:
            if want[name] is None or isinstance(want[name], bool):
                assert row[name] == want[name], (name, item, row[name], want[name])
            else:
                assert row[name] == pytest.approx(want[name], abs=1e-12), (name, item, row[name], want[name])


@SETTINGS
@given(answer_frames())
def test_vectorised_scores_equal_the_oracle(frame: pl.DataFrame) -> None:
    assert_matches_oracle(frame, answer_scores(frame), shipped_oracle())


_REASONING_OPTIONS = st.fixed_dictionaries(
    {
        "prediction_fallback": st.booleans(),
        "factual_formula": st.sampled_from(["share", "half_capped"]),
        "factual_source": st.sampled_from(["diagnosis", "answer"]),
    }
)


@SETTINGS
@given(
    answer_frames(),
    st.dictionaries(st.sampled_from(oracle.CATEGORIES), st.sampled_from([0.0, 0.5, 1.0, 4.0]), min_size=1),
    st.dictionaries(st.sampled_from(list(oracle.REASONING_WEIGHTS)), st.sampled_from([0.0, 0.3, 1.0])),
    st.booleans(),
    _REASONING_OPTIONS,
)
def test_substring_matching_weights_and_fallback_equal_the_oracle(
    frame, category, reasoning, fallback, options
) -> None:
    category_weights = oracle.CATEGORY_WEIGHTS | category
    if sum(category_weights.values()) == 0:
        category_weights["labs"] = 1.0
    reasoning_weights = oracle.REASONING_WEIGHTS | reasoning
    got = answer_scores(
        frame,
        matching="substring",
        category_weights=category_weights,
        reasoning_weights=reasoning_weights,
        reference_fallback=fallback,
        **options,
    )
    assert_matches_oracle(
        frame,
        got,
        shipped_oracle(),
        category_weights=category_weights,
        reasoning_weights=reasoning_weights,
        matching="substring",
        reference_fallback=fallback,
        **options,
    )


# --- preset "medaisure" -------------------------------------------------------------------------------------

# MedAISure's traps: substrings of words ("ct" in "acute", "mi" in "admission", "so" in "also"),
# phrases split by deleted punctuation or joined by a removal, words its map rewrites or not,
# markers normalisation makes unmatchable, whitespace-only texts (given, yet empty once normalised).
_MEDAISURE_PIECES = [
    "chest", "pain", "chest pain", "Chest, pain", "chest - pain", "chestiv fluidspain", "heart failurepneumonia",
    "heartmyocardial infarctionfailure", "iv fluids", "IV-fluids", "ivfluids", "fluids", "MI", "mi", "admission",
    "myocardial infarction", "SOB", "sob", "shortness of breath", "leukocytosis", "white blood cells",
    "white blood cell", "wbc", "insulin", "diabetes", "acute", "CT", "also", "so", "label", "lab", "x-ray", "xray",
    "X-Ray", "1.", "2)", "step", "first", "in conclusion", "antibiotic", "antibiotics", "infiltrate", "ekg",
    "troponin", "aspirin", "heparin", "sepsis", "pneumonia", "hypotension", "lactate", "fever", "because i say",
    "everyone knows", "post hoc", "obviously true", "it's", "patient’s", "pneumonía", "\u00a0", "\u2013",
]  # fmt: skip
_MEDAISURE_GLUE = [" ", "  ", ", ", "; ", ". ", " - ", "-", "\n", "\t", "", "(", ") ", "\u00a0", " \u2013 ", "'"]


@st.composite
def medaisure_text(draw: st.DrawFn) -> str | None:
    kind = draw(st.integers(0, 7))
    if kind == 0:
        return draw(st.sampled_from([None, "", " ", "   ", "\n", "\t ", " . ", "()"]))
    parts = []
    for _ in range(draw(st.integers(1, 8))):
        piece = draw(st.sampled_from(_MEDAISURE_PIECES) if kind > 1 else st.sampled_from(_PIECES))
        piece = draw(st.sampled_from([piece, piece.upper(), piece.title()]))
        parts.append(piece + draw(st.sampled_from(_MEDAISURE_GLUE)))
    return "".join(parts)


@st.composite
def medaisure_frames(draw: st.DrawFn) -> pl.DataFrame:
    rows = [{"item_id": f"q{i}"} | {c: draw(medaisure_text()) for c in TEXTS} for i in range(draw(st.integers(1, 6)))]
    rows = [_labelled(draw, row) for row in rows]
    return pl.DataFrame(rows, schema={"item_id": pl.String, **dict.fromkeys(TEXTS, pl.String)})


@cache
def medaisure_labels() -> dict[str, str]:
    """MedAISure's label synonyms, the raw rows of the shipped table."""
    return dict(shipped_table("medaisure_label_synonyms.csv", ("term", "canonical"), "mas_eval.metrics.answers").rows())


@cache
def medaisure_oracle() -> oracle.MedaisureVocabulary:
    return oracle.compile_medaisure(
        answer_synonyms(shipped="medaisure").rows(),
        lexicon_table(shipped="medaisure").rows(),
        marker_table(shipped="medaisure").rows(),
        fact_table(shipped="medaisure").rows(),
    )


@SETTINGS
@given(medaisure_frames(), st.booleans())
def test_the_medaisure_preset_equals_its_oracle(frame: pl.DataFrame, prediction_fallback: bool) -> None:
    params = AnswersParams.of_preset("medaisure", reasoning_prediction_fallback=prediction_fallback)
    got = answer_scores(frame, **scoring_options(params))
    assert got.columns == ["item_id", *METRICS]
    for item, row in zip(frame.iter_rows(named=True), got.iter_rows(named=True), strict=True):
        want = oracle.score_item_medaisure(
            item, medaisure_oracle(), prediction_fallback=prediction_fallback, label_synonyms=medaisure_labels()
        )
        for name in METRICS:
            assert row[name] == want[name], (name, item, row[name], want[name])  # exact, as MedAISure's floats


# A small vocabulary where every rule bites: chains (a → b → c), a canonical name longer than a
# term inside it, one term in two categories, nested and overlapping multi-word terms, a marker
# and a fact with several forms, a fact shared by two diagnoses.
SMALL = {
    "synonyms": [("heart attack", "mi"), ("mi", "myocardial infarction"), ("hiv", "hiv infection"),
                 ("sob", "shortness of breath"), ("abx", "antibiotics"), ("o2", "oxygen")],
    "lexicon": [("myocardial infarction", "diagnoses"), ("heart failure", "diagnoses"),
                ("congestive heart failure", "diagnoses"), ("failure", "symptoms"), ("hiv infection", "diagnoses"),
                ("oxygen", "treatments"), ("oxygen", "medications"), ("shortness of breath", "symptoms"),
                ("breath", "symptoms"), ("antibiotics", "treatments"), ("ct", "labs"), ("x ray", "labs"),
                ("chest x ray", "labs"), ("heart", "labs")],
    "markers": [("structure", "because|as"), ("structure", "so"), ("evidence", "x ray|xray"),
                ("evidence", "ct"), ("fallacy", "everyone knows"), ("fallacy", "post hoc"), ("fallacy", "so so")],
    "facts": [("mi", "troponin"), ("myocardial infarction", "ecg|ekg"), ("heart failure", "oxygen"),
              ("hiv", "antibiotics|abx"), ("heart failure", "troponin")],
}  # fmt: skip
_SMALL_PIECES = [
    "heart attack", "MI", "heart failure", "congestive heart failure", "failure", "heart", "HIV", "HIV infection",
    "O2", "oxygen", "SOB", "breath", "abx", "CT", "acute", "x-ray", "chest x ray", "xray", "because", "as", "so",
    "so so", "everyone knows", "post hoc", "troponin", "EKG", "ecg", "infarction",
]  # fmt: skip


@st.composite
def small_text(draw: st.DrawFn) -> str | None:
    if draw(st.integers(0, 7)) == 0:
        return draw(st.sampled_from([None, ""]))
    pieces = draw(st.lists(st.sampled_from(_SMALL_PIECES), min_size=1, max_size=8))
    glue = draw(
        st.lists(st.sampled_from([" ", ", ", ". ", "-", "", "'s "]), min_size=len(pieces), max_size=len(pieces))
    )
    return "".join(p + g for p, g in zip(pieces, glue, strict=True))


@st.composite
def small_frames(draw: st.DrawFn) -> pl.DataFrame:
    rows = [{"item_id": f"q{i}"} | {c: draw(small_text()) for c in TEXTS} for i in range(draw(st.integers(1, 6)))]
    return pl.DataFrame(rows, schema={"item_id": pl.String, **dict.fromkeys(TEXTS, pl.String)})


def _small_vocabulary() -> Vocabulary:
    frames = {
        "synonyms": pl.DataFrame(SMALL["synonyms"], schema=["term", "canonical"], orient="row"),
        "lexicon": pl.DataFrame(SMALL["lexicon"], schema=["term", "category"], orient="row"),
        "markers": pl.DataFrame(SMALL["markers"], schema=["kind", "marker"], orient="row"),
        "facts": pl.DataFrame(SMALL["facts"], schema=["diagnosis", "fact"], orient="row"),
    }
    return Vocabulary.of(**frames)


@SETTINGS
@given(small_frames(), st.sampled_from(["word_boundary", "substring"]))
def test_a_small_vocabulary_where_every_rule_bites_equals_the_oracle(frame: pl.DataFrame, matching: str) -> None:
    expected = oracle.compile_vocabulary(SMALL["synonyms"], SMALL["lexicon"], SMALL["markers"], SMALL["facts"])
    got = answer_scores(frame, vocabulary=_small_vocabulary(), matching=matching)
    assert_matches_oracle(frame, got, expected, matching=matching)


@SETTINGS
@given(answer_frames(max_items=8))
def test_scores_stay_in_their_ranges(frame: pl.DataFrame) -> None:
    got = answer_scores(frame)
    for metric in ITEM_METRICS:
        values = got[metric.name].drop_nulls()
        if metric.low is not None and values.len() and values.dtype.is_numeric():
            assert values.min() >= metric.low, metric.name
            assert metric.high is None or values.max() <= metric.high, metric.name
    assert got["clinical_accuracy"].null_count() == 0 and got["reasoning_quality"].null_count() == 0
    # Diagnostic accuracy has a value exactly where the item has a reference diagnosis; relevance, a note.
    has_diagnosis = frame.select(normalise_text(pl.col("reference_diagnosis")).fill_null("") != "").to_series()
    assert got["diagnostic_accuracy"].is_not_null().to_list() == has_diagnosis.to_list()


@SETTINGS
@given(st.lists(answer_text(), min_size=1, max_size=6))
def test_identical_prediction_and_reference_score_one(texts: list[str | None]) -> None:
    frame = pl.DataFrame(
        {"prediction": texts, "reference": texts, "rationale": texts, "reference_rationale": texts},
        schema=dict.fromkeys(("prediction", "reference", "rationale", "reference_rationale"), pl.String),
    )
    got = answer_scores(frame)
    assert got["clinical_accuracy"].to_list() == [1.0] * len(texts)
    assert got["token_f1"].to_list() == [1.0] * len(texts)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), answer_text(), st.text(alphabet="aZéÉüßİΩ'’s-.,;/\t\n ()", max_size=20))))
def test_normalise_text_equals_the_oracle(texts: list[str | None]) -> None:
    got = pl.select(normalise_text(pl.Series(texts, dtype=pl.String))).to_series().to_list()
    assert got == [None if t is None else " ".join(oracle.words(t)) for t in texts]
