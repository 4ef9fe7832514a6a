"""The LDDx v6 metrics guide's TempoScore and "Dr. Reed" credibility for one run, literally.

A run is given as plain Python: ``messages`` is ``[(round, agent, text)]`` and ``structured``
maps ``(round, agent)`` to the agent's ordered ``[(diagnosis, evidence list)]`` where it gave one.
"""

from __future__ import annotations

HIGH_VALUE = [
    "evidence", "support", "challenge", "disagree", "alternative", "clinical reasoning", "risk factor",
    "contradict", "position", "recommendations", "differential",
]  # fmt: skip
MARKERS = [
    "**Your Position**", "**Clinical Evidence**", "**Reasoning**", "**Alternative Considerations**",
    "**Final Recommendations**",
]  # fmt: skip
INSIGHT = [
    "evidence", "diagnosis", "symptoms", "findings", "clinical", "pathophysiology", "risk factors", "differential",
    "presentation",
]  # fmt: skip
SYNTHESIS = ["integrat", "combin", "togeth", "consid", "balanc", "weigh"]
ACTION = ["recommend", "suggest", "should", "need", "action", "next", "plan"]
VALENCE = [
    "evidence", "research", "studies", "guidelines", "consider", "alternative", "question", "challenge", "disagree",
]  # fmt: skip


def hits(text: str, words: list[str], counting: str) -> int:
    if counting == "presence":
        return sum(1 for word in words if word in text)
    return sum(text.count(word) for word in words)


def high_value(text: str) -> bool:
    return hits(text.lower(), HIGH_VALUE, "presence") >= 3 or any(marker in text for marker in MARKERS)


def tempo(
    messages: list[tuple[str, str, str]],
    independent_mentions: list[str],
    *,
    independent: str,
    debate: str,
    count_mentions: bool,
) -> dict[str, float]:
    scores = {}
    for round_ in sorted({r for r, _, _ in messages}):
        if round_ == independent:
            stated = independent_mentions if count_mentions else {d.lower().strip() for d in independent_mentions}
            scores[round_] = 1.0 + 0.1 * len(stated)
        elif round_ == debate:
            texts = [t for r, _, t in messages if r == round_]
            participants = len({a for r, a, _ in messages if r == round_})
            curvature = sum(high_value(t) for t in texts) / participants
            scores[round_] = min(curvature + 0.5, 2.5)
        else:
            scores[round_] = 1.0
    return scores


def valence(text: str, counting: str) -> float:
    count = hits(text.lower(), VALENCE, counting)
    if count >= 4 and len(text) > 200:
        return 1.2
    if count >= 2 and len(text) > 100:
        return 1.0
    if len(text) > 50:
        return 0.8
    return 0.6


def round_score(text: str, structured: list[tuple[str, list[str]]] | None, counting: str) -> float:
    lowered = text.lower()
    if structured:
        n = len(structured)
        average = sum(len(evidence) for _, evidence in structured) / n
        insight, synthesis = min(3 * n + 2 * average, 20.0), min(4 * n, 20.0)
        action = 20.0 if len(structured[0][1]) >= 2 else 10.0
    else:
        insight = min(hits(lowered, INSIGHT, counting) * 2.5, 20.0)
        synthesis = min(hits(lowered, SYNTHESIS, counting) * 4, 20.0)
        action = min(hits(lowered, ACTION, counting) * 3, 20.0)
    return (2.5 * insight + 1.5 * synthesis + 1.0 * action) * valence(text, counting)


def credibility(
    messages: list[tuple[str, str, str]],
    structured: dict[tuple[str, str], list[tuple[str, list[str]]]],
    *,
    structured_round: str,
    counting: str,
    left_out: tuple[str, ...] = (),
) -> dict[str, float]:
    """Each agent's mean round score; the rounds in ``left_out`` are not scored (Local-DDx v8's
    Dr. Reed looks responses up by the agent's name, which v8's debate keys are not)."""
    per_agent: dict[str, list[float]] = {}
    for round_, agent, text in messages:
        if round_ in left_out:
            continue
        given = structured.get((round_, agent)) if round_ == structured_round else None
        per_agent.setdefault(agent, []).append(round_score(text, given, counting))
    return {agent: sum(scores) / len(scores) for agent, scores in per_agent.items()}


def vote(
    rankings: dict[str, list[str]], credibility: dict[str, float], keep_share: float = 0.3, at_most: int = 10
) -> list[tuple[str, float]]:
    """The credibility-weighted vote of one run: ``[(diagnosis, points)]``, best first (ties by text)."""
    points: dict[str, float] = {}
    # The agents in name order, as credibility_vote adds them: sums whose terms tie exactly then tie here too.
    for agent, ranking in sorted(rankings.items()):
        weight = credibility.get(agent, 1.0)
        for diagnosis in set(ranking):
            position = ranking.index(diagnosis) + 1
            points[diagnosis] = points.get(diagnosis, 0.0) + (len(ranking) - position + 1) * weight
    ranked = sorted(((d, p) for d, p in points.items() if p > 0), key=lambda item: (-item[1], item[0]))
    if not ranked:
        return []
    top = ranked[0][1]
    return [(d, p) for d, p in ranked if p >= keep_share * top][:at_most]
