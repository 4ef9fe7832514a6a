"""The answers family's maths (the MedAISure metrics overview).

Clinical accuracy, reasoning quality, diagnostic accuracy and clinical relevance:

* :mod:`~mas_eval.metrics.answers.normalise` — normalised answer text (:func:`normalise_text`),
  and the spaced form that matching on word boundaries runs on;
* :mod:`~mas_eval.metrics.answers.vocabulary` — the shipped, user-extendable reference tables
  (synonyms shared with the diagnosis family, lexicon, markers, fact sets) and their compiled
  form (:class:`Vocabulary`);
* :mod:`~mas_eval.metrics.answers.entities` — lexicon entities by category (:func:`extract_entities`);
* :mod:`~mas_eval.metrics.answers.accuracy` — clinical accuracy: pooled weighted Jaccard, fallback;
* :mod:`~mas_eval.metrics.answers.reasoning` — reasoning quality: token F1, structure, evidence,
  factual consistency, fallacy penalty;
* :mod:`~mas_eval.metrics.answers.labels` — diagnostic accuracy: the predicted label against the
  reference diagnosis, a specialty's critical diagnoses weighted (MedAISure's specialty tables);
* :mod:`~mas_eval.metrics.answers.relevance` — clinical relevance: word Jaccard of summary and
  note, knowledge boost, specialty threshold;
* :mod:`~mas_eval.metrics.answers.suite` — all of it per answer (:func:`answer_scores`) and for
  :func:`mas_eval.score` (:data:`FAMILY`); parameters :class:`~mas_eval.metrics.answers.params.AnswersParams`,
  output columns :mod:`~mas_eval.metrics.answers.columns`.
"""

from mas_eval.metrics.answers.columns import COLUMNS, TABLES
from mas_eval.metrics.answers.entities import extract_entities
from mas_eval.metrics.answers.normalise import normalise_text
from mas_eval.metrics.answers.params import AnswersParams
from mas_eval.metrics.answers.suite import answer_scores, compute
from mas_eval.metrics.answers.vocabulary import (
    CATEGORIES,
    Vocabulary,
    answer_synonyms,
    fact_table,
    lexicon_table,
    marker_table,
)
from mas_eval.metrics.family import Family

FAMILY = Family(
    name="answers",
    needs=("runs", "answers"),
    reads=(),
    params=AnswersParams,
    compute=compute,
    description=(
        "Benchmark answers: clinical accuracy, reasoning quality, diagnostic accuracy and clinical relevance per item "
        "(MedAISure metrics overview)."
    ),
    columns=COLUMNS,
    output_tables=TABLES,
    # Each run's mean of its answers' scores; the section compares them item by item, not run by run.
    headline=("clinical_accuracy", "reasoning_quality", "diagnostic_accuracy", "clinical_relevance"),
)

__all__ = [
    "CATEGORIES",
    "FAMILY",
    "AnswersParams",
    "Vocabulary",
    "answer_scores",
    "answer_synonyms",
    "extract_entities",
    "fact_table",
    "lexicon_table",
    "marker_table",
    "normalise_text",
]
