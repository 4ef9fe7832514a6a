r"""MedAISure's entity extraction, ``entities="phrases_then_words"`` (preset ``"medaisure"``).

Two steps on each normalised text, instead of one leftmost-longest pass over every term:

1. the lexicon's *phrases* (terms of several words), category by category in the order of
   :data:`~mas_eval.metrics.answers.vocabulary.CATEGORIES` (within one, by term): a phrase that
   occurs anywhere in what is left of the text (a substring) is an entity of that category, and
   every occurrence of it is replaced by one space before the next phrase is looked for;
2. the *words* left (split on spaces), each through the synonym map (under MedAISure's
   normalisation, whose text is not mapped otherwise), are entities of every category whose
   lexicon holds the word exactly ("insulin" is a treatment and a medication).

So removing one phrase can join the words around it into another ("chestiv fluidspain" yields
``iv fluids``, then ``chest pain``), a phrase split by punctuation that normalisation deletes
still occurs ("chest, pain") and one split by a lone dash does not ("chest - pain" → ``chest  pain``).
A phrase in two categories counts in the first only (it is removed once found), as in MedAISure.

>>> import polars as pl
>>> from mas_eval.metrics.answers.vocabulary import Vocabulary
>>> v = Vocabulary.shipped("medaisure", "medaisure")
>>> texts = pl.LazyFrame({"p": ["chestiv fluidspain, SOB"], "r": ["Chest pain; insulin"]})
>>> texts = texts.select(v.spaced(pl.col("p")).alias("p"), v.spaced(pl.col("r")).alias("r"))
>>> row = with_phrase_word_counts(texts, "p", "r", v).collect().row(0, named=True)
>>> row["intersection_symptoms"], row["union_symptoms"], row["union_treatments"], row["union_medications"]
(1, 2, 2, 1)
"""

from __future__ import annotations

import polars as pl

from mas_eval.metrics.answers.normalise import EMPTY, longest_first, pattern
from mas_eval.metrics.answers.vocabulary import CATEGORIES, PatternSet, Vocabulary

__all__ = ["entity_codes", "phrase_word_entities", "with_phrase_word_counts"]

# An entity's code is 8 · (its row among the lexicon's (category, term) pairs) + its category's
# index, so that its category is code % 8 and one set operation covers every category.
_STRIDE = 8
_CODE = pl.UInt32


def entity_codes(vocabulary: Vocabulary) -> pl.DataFrame:
    """``code, category, term``: the code of each lexicon entry (what :func:`phrase_word_entities` returns)."""
    _, _, table = _codes(vocabulary)
    return table


def _codes(vocabulary: Vocabulary) -> tuple[list[tuple[int, str]], PatternSet, pl.DataFrame]:
    """Return the phrases in the order they are looked for, the one-word patterns, and the table of every code.

    The phrases come with their codes; the one-word patterns with the codes of the entities they
    are (:func:`_word_patterns`).
    """
    order = {c: i for i, c in enumerate(CATEGORIES)}
    pairs = sorted(vocabulary.lexicon.select("category", "term").rows(), key=lambda row: (order[row[0]], row[1]))
    coded = [(_STRIDE * row + order[category], category, term) for row, (category, term) in enumerate(pairs)]
    phrases = [(code, pattern(term, "substring", vocabulary.gap)) for code, _, term in coded if " " in term]
    entities: dict[str, list[int]] = {}
    for code, _, term in coded:
        entities.setdefault(term, []).append(code)
    table = pl.DataFrame(coded, schema={"code": _CODE, "category": pl.String, "term": pl.String}, orient="row")
    return phrases, _word_patterns(entities, vocabulary), table


def _word_patterns(entities: dict[str, list[int]], vocabulary: Vocabulary) -> PatternSet:
    """Return every word that is an entity once through the synonym map, as the pattern ``" word "``.

    Its payload is the codes of that entity.

    A word of the text is what lies between two spaces, and every spaced text starts and ends with
    one, so ``" word "`` occurs in it exactly where a word equals ``word``: one overlapping
    Aho–Corasick pass finds the words that splitting, mapping and looking up each one would.
    """
    keys, canonical = _word_map(vocabulary)
    mapped = dict(zip(keys, canonical, strict=True))
    # Rows of the lexicon and the synonym map (tens to hundreds), not of answers.
    candidates = {word for word in (*entities, *keys) if " " not in word}
    words = {word: entities[mapped.get(word, word)] for word in candidates if mapped.get(word, word) in entities}
    patterns = longest_first(f" {word} " for word in words)
    payload = pl.Series([sorted(words[p[1:-1]]) for p in patterns], dtype=pl.List(_CODE))
    return PatternSet(patterns, pl.DataFrame({"pattern": patterns}, schema={"pattern": pl.String}), payload)


def _word_map(vocabulary: Vocabulary) -> tuple[list[str], list[str]]:
    """Return the synonym map's one-word terms (under MedAISure's normalisation; the spec's text is mapped)."""
    if vocabulary.normalisation != "medaisure":
        return [], []
    single = vocabulary.synonyms.filter(~pl.col("term").str.contains(" ", literal=True))
    return single["term"].to_list(), single["canonical"].to_list()


def phrase_word_entities(texts: pl.LazyFrame, column: str, out: str, vocabulary: Vocabulary) -> pl.LazyFrame:
    """Add ``out`` to ``texts``: the codes of the entities found in spaced texts ``column``, each once.

    The codes are those of :func:`entity_codes`; a null text is empty.
    """
    phrases, words, _ = _codes(vocabulary)
    rest = pl.col("_rest")
    frame = texts.with_columns(pl.col(column).fill_null(EMPTY).alias("_rest"))
    for number, (_, needle) in enumerate(phrases):
        # Both on the text before this phrase's removal: found, then removed.
        frame = frame.with_columns(
            rest.str.contains(needle, literal=True).alias(f"_phrase_{number}"),
            rest.str.replace_all(needle, " ", literal=True),
        )
    found = [pl.when(pl.col(f"_phrase_{n}")).then(pl.lit(code, _CODE)) for n, (code, _) in enumerate(phrases)]
    # The phrases replaced by a space, the text still starts and ends with one (the words' boundary).
    codes = words.payloads(words.find(rest, overlapping=True))
    if found:
        codes = pl.concat_list(pl.concat_list(found).list.drop_nulls(), codes)
    return frame.with_columns(codes.list.unique().alias(out)).drop(
        "_rest", *(f"_phrase_{n}" for n in range(len(phrases)))
    )


def with_phrase_word_counts(
    texts: pl.LazyFrame, prediction: str, reference: str, vocabulary: Vocabulary
) -> pl.LazyFrame:
    r"""Add ``intersection_<c>`` = :math:`|P_c \cap R_c|` and ``union_<c>`` = :math:`|P_c \cup R_c|` to ``texts``.

    The entities are found by phrases then words; ``prediction`` and ``reference`` are spaced texts
    (null is empty).
    """
    p, r = pl.col("_entities_p"), pl.col("_entities_r")
    frame = phrase_word_entities(texts, prediction, "_entities_p", vocabulary)
    frame = phrase_word_entities(frame, reference, "_entities_r", vocabulary)
    kind = pl.element() % _STRIDE
    return frame.with_columns(
        (part.list.eval(kind == index).list.sum().cast(pl.UInt32).alias(f"{name}_{c}"))
        for index, c in enumerate(CATEGORIES)
        for name, part in (("intersection", p.list.set_intersection(r)), ("union", p.list.set_union(r)))
    ).drop("_entities_p", "_entities_r")
