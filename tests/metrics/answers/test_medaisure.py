"""Preset ``"medaisure"`` reproduces MedAISure's own per-sample numbers exactly (tests/data/medaisure_parity.csv).

The file holds 397 answer pairs and what MedAISure's ``ClinicalAccuracyMetric`` and
``ReasoningQualityMetric`` returned for them (tests/data/medaisure_parity.README.md). Column mapping:

=============================  ==========================================================
ours (items)                   MedAISure's breakdown (file column)
=============================  ==========================================================
clinical_accuracy              pair_score (``clinical_accuracy``)
reasoning_quality              final_score (``reasoning_quality``)
entity_jaccard_<c>             ``ca_category_<c>``; ours is null where neither side has an
                               entity of the category, MedAISure's 1.0 (compared as such)
token_f1                       ``rq_overlap_f1``
structure, evidence            ``rq_structure``, ``rq_evidence``
factual_consistency            ``rq_factual``
fallacy_penalty                ``rq_fallacy_penalty``
=============================  ==========================================================

``reasoning_prediction_fallback=True`` on top of the preset is the file's ``rq_alt_*`` variant
(the model answer stands in for a missing rationale). Every float is compared with ``==``.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import mas_eval
from mas_eval import Dataset
from mas_eval.metrics.answers import AnswersParams, answer_scores, extract_entities
from mas_eval.metrics.answers.suite import scoring_options
from mas_eval.metrics.answers.vocabulary import CATEGORIES, Vocabulary
from mas_eval.presets import PRESETS

PARITY = Path(__file__).parents[2] / "data" / "medaisure_parity.csv"
TEXTS = ["prediction", "rationale", "reference", "reference_rationale", "reference_diagnosis"]
# From medaisure_parity.README.md: the means calculate() returned over all rows.
MEAN_ACCURACY, MEAN_REASONING, MEAN_REASONING_ALT = 0.512540455461629, 0.3717148400128393, 0.3330184558371691


def parity() -> pl.DataFrame:
    # All columns as strings: empty cells are "" (MedAISure treats them as None), "   " stays "   ".
    return pl.read_csv(PARITY, infer_schema=False)


def columns(prefix: str) -> dict[str, str]:
    """Our item column → the file's column (``prefix`` is ``rq_`` or ``rq_alt_``)."""
    final = "reasoning_quality" if prefix == "rq_" else f"{prefix}reasoning_quality"
    pairs = {
        "clinical_accuracy": "clinical_accuracy",
        "reasoning_quality": final,
        "token_f1": f"{prefix}overlap_f1",
        "structure": f"{prefix}structure",
        "evidence": f"{prefix}evidence",
        "factual_consistency": f"{prefix}factual",
        "fallacy_penalty": f"{prefix}fallacy_penalty",
    }
    return pairs | {f"entity_jaccard_{c}": f"ca_category_{c}" for c in CATEGORIES}


def assert_reproduces(got: pl.DataFrame, want: pl.DataFrame, prefix: str = "rq_") -> None:
    assert got["case_id"].to_list() == want["case_id"].to_list()
    mismatches = {}
    for ours, theirs in columns(prefix).items():
        mine = got[ours].fill_null(1.0) if ours.startswith("entity_jaccard_") else got[ours]
        expected = want[theirs].cast(pl.Float64)
        bad = [(case, a, b) for case, a, b in zip(want["case_id"], mine, expected, strict=True) if a != b]
        if bad:
            mismatches[ours] = bad
    assert not mismatches, {name: [case for case, *_ in bad] for name, bad in mismatches.items()}


