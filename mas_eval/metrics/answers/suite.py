r"""The answers family wired together: per-item scores of every answer, and their per-run means.

:func:`answer_scores` scores a frame of answers (any keys, the answer texts); :func:`compute` is
what :func:`mas_eval.score` runs on a Dataset's ``answers`` table (:data:`~mas_eval.metrics.answers.FAMILY`).

Every text is normalised once (:meth:`~mas_eval.metrics.answers.vocabulary.Vocabulary.spaced`:
five columns, one Aho–Corasick pass each for separators and synonyms), then three passes find
what the scores count: lexicon entities of the prediction and the reference, markers and facts
of the predicted reasoning, and fact-set diagnoses of the reference diagnosis. The texts an item
is scored on:

====================  =======================================================================
score                 texts (null and empty count as empty)
====================  =======================================================================
clinical accuracy     ``prediction`` against ``reference``
token F1              the predicted reasoning (``rationale``, else ``prediction`` unless
                      ``prediction_fallback=False``) against the reference reasoning
                      (``reference_rationale``, else ``reference`` unless ``reference_fallback=False``)
markers, facts        the predicted reasoning
fact set              the diagnoses of the fact table present in ``reference_diagnosis``, else
                      in ``reference`` (``factual_source="answer"``: the other way round)
====================  =======================================================================

"Else" takes the next text when the first has no words once normalised; under MedAISure's
normalisation (:attr:`Vocabulary.normalisation`) when it is null or ``""``, as MedAISure's
``or`` does: a text of spaces alone is given, normalises to nothing, and hides the next one.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import polars as pl

from mas_eval.constraints import Boolean, Interval, Options, Predicate, check_columns, check_parameter, validate_params
from mas_eval.data.schema import RUN_KEY
from mas_eval.errors import InvalidParameterError, MasEvalError, SchemaError
from mas_eval.metrics.answers.accuracy import DEFAULT_CATEGORY_WEIGHTS, accuracy_columns
from mas_eval.metrics.answers.columns import ITEM_METRICS, SCORES
from mas_eval.metrics.answers.entities import Entities, with_entity_counts
from mas_eval.metrics.answers.labels import diagnostic_columns, label_synonyms, normalised_label, normalised_specialty
from mas_eval.metrics.answers.normalise import EMPTY, Matching
from mas_eval.metrics.answers.params import AnswersParams
from mas_eval.metrics.answers.phrases import with_phrase_word_counts
from mas_eval.metrics.answers.reasoning import (
    DEFAULT_REASONING_WEIGHTS,
    FactualFormula,
    FactualSource,
    f1_of_token_sets,
    reasoning_columns,
    token_counts,
    with_marker_counts,
)
from mas_eval.metrics.answers.relevance import relevance_columns, with_relevance_counts, word_set
from mas_eval.metrics.answers.vocabulary import (
    Vocabulary,
    answer_synonyms,
    fact_table,
    lexicon_table,
    marker_table,
)
from mas_eval.metrics.codes import KeyCodes
from mas_eval.metrics.diagnosis.tables import user_table
from mas_eval.metrics.ordered import ordered_aggregates

__all__ = ["TEXT_COLUMNS", "answer_scores", "compute", "scoring_options"]

#: The answer texts, as the ``answers`` table names them; ``prediction`` and ``reference`` are required.
TEXT_COLUMNS = (
    "prediction",
    "rationale",
    "reference",
    "reference_rationale",
    "reference_diagnosis",
    "predicted_diagnosis",
    "note",
    "specialty",
)
_REQUIRED = ("prediction", "reference")
#: Names of the derived texts (spaced forms).
_PREDICTION, _REFERENCE = "prediction", "reference"
_REASONING, _REFERENCE_REASONING, _DIAGNOSIS = "_reasoning", "_reference_reasoning", "_diagnosis"
#: The spaced reference diagnosis and note, and the raw specialty (diagnostic accuracy, clinical relevance).
_LABEL, _PREDICTED_LABEL, _NOTE, _SPECIALTY = "_label", "_predicted_label", "_note", "_specialty"
_METRIC_NAMES = [m.name for m in ITEM_METRICS]
#: A category's or a component's weight.
_WEIGHT = Interval(float, 0)
_SHARE = Interval(float, 0, 1)


def _weights(value: object, defaults: Mapping[str, float], name: str) -> dict[str, float]:
    """``defaults`` updated by the mapping ``value``, or an :class:`InvalidParameterError` naming the fault."""
    if value is None:
        return dict(defaults)
    if not isinstance(value, Mapping):
        msg = f"answer_scores: {name} must be a mapping of {', '.join(defaults)} to weights, not {type(value).__name__}"
        raise InvalidParameterError(msg)
    unknown = sorted(set(value) - set(defaults))
    if unknown:
        listed = ", ".join(map(repr, unknown))
        msg = f"answer_scores: {name} has unknown key(s) {listed}; the keys are {', '.join(defaults)}"
        raise InvalidParameterError(msg)
    merged = {**defaults, **value}
    for key, weight in merged.items():
        check_parameter(f"{name}[{key!r}]", weight, [_WEIGHT], where="answer_scores")
    return {key: float(w) for key, w in merged.items()}


def _nonempty(text: pl.Expr) -> pl.Expr:
    """Return a spaced text, null when it has no words."""
    return pl.when(text != EMPTY).then(text)


def _texts(
    answers: pl.LazyFrame,
    vocabulary: Vocabulary,
    *,
    reference_fallback: bool,
    prediction_fallback: bool = True,
    factual_source: FactualSource = "diagnosis",
) -> tuple[pl.DataFrame, list[str]]:
    """Return the answers' keys and their spaced texts, materialised once (every pass reads them)."""
    schema = answers.collect_schema()
    optional = ", ".join(c for c in TEXT_COLUMNS if c not in _REQUIRED)
    fix = f"the answers need prediction and reference (and may have {optional})"
    check_columns(schema, _REQUIRED, "answer_scores: the answers", fix=fix)
    for column in TEXT_COLUMNS:
        if column in schema and schema[column] not in (pl.String, pl.Null):
            msg = (
                f"answer_scores: column {column!r} must hold strings, not {schema[column]}; "
                f"cast it with pl.col({column!r}).cast(pl.String)"
            )
            raise SchemaError(msg)
    keys = [c for c in schema.names() if c not in TEXT_COLUMNS]
    text = {
        c: vocabulary.spaced(pl.col(c).cast(pl.String)) if c in schema else pl.lit(None, pl.String)
        for c in TEXT_COLUMNS
    }
    if vocabulary.normalisation == "medaisure":  # MedAISure's `or`: null and "" are missing, "  " is given

        def given(column: str) -> pl.Expr:
            raw = pl.col(column) if column in schema else pl.lit(None, pl.String)
            return pl.when(raw.cast(pl.String) != "").then(text[column])
    else:

        def given(column: str) -> pl.Expr:
            return _nonempty(text[column])

    reasoning = pl.coalesce(given("rationale"), text["prediction"]) if prediction_fallback else given("rationale")
    reference_reasoning = (
        pl.coalesce(given("reference_rationale"), text["reference"])
        if reference_fallback
        else given("reference_rationale")
    )
    first, second = (
        ("reference_diagnosis", "reference") if factual_source == "diagnosis" else ("reference", "reference_diagnosis")
    )
    frame = answers.select(
        *keys,
        text["prediction"].alias(_PREDICTION),
        text["reference"].alias(_REFERENCE),
        reasoning.alias(_REASONING),
        reference_reasoning.alias(_REFERENCE_REASONING),
        pl.coalesce(given(first), text[second]).alias(_DIAGNOSIS),
        text["reference_diagnosis"].alias(_LABEL),
        pl.coalesce(given("predicted_diagnosis"), text["prediction"]).alias(_PREDICTED_LABEL),
        text["note"].alias(_NOTE),
        (pl.col("specialty").cast(pl.String) if "specialty" in schema else pl.lit(None, pl.String)).alias(_SPECIALTY),
    )
    return frame.collect(), keys


