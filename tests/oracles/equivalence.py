"""Diagnosis equivalence one pair at a time: read it next to ``match_pairs``' Notes.

Plain Python (string methods, ``re``, sets, dicts) for what
:mod:`mas_eval.metrics.diagnosis.equivalence` does with Polars expressions and joins. The word
lists are shared data; every rule is written out again here. Python's ``re`` has no ``\\p{L}``:
``[^\\W\\d_]`` is a letter and ``[\\W_]`` is "neither letter nor digit".
"""

from __future__ import annotations

import csv
import itertools
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from mas_eval.metrics.diagnosis.equivalence import (
    CAUSE_PHRASES,
    GENERIC,
    HEDGES,
    NEGATIONS,
    QUALIFIERS,
    STOPWORDS,
    TIERS,
)

SHIPPED = Path(__file__).resolve().parents[2] / "mas_eval" / "metrics" / "diagnosis" / "synonyms.csv"

NOT_WORD = r"[\W_]"
LETTER = r"[^\W\d_]"
CHARACTERS = {
    "\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u2032": "'", "`": "'",
    "α": " alpha ", "β": " beta ", "γ": " gamma ", "δ": " delta ", "κ": " kappa ", "λ": " lambda ",
}  # fmt: skip
LIST_MARKER = r"^\s*(?:[-*•·]+|\(?\d{1,2}[.)])\s+"
LABEL = (
    r"^\s*(?:(?:final|working|provisional|principal|main|leading|differential|most likely)\s+)?"
    r"(?:diagnosis|diagnoses|dx|ddx|impression|assessment)\s*\d*\s*:"
)
SPELLING = [
    (r"a+e([mscdt])", r"e\1"),
    (rf"(^|{NOT_WORD})oe", r"\1e"),
    (r"(rh|pn|c|f|m)oe", r"\1e"),
    (r"(tum|lab)our", r"\1or"),
    (r"leuc", "leuk"),
    (rf"({LETTER}{{2}})is(e|ed|es|ing|ation|ations)({NOT_WORD}|\Z)", r"\1iz\2\3"),
]
HEAD = rf"^(.*?) ({'|'.join(CAUSE_PHRASES)})(?: |\Z)"
CAUSE = rf"^(.*?) (?:{'|'.join(CAUSE_PHRASES)}) (.+)\Z"
EXCLUDED = STOPWORDS | GENERIC | NEGATIONS | set(QUALIFIERS)


def is_word_character(c: str) -> bool:
    return unicodedata.category(c)[0] in "LN"


def prepare(text: str) -> str:
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.category(c).startswith("M")).lower()
    for old, new in CHARACTERS.items():
        text = text.replace(old, new)
    text = re.sub(LIST_MARKER, "", text, count=1)
    text = re.sub(LABEL, "", text, count=1)
    return text.split(":")[0]  # the rest is commentary


def clean(text: str) -> str:
    text = re.sub(rf"'s({NOT_WORD}|\Z)", r"\1", text)  # possessive
    text = re.sub(rf"(^|{NOT_WORD})r\s*/\s*o({NOT_WORD}|\Z)", r"\1 \2", text)  # r/o
    for pattern, replacement in SPELLING:
        text = re.sub(pattern, replacement, text)
    words = "".join(c if is_word_character(c) else " " for c in text).split()
    text = " ".join(w for w in words if w not in HEDGES)
    text = re.sub(r"(^| )rule(?: rule| out)* out( |\Z)", " ", text)
    return " ".join(text.split())


def normalise(text: str) -> str:
    text = prepare(text)
    without = re.sub(r"\([^()]*\)", " ", text)
    return clean(without if any(is_word_character(c) for c in without) else text)


def aliases(text: str) -> list[str]:
    found = (clean(m[1:-1]) for m in re.findall(r"\([^()]*\)", prepare(text)))
    return [a for a in found if a]


def head(text: str) -> tuple[str, str | None]:
    """The text before the first cause phrase, and that phrase."""
    m = re.match(HEAD, text)
    return (m.group(1), m.group(2)) if m else (text, None)


def cause(text: str) -> str | None:
    """The text after the first cause phrase, unless a negation word stands just before it."""
    m = re.match(CAUSE, text)
    if m is None or m.group(1).split(" ")[-1] in NEGATIONS:
        return None
    return m.group(2)


def core(text: str) -> str:
    return " ".join(w for w in text.split() if w not in QUALIFIERS)


def fold(word: str) -> str:
    word = re.sub(r"^(.{2,})ies\Z", r"\1y", word)  # bodies -> body
    return re.sub(r"^(.{2,}[^siu])s\Z", r"\1", word)