def test_the_preset_is_medaisures_settings() -> None:
    assert PRESETS["medaisure"] == {
        "answers": {
            "answers_normalisation": "medaisure",
            "answers_vocabulary": "medaisure",
            "answers_entities": "phrases_then_words",
            "answers_matching": "substring",
            "reasoning_reference_fallback": False,
            "reasoning_prediction_fallback": False,
            "factual_formula": "half_capped",
            "factual_source": "answer",
            "diagnostic_critical_weight": 1.5,
            "unscored_without_reference": False,
            "relevance_boost_per_term": 0.02,
            "relevance_below_threshold_factor": 0.8,
        }
    }
    params = AnswersParams.of_preset("medaisure")
    assert params.category_weights() == AnswersParams().category_weights()  # MedAISure's weights are the spec's
    assert params.reasoning_weights() == AnswersParams().reasoning_weights()
    spec = AnswersParams()
    assert (spec.answers_normalisation, spec.answers_vocabulary, spec.answers_entities) == (
        "spec",
        "spec",
        "longest_match",
    )
    assert (spec.factual_formula, spec.factual_source, spec.reasoning_prediction_fallback) == (
        "share",
        "diagnosis",
        True,
    )
    with pytest.raises(mas_eval.InvalidParameterError, match="factual_formula must be one of 'share', 'half_capped'"):
        AnswersParams(factual_formula="half")


def test_answer_scores_reproduce_every_row() -> None:
    want = parity()
    got = answer_scores(want.select("case_id", *TEXTS), **scoring_options(AnswersParams.of_preset("medaisure")))
    assert_reproduces(got, want)
    # calculate()'s means: Python's left-to-right sum over the rows.
    assert sum(got["clinical_accuracy"]) / got.height == MEAN_ACCURACY
    assert sum(got["reasoning_quality"]) / got.height == MEAN_REASONING


def test_the_model_answer_as_reasoning_fallback_reproduces_the_alt_variant() -> None:
    want = parity()
    params = AnswersParams.of_preset("medaisure", reasoning_prediction_fallback=True)
    got = answer_scores(want.select("case_id", *TEXTS), **scoring_options(params))
    assert_reproduces(got, want, prefix="rq_alt_")
    assert sum(got["reasoning_quality"]) / got.height == MEAN_REASONING_ALT


def test_score_with_the_preset_reproduces_every_row() -> None:
    want = parity()
    runs = pl.DataFrame({"run_id": ["r1"], "system": ["mas"], "case_id": ["medaisure"], "task": ["bench"]})
    answers = want.select(pl.lit("r1").alias("run_id"), pl.col("case_id").alias("item_id"), *TEXTS)
    scores = mas_eval.score(Dataset.from_frames(runs=runs, answers=answers), preset="medaisure")
    items = scores["items"].rename({"case_id": "run_case"}).rename({"item_id": "case_id"})
    assert_reproduces(items.sort("case_id"), want.sort("case_id"))
    run = scores.runs.row(0, named=True)
    # Polars sums in another order than Python's sum: the last bit may differ.
    assert run["clinical_accuracy"] == pytest.approx(MEAN_ACCURACY, abs=1e-15)
    assert run["reasoning_quality"] == pytest.approx(MEAN_REASONING, abs=1e-15)


def test_entities_are_medaisures_sets() -> None:
    want = parity().head(97)  # the hand-written edge cases
    vocabulary = Vocabulary.shipped("medaisure", "medaisure")
    for side, column in (("ref", "reference"), ("pred", "prediction")):
        found = extract_entities(want, column, vocabulary=vocabulary, entities="phrases_then_words")
        joined = found.group_by("row", "category").agg(pl.col("entity").sort().str.join("|"))
        for category in CATEGORIES:
            ours = dict(joined.filter(pl.col("category") == category).select("row", "entity").iter_rows())
            theirs = want[f"ca_{side}_entities_{category}"].to_list()
            assert [ours.get(i, "") for i in range(want.height)] == theirs, (side, category)


def test_normalised_texts_are_medaisures() -> None:
    want = parity()
    vocabulary = Vocabulary.shipped("medaisure", "medaisure")
    for column in ("reference", "prediction", "reference_rationale", "rationale"):
        got = want.select(vocabulary.normalise(pl.col(column))).to_series()
        assert got.to_list() == want[f"norm_{column}"].to_list(), column
