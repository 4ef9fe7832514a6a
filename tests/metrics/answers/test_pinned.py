"""Answer metrics (the MedAISure metrics overview) on worked examples, each with its arithmetic.

Weights throughout (MedAISure's): diagnoses 3, treatments 2, medications 2, symptoms 1, labs 1;
reasoning 0.4 F1 + 0.15 structure + 0.2 evidence + 0.25 factual − fallacy.
"""

from __future__ import annotations

import polars as pl
import pytest

from mas_eval import InvalidParameterError
from mas_eval.errors import DataError
from mas_eval.metrics.answers import (
    Vocabulary,
    answer_scores,
    answer_synonyms,
    extract_entities,
    lexicon_table,
    marker_table,
    normalise_text,
)
from mas_eval.metrics.diagnosis import synonym_table
from mas_eval.metrics.diagnosis.tables import shipped_table

TEXTS = ("prediction", "rationale", "reference", "reference_rationale", "reference_diagnosis")


def scored(matching: str = "word_boundary", vocabulary: Vocabulary | None = None, **texts: str | None) -> dict:
    frame = pl.DataFrame({c: [texts.get(c)] for c in TEXTS}, schema=dict.fromkeys(TEXTS, pl.String))
    return answer_scores(frame, matching=matching, vocabulary=vocabulary).row(0, named=True)


def test_sepsis_fluids_and_insulin_against_sepsis_and_insulin() -> None:
    # The example. Normalised: "sepsis give iv fluids and insulin" and "sepsis insulin".
    # Entities: P = diagnoses {sepsis}, treatments {iv fluids, insulin}, medications {insulin}
    #           R = diagnoses {sepsis}, treatments {insulin},            medications {insulin}
    # (insulin is a treatment and a medication, as in MedAISure's lexicon.)
    # CA = (3·|{sepsis}| + 2·|{insulin}| + 2·|{insulin}|) / (3·1 + 2·|{iv fluids, insulin}| + 2·1)
    #    = (3 + 2 + 2) / (3 + 4 + 2) = 7/9
    row = scored(prediction="Sepsis; give IV fluids and insulin", reference="sepsis, insulin")
    assert row["clinical_accuracy"] == pytest.approx(7 / 9, abs=1e-15)
    assert (row["entity_jaccard_diagnoses"], row["entity_jaccard_treatments"], row["entity_jaccard_medications"]) == (
        1.0,
        0.5,
        1.0,
    )
    # Neither side names a symptom or a lab: 0/0 is left null (MedAISure's breakdown says 1.0).
    assert row["entity_jaccard_symptoms"] is None and row["entity_jaccard_labs"] is None
    assert row["accuracy_fallback_used"] is False


def test_the_entities_of_the_example() -> None:
    frame = pl.DataFrame({"text": ["Sepsis; give IV fluids and insulin", "sepsis, insulin"]})
    assert extract_entities(frame, "text").rows() == [
        (0, "diagnoses", "sepsis"),
        (0, "medications", "insulin"),
        (0, "treatments", "insulin"),
        (0, "treatments", "iv fluids"),
        (1, "diagnoses", "sepsis"),
        (1, "medications", "insulin"),
        (1, "treatments", "insulin"),
    ]


def test_synonyms_make_abbreviations_brands_and_british_spellings_one_entity() -> None:
    # "MI" → myocardial infarction (the diagnosis family's synonym table), "Tylenol" →
    # acetaminophen, "anaemia" → anemia: P = R = {myocardial infarction; acetaminophen; anemia}.
    # CA = (3·2 + 2·1) / (3·2 + 2·1) = 1
    row = scored(prediction="MI and anaemia; Tylenol", reference="Myocardial infarction, anemia, acetaminophen")
    assert row["clinical_accuracy"] == 1.0
    assert pl.select(normalise_text(pl.lit("Crohn’s disease, MI!"))).item() == "crohn disease mi"
    vocabulary = Vocabulary.shipped()
    # Ambiguous abbreviations of the diagnosis table stay words: "mg" is not myasthenia gravis.
    assert pl.select(vocabulary.normalise(pl.lit("Give 500 mg of all; i.e. the MI"))).item() == (
        "give 500 mg of all i e the myocardial infarction"
    )


def test_multi_word_terms_come_first() -> None:
    # "iron deficiency anaemia" holds the lexicon term "anemia", but the longest term wins:
    # P = {iron deficiency anemia}, R = {anemia} → CA = 3·0 / 3·2 = 0
    row = scored(prediction="iron deficiency anaemia", reference="Anemia")
    assert (row["clinical_accuracy"], row["entity_jaccard_diagnoses"]) == (0.0, 0.0)


