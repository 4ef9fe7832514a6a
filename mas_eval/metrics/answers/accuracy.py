r"""Clinical accuracy of an answer against its reference (the MedAISure metrics overview, "Clinical Accuracy").

Expressions over one row per item holding the entity counts of
:func:`~mas_eval.metrics.answers.entities.with_entity_counts` (``intersection_<c>``, ``union_<c>``)
and the spaced prediction and reference texts.

.. math::

    CA = \frac{\sum_c w_c |P_c \cap R_c|}{\sum_c w_c |P_c \cup R_c|}

pooled over the categories :math:`c` (weights: diagnoses 3, treatments 2, medications 2,
symptoms 1, labs 1). When :math:`\sum_c w_c |P_c \cup R_c| = 0` (no entity on either side) the
fallback compares the normalised texts: 1 when both are empty, 0 when one is, 1 when one is
contained in the other (on word boundaries, or as a substring under ``matching="substring"``),
else 0.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from mas_eval.metrics.answers.normalise import EMPTY, Matching
from mas_eval.metrics.answers.vocabulary import CATEGORIES

__all__ = ["DEFAULT_CATEGORY_WEIGHTS", "accuracy_columns", "category_jaccard", "fallback_match"]

#: MedAISure's category weights (its ``_CATEGORY_WEIGHTS``).
DEFAULT_CATEGORY_WEIGHTS: dict[str, float] = {
    "diagnoses": 3.0,
    "treatments": 2.0,
    "medications": 2.0,
    "symptoms": 1.0,
    "labs": 1.0,
}


def category_jaccard(category: str) -> pl.Expr:
    r""":math:`|P_c \cap R_c| / |P_c \cup R_c|`; null when neither side has an entity of the category."""
    union = pl.col(f"union_{category}")
    return pl.when(union > 0).then(pl.col(f"intersection_{category}") / union)


def fallback_match(prediction: pl.Expr, reference: pl.Expr, matching: Matching, gap: str = "  ") -> pl.Expr:
    """Return the fallback of two spaced texts: 1.0 if both are empty or one contains the other, else 0.0.

    A null text is empty. Containment is on word boundaries (``"rest"`` is in ``"bed rest"``, not in ``"arrest"``) or,
    with ``matching="substring"``, anywhere. ``gap`` one space: texts of MedAISure's normalisation,
    compared as they are (the one space padding each side dropped), so a text of spaces alone is not empty.

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval.metrics.answers.accuracy import fallback_match
    >>> from mas_eval.metrics.answers.normalise import spaced
    >>> frame = pl.DataFrame({"p": ["bed rest", "arrest", None], "r": ["rest", "rest", None]})
    >>> frame.select(fallback_match(spaced(pl.col("p")), spaced(pl.col("r")), "word_boundary")).to_series().to_list()
    [1.0, 0.0, 1.0]
    """
    p, r = prediction.fill_null(EMPTY), reference.fill_null(EMPTY)
    p_empty, r_empty = p == EMPTY, r == EMPTY
    if gap == " ":
        inner_p, inner_r = (t.str.strip_prefix(" ").str.strip_suffix(" ") for t in (p, r))
    else:
        inner_p, inner_r = p.str.strip_chars(" "), r.str.strip_chars(" ")
    hay_p, hay_r = p, r
    if matching == "word_boundary":
        needle_p, needle_r = pl.lit(" ") + inner_p + pl.lit(" "), pl.lit(" ") + inner_r + pl.lit(" ")
    else:
        needle_p, needle_r = inner_p, inner_r
        if gap == " ":  # MedAISure's texts may start or end with a space of their own: compared as they are
            hay_p, hay_r = inner_p, inner_r
    contained = hay_r.str.contains(needle_p, literal=True) | hay_p.str.contains(needle_r, literal=True)
    return pl.when(p_empty & r_empty).then(1.0).when(p_empty | r_empty).then(0.0).otherwise(contained.cast(pl.Float64))


def accuracy_columns(
    prediction: pl.Expr, reference: pl.Expr, *, weights: Mapping[str, float], matching: Matching, gap: str = "  "
) -> list[pl.Expr]:
    """``clinical_accuracy``, ``entity_jaccard_<c>`` for every category, and ``accuracy_fallback_used``.

    Parameters
    ----------
    prediction, reference
        The spaced texts (for the fallback).
    weights
        Weight per category (every one of :data:`~mas_eval.metrics.answers.vocabulary.CATEGORIES`).
    matching
        How the fallback's containment is decided.
    gap
        What separates words in the spaced texts (:attr:`~mas_eval.metrics.answers.vocabulary.Vocabulary.gap`).
    """
    pooled_intersection = pl.sum_horizontal(weights[c] * pl.col(f"intersection_{c}") for c in CATEGORIES)
    pooled_union = pl.sum_horizontal(weights[c] * pl.col(f"union_{c}") for c in CATEGORIES)
    fallback = pooled_union <= 0
    return [
        pl.when(fallback)
        .then(fallback_match(prediction, reference, matching, gap))
        .otherwise(pooled_intersection / pooled_union)
        .alias("clinical_accuracy"),
        *(category_jaccard(c).alias(f"entity_jaccard_{c}") for c in CATEGORIES),
        fallback.alias("accuracy_fallback_used"),
    ]
