r"""Where a run's messages set a diagnosis aside: ruled out by a pattern, or mentioned near a word of consideration.

The two searches behind the AE label of :func:`~mas_eval.metrics.diagnosis.labels.classify`:
:func:`excluded_in_debate` (the metrics guide's patterns, ``"spec"`` and ``"lddx-v6"``) and
:func:`considered_in_transcript` (Local-DDx v8's transcript search, ``"lddx-v8"``). Both pair
every message with its run's diagnoses in one join and test the pairs with string expressions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import polars as pl

from mas_eval.data.schema import RUN_KEY

__all__ = [
    "CONSIDERATION_WINDOW",
    "CONSIDERATION_WORDS",
    "PLACEHOLDER",
    "considered_in_transcript",
    "excluded_in_debate",
]

#: Words that, near a mention of a ground-truth diagnosis in any response, make it appropriately excluded
#: under ``"lddx-v8"`` (Local-DDx v8's transcript search: words of exclusion, of tiering, and of
#: consideration, "differential", "possible" ... alike).
CONSIDERATION_WORDS = (
    "less likely than", "more suggestive of", "ruled out due to", "excluded", "unlikely", "tier 4", "tier four",
    "demoted", "not supported by",
    "considered", "evaluated", "assessed", "discussed", "analyzed", "tier 1", "tier 2", "tier 3", "tier one",
    "tier two", "tier three", "differential", "possible", "potential", "candidate",
)  # fmt: skip
#: Characters on each side of a mention that the word must lie within (``"lddx-v8"``).
CONSIDERATION_WINDOW = 100
#: What an exclusion pattern holds once, where the regex-escaped diagnosis goes.
PLACEHOLDER = "{dx}"
#: A part of an exclusion pattern on one side of ``{dx}`` that is a plain phrase, with ``.*`` before or after it.
_PHRASE = re.compile(r"(?:\.\*)?([A-Za-z0-9 ]*)(?:\.\*)?")


def _phrases_needed(patterns: tuple[str, ...]) -> list[list[str]] | None:
    """Per pattern, the plain phrases a text holds (any case) wherever the pattern matches in it.

    A pattern's parts before and after ``{dx}`` are each an alternative's consecutive pieces, so
    where the pattern matches, each part matches too, by itself; a part that is a plain phrase
    with ``.*`` around it (``"exclude.*"``) matches where the phrase does. ``None`` when some
    pattern has no such part (``"{dx}"``, or a part with other syntax): then any text may match.
    """
    needed = []
    for pattern in patterns:
        parts = [_PHRASE.fullmatch(part) for part in pattern.split(PLACEHOLDER)]
        phrases = [part[1] for part in parts if part is not None and part[1]]
        if None in parts or not phrases:
            return None
        needed.append(phrases)
    return needed


def _may_rule_out(text: pl.Expr, patterns: tuple[str, ...]) -> pl.Expr | None:
    """Return False for a text in which none of ``patterns`` can match, whatever the diagnosis; None if unknown."""
    needed = _phrases_needed(patterns)
    if needed is None:
        return None
    # Phrases of letters, digits and spaces: literal in a regex, matched in any case as the patterns are.
    alone = sorted({phrases[0] for phrases in needed if len(phrases) == 1})
    tests = [text.str.contains(f"(?i:{'|'.join(alone)})")] if alone else []
    tests += [
        pl.all_horizontal(text.str.contains(f"(?i:{p})") for p in phrases) for phrases in needed if len(phrases) > 1
    ]
    return pl.any_horizontal(tests)


def excluded_in_debate(truth: pl.DataFrame, debate: pl.LazyFrame, patterns: tuple[str, ...]) -> pl.DataFrame:
    """Return the (run, ground truth) pairs a debate message rules out by one of ``patterns`` (one line, any case).

    Examples
    --------
    >>> truth = pl.DataFrame({"run_id": ["r1", "r1"], "diagnosis": ["Gout", "Sepsis"]})
    >>> debate = pl.LazyFrame({"run_id": ["r1"], "text": ["Sepsis stays; we can rule out gout."]})
    >>> excluded_in_debate(truth, debate, ("rule out.*{dx}",)).rows()
    [('r1', 'Gout')]
    """
    escaped = pl.col("diagnosis").str.escape_regex()
    parts: list[pl.Expr] = [pl.lit("(?i)(?:")]
    for i, pattern in enumerate(patterns):
        before, after = pattern.split(PLACEHOLDER)
        parts += [pl.lit(("|" if i else "") + before), escaped, pl.lit(after)]
    parts.append(pl.lit(")"))
    text = pl.col("text")
    # Each message is first tested once for what every pattern needs whatever the diagnosis; only
    # those that pass are paired with the run's diagnoses. The pairs go in diagnosis order, so that
    # the regex of one diagnosis serves its pairs one after another (Polars keeps recent ones):
    # eagerly, as a lazy query drops the sort and tests the pairs inside the join (docs/performance.md).
    may = _may_rule_out(text, patterns)
    messages = debate.select(RUN_KEY, "text").filter(text.is_not_null() if may is None else may).collect()
    pairs = truth.sort("diagnosis").join(messages, on=RUN_KEY, maintain_order="left")
    return pairs.filter(text.str.contains(pl.concat_str(parts))).select(RUN_KEY, "diagnosis").unique()


def considered_in_transcript(
    truth: pl.DataFrame, messages: pl.LazyFrame, words: Sequence[str] = CONSIDERATION_WORDS
) -> pl.DataFrame:
    r"""Return the (run, ground truth) pairs some message of the run mentions with one of ``words`` nearby.

    A mention is the diagnosis, lowercased, found in a message's lowercased text (each
    non-overlapping occurrence); it counts when one of ``words`` is in the text from
    :data:`CONSIDERATION_WINDOW` characters before the mention to as many after it (Local-DDx
    v8's ``TranscriptSearchEngine``: the context it quotes around a mention), the mention
    included. A window does not reach into another message; an empty diagnosis is mentioned
    nowhere.

    Splitting a text at the diagnosis gives the pieces between mentions: mention :math:`i`
    starts at :math:`\sum_{j \le i} |p_j| + i \cdot |dx|`, and its window is one slice, searched
    for all ``words`` at once.

    Examples
    --------
    >>> truth = pl.DataFrame({"run_id": ["r1", "r1"], "diagnosis": ["Gout", "Sepsis"]})
    >>> messages = pl.LazyFrame({"run_id": ["r1"], "text": ["Sepsis is a possible cause."]})
    >>> considered_in_transcript(truth, messages).rows()
    [('r1', 'Sepsis')]
    """
    row, piece, start = "_row", "_piece", "_start"
    dx, text = pl.col("_dx"), pl.col("_text")
    length = dx.str.len_chars()
    mentioned = (
        truth.lazy()
        .with_columns(_dx=pl.col("diagnosis").str.to_lowercase())
        # Each message lowercased once, before it is paired with each of its run's diagnoses.
        .join(messages.select(RUN_KEY, _text=pl.col("text").str.to_lowercase()).drop_nulls(), on=RUN_KEY)
        .filter((dx != "") & text.str.contains(dx, literal=True))
        .with_row_index(row)
        .with_columns(text.str.split(dx).list.eval(pl.element().str.len_chars()).alias(piece))
        .explode(piece)
    )
    nth = pl.int_range(pl.len()).over(row)
    at = pl.col(piece).cum_sum().over(row) + nth * length
    windows = (
        mentioned.with_columns(pl.len().over(row).alias("_pieces"), nth.alias("_nth"), at.alias(start))
        .filter(pl.col("_nth") < pl.col("_pieces") - 1)  # the piece after the last mention starts no mention
        .with_columns((pl.col(start) - CONSIDERATION_WINDOW).clip(lower_bound=0).alias("_from"))
        .select(
            RUN_KEY,
            "diagnosis",
            text.str.slice(pl.col("_from"), pl.col(start) + length + CONSIDERATION_WINDOW - pl.col("_from")).alias(
                "_window"
            ),
        )
    )
    return (
        windows.filter(pl.col("_window").str.contains_any(list(words))).select(RUN_KEY, "diagnosis").unique().collect()
    )