_MATCHING = [Options.of(Matching)]
_MAPPING = [Predicate(lambda value: value is None or isinstance(value, Mapping), "a mapping or None")]


@validate_params(
    {
        "matching": _MATCHING,
        "category_weights": _MAPPING,
        "reasoning_weights": _MAPPING,
        "reference_fallback": [Boolean()],
        "prediction_fallback": [Boolean()],
        "entities": [Options.of(Entities)],
        "factual_formula": [Options.of(FactualFormula)],
        "factual_source": [Options.of(FactualSource)],
        "label_synonyms": _MAPPING,
        "diagnostic_critical_weight": [_WEIGHT],
        "unscored_without_reference": [Boolean()],
        "relevance_boost_per_term": [_SHARE],
        "relevance_boost_cap": [_SHARE],
        "relevance_threshold": [_SHARE],
        "relevance_below_threshold_factor": [_SHARE],
    }
)
def answer_scores(
    answers: pl.DataFrame | pl.LazyFrame,
    *,
    vocabulary: Vocabulary | None = None,
    matching: Matching = "word_boundary",
    category_weights: Mapping[str, float] | None = None,
    reasoning_weights: Mapping[str, float] | None = None,
    reference_fallback: bool = True,
    prediction_fallback: bool = True,
    entities: Entities = "longest_match",
    factual_formula: FactualFormula = "share",
    factual_source: FactualSource = "diagnosis",
    label_synonyms: Mapping[str, str] | None = None,
    diagnostic_critical_weight: float = 1.0,
    unscored_without_reference: bool = True,
    relevance_boost_per_term: float = 0.0,
    relevance_boost_cap: float = 0.1,
    relevance_threshold: float = 0.25,
    relevance_below_threshold_factor: float = 1.0,
) -> pl.DataFrame:
    r"""Score every answer: clinical accuracy, reasoning quality, diagnostic accuracy and clinical relevance.

    Every component comes with them (the MedAISure metrics overview; MedAISure's clinical metrics).

    Parameters
    ----------
    answers
        One row per answer: ``prediction`` and ``reference`` (String), optionally ``rationale``,
        ``reference_rationale``, ``reference_diagnosis``, ``predicted_diagnosis`` (the label
        diagnostic accuracy compares, else the prediction), ``note`` (what a summary is scored
        against), ``specialty``; every other column is a key, kept.
    vocabulary
        The compiled synonym map, lexicon, markers and fact sets (default: the shipped ones,
        :meth:`Vocabulary.shipped`; :meth:`Vocabulary.of` compiles others).
    matching
        ``"word_boundary"`` (default, the document) or ``"substring"`` (MedAISure's code).
    category_weights
        Weights of the pooled Jaccard by category, default diagnoses 3, treatments 2,
        medications 2, symptoms 1, labs 1 (keys given replace those); positive sum.
    reasoning_weights
        Weights of ``f1``, ``structure``, ``evidence``, ``factual``: default 0.4, 0.15, 0.2, 0.25.
    reference_fallback
        Without a reference rationale, compare the reasoning with the reference answer.
    prediction_fallback
        Without a rationale, score the prediction as the reasoning (``False``: the reasoning is empty).
    entities
        ``"longest_match"`` (default: one leftmost-longest pass over all lexicon terms) or
        ``"phrases_then_words"`` (MedAISure's: :mod:`~mas_eval.metrics.answers.phrases`).
    factual_formula
        ``"share"`` (default, facts found / expected) or ``"half_capped"`` (MedAISure's
        ``min(1, found / max(1, expected // 2))``).
    factual_source
        Where the fact set's diagnoses are looked for: ``"diagnosis"`` (default:
        ``reference_diagnosis``, else ``reference``) or ``"answer"`` (MedAISure's: ``reference``,
        else ``reference_diagnosis``).
    label_synonyms
        Diagnostic accuracy's whole-label synonym map under MedAISure's normalisation (default:
        the vocabulary's synonyms); the document's normalisation maps labels with the vocabulary.
    diagnostic_critical_weight, unscored_without_reference
        See :mod:`~mas_eval.metrics.answers.labels` (and :class:`AnswersParams`).
    relevance_boost_per_term, relevance_boost_cap, relevance_threshold, relevance_below_threshold_factor
        :math:`b, b_{max}, \theta, f` of :mod:`~mas_eval.metrics.answers.relevance`.

    Returns
    -------
    pl.DataFrame
        The key columns, then ``clinical_accuracy``, ``reasoning_quality``,
        ``entity_jaccard_<category>`` (null when neither side has an entity of it),
        ``accuracy_fallback_used``, ``token_f1``, ``structure``, ``evidence``,
        ``factual_consistency``, ``fallacy_penalty``, then ``diagnostic_accuracy`` and
        ``clinical_relevance`` with their parts (:data:`~mas_eval.metrics.answers.columns.ITEM_METRICS`
        gives the order); one row per answer, in input order.

    Notes
    -----
    .. math::

        CA &= \frac{\sum_c w_c |P_c \cap R_c|}{\sum_c w_c |P_c \cup R_c|}
              \quad\text{(else 1 for equal or contained texts, 1 for two empty ones, 0)}\\
        RQ &= \operatorname{clamp}_{[0,1]}(0.4 F_1 + 0.15 S + 0.2 E + 0.25 F - \Phi)

    :math:`P_c, R_c` are the sets of lexicon entities of category :math:`c` in the normalised
    prediction and reference (:mod:`~mas_eval.metrics.answers.accuracy`); :math:`F_1, S, E, F,
    \Phi` as in :mod:`~mas_eval.metrics.answers.reasoning`.

    Examples
    --------
    >>> answers = pl.DataFrame({"item_id": ["q1"], "prediction": ["Sepsis; give IV fluids and insulin"],
    ...                         "reference": ["sepsis, insulin"]})
    >>> row = answer_scores(answers).row(0, named=True)
    >>> round(row["clinical_accuracy"], 4)  # (3·1 + 2·1 + 2·1) / (3·1 + 2·2 + 2·1) = 7/9
    0.7778
    >>> row["entity_jaccard_treatments"]  # {insulin} of {iv fluids, insulin}
    0.5

    MedAISure's code (preset ``"medaisure"``; :func:`scoring_options` gives its arguments):

    >>> options = scoring_options(AnswersParams.of_preset("medaisure"))
    >>> sorted(options)  # doctest: +NORMALIZE_WHITESPACE
    ['category_weights', 'diagnostic_critical_weight', 'entities', 'factual_formula', 'factual_source',
     'label_synonyms', 'matching', 'prediction_fallback', 'reasoning_weights', 'reference_fallback',
     'relevance_below_threshold_factor', 'relevance_boost_cap', 'relevance_boost_per_term', 'relevance_threshold',
     'unscored_without_reference', 'vocabulary']
    >>> answer_scores(answers, **options)["clinical_accuracy"].item()  # "iv fluids" is not in this reference
    0.7777777777777778
    """
    if not isinstance(answers, pl.DataFrame | pl.LazyFrame):
        msg = f"answer_scores: answers must be a polars DataFrame or LazyFrame, not {type(answers).__name__}"
        raise InvalidParameterError(msg)
    category = _weights(category_weights, DEFAULT_CATEGORY_WEIGHTS, "category_weights")
    if sum(category.values()) <= 0:
        msg = "answer_scores: category_weights are all 0; give at least one category a positive weight"
        raise InvalidParameterError(msg)
    reasoning = _weights(reasoning_weights, DEFAULT_REASONING_WEIGHTS, "reasoning_weights")
    vocabulary = vocabulary or Vocabulary.shipped()
    if not isinstance(vocabulary, Vocabulary):
        msg = f"answer_scores: vocabulary must be a Vocabulary (Vocabulary.of(...)), not {type(vocabulary).__name__}"
        raise InvalidParameterError(msg)

    texts, keys = _texts(
        answers.lazy(),
        vocabulary,
        reference_fallback=reference_fallback,
        prediction_fallback=prediction_fallback,
        factual_source=factual_source,
    )
    if entities == "phrases_then_words":
        with_entities = with_phrase_word_counts(texts.lazy(), _PREDICTION, _REFERENCE, vocabulary)
    else:
        with_entities = with_entity_counts(texts.lazy(), _PREDICTION, _REFERENCE, vocabulary, matching)
    counted = with_marker_counts(with_entities, _REASONING, _DIAGNOSIS, vocabulary, matching)
    gap = vocabulary.gap
    tokens = token_counts(texts[_REASONING], texts[_REFERENCE_REASONING], gap)
    scored = (
        pl.concat([counted, tokens.lazy()], how="horizontal")
        .with_columns(token_f1=f1_of_token_sets())
        .with_columns(
            *accuracy_columns(pl.col(_PREDICTION), pl.col(_REFERENCE), weights=category, matching=matching, gap=gap),
            *reasoning_columns(reasoning, factual_formula),
        )
    )
    # Each normalised text once, as a column: every expression below reads it several times.
    words = vocabulary.words
    normalised = texts.lazy().select(
        _specialty=normalised_specialty(pl.col(_SPECIALTY), vocabulary),
        _expected=normalised_label(words(pl.col(_LABEL)), vocabulary, label_synonyms),
        _predicted=normalised_label(words(pl.col(_PREDICTED_LABEL)), vocabulary, label_synonyms),
        _note=word_set(words(pl.col(_NOTE))),
        _summary=word_set(words(pl.col(_PREDICTION))),
    )
    labels = with_relevance_counts(normalised.collect().lazy(), "_note", "_summary", vocabulary).select(
        *diagnostic_columns(
            pl.col("_expected"),
            pl.col("_predicted"),
            pl.col("_specialty"),
            vocabulary,
            critical_weight=diagnostic_critical_weight,
            unscored_without_reference=unscored_without_reference,
        ),
        *relevance_columns(
            pl.col("_specialty"),
            boost_per_term=relevance_boost_per_term,
            boost_cap=relevance_boost_cap,
            threshold=relevance_threshold,
            below_threshold_factor=relevance_below_threshold_factor,
            unscored_without_reference=unscored_without_reference,
        ),
    )
    return pl.concat([scored, labels], how="horizontal").select(*keys, *_METRIC_NAMES).collect()


