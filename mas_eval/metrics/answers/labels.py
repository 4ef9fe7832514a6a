r"""Diagnostic accuracy of an answer (MedAISure's ``DiagnosticAccuracyMetric``).

MedAISure's docs call it a "case-insensitive exact match of ``diagnosis``".

Per item, the predicted label (``predicted_diagnosis``, else ``prediction``: MedAISure's
``label``, else ``prediction``) is compared with the reference diagnosis
(``reference_diagnosis``), both normalised and through a synonym map:

.. math::

    c_i = [\,t_i \ne \varnothing \wedge p_i \ne \varnothing \wedge t_i = p_i\,],\qquad
    w_i = \begin{cases} w_{crit} & t_i \in \mathrm{Critical}(s_i) \\ 1 & \text{otherwise}\end{cases},\qquad
    DA = \frac{\sum_i w_i c_i}{\sum_i w_i}

where :math:`s_i` is the item's specialty. The critical weight is 1 under the document (a plain
mean of per-item matches, the metrics overview's "mean of per-sample scores") and 1.5 in
MedAISure's code, which weights a critical diagnosis of a specialty (:data:`CRITICAL_LABELS`) more.
MedAISure also records whether the predicted label is one its specialty knows
(:data:`KNOWN_LABELS`); it does not change the score (``diagnostic_known_label``).

Labels are normalised as the answer texts are (:attr:`Vocabulary.normalisation`): the
document's words through the answers synonym map (which holds the diagnosis family's synonyms:
``"htn"`` is ``hypertension``), or MedAISure's string looked up whole in its label synonyms
(:func:`label_synonyms`).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import polars as pl

from mas_eval.metrics.answers.normalise import as_written, medaisure_text, normalise_text
from mas_eval.metrics.answers.vocabulary import Tables, Vocabulary
from mas_eval.metrics.diagnosis.tables import shipped_table

__all__ = [
    "CRITICAL_LABELS",
    "KNOWN_LABELS",
    "RELEVANCE_THRESHOLDS",
    "diagnostic_columns",
    "label_synonyms",
    "normalised_label",
    "normalised_specialty",
]

#: Labels a specialty knows (MedAISure's ``KNOWN_LABELS``), as written there.
KNOWN_LABELS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "cardiology": ("myocardial infarction", "mi", "heart failure"),
        "infectious_disease": ("sepsis", "pneumonia", "flu"),
    }
)
#: A specialty's critical diagnoses, weighted more (MedAISure's ``CRITICAL_LABELS``).
CRITICAL_LABELS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"cardiology": ("myocardial infarction", "mi"), "infectious_disease": ("sepsis",)}
)
#: A specialty's clinical relevance threshold (MedAISure's ``DOMAIN_THRESHOLDS``); others use the parameter.
RELEVANCE_THRESHOLDS: Mapping[str, float] = MappingProxyType({"cardiology": 0.35, "infectious_disease": 0.30})

#: Joins a specialty and a label into one key (a character no normalised text holds).
_SEP = "\x1f"


def label_synonyms(shipped: Tables = "medaisure") -> dict[str, str] | None:
    """Return the whole-label synonym map of ``shipped`` tables: MedAISure's ``LABEL_SYNONYMS`` as written.

    None for the package's tables, whose labels go through the answers synonym map instead.

    Examples
    --------
    >>> from mas_eval.metrics.answers.labels import label_synonyms
    >>> len(label_synonyms("medaisure")) > 0, label_synonyms("spec")
    (True, None)
    """
    if shipped != "medaisure":
        return None
    table = shipped_table("medaisure_label_synonyms.csv", ("term", "canonical"), "mas_eval.metrics.answers")
    # Rows of a small shipped table, not of answers: the map feeds one vectorised replace.
    return dict(table.select(as_written(pl.col("term")), as_written(pl.col("canonical"))).iter_rows())


def normalised_label(text: pl.Expr, vocabulary: Vocabulary, synonyms: Mapping[str, str] | None) -> pl.Expr:
    """Return the label of a normalised text (:meth:`Vocabulary.normalise`).

    Under MedAISure's normalisation, the text looked up whole in ``synonyms`` (default: the
    vocabulary's synonyms); under the document's, the text as it is (the synonym map has
    rewritten it). Null stays null.
    """
    if vocabulary.normalisation == "medaisure":
        if synonyms is None:  # the vocabulary's synonym table (its rows, not the answers')
            synonyms = dict(vocabulary.synonyms.select("term", "canonical").iter_rows())
        return text.replace(synonyms) if synonyms else text
    return text


def normalised_specialty(text: pl.Expr, vocabulary: Vocabulary) -> pl.Expr:
    """Write a specialty as the tables' keys are: MedAISure's string, or the document's words joined by ``_``."""
    if vocabulary.normalisation == "medaisure":
        return medaisure_text(text)
    return normalise_text(text).str.replace_all(" ", "_", literal=True)


