"""Diagnosis labels one run at a time: read it next to ``classify``'s Notes.

Plain Python loops over one run's strings, with the per-pair oracle ``equivalence.match`` and its
greedy ``assign``; regexes with Python's ``re`` (``.`` does not cross a line break there either).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tests.oracles import equivalence as eq

TIERS = eq.TIERS


#: One row of :func:`labels`: (side, diagnosis, label, matched_to, tier, score).
Label = tuple[str, str, str, str | None, str | None, float | None]


@dataclass
class Run:
    final: list[str]
    truth: list[str]
    #: (agent_id, diagnosis, mentions, evidence, rank) of the can't-miss round.
    critical: list[tuple[str, str, int | None, list[str] | None, int | None]] = field(default_factory=list)
    debate: list[str] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)
    interventions: list[str] = field(default_factory=list)
    #: Messages of the other rounds (read only by ``lddx-v8``, which searches every response).
    others: list[str] = field(default_factory=list)


def best(left: str, rights: list[str], synonyms: dict[str, str], threshold: float) -> tuple[str, str, float] | None:
    """The best matched right of ``left``: higher score, better tier, then the right string."""
    found = []
    for right in sorted(set(rights)):
        tier, score = eq.match(left, right, synonyms, threshold=threshold)
        if tier != "unmatched":
            found.append((-score, TIERS.index(tier), right, tier, score))
    if not found:
        return None
    _, _, right, tier, score = min(found)
    return right, tier, score


def ruled_out(x: str, texts: list[str], patterns: tuple[str, ...]) -> bool:
    for text in texts:
        for pattern in patterns:
            if re.search(pattern.replace("{dx}", re.escape(x)), text, flags=re.IGNORECASE):
                return True
    return False


def considered(x: str, texts: list[str], words: tuple[str, ...], window: int) -> bool:
    """Local-DDx v8's transcript search: every mention of ``x`` (lowercase), the ``window``
    characters either side of it quoted, and a word found in any quote."""
    needle = x.lower()
    if not needle:
        return False
    for text in texts:
        lowered = text.lower()
        start = 0
        while (position := lowered.find(needle, start)) != -1:
            quote = lowered[max(0, position - window) : position + len(needle) + window]
            if any(word in quote for word in words):
                return True
            start = position + 1
    return False


def labels(
    run: Run,
    *,
    preset: str,
    synonyms: dict[str, str],
    patterns: tuple[str, ...],
    table: list[tuple[str, str]],
    threshold: float = 0.6,
    caa_mentions: int = 3,
    words: tuple[str, ...] = (),
    window: int = 100,
) -> set[Label]:
    """(side, diagnosis, label, matched_to, tier, score) of every unique final and ground-truth string."""
    final, truth = sorted(set(run.final)), sorted(set(run.truth))
    pairs = [(None, f, g, *eq.match(f, g, synonyms, threshold=threshold)) for f in final for g in truth]
    out: set[Label] = set()
    final_open, truth_open = list(final), list(truth)
    for _, f, g, tier, score in eq.assign(pairs):
        out.add(("system", f, "TP", g, tier, score))
        out.add(("ground_truth", g, "TP", f, tier, score))
        final_open.remove(f)
        truth_open.remove(g)

    if preset == "spec":
        rest = spec_labels(run, final_open, truth_open, out, synonyms=synonyms, patterns=patterns, threshold=threshold)
    elif preset == "lddx-v8":  # no CAA; AE from the transcript search, before TM-SM
        rest = lddx_v8_labels(run, final_open, truth_open, out, words=words, window=window)
    else:
        rest = lddx_v6_labels(
            run, final_open, truth_open, out, synonyms=synonyms, threshold=threshold, caa=caa_mentions
        )

    treated = sorted({dx for text in run.interventions for kw, dx in table if kw.lower() in text.lower()})
    for g in rest:
        hit = best(g, treated, synonyms, threshold)
        if hit:
            out.add(("ground_truth", g, "TM-SM", *hit))
        else:
            # lddx-v6 looks for AE after TM-SM, the other presets before it.
            ae = preset not in ("spec", "lddx-v8") and ruled_out(g, run.debate, patterns)
            out.add(("ground_truth", g, "AE" if ae else "FN", None, None, None))
    return out


def spec_labels(
    run: Run,
    final_open: list[str],
    truth_open: list[str],
    out: set[Label],
    *,
    synonyms: dict[str, str],
    patterns: tuple[str, ...],
    threshold: float,
) -> list[str]:
    """Add preset ``spec``'s CAA, FP and AE rows to ``out``; return the ground truth still open."""
    supported = [dx for _, dx, _, evidence, _ in run.critical if evidence]
    for f in final_open:
        hit = best(f, supported, synonyms, threshold)
        out.add(("system", f, "CAA", *hit) if hit else ("system", f, "FP", None, None, None))
    rest = []
    for g in truth_open:
        by_stance = best(g, run.excluded, synonyms, threshold) is not None
        if ruled_out(g, run.debate, patterns) or by_stance:
            out.add(("ground_truth", g, "AE", None, None, None))
        else:
            rest.append(g)
    return rest


def lddx_v8_labels(
    run: Run, final_open: list[str], truth_open: list[str], out: set[Label], *, words: tuple[str, ...], window: int
) -> list[str]:
    """Add preset ``lddx-v8``'s FP and AE rows to ``out``; return the ground truth still open."""
    for f in final_open:
        out.add(("system", f, "FP", None, None, None))
    rest = []
    for g in truth_open:
        if considered(g, run.debate + run.others, words, window):
            out.add(("ground_truth", g, "AE", None, None, None))
        else:
            rest.append(g)
    return rest


def lddx_v6_labels(
    run: Run,
    final_open: list[str],
    truth_open: list[str],
    out: set[Label],
    *,
    synonyms: dict[str, str],
    threshold: float,
    caa: int,
) -> list[str]:
    """Add preset ``lddx-v6``'s rows from the team's can't-miss list (TP from ``caa`` mentions up,
    else CAA) and its FP rows to ``out``; return the ground truth still open."""
    # The team's can't-miss list, one row per lowercase name without "*", first by rank.
    team: dict[str, tuple[str, int]] = {}
    rows = sorted(
        (r for r in run.critical if r[0] == "team"),
        key=lambda r: (r[4] is None, r[4] if r[4] is not None else 0, r[1]),
    )
    for _, dx, mentions, _, _ in rows:
        key = dx.strip("*").strip().lower()
        team.setdefault(key, (dx, 1 if mentions is None else mentions))
    mentions_of = dict(team.values())
    rest = list(truth_open)
    pairs = [(None, g, c, *eq.match(g, c, synonyms, threshold=threshold)) for g in truth_open for c in mentions_of]
    for _, g, c, tier, score in eq.assign(pairs):
        label = "TP" if mentions_of[c] >= caa else "CAA"
        out.add(("ground_truth", g, label, c, tier, score))
        rest.remove(g)
    for f in final_open:
        out.add(("system", f, "FP", None, None, None))
    return rest
