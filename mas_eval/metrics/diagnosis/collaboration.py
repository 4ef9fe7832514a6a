r"""Collaboration metrics of a diagnostic team (the LDDx v6 metrics guide): TempoScore per round, credibility per agent.

Both are keyword counts over the transcript, computed with Polars string expressions over
every message of every run at once. The keyword lists, weights and thresholds are the guide's
("TempoScore", "Dr. Reed's Assessment & Credibility Score"). Under ``"presence"`` one
multi-pattern (Aho-Corasick) pass over each text finds all the keywords of both metrics
(:func:`keyword_scan`); the scoring suite scans the transcript once for both.

How a keyword "hit" is counted is a parameter: ``"presence"`` counts each keyword at most once
in an agent's text of a round (its messages of the round joined by line breaks; Local-DDx's
code, which reproduces the credibility scores its files record), ``"occurrences"`` counts
every occurrence.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Literal

import polars as pl

from mas_eval.data.vocabulary import DEBATE, INDEPENDENT
from mas_eval.metrics.ordered import ordered_aggregates

__all__ = [
    "ACTION_KEYWORDS",
    "HIGH_VALUE_KEYWORDS",
    "INSIGHT_KEYWORDS",
    "KEYWORDS",
    "STRUCTURED_MARKERS",
    "SYNTHESIS_KEYWORDS",
    "VALENCE_KEYWORDS",
    "Counting",
    "credibility",
    "keyword_hits",
    "keyword_scan",
    "round_credibility",
    "tempo_scores",
]

Counting = Literal["presence", "occurrences"]

#: A debate response with this many distinct reasoning keywords is high-value.
HIGH_VALUE_KEYWORDS = (
    "evidence", "support", "challenge", "disagree", "alternative", "clinical reasoning", "risk factor",
    "contradict", "position", "recommendations", "differential",
)  # fmt: skip
HIGH_VALUE_MIN = 3
#: Any of these (case-sensitive) makes a debate response high-value.
STRUCTURED_MARKERS = (
    "**Your Position**", "**Clinical Evidence**", "**Reasoning**", "**Alternative Considerations**",
    "**Final Recommendations**",
)  # fmt: skip
INSIGHT_KEYWORDS = (
    "evidence", "diagnosis", "symptoms", "findings", "clinical", "pathophysiology", "risk factors", "differential",
    "presentation",
)  # fmt: skip
SYNTHESIS_KEYWORDS = ("integrat", "combin", "togeth", "consid", "balanc", "weigh")
ACTION_KEYWORDS = ("recommend", "suggest", "should", "need", "action", "next", "plan")
VALENCE_KEYWORDS = (
    "evidence", "research", "studies", "guidelines", "consider", "alternative", "question", "challenge", "disagree",
)  # fmt: skip

#: Every keyword above once, in this order: a message's keyword bits (:func:`_keyword_bits`) hold bit
#: ``i`` when its lowercased text holds ``KEYWORDS[i]``.
KEYWORDS = tuple(
    dict.fromkeys((*HIGH_VALUE_KEYWORDS, *INSIGHT_KEYWORDS, *SYNTHESIS_KEYWORDS, *ACTION_KEYWORDS, *VALENCE_KEYWORDS))
)
#: The characters other than ASCII whose lowercase holds an ASCII letter (Unicode's lowercase
#: mapping, which ``str.to_lowercase`` applies): the Kelvin sign is ``k``; ``İ`` is ``i`` and a
#: combining dot above, so its ``i`` can only end a match of an ASCII keyword.
_KELVIN, _DOTTED_I = "\u212a", "\u0130"

#: Points per hit, and the cap of each component.
INSIGHT_POINTS, SYNTHESIS_POINTS, ACTION_POINTS, COMPONENT_CAP = 2.5, 4.0, 3.0, 20.0
#: Base score weights: (2.5 I + 1.5 S + 1.0 A) x valence.
INSIGHT_WEIGHT, SYNTHESIS_WEIGHT, ACTION_WEIGHT = 2.5, 1.5, 1.0


def keyword_hits(text: pl.Expr, keywords: Sequence[str], counting: Counting = "presence") -> pl.Expr:
    """Hits of ``keywords`` (literal substrings) in ``text``: distinct keywords present, or all occurrences.

    >>> frame = pl.DataFrame({"text": ["evidence, more evidence; a challenge", "nothing"]})
    >>> frame.select(
    ...     keyword_hits(pl.col("text"), ["evidence", "challenge"]).alias("presence"),
    ...     keyword_hits(pl.col("text"), ["evidence", "challenge"], "occurrences").alias("occurrences"),
    ... ).rows()
    [(2, 3), (0, 0)]
    """
    if counting == "presence":
        parts = [text.str.contains(word, literal=True).cast(pl.UInt32) for word in keywords]
    else:
        parts = [text.str.count_matches(word, literal=True).cast(pl.UInt32) for word in keywords]
    return pl.sum_horizontal(parts)


def _spellings(word: str) -> list[str]:
    """Return the strings, up to ASCII case, whose lowercase is ``word`` (lowercase ASCII) or ends with it.

    Each ``k`` may be the Kelvin sign, a final ``i`` may be ``İ`` (see :data:`_KELVIN`): so a
    case-insensitive search for these in a text finds ``word`` where the lowercased text holds it.
    """
    options = [(c, _KELVIN) if c == "k" else (c,) for c in word]
    if word.endswith("i"):
        options[-1] = (*options[-1], _DOTTED_I)
    # A product over the letters of one keyword of a fixed list: a handful of spellings at most.
    return ["".join(letters) for letters in itertools.product(*options)]


def _keyword_bits(text: pl.Expr, keywords: Sequence[str] = KEYWORDS) -> pl.Expr:
    """Which ``keywords`` (lowercase ASCII, at most 64) the lowercased ``text`` holds: bit ``i`` for ``keywords[i]``.

    ``UInt64``, null for a null text. One multi-pattern (Aho-Corasick) pass over the text,
    overlapping matches included, ASCII case ignored, finds what a literal search of each keyword
    in the lowercased text finds, without lowercasing the text: :func:`_spellings` adds the
    spellings of a keyword that lowercase to it through a character other than ASCII.
    """
    spellings = {spelling: 1 << i for i, word in enumerate(keywords) for spelling in _spellings(word)}
    bits = {spelling.lower(): bit for spelling, bit in spellings.items()}
    found = text.str.extract_many(list(spellings), ascii_case_insensitive=True, overlapping=True)
    # A found string, lowercased, is one of the keywords (or a spelling of it lowercased, as Python does):
    # its bit. The bits of a message are the OR of those of its matches, null for none (0 here).
    word = pl.element().str.to_lowercase().replace_strict(bits, return_dtype=pl.UInt64)
    held = found.list.eval(word.bitwise_or()).list.first().fill_null(0)
    return pl.when(text.is_not_null()).then(held)


def _held(bits: pl.Expr, words: Sequence[str], keywords: Sequence[str] = KEYWORDS) -> pl.Expr:
    """How many of ``words`` the keyword ``bits`` (of ``keywords``) hold (``UInt32``)."""
    mask = sum(1 << keywords.index(word) for word in words)
    return (bits & pl.lit(mask, dtype=pl.UInt64)).bitwise_count_ones().cast(pl.UInt32)


def keyword_scan(messages: pl.LazyFrame) -> pl.LazyFrame:
    """``messages`` with what :func:`tempo_scores` and :func:`round_credibility` read of each text.

    Adds ``_keywords`` (``UInt64``: bit ``i`` set when the lowercased text holds
    ``KEYWORDS[i]``), ``_marked`` (the text holds a structured marker) and ``_chars`` (its length
    in characters), all null for a null text. Both functions scan the messages themselves when
    given them without these columns; scanned once and passed to both, the transcript is read once.
    """
    text = pl.col("text")
    return messages.with_columns(
        _keywords=_keyword_bits(text),
        _marked=text.str.contains_any(list(STRUCTURED_MARKERS)),
        _chars=text.str.len_chars(),
    )


def _scanned(messages: pl.LazyFrame) -> pl.LazyFrame:
    """``messages`` as :func:`keyword_scan` gives them, scanning them unless that is done."""
    return messages if "_keywords" in messages.collect_schema() else keyword_scan(messages)


def tempo_scores(
    messages: pl.LazyFrame,
    ddx: pl.LazyFrame,
    *,
    independent_round: str = INDEPENDENT,
    debate_round: str = DEBATE,
    count_mentions: bool = False,
) -> pl.LazyFrame:
    r"""TempoScore of every round of every run.

    Parameters
    ----------
    messages
        ``run_id, round, agent_id, text``: one row per response.
    ddx
        ``run_id, round, agent_id, diagnosis, mentions``: the diagnoses stated in each round
        (``mentions``: how often the agent's list names it; null counts as 1).
    independent_round, debate_round
        The names of the two rounds scored by their own rule; every other round scores 1.
    count_mentions
        Count every stated diagnosis of the independent round, repeats included (Local-DDx's
        code), instead of the unique diagnoses (the document).

    Returns
    -------
    polars.LazyFrame
        ``run_id, round, participants, unique_diagnoses, high_value_responses,
        symbolic_curvature, tempo_score``, sorted by run and round.

    Notes
    -----
    Independent round: :math:`1 + 0.1 \cdot D`, with :math:`D` the diagnoses stated.
    Debate round: :math:`\min(\kappa + 0.5, 2.5)` with the symbolic curvature
    :math:`\kappa = H / P`, :math:`H` the high-value responses (at least 3 distinct reasoning
    keywords, case-insensitive, or a structured marker) and :math:`P` the participants (agents
    who responded). Other rounds: 1.
    """
    high_value = (_held(pl.col("_keywords"), HIGH_VALUE_KEYWORDS) >= HIGH_VALUE_MIN) | pl.col("_marked")
    # Only the debate's responses are counted: the other rounds' count is null.
    messages = _scanned(messages)
    debated = (
        messages.filter(pl.col("round") == debate_round)
        .group_by("run_id", "round")
        .agg(high_value_responses=high_value.sum().cast(pl.Int64))
    )
    per_round = (
        messages.group_by("run_id", "round")
        .agg(participants=pl.col("agent_id").n_unique().cast(pl.Int64))
        .join(debated, on=["run_id", "round"], how="left")
    )
    every_mention = pl.col("mentions").fill_null(1).sum()
    counted = every_mention if count_mentions else pl.col("diagnosis").str.to_lowercase().str.strip_chars().n_unique()
    diagnoses = (
        ddx.filter(pl.col("round") == independent_round)
        .group_by("run_id", "round")
        .agg(unique_diagnoses=counted.cast(pl.Int64))
    )
    is_debate = pl.col("round") == debate_round
    curvature = pl.when(is_debate & (pl.col("participants") > 0)).then(
        pl.col("high_value_responses") / pl.col("participants")
    )
    return (
        per_round.join(diagnoses, on=["run_id", "round"], how="left")
        .with_columns(
            unique_diagnoses=pl.when(pl.col("round") == independent_round).then(
                pl.col("unique_diagnoses").fill_null(0)
            ),
            high_value_responses=pl.when(is_debate).then(pl.col("high_value_responses")),
            symbolic_curvature=curvature,
        )
        .with_columns(
            tempo_score=pl.when(pl.col("round") == independent_round)
            .then(1.0 + 0.1 * pl.col("unique_diagnoses"))
            .when(is_debate)
            .then(pl.min_horizontal(pl.col("symbolic_curvature").fill_null(0.0) + 0.5, pl.lit(2.5)))
            .otherwise(1.0)
        )
        .select(
            "run_id",
            "round",
            "participants",
            "unique_diagnoses",
            "high_value_responses",
            "symbolic_curvature",
            "tempo_score",
        )
        .sort("run_id", "round")
    )


def _capped(points: float, hits: pl.Expr) -> pl.Expr:
    return pl.min_horizontal(points * hits.cast(pl.Float64), pl.lit(COMPONENT_CAP))


def round_credibility(
    messages: pl.LazyFrame,
    ddx: pl.LazyFrame,
    *,
    structured_round: str = INDEPENDENT,
    counting: Counting = "presence",
    left_out: Sequence[str] = (),
) -> pl.LazyFrame:
    r"""Each agent's credibility components in each round it spoke in.

    Returns ``run_id, agent_id, round, insight, synthesis, action, valence, score``; the rounds
    named in ``left_out`` are not scored (Local-DDx v8 leaves out the debate).

    Notes
    -----
    Text path: :math:`I = \min(2.5 h_I, 20)`, :math:`S = \min(4 h_S, 20)`,
    :math:`A = \min(3 h_A, 20)` from the hits of the insight, synthesis and action keywords in
    the lower-cased text. Structured path (the ``structured_round``, for an agent whose
    diagnoses there carry evidence lists): with :math:`n` diagnoses and :math:`\bar e` evidence
    items per diagnosis, :math:`I = \min(3n + 2\bar e, 20)`, :math:`S = \min(4n, 20)`,
    :math:`A = 20` if the first-ranked diagnosis has at least 2 evidence items, else 10; of
    diagnoses the agent ranked equal, the first is the one whose text sorts first (code-point
    order), so the score does not depend on the order of the rows.
    Valence from the hits :math:`v` of the valence keywords and the text's length :math:`L` in
    characters: 1.2 if :math:`v \ge 4` and :math:`L > 200`; 1.0 if :math:`v \ge 2` and
    :math:`L > 100`; 0.8 if :math:`L > 50`; else 0.6. Score
    :math:`(2.5 I + 1.5 S + 1.0 A) \times` valence.
    """
    # An agent's text in a round is its messages joined by line breaks. No keyword holds a line
    # break, so a keyword is present in that text when it is in one of its messages, and occurs in
    # it as often as in all of them: per-message indicators aggregated per (agent, round) give the
    # same hits without building the joined strings (a copy of the whole transcript).
    lists = {"insight": INSIGHT_KEYWORDS, "synthesis": SYNTHESIS_KEYWORDS, "action": ACTION_KEYWORDS,
             "valence": VALENCE_KEYWORDS}  # fmt: skip
    scored = messages.filter(~pl.col("round").is_in(list(left_out))) if left_out else messages
    # Null messages are left out of the joined text, as str.join leaves them out.
    length = (pl.col("_chars").sum() + (pl.col("_chars").count().cast(pl.Int64) - 1).clip(0)).alias("length")
    if counting == "presence":
        # The keywords an agent's text of a round holds: those any of its messages holds.
        texts = (
            _scanned(scored)
            .group_by("run_id", "agent_id", "round")
            .agg(length, pl.col("_keywords").bitwise_or().fill_null(0))
        )

        def hits(name: str) -> pl.Expr:
            return _held(pl.col("_keywords"), lists[name])
    else:
        keywords = list(dict.fromkeys(word for words in lists.values() for word in words))
        column = {word: f"_k{i}" for i, word in enumerate(keywords)}
        lowered = pl.col("_lowered")
        found = [lowered.str.count_matches(word, literal=True).alias(column[word]) for word in keywords]
        texts = (
            scored.select(
                "run_id",
                "agent_id",
                "round",
                _chars=pl.col("text").str.len_chars(),
                _lowered=pl.col("text").str.to_lowercase(),
            )
            .select("run_id", "agent_id", "round", "_chars", *found)
            .group_by("run_id", "agent_id", "round")
            .agg(length, *(pl.col(column[word]).sum().cast(pl.UInt32) for word in keywords))
        )

        def hits(name: str) -> pl.Expr:
            return pl.sum_horizontal(pl.col(column[word]) for word in lists[name])

    length, valence_hits = pl.col("length"), hits("valence")
    structured = (
        ddx.filter((pl.col("round") == structured_round) & pl.col("evidence").is_not_null())
        .with_columns(_items=pl.col("evidence").list.len())  # the counts are sorted, not the lists
        .group_by("run_id", "agent_id", "round")
        .agg(
            n=pl.len(),
            evidence_total=pl.col("_items").sum(),
            # Equal ranks go to the diagnosis that sorts first (unique per agent and round, as
            # the key), not to whichever row came first.
            first_evidence=pl.col("_items").sort_by("rank", "diagnosis").first(),
        )
    )
    n, average = pl.col("n").cast(pl.Float64), pl.col("evidence_total") / pl.col("n")
    has_structure = pl.col("n").is_not_null() & (pl.col("n") > 0)
    return (
        texts.join(structured, on=["run_id", "agent_id", "round"], how="left")
        .with_columns(
            insight=pl.when(has_structure)
            .then(pl.min_horizontal(3 * n + 2 * average, pl.lit(COMPONENT_CAP)))
            .otherwise(_capped(INSIGHT_POINTS, hits("insight"))),
            synthesis=pl.when(has_structure)
            .then(pl.min_horizontal(4 * n, pl.lit(COMPONENT_CAP)))
            .otherwise(_capped(SYNTHESIS_POINTS, hits("synthesis"))),
            action=pl.when(has_structure)
            .then(pl.when(pl.col("first_evidence") >= 2).then(20.0).otherwise(10.0))
            .otherwise(_capped(ACTION_POINTS, hits("action"))),
            valence=pl.when((valence_hits >= 4) & (length > 200))
            .then(1.2)
            .when((valence_hits >= 2) & (length > 100))
            .then(1.0)
            .when(length > 50)
            .then(0.8)
            .otherwise(0.6),
        )
        .with_columns(
            score=(
                INSIGHT_WEIGHT * pl.col("insight")
                + SYNTHESIS_WEIGHT * pl.col("synthesis")
                + ACTION_WEIGHT * pl.col("action")
            )
            * pl.col("valence")
        )
        .select("run_id", "agent_id", "round", "insight", "synthesis", "action", "valence", "score")
        .sort("run_id", "agent_id", "round")
    )


def credibility(rounds: pl.LazyFrame) -> pl.LazyFrame:
    """Each agent's credibility: the mean of its round scores, and of each component.

    ``rounds`` is :func:`round_credibility`'s output; returns ``run_id, agent_id, insight,
    synthesis, action, valence, credibility``, sorted by run and agent.
    """
    # Rounds come sorted by (run, agent, round): each mean adds its terms in round order.
    components = {name: pl.col(name) for name in ("insight", "synthesis", "action", "valence")}
    return ordered_aggregates(
        rounds, ["run_id", "agent_id"], means={**components, "credibility": pl.col("score")}
    ).sort("run_id", "agent_id")