# --- the family -------------------------------------------------------------------------------------------


def _vocabulary(params: AnswersParams) -> Vocabulary:
    """Return the shipped tables, extended by the files the ``answers_*_file`` parameters name."""
    files = {
        "synonyms": (params.answers_synonyms_file, "answers_synonyms_file", ("term", "canonical"), answer_synonyms),
        "lexicon": (params.answers_lexicon_file, "answers_lexicon_file", ("term", "category"), lexicon_table),
        "markers": (params.answers_markers_file, "answers_markers_file", ("kind", "marker"), marker_table),
        "facts": (params.answers_facts_file, "answers_facts_file", ("diagnosis", "fact"), fact_table),
    }
    shipped, normalisation = params.answers_vocabulary, params.answers_normalisation
    if all(path is None for path, *_ in files.values()):
        return Vocabulary.shipped(shipped, normalisation)
    tables: dict[str, Any] = {}
    for name, (path, parameter, columns, extend) in files.items():
        table = user_table(path, parameter, columns, partial(extend, shipped=shipped))
        tables[name] = extend(shipped=shipped) if table is None else table
    try:
        return Vocabulary.of(**tables, normalisation=normalisation)
    except MasEvalError as exc:
        given = [f"{parameter}={str(path)!r}" for path, parameter, *_ in files.values() if path is not None]
        msg = f"score: {', '.join(given)}: {exc}"
        raise type(exc)(msg) from None