def test_word_boundaries_against_medaisures_substrings() -> None:
    # The lexicon's lab "alt" is inside "alternative". On word boundaries P = {}, R = {alt}:
    # CA = 1·0 / 1·1 = 0. As substrings (MedAISure) P = {alt}: CA = 1/1 = 1.
    assert scored(prediction="Consider an alternative", reference="ALT")["clinical_accuracy"] == 0.0
    assert scored("substring", prediction="Consider an alternative", reference="ALT")["clinical_accuracy"] == 1.0
    # "acute" does not contain "ct" (a-c-u-t-e), but "doctor" and "infarction" do, so MedAISure's
    # evidence marker "ct" is found in "the doctor suspects an infarction". (The shipped synonym map
    # reads "ct" as "ct scan": this vocabulary has none.)
    no_synonyms = pl.DataFrame(schema={"term": pl.String, "canonical": pl.String})
    ct = Vocabulary.of(synonyms=no_synonyms, lexicon=pl.DataFrame({"term": ["ct"], "category": ["labs"]}))
    frame = pl.DataFrame({"text": ["acute abdomen", "the doctor suspects an infarction"]})
    assert extract_entities(frame, "text", vocabulary=ct).height == 0
    assert extract_entities(frame, "text", vocabulary=ct, matching="substring").rows() == [(1, "labs", "ct")]


def test_the_fallback_without_entities_compares_the_normalised_texts() -> None:
    # No lexicon entity on either side: 1 when one normalised text contains the other.
    row = scored(prediction="Reassure and review.", reference="review")
    assert (row["clinical_accuracy"], row["accuracy_fallback_used"]) == (1.0, True)
    # "reviewing" holds "review" as a substring, not as a word.
    assert scored(prediction="Reviewing", reference="review")["clinical_accuracy"] == 0.0
    assert scored("substring", prediction="Reviewing", reference="review")["clinical_accuracy"] == 1.0
    # Both empty → 1; one empty → 0; null counts as empty.
    assert scored(prediction=None, reference=" ;")["clinical_accuracy"] == 1.0
    assert scored(prediction="Reassure", reference=None)["clinical_accuracy"] == 0.0


def test_reasoning_quality_of_a_sepsis_rationale() -> None:
    # Predicted reasoning, normalised (16 words):
    #   first the lactate is 4 1 and she has a fever therefore sepsis give iv fluids
    # Reference reasoning (6 words): sepsis lactate raised hypotension give fluids
    # F1 = 2·|{lactate, sepsis, give, fluids}| / (16 + 6) = 8/22 = 4/11
    # structure: {first, therefore} → min(1, 2/3) = 2/3
    # evidence:  {lactate, fever}   → min(1, 2/3) = 2/3
    # factual: the sepsis set {iv fluids|fluids, lactate, hypotension}: iv fluids and lactate found → 2/3
    # RQ = 0.4·4/11 + 0.15·2/3 + 0.2·2/3 + 0.25·2/3 − 0 = 1.6/11 + 0.4 = 6/11
    row = scored(
        prediction="Sepsis",
        rationale="First, the lactate is 4.1 and she has a fever; therefore sepsis. Give IV fluids.",
        reference="Sepsis",
        reference_rationale="Sepsis: lactate raised, hypotension; give fluids.",
        reference_diagnosis="Sepsis",
    )
    assert row["token_f1"] == pytest.approx(4 / 11, abs=1e-15)
    assert (row["structure"], row["evidence"], row["factual_consistency"]) == pytest.approx((2 / 3, 2 / 3, 2 / 3))
    assert row["fallacy_penalty"] == 0.0
    assert row["reasoning_quality"] == pytest.approx(6 / 11, abs=1e-15)


def test_token_f1_counts_repeats_as_a_multiset() -> None:
    # A = {the: 3, cause: 1}, B = {the: 1, cause: 1}: |A ∩ B| = min(3,1) + min(1,1) = 2
    # F1 = 2·2 / (4 + 2) = 2/3
    row = scored(prediction="x", rationale="the the the cause", reference="x", reference_rationale="the cause")
    assert row["token_f1"] == pytest.approx(2 / 3, abs=1e-15)


def test_fallacies_are_penalised_and_the_score_clamped() -> None:
    # Fallacy markers {everyone knows, obviously true, post hoc} → min(0.4, 3·0.15) = 0.4.
    # Reasoning "everyone knows it is obviously true post hoc" against the reference "sepsis":
    # F1 = 0; no structure or evidence marker; "sepsis" is a fact-set diagnosis, none of its facts
    # found → factual = 0/3; RQ = clamp(0 − 0.4) = 0.
    row = scored(prediction="Everyone knows it is obviously true; post hoc.", reference="sepsis")
    assert (row["fallacy_penalty"], row["reasoning_quality"], row["factual_consistency"]) == (0.4, 0.0, 0.0)


