r"""Clinical entities of answers by category, from the lexicon (the MedAISure metrics overview, "Extract features").

One Aho–Corasick pass over every lexicon term at once (``str.extract_many``) finds the entities of
all answers; the per-category overlap of a prediction's and a reference's entity sets comes from
list set operations on the numbers of the terms found — no loop over answers.

>>> import polars as pl
>>> frame = pl.DataFrame({"text": ["Sepsis; give IV fluids and insulin", "COPD exacerbation, SOB"]})
>>> for row in extract_entities(frame, "text").rows():
...     print(row)
(0, 'diagnoses', 'sepsis')
(0, 'medications', 'insulin')
(0, 'treatments', 'insulin')
(0, 'treatments', 'iv fluids')
(1, 'diagnoses', 'chronic obstructive pulmonary disease')
(1, 'symptoms', 'shortness of breath')
"""

from __future__ import annotations

from typing import Literal

import polars as pl

from mas_eval.constraints import check_columns
from mas_eval.metrics.answers.normalise import EMPTY, Matching
from mas_eval.metrics.answers.phrases import entity_codes, phrase_word_entities
from mas_eval.metrics.answers.vocabulary import CATEGORIES, Vocabulary

__all__ = ["Entities", "extract_entities", "find_entities", "with_entity_counts"]

#: How entities are found: one leftmost-longest pass over every lexicon term (the document), or
#: MedAISure's phrases, then words (:mod:`~mas_eval.metrics.answers.phrases`).
Entities = Literal["longest_match", "phrases_then_words"]


def find_entities(spaced_text: pl.Expr, vocabulary: Vocabulary, matching: Matching) -> pl.Expr:
    r"""Find the lexicon patterns in spaced texts, left to right (a list per text).

    Notes
    -----
    Leftmost-longest, non-overlapping: scanning the text from the left, the longest lexicon term
    that starts at the current position is taken and the scan continues after it, so a multi-word
    term wins over the terms inside it ("congestive heart failure" over "heart failure").
    ``matching="word_boundary"`` finds terms only as whole words of the normalised text;
    ``"substring"`` anywhere in it ("ct" inside "doctor").
    """
    patterns = vocabulary.entity_patterns(matching).patterns
    if not patterns:
        return pl.lit(pl.Series([[]], dtype=pl.List(pl.String)))
    return spaced_text.str.extract_many(patterns, leftmost=True)


def with_entity_counts(
    texts: pl.LazyFrame, prediction: str, reference: str, vocabulary: Vocabulary, matching: Matching
) -> pl.LazyFrame:
    r"""``texts`` with ``intersection_<c>`` = :math:`|P_c \cap R_c|` and ``union_<c>`` = :math:`|P_c \cup R_c|`.

    ``prediction`` and ``reference`` are spaced texts of ``texts`` (null is empty).

    Notes
    -----
    Per text, the lexicon patterns found are numbered (their position in the pattern list) and
    kept once; per item, the intersection and the union of the two number sets are list set
    operations; a number's categories are the bits of a mask gathered from a table, so that a
    term of two categories counts in both. No row is exploded and nothing is joined.
    """
    patterns = vocabulary.entity_patterns(matching)
    p, r = pl.col("_entities_p"), pl.col("_entities_r")
    i, u = pl.col("_entities_i"), pl.col("_entities_u")
    counts = [
        ((column.list.eval((pl.element() & (1 << index)) > 0).list.sum()).cast(pl.UInt32).alias(f"{part}_{c}"))
        for index, c in enumerate(CATEGORIES)
        for part, column in (("intersection", i), ("union", u))
    ]
    return (
        texts.with_columns(
            patterns.find(pl.col(prediction).fill_null(EMPTY), overlapping=False).alias("_entities_p"),
            patterns.find(pl.col(reference).fill_null(EMPTY), overlapping=False).alias("_entities_r"),
        )
        .with_columns(
            patterns.payloads(p.list.set_intersection(r)).alias("_entities_i"),
            patterns.payloads(p.list.set_union(r)).alias("_entities_u"),
        )
        .with_columns(counts)
        .drop("_entities_p", "_entities_r", "_entities_i", "_entities_u")
    )


def extract_entities(
    frame: pl.DataFrame | pl.LazyFrame,
    column: str,
    *,
    vocabulary: Vocabulary | None = None,
    matching: Matching = "word_boundary",
    entities: Entities = "longest_match",
) -> pl.DataFrame:
    """Extract the clinical entities of each text of ``frame[column]``, one row per (row, category, entity).

    Parameters
    ----------
    frame
        Any frame with a String ``column``.
    column
        The texts.
    vocabulary
        The compiled tables (default :meth:`Vocabulary.shipped`).
    matching
        ``"word_boundary"`` (default) or ``"substring"``.
    entities
        ``"longest_match"`` (default) or ``"phrases_then_words"`` (MedAISure's;
        :mod:`~mas_eval.metrics.answers.phrases`, where ``matching`` plays no part).

    Returns
    -------
    pl.DataFrame
        ``row`` (the text's position in ``frame``), ``category`` (one of
        :data:`~mas_eval.metrics.answers.vocabulary.CATEGORIES`) and ``entity`` (the lexicon term,
        normalised and through the synonym map), sorted; each entity once per text and category.

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval.metrics.answers import extract_entities
    >>> extract_entities(pl.DataFrame({"text": ["Chest pain; start aspirin."]}), "text")
    shape: (2, 3)
    ┌─────┬─────────────┬────────────┐
    │ row ┆ category    ┆ entity     │
    │ --- ┆ ---         ┆ ---        │
    │ u32 ┆ str         ┆ str        │
    ╞═════╪═════════════╪════════════╡
    │ 0   ┆ medications ┆ aspirin    │
    │ 0   ┆ symptoms    ┆ chest pain │
    └─────┴─────────────┴────────────┘
    """
    vocabulary = vocabulary or Vocabulary.shipped()
    lazy = frame.lazy()
    check_columns(lazy.collect_schema(), [column], "extract_entities: frame")
    if entities == "phrases_then_words":
        spaced_texts = lazy.with_row_index("row").select("row", _text=vocabulary.spaced(pl.col(column)))
        return (
            phrase_word_entities(spaced_texts, "_text", "code", vocabulary)
            .select("row", "code")
            .explode("code")
            .join(entity_codes(vocabulary).lazy(), on="code")
            .select("row", "category", entity="term")
            .unique()
            .sort("row", "category", "entity")
            .collect()
        )
    found = lazy.with_row_index("row").select(
        "row", pattern=find_entities(vocabulary.spaced(pl.col(column)), vocabulary, matching)
    )
    return (
        found.explode("pattern")
        .join(vocabulary.entity_patterns(matching).lookup.lazy(), on="pattern")
        .select("row", "category", entity="term")
        .unique()
        .sort("row", "category", "entity")
        .collect()
    )