def informative(words: Iterable[str]) -> set[str]:
    return {fold(w) for w in words} - EXCLUDED - {""}


def read_synonyms(path: Path = SHIPPED) -> list[tuple[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(line for line in f if not line.startswith("#")))
    return [(term, canonical) for term, canonical in rows[1:]]


def resolve(rows: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Normalised term -> normalised canonical name, chains followed to their end."""
    mapping = {}
    for term, canonical in rows:
        t, c = normalise(term), normalise(canonical)
        if t != c:
            mapping[t] = c
    resolved = {}
    for term, canonical in mapping.items():
        seen = {term}
        while canonical in mapping:
            if canonical in seen:
                raise ValueError(term)
            seen.add(canonical)
            canonical = mapping[canonical]
        resolved[term] = canonical
    return resolved


@dataclass
class Features:
    n: str
    cause: str | None
    keys: set[str]
    tokens: set[str]
    negated: set[str]
    plain: set[str]
    qualifiers: dict[str, set[str]]  # class -> values, e.g. {"course": {"acute"}}


def features(raw: str, synonyms: dict[str, str]) -> Features:
    def canon(x: str) -> str:
        return synonyms.get(x, x)

    n = normalise(raw)
    keys = set()
    for form in [n, *aliases(raw)]:
        h, _ = head(form)
        k1, k2 = canon(h), canon(core(h))
        keys |= {k1, k2, core(k1), core(k2)}
    keys.discard("")

    h, phrase = head(n)
    name = synonyms[h] if h in synonyms else synonyms.get(core(h), h)
    words = name.split()
    tokens = informative(words)
    negated = informative(w for before, w in itertools.pairwise(words) if before in NEGATIONS)

    qualifiers: dict[str, set[str]] = {}
    for word in h.split() + words:
        if word in QUALIFIERS:
            kind, _ = QUALIFIERS[word]
            value = {"hyperacute": "acute", "essential": "primary"}.get(word, word)
            qualifiers.setdefault(kind, set()).add(value)
    if phrase == "secondary to":
        qualifiers.setdefault("origin", set()).add("secondary")
    return Features(n, cause(n), keys, tokens, negated, tokens - negated, qualifiers)


def conflict(a: Features, b: Features) -> bool:
    for kind in set(a.qualifiers) & set(b.qualifiers):
        if not a.qualifiers[kind] & b.qualifiers[kind]:
            return True
    return bool(a.negated & b.plain or b.negated & a.plain)


def deterministic(a: Features, b: Features, *, threshold: float, min_tokens: int) -> tuple[str, float] | None:
    """The first deterministic tier (exact to token_set) that matches, or None."""
    if not a.n or not b.n:
        return None
    if a.n == b.n:
        return "exact", 1.0
    if conflict(a, b):
        return None
    if a.keys & b.keys:
        return "synonym", 1.0
    common = len(a.tokens & b.tokens)
    small, large = sorted([len(a.tokens), len(b.tokens)])
    if common == small and small >= min_tokens and small != large:
        return "containment", small / large
    union = len(a.tokens | b.tokens)
    if union and common / union >= threshold:
        return "token_set", common / union
    return None


def match(
    left: str,
    right: str,
    synonyms: dict[str, str],
    *,
    threshold: float = 0.6,
    min_tokens: int = 1,
    judge: Callable[[str, str], float] | None = None,
    judge_threshold: float = 0.5,
) -> tuple[str, float]:
    """The best tier and its score for one pair."""
    a, b = features(left, synonyms), features(right, synonyms)
    found = deterministic(a, b, threshold=threshold, min_tokens=min_tokens)
    if found is not None:
        return found
    if a.n and b.n and a.cause is not None:  # "X due to Y" on the left names Y too: Y against the right
        by_cause = deterministic(features(a.cause, synonyms), b, threshold=threshold, min_tokens=min_tokens)
        if by_cause is not None:
            return "cause", by_cause[1]
    if judge is not None and a.n and b.n:
        score = float(judge(a.n, b.n))
        if score >= judge_threshold:
            return "judge", score
    return "unmatched", 0.0


def assign(pairs: list[tuple[object, str, str, str, float]]) -> list[tuple[object, str, str, str, float]]:
    """Greedy one-to-one matching of (group, left, right, tier, score) rows, best score first."""
    order = sorted((p for p in pairs if p[3] != "unmatched"), key=lambda p: (-p[4], TIERS.index(p[3]), p[1], p[2]))
    used_left, used_right, kept = set(), set(), []
    for group, left, right, tier, score in order:
        if (group, left) not in used_left and (group, right) not in used_right:
            used_left.add((group, left))
            used_right.add((group, right))
            kept.append((group, left, right, tier, score))
    return kept