def test_factual_consistency_falls_back_to_evidence() -> None:
    # "migraine" has no fact set: factual = evidence = min(1, |{imaging, findings, study}|/3) = 1.
    # Structure {because} = 1/3. F1: reasoning (9 words) "because imaging findings and a study show
    # no bleed" against "migraine" → 0. RQ = 0.15/3 + 0.2 + 0.25 = 0.5
    row = scored(
        prediction="Because imaging findings and a study show no bleed", reference="migraine",
    )  # fmt: skip
    assert (row["evidence"], row["factual_consistency"]) == (1.0, 1.0)
    assert row["reasoning_quality"] == pytest.approx(0.5, abs=1e-15)


def test_medaisures_numbered_markers_are_not_markers() -> None:
    # MedAISure lists "1.", "2.", "3." as structure markers but strips the dots before it searches:
    # they never match there, and numbers are plain words here.
    row = scored(prediction="1. fluids 2. antibiotics 3. review", reference="x")
    assert row["structure"] == 0.0


def test_reference_fallback_compares_answers_when_there_is_no_reference_rationale() -> None:
    # Reasoning "sepsis" (the prediction) against the reference answer "sepsis": F1 = 1;
    # without the fallback the reference reasoning is empty: F1 = 0.
    frame = pl.DataFrame({"prediction": ["sepsis"], "reference": ["sepsis"]})
    assert answer_scores(frame)["token_f1"].item() == 1.0
    assert answer_scores(frame, reference_fallback=False)["token_f1"].item() == 0.0


def test_possessives_and_separators() -> None:
    # An apostrophe + "s" before a separator (or the end) goes, with that separator; a pair of
    # separators is one boundary, and never swallows the start of a possessive.
    texts = ["Crohn's", "it's,ok", ",'s x", "'sepsis'", "x-ray/CT", "a\t\tb\n\nc", "the patient’S notes", "'s's"]
    got = pl.select(normalise_text(pl.Series(texts))).to_series().to_list()
    assert got == ["crohn", "it ok", "x", "sepsis", "x ray ct", "a b c", "the patient notes", "s"]


def test_the_shipped_tables() -> None:
    lexicon = lexicon_table()
    counts = dict(lexicon.group_by("category").len().rows())
    assert counts == {"diagnoses": 114, "treatments": 50, "medications": 117, "symptoms": 72, "labs": 64}
    assert lexicon.height == 417 and lexicon.unique().height == 417
    # One source of truth: every diagnosis synonym is an answers synonym, less the ambiguous words.
    ambiguous = set(shipped_table("ambiguous.csv", ("term", "reason"), "mas_eval.metrics.answers")["term"])
    answers = set(answer_synonyms().rows())
    diagnosis = set(synonym_table().rows())
    assert {row for row in diagnosis if row[0] not in ambiguous} <= answers
    assert not {row for row in answers if row[0] in ambiguous}
    vocabulary = Vocabulary.shipped()
    assert vocabulary.lexicon.height == 417  # no two lexicon rows collapse through the synonym map
    assert vocabulary.lexicon.filter(pl.col("term").is_in(sorted(ambiguous))).height == 0


def test_user_tables_through_the_python_api() -> None:
    extra = pl.DataFrame({"term": ["Viral illness"], "category": ["diagnoses"]})
    assert lexicon_table(extra).height == 418 and lexicon_table(extra, replace=True).height == 1
    with pytest.raises(InvalidParameterError, match="replace=True needs a table in extra"):
        lexicon_table(replace=True)
    with pytest.raises(DataError, match=r"marker_table\(extra\): 1 row\(s\) with an unknown kind"):
        marker_table(pl.DataFrame({"kind": ["style"], "marker": ["so"]}))
    vocabulary = Vocabulary.of(lexicon=lexicon_table(extra))
    row = scored(vocabulary=vocabulary, prediction="viral illness", reference="Viral illness.")
    assert (row["clinical_accuracy"], row["entity_jaccard_diagnoses"]) == (1.0, 1.0)


@pytest.mark.parametrize("normalisation", ["spec", "medaisure"])
def test_normalised_columns_keep_their_names(normalisation: str) -> None:
    frame = pl.DataFrame({"prediction": ["Sepsis; MI"], "reference": ["sepsis"]})
    vocabulary = Vocabulary.shipped(normalisation, normalisation)  # type: ignore[arg-type]
    out = frame.select(vocabulary.normalise(pl.col("prediction")), vocabulary.normalise(pl.col("reference")))
    assert out.columns == ["prediction", "reference"]
    assert frame.select(normalise_text(pl.col("prediction")), normalise_text(pl.col("reference"))).columns == [
        "prediction",
        "reference",
    ]
