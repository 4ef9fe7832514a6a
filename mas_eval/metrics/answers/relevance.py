r"""Clinical relevance of a summary to its note (MedAISure's ``ClinicalRelevanceMetric``).

MedAISure's "token Jaccard between summary and note", with a knowledge boost and a specialty threshold.

Per item, with :math:`N` and :math:`S` the sets of words of the normalised note (``note``) and
summary (``prediction``):

.. math::

    J &= \begin{cases} 1 & N = S = \varnothing \\ 0 & N = \varnothing \text{ or } S = \varnothing \\
          |N \cap S| / |N \cup S| & \text{otherwise} \end{cases}\\
    B &= \min(b_{max},\ b \cdot k),\qquad k = \#\{(w, c) \in \text{lexicon} : w \in N \cap S,\ w \text{ one word}\}\\
    R &= \min(1, J + B),\qquad
    CR = \begin{cases} R & R \ge \theta(s) \\ \max(0, f R) & \text{otherwise} \end{cases}

:math:`k` counts lexicon rows, so a word listed in two categories (MedAISure's "insulin") counts
twice; :math:`\theta(s)` is the specialty's threshold (:data:`~mas_eval.metrics.answers.labels.RELEVANCE_THRESHOLDS`),
else the parameter (0.25). The document defines the metric as the token Jaccard alone: its
defaults are :math:`b = 0` (no boost) and :math:`f = 1` (no threshold adjustment); MedAISure's code
uses :math:`b = 0.02`, :math:`b_{max} = 0.1`, :math:`f = 0.8` (preset ``"medaisure"``).
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from mas_eval.metrics.answers.labels import RELEVANCE_THRESHOLDS
from mas_eval.metrics.answers.vocabulary import Vocabulary

__all__ = ["keyword_counts", "relevance_columns", "with_relevance_counts", "word_set"]


def word_set(normalised: pl.Expr) -> pl.Expr:
    """Return the distinct words of normalised texts (words separated by spaces; null is no word).

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval.metrics.answers.relevance import word_set
    >>> pl.select(word_set(pl.Series(["chest pain chest", None])).list.sort()).to_series().to_list()
    [['chest', 'pain'], []]
    """
    return normalised.fill_null("").str.split(" ").list.eval(pl.element().filter(pl.element() != "")).list.unique()


def keyword_counts(vocabulary: Vocabulary) -> dict[str, int]:
    """One-word lexicon terms and the number of categories that list each (the boost's keywords)."""
    single = vocabulary.lexicon.filter(~pl.col("term").str.contains(" ", literal=True))
    # Rows of the lexicon (hundreds of terms), not of answers: the map feeds one vectorised replace.
    return dict(single.group_by("term").len().iter_rows())


def with_relevance_counts(frame: pl.LazyFrame, note: str, summary: str, vocabulary: Vocabulary) -> pl.LazyFrame:
    r"""Add the word counts :func:`relevance_columns` reads to ``frame``.

    They are ``_n_note`` = :math:`|N|`, ``_n_summary`` = :math:`|S|`, ``_n_shared`` =
    :math:`|N \cap S|` and ``_n_keywords`` = :math:`k`.

    ``note`` and ``summary`` are columns of word sets (:func:`word_set`). The intersection is a
    column of its own, built once: both counts read it, and the scores read the counts several times.
    """
    n, s, shared = pl.col(note), pl.col(summary), pl.col("_shared")
    counts = keyword_counts(vocabulary)
    return (
        frame.with_columns(
            n.list.len().alias("_n_note"), s.list.len().alias("_n_summary"), n.list.set_intersection(s).alias("_shared")
        )
        .with_columns(
            shared.list.len().alias("_n_shared"),
            shared.list.eval(pl.element().replace_strict(counts, default=0, return_dtype=pl.Int64))
            .list.sum()
            .alias("_n_keywords"),
        )
        .drop("_shared")
    )


def relevance_columns(
    specialty: pl.Expr,
    *,
    boost_per_term: float,
    boost_cap: float,
    threshold: float,
    below_threshold_factor: float,
    unscored_without_reference: bool,
    thresholds: Mapping[str, float] = RELEVANCE_THRESHOLDS,
) -> list[pl.Expr]:
    """Return the relevance columns.

    They are ``clinical_relevance``, ``relevance_jaccard``, ``relevance_boost``,
    ``relevance_threshold`` and ``relevance_meets_threshold``.

    They read the counts of :func:`with_relevance_counts`; ``specialty`` is a normalised specialty
    (null: none). ``unscored_without_reference``: an item whose note has no words gets nulls;
    else the note counts as empty (MedAISure's code).
    """
    n_note, n_summary, n_shared = pl.col("_n_note"), pl.col("_n_summary"), pl.col("_n_shared")
    jaccard = (
        pl.when((n_note == 0) & (n_summary == 0))
        .then(1.0)
        .when((n_note == 0) | (n_summary == 0))
        .then(0.0)
        .otherwise(n_shared / (n_note + n_summary - n_shared))
    )
    k = pl.col("_n_keywords")
    boost = pl.when(k > 0).then(pl.min_horizontal(pl.lit(float(boost_cap)), k * float(boost_per_term))).otherwise(0.0)
    raw = pl.min_horizontal(pl.lit(1.0), jaccard + boost)
    theta = specialty.replace_strict(dict(thresholds), default=float(threshold), return_dtype=pl.Float64)
    theta = theta.fill_null(float(threshold))
    meets = raw >= theta
    final = pl.when(meets).then(raw).otherwise(pl.max_horizontal(pl.lit(0.0), raw * float(below_threshold_factor)))
    scored = n_note > 0 if unscored_without_reference else pl.lit(True)
    return [
        pl.when(scored).then(final).alias("clinical_relevance"),
        pl.when(scored).then(jaccard).alias("relevance_jaccard"),
        pl.when(scored).then(boost).alias("relevance_boost"),
        pl.when(scored).then(theta).alias("relevance_threshold"),
        pl.when(scored).then(meets).alias("relevance_meets_threshold"),
    ]
