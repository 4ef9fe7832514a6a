"""Parameters of the answers family (the MedAISure metrics overview), each with what it accepts."""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import ClassVar

from mas_eval.constraints import NONE, Boolean, Interval, Options, Predicate
from mas_eval.errors import InvalidParameterError
from mas_eval.metrics.answers.entities import Entities
from mas_eval.metrics.answers.normalise import Matching, Normalisation
from mas_eval.metrics.answers.reasoning import FactualFormula, FactualSource
from mas_eval.metrics.answers.vocabulary import CATEGORIES, Tables
from mas_eval.presets import Params, param

__all__ = ["AnswersParams"]

_FILE = Predicate(lambda value: isinstance(value, str | Path) and str(value) != "", "a file path")
_WEIGHT = Interval(float, 0, None)
_SHARE = Interval(float, 0, 1)


@dataclass(frozen=True)
class AnswersParams(Params):
    """Parameters of the answers family (the MedAISure metrics overview).

    Attributes
    ----------
    answers_matching
        How lexicon terms, markers, facts and the fallback's containment are found in the
        normalised text: ``"word_boundary"`` (the document: whole words only) or ``"substring"``
        (MedAISure's code, where "ct" occurs in "doctor"). The synonym map always works on words.
    answers_normalisation
        ``"spec"`` (the document: separators split words, then the synonym map) or ``"medaisure"``
        (MedAISure's code: lowercase, whitespace runs one space, its 15 punctuation characters
        deleted; no synonym map on the text; the tables' terms used as written; a text of spaces
        alone counts as given for the fallbacks). See :class:`~mas_eval.metrics.answers.vocabulary.Vocabulary`.
    answers_vocabulary
        The shipped tables: ``"spec"`` (the package's) or ``"medaisure"`` (MedAISure's small
        lexicon, synonym map, markers and fact sets); the ``answers_*_file`` parameters extend them.
    answers_entities
        ``"longest_match"`` (one leftmost-longest pass over all lexicon terms) or
        ``"phrases_then_words"`` (MedAISure's: multi-word terms as substrings, each removed once
        found, then the words left; :mod:`~mas_eval.metrics.answers.phrases`).
    accuracy_weight_diagnoses, accuracy_weight_treatments, accuracy_weight_medications
        With ``accuracy_weight_symptoms`` and ``accuracy_weight_labs``: the category weights of
        the pooled Jaccard (3, 2, 2, 1, 1); each finite and >= 0, with a positive sum.
    reasoning_weight_f1, reasoning_weight_structure, reasoning_weight_evidence, reasoning_weight_factual
        The weights of reasoning quality's components (0.4, 0.15, 0.2, 0.25), each >= 0.
    reasoning_reference_fallback
        An item without a reference rationale compares its reasoning with the reference answer
        (``True``), or counts its reference reasoning as empty (``False``, MedAISure's code).
    reasoning_prediction_fallback
        An item without a rationale is scored on its prediction as reasoning (``True``), or on an
        empty reasoning (``False``, MedAISure's code given the ``answer`` key; ``True`` with
        ``"medaisure"`` is its variant for model outputs that carry a ``prediction`` key).
    factual_formula
        ``"share"`` (facts found / expected) or ``"half_capped"`` (MedAISure's
        ``min(1, found / max(1, expected // 2))``).
    factual_source
        The fact set comes from ``"diagnosis"`` (the reference diagnosis, else the reference
        answer) or ``"answer"`` (the reference answer, else the diagnosis: MedAISure's code).
    diagnostic_critical_weight
        The weight of an item whose reference diagnosis is critical in its specialty, in the
        weighted mean that is diagnostic accuracy: 1 (the document's plain mean) or 1.5
        (MedAISure's code); >= 0.
    unscored_without_reference
        An item without a reference diagnosis (diagnostic accuracy) or without a note (clinical
        relevance) gets no score of it (``True``), or is scored against an empty one (``False``,
        MedAISure's code, where a missing field is an empty text).
    relevance_boost_per_term, relevance_boost_cap
        Clinical relevance's knowledge boost: per one-word lexicon term shared by note and
        summary, capped: 0 (the document's plain Jaccard) or 0.02 (MedAISure's code); cap 0.1.
    relevance_threshold, relevance_below_threshold_factor
        A relevance below the threshold (0.25, or the specialty's) is multiplied by the factor:
        1 (the document: no adjustment) or 0.8 (MedAISure's code).
    answers_lexicon_file, answers_synonyms_file, answers_markers_file, answers_facts_file
        A CSV of rows added to the shipped table: ``term,category`` (lexicon), ``term,canonical``
        (synonyms; a term overrides the shipped rows of the same term), ``kind,marker`` (markers),
        ``diagnosis,fact`` (fact sets); ``None``: the shipped table alone.

    Examples
    --------
    >>> AnswersParams().category_weights()["diagnoses"]
    3.0
    >>> from mas_eval.errors import InvalidParameterError
    >>> try:
    ...     AnswersParams(answers_matching="fuzzy")
    ... except InvalidParameterError as error:
    ...     print(error)
    score: answers_matching='fuzzy' is invalid; answers_matching must be one of 'word_boundary', 'substring'
    """

    section: ClassVar[str] = "answers"
    where: ClassVar[str] = "score"

    answers_matching: Matching = param("word_boundary", Options.of(Matching))
    accuracy_weight_diagnoses: float = param(3.0, _WEIGHT)
    accuracy_weight_treatments: float = param(2.0, _WEIGHT)
    accuracy_weight_medications: float = param(2.0, _WEIGHT)
    accuracy_weight_symptoms: float = param(1.0, _WEIGHT)
    accuracy_weight_labs: float = param(1.0, _WEIGHT)
    reasoning_weight_f1: float = param(0.4, _WEIGHT)
    reasoning_weight_structure: float = param(0.15, _WEIGHT)
    reasoning_weight_evidence: float = param(0.2, _WEIGHT)
    reasoning_weight_factual: float = param(0.25, _WEIGHT)
    reasoning_reference_fallback: bool = param(True, Boolean())
    reasoning_prediction_fallback: bool = param(True, Boolean())
    answers_normalisation: Normalisation = param("spec", Options.of(Normalisation))
    answers_vocabulary: Tables = param("spec", Options.of(Tables))
    answers_entities: Entities = param("longest_match", Options.of(Entities))
    factual_formula: FactualFormula = param("share", Options.of(FactualFormula))
    factual_source: FactualSource = param("diagnosis", Options.of(FactualSource))
    diagnostic_critical_weight: float = param(1.0, _WEIGHT)
    unscored_without_reference: bool = param(True, Boolean())
    relevance_boost_per_term: float = param(0.0, _SHARE)
    relevance_boost_cap: float = param(0.1, _SHARE)
    relevance_threshold: float = param(0.25, _SHARE)
    relevance_below_threshold_factor: float = param(1.0, _SHARE)
    answers_lexicon_file: str | None = param(None, _FILE, NONE)
    answers_synonyms_file: str | None = param(None, _FILE, NONE)
    answers_markers_file: str | None = param(None, _FILE, NONE)
    answers_facts_file: str | None = param(None, _FILE, NONE)

    def __post_init__(self) -> None:
        """Check each field, then that some category weight is positive."""
        super().__post_init__()
        if sum(self.category_weights().values()) <= 0:
            names = ", ".join(f.name for f in fields(self) if f.name.startswith("accuracy_weight_"))
            msg = f"{self.where}: the category weights {names} are all 0; give at least one a positive weight"
            raise InvalidParameterError(msg)

    def category_weights(self) -> dict[str, float]:
        """Return the category weights, by category."""
        return {c: float(getattr(self, f"accuracy_weight_{c}")) for c in CATEGORIES}

    def reasoning_weights(self) -> dict[str, float]:
        """Return the reasoning components' weights: ``f1``, ``structure``, ``evidence``, ``factual``."""
        return {c: float(getattr(self, f"reasoning_weight_{c}")) for c in ("f1", "structure", "evidence", "factual")}