def scoring_options(params: AnswersParams) -> dict[str, Any]:
    """Return the keyword arguments of :func:`answer_scores` that ``params`` set (the compiled vocabulary too)."""
    return {
        "vocabulary": _vocabulary(params),
        "matching": params.answers_matching,
        "category_weights": params.category_weights(),
        "reasoning_weights": params.reasoning_weights(),
        "reference_fallback": params.reasoning_reference_fallback,
        "prediction_fallback": params.reasoning_prediction_fallback,
        "entities": params.answers_entities,
        "factual_formula": params.factual_formula,
        "factual_source": params.factual_source,
        "label_synonyms": label_synonyms(params.answers_vocabulary),
        "diagnostic_critical_weight": params.diagnostic_critical_weight,
        "unscored_without_reference": params.unscored_without_reference,
        "relevance_boost_per_term": params.relevance_boost_per_term,
        "relevance_boost_cap": params.relevance_boost_cap,
        "relevance_threshold": params.relevance_threshold,
        "relevance_below_threshold_factor": params.relevance_below_threshold_factor,
    }


def compute(
    tables: Mapping[str, pl.LazyFrame],
    params: AnswersParams,
    codes: KeyCodes,  # noqa: ARG001 -- a Family's compute signature; answers are scored without labels
) -> dict[str, pl.LazyFrame]:
    """Every answer metric: ``items`` (one row per answer) and ``runs`` (their means per run).

    ``tables``: ``runs`` and ``answers`` keyed by run codes. The ``items`` frame carries the
    answer's own ``task``; :func:`mas_eval.score` falls back to the run's where it is null.
    """
    items = answer_scores(
        tables["answers"].select(RUN_KEY, "item_id", "task", *TEXT_COLUMNS), **scoring_options(params)
    ).sort(RUN_KEY, "item_id")
    # Items come sorted by (run, item): each run's mean adds its items in item order.
    # Diagnostic accuracy is a weighted mean (MedAISure adds weight·correct and weight item by item).
    weighted = pl.col("diagnostic_weight") * pl.col("diagnostic_accuracy")
    means = ordered_aggregates(
        items.lazy(),
        RUN_KEY,
        means={
            name: pl.col(name).drop_nulls() for name in ("clinical_accuracy", "reasoning_quality", "clinical_relevance")
        },
        sums={"_weighted": weighted.drop_nulls(), "_weight": pl.col("diagnostic_weight").drop_nulls()},
        other={"num_items": pl.len().cast(pl.UInt32)},
    ).select(
        RUN_KEY,
        *SCORES[:2],
        pl.when(pl.col("_weight") > 0).then(pl.col("_weighted") / pl.col("_weight")).alias("diagnostic_accuracy"),
        "clinical_relevance",
        "num_items",
    )
    runs = tables["runs"].select(RUN_KEY).join(means, on=RUN_KEY, how="left").sort(RUN_KEY)
    return {"runs": runs, "items": items.lazy()}