def _table_keys(vocabulary: Vocabulary) -> tuple[list[str], list[str]]:
    """Return the ``specialty<SEP>label`` keys of :data:`KNOWN_LABELS` and :data:`CRITICAL_LABELS`.

    Each label is normalised as the texts it is compared with are (one pass over both tables).
    """
    rows = [(kind, s, label) for kind, table in (("known", KNOWN_LABELS), ("critical", CRITICAL_LABELS))
            for s, labels in table.items() for label in labels]  # fmt: skip
    frame = pl.DataFrame(rows, schema=["kind", "specialty", "label"], orient="row")
    # MedAISure compares the labels as written; the document's normalisation maps them like the texts.
    label = pl.col("label") if vocabulary.normalisation == "medaisure" else vocabulary.normalise(pl.col("label"))
    keys = frame.select("kind", key=pl.col("specialty") + _SEP + label)
    return tuple(keys.filter(pl.col("kind") == kind)["key"].to_list() for kind in ("known", "critical"))  # type: ignore[return-value]


def diagnostic_columns(
    expected: pl.Expr,
    predicted: pl.Expr,
    specialty: pl.Expr,
    vocabulary: Vocabulary,
    *,
    critical_weight: float,
    unscored_without_reference: bool,
) -> list[pl.Expr]:
    """``diagnostic_accuracy`` (1 or 0), ``diagnostic_weight``, ``diagnostic_critical``, ``diagnostic_known_label``.

    Parameters
    ----------
    expected, predicted, specialty
        Normalised labels and specialty (:func:`normalised_label`, :func:`normalised_specialty`); null is missing.
    vocabulary
        How the tables' labels are normalised.
    critical_weight
        :math:`w_{crit}`.
    unscored_without_reference
        An item whose reference label is missing (null, or no words) gets nulls; else it is
        compared as an empty label (MedAISure's code: never a match).
    """
    t, p = expected.fill_null(""), predicted.fill_null("")
    correct = ((t != "") & (p != "") & (t == p)).cast(pl.Float64)
    known_keys, critical_keys = _table_keys(vocabulary)
    critical = (specialty + _SEP + t).is_in(critical_keys).fill_null(False)
    known_here = (specialty + _SEP + p).is_in(known_keys)
    known = pl.when(specialty.is_in(list(KNOWN_LABELS))).then((p != "") & known_here).otherwise(True)
    weight = pl.when(critical).then(pl.lit(float(critical_weight))).otherwise(1.0)
    scored = expected.is_not_null() & (expected != "") if unscored_without_reference else pl.lit(True)
    return [
        pl.when(scored).then(correct).alias("diagnostic_accuracy"),
        pl.when(scored).then(weight).alias("diagnostic_weight"),
        pl.when(scored).then(critical).alias("diagnostic_critical"),
        pl.when(scored).then(known).alias("diagnostic_known_label"),
    ]
