"""Each system's mean with its interval, and each agent's share of its system's work, in plain Python, to read
next to mas_eval/stats/descriptives.py (``describe``) and mas_eval/stats/coordination.py (``agent_shares``)."""

from __future__ import annotations

import math
from typing import Any

from scipy import stats

Row = dict[str, Any]


def wilson(passes: float, n: float, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson's (1927) score interval: (p + z²/2n ± z sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)."""
    z = stats.norm.ppf(0.5 + confidence / 2)
    p = passes / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)


def mean_interval(values: list[float], kind: str, clusters: list[Any] | None, confidence: float = 0.95) -> Row:
    """The mean of ``values`` and its interval, written straight from describe's Notes."""
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else None
    q = 0.5 + confidence / 2
    if clusters is None:
        if kind == "pass/fail":
            low, high = wilson(sum(values), n, confidence)
        elif n >= 2:
            half = stats.t.ppf(q, n - 1) * sd / math.sqrt(n)  # type: ignore[operator]
            low, high = mean - half, mean + half
        else:
            low = high = None
        return {"n": n, "mean": mean, "sd": sd, "ci_low": low, "ci_high": high}
    scores: dict[Any, float] = {}
    for value, cluster in zip(values, clusters, strict=True):
        scores[cluster] = scores.get(cluster, 0.0) + (value - mean)
    g = len(scores)
    if g < 2:
        return {"n": n, "mean": mean, "sd": sd, "ci_low": None, "ci_high": None}
    se = math.sqrt(g / (g - 1) * sum(s * s for s in scores.values())) / n
    half = stats.t.ppf(q, g - 1) * se
    low, high = mean - half, mean + half
    if kind == "pass/fail":
        low, high = max(low, 0.0), min(high, 1.0)
    return {"n": n, "mean": mean, "sd": sd, "ci_low": low, "ci_high": high}


def agent_shares(agents: list[Row], measure: str) -> dict[tuple[str, str], float | None]:
    """Each (system, agent)'s share: the sum of its ``measure`` over runs, over the sum of its system's agents;
    None for an agent that never recorded it, or a system whose agents sum to 0."""
    totals: dict[str, float] = {}
    own: dict[tuple[str, str], float | None] = {}
    for row in agents:
        key = (row["system"], row["agent_id"])
        value = row[measure]
        own.setdefault(key, None)
        totals.setdefault(row["system"], 0.0)
        if value is not None:
            own[key] = (own[key] or 0.0) + value
            totals[row["system"]] += value
    return {
        key: (value / totals[key[0]] if value is not None and totals[key[0]] > 0 else None)
        for key, value in own.items()
    }
