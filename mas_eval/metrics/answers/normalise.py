r"""Normalised answer text (the MedAISure metrics overview, "Normalize inputs/outputs"), and matching on it.

Every answer text goes through the same steps, as Polars string expressions over all answers
at once: lowercase; a possessive ``'s`` dropped; every separator character (whitespace and
punctuation, :data:`SEPARATORS`) a word boundary; then the synonym map
(:class:`~mas_eval.metrics.answers.vocabulary.Vocabulary`) rewrites terms to their canonical
names. What remains is a sequence of words; :func:`normalise_text` returns it with single spaces.

Matching runs on a *spaced* form of that text, in which every word carries a space on each side
of its own (``"  sepsis  give  iv  fluids  "``): a term written the same way (``" iv  fluids "``)
then occurs in it exactly where its words occur in the text on word boundaries, so one
Aho–Corasick pass over all terms at once (``str.replace_many``, ``str.extract_many``) finds every
term on word boundaries, and consecutive terms do not compete for the space between them.

>>> import polars as pl
>>> s = pl.Series(["Sepsis; give IV-fluids\tand insulin!", "Crohn’s disease", "  ", None])
>>> pl.select(normalise_text(s)).to_series().to_list()
['sepsis give iv fluids and insulin', 'crohn disease', '', None]
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import polars as pl

__all__ = [
    "APOSTROPHES",
    "DELETED",
    "EMPTY",
    "SEPARATORS",
    "WHITESPACE",
    "Matching",
    "Normalisation",
    "as_written",
    "canonical",
    "longest_first",
    "medaisure_text",
    "named_as",
    "normalise_text",
    "pattern",
    "pattern_of",
    "spaced",
]

#: How terms (lexicon entries, markers, facts, the fallback's containment) are found in a text:
#: on word boundaries (the document) or as substrings (MedAISure's code, where "ct" occurs in "doctor").
Matching = Literal["word_boundary", "substring"]
#: How answer texts are normalised: the document's words (:func:`normalise_text`, then the
#: synonym map) or MedAISure's string (:func:`medaisure_text`, no synonym map on the text).
Normalisation = Literal["spec", "medaisure"]

#: Characters that separate words: whitespace, ASCII punctuation and symbols, and the common
#: typographic ones. Every other character (letters, digits, other symbols) belongs to a word.
SEPARATORS: tuple[str, ...] = (
    *" \t\n\r\f\v\u00a0\u2009\u202f\u2028\u2029",
    *"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
    *"\u2018\u2019\u201c\u201d\u2010\u2011\u2012\u2013\u2014\u2015\u2026\u2022\u00b7\u2032\u2033\u00ab\u00bb"
    "\u00a1\u00bf\u00a7\u00b6\u00b0\u00b1\u00d7\u00f7",
)
#: Python's whitespace (``str.isspace``, ``re``'s ``\\s``): what MedAISure's normalisation collapses.
WHITESPACE = "\t\n\v\f\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
#: The 15 characters MedAISure's normalisation deletes (after collapsing whitespace).
DELETED = ".,!?;:-()[]{}'\""
#: Apostrophes whose ``s`` before a separator (or the end) is a possessive, dropped with them.
APOSTROPHES = ("'", "\u2019")
#: The spaced form of a text with no words.
EMPTY = "  "

_BOUNDARY = "  "
# A possessive ('s and the separator after it) comes before the separators it starts with: with
# leftmost-first matching the longer pattern wins where both start.
_POSSESSIVES = [f"{a}s{sep}" for a in APOSTROPHES for sep in SEPARATORS]
# Pairs of separators (", ", ". ", ") "...) replaced at once: the same result as one by one, with
# fewer replacements and runs to collapse (docs/performance.md). Apostrophes stay out of pairs, so
# that no pair can swallow the start of a possessive.
_PAIRS = [a + b for a in SEPARATORS for b in SEPARATORS if a not in APOSTROPHES and b not in APOSTROPHES]
_PATTERNS = [*_POSSESSIVES, *_PAIRS, *SEPARATORS]


def spaced(expr: pl.Expr) -> pl.Expr:
    """Texts in the spaced form matching runs on: ``"  w1  w2  "``, every word between spaces of its own.

    Notes
    -----
    Lowercase; a space added at both ends (so that a possessive at the end is followed by a
    separator); one Aho–Corasick pass replaces every possessive ``'s`` + separator, every pair
    of other separators and every remaining separator by two spaces; runs of three or more
    spaces become two. The result starts
    and ends with two spaces and has exactly two between words; a text without words is
    :data:`EMPTY`, a null stays null. The expression keeps the name of ``expr``.

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval.metrics.answers.normalise import canonical, spaced
    >>> texts = pl.Series(["Chest pain, dyspnoea.", None])
    >>> pl.select(spaced(texts)).to_series().to_list()
    ['  chest  pain  dyspnoea  ', None]
    >>> pl.select(canonical(spaced(texts))).to_series().to_list()
    ['chest pain dyspnoea', None]
    """
    text = (pl.lit(" ") + expr.str.to_lowercase() + pl.lit(" ")).str.replace_many(_PATTERNS, [_BOUNDARY], leftmost=True)
    return named_as(text.str.replace_all("   +", _BOUNDARY), expr)


def named_as(result: pl.Expr, expr: pl.Expr) -> pl.Expr:
    """Name ``result`` as ``expr`` where that has a name.

    The padding literal would otherwise name it "literal", and two normalised columns in one
    ``select`` would clash.
    """
    name = expr.name if isinstance(expr, pl.Series) else expr.meta.output_name(raise_if_undetermined=False)
    return result if name is None else result.alias(name)


def canonical(spaced_text: pl.Expr) -> pl.Expr:
    """Return the normalised text of a spaced form: its words separated by single spaces.

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval.metrics.answers.normalise import canonical
    >>> pl.select(canonical(pl.lit("  heart  failure  "))).item()
    'heart failure'
    """
    return spaced_text.str.strip_chars(" ").str.replace_all(_BOUNDARY, " ", literal=True)


def normalise_text(expr: pl.Expr) -> pl.Expr:
    r"""Normalised answer texts: lowercase words separated by single spaces (no synonym map).

    Parameters
    ----------
    expr
        A string expression.

    Returns
    -------
    pl.Expr
        The words of each text, lowercase, joined by single spaces; ``""`` for a text without
        words, null for null.

    Notes
    -----
    In order:

    1. lowercase (Unicode);
    2. an apostrophe (``'`` or ``’``) followed by ``s`` and then a separator or the end of the
       text is dropped with the ``s`` (possessive: ``Crohn's`` → ``crohn``; ``it's`` → ``it``);
    3. every character of :data:`SEPARATORS` (whitespace, ASCII punctuation and symbols,
       typographic quotes, dashes, bullets, ``°``, ``±``, ``×``) separates words; every other
       character belongs to a word (``x-ray`` → ``x ray``, ``mg/dL`` → ``mg dl``).

    Letters are not folded (``é`` stays ``é``) and spellings are not rewritten: British
    spellings of lexicon terms are rows of the synonym map. The synonym map is the next step
    (:meth:`~mas_eval.metrics.answers.vocabulary.Vocabulary.normalise`). The function is idempotent.

    Examples
    --------
    >>> pl.select(normalise_text(pl.lit("WBC 14.2 x10^9/L -- the patient's lactate: 4.1"))).item()
    'wbc 14 2 x10 9 l the patient lactate 4 1'
    """
    return canonical(spaced(expr))


# A whitespace run becomes one space; a lone plain space is one already. Matching only runs of two
# or more, or a lone other whitespace character, leaves the text's ordinary spaces alone (the
# same result as replacing every run ``[...]+``, faster: docs/performance.md).
_WHITESPACE_RUN = f"[{WHITESPACE}]{{2,}}|[{WHITESPACE.replace(' ', '')}]"
_DELETED_CLASS = "[" + "".join("\\" + c if c in "-[]" else c for c in DELETED) + "]"


def as_written(expr: pl.Expr) -> pl.Expr:
    """Lowercase, turn every whitespace run into one space and strip both ends.

    That is how terms are used under ``normalisation="medaisure"`` (MedAISure compares its terms,
    as written, with the normalised text).

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval.metrics.answers.normalise import as_written
    >>> pl.select(as_written(pl.lit("  Heart   Failure "))).item()
    'heart failure'
    """
    return expr.str.to_lowercase().str.replace_all(_WHITESPACE_RUN, " ").str.strip_chars(" ")


def medaisure_text(expr: pl.Expr) -> pl.Expr:
    r"""MedAISure's normalised text: :func:`as_written`, then its 15 characters :data:`DELETED`.

    The characters are deleted, not replaced by a space, and after the whitespace step, so a text
    may keep two spaces in a row or one at an end, and its words are what splitting on spaces leaves.

    >>> s = pl.Series(["X-ray:  chest - pain ", "(fever)", "\u00a0( cough )\t", None])
    >>> pl.select(medaisure_text(s)).to_series().to_list()
    ['xray chest  pain', 'fever', ' cough ', None]
    """
    return as_written(expr).str.replace_all(_DELETED_CLASS, "")


def pattern(term: str, matching: Matching = "word_boundary", gap: str = _BOUNDARY) -> str:
    """Return the string that occurs in a spaced text exactly where normalised ``term`` occurs in it.

    On word boundaries: the term's words between spaces of their own (``"iv fluids"`` →
    ``" iv  fluids "``); as a substring: without the outer spaces (``"iv  fluids"``). ``gap``
    is what separates words in the spaced text: two spaces, or one under MedAISure's normalisation.

    >>> pattern("iv fluids"), pattern("ct", "substring"), pattern("iv fluids", "substring", " ")
    (' iv  fluids ', 'ct', 'iv fluids')
    """
    inner = term.replace(" ", gap)
    return f" {inner} " if matching == "word_boundary" else inner


def pattern_of(terms: pl.Expr, matching: Matching = "word_boundary", gap: str = _BOUNDARY) -> pl.Expr:
    """:func:`pattern` of normalised ``terms``, as an expression."""
    inner = terms.str.replace_all(" ", gap, literal=True) if gap != " " else terms
    return pl.lit(" ") + inner + pl.lit(" ") if matching == "word_boundary" else inner


def longest_first(patterns: Iterable[str]) -> list[str]:
    """Return the unique ``patterns``, longest first (then in code-point order).

    Aho–Corasick's leftmost-first matching takes, among the matches that start leftmost, the
    pattern listed first: listed longest first, that is the longest one, so a multi-word term
    wins over the terms inside it ("heart failure" over "failure").

    Examples
    --------
    >>> from mas_eval.metrics.answers.normalise import longest_first
    >>> longest_first(["mi", "acute mi", "mi", "copd"])
    ['acute mi', 'copd', 'mi']
    """
    return sorted(set(patterns), key=lambda p: (-len(p), p))
