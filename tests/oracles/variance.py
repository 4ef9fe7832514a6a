"""Variance components and pass@k over cases, literally: plain Python read next to the formulas.

A score is a ``(case, epoch, value)`` triple; sums run over plain lists with ``math.fsum``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from statistics import mean, stdev

from tests.oracles.epochs import pass_at, pass_hat


def one_way(scores: list[tuple[object, object, float]]) -> dict[str, float]:
    """One-way random-effects ANOVA over cases, with n0 for unequal epochs (Searle, Casella & McCulloch 1992, §3.5).

    Returns ``msb``, ``msw``, ``n0``, ``case`` (the between-case variance), ``epoch`` and ``icc``
    (None when every score is equal).
    """
    cases: dict[object, list[float]] = defaultdict(list)
    for case, _, value in scores:
        cases[case].append(value)
    a = len(cases)
    big_n = sum(len(v) for v in cases.values())
    grand = math.fsum(value for _, _, value in scores) / big_n
    ssb = math.fsum(len(v) * (mean(v) - grand) ** 2 for v in cases.values())
    ssw = math.fsum((x - mean(v)) ** 2 for v in cases.values() for x in v)
    msb, msw = ssb / (a - 1), ssw / (big_n - a)
    n0 = (big_n - sum(len(v) ** 2 for v in cases.values()) / big_n) / (a - 1)
    case = (msb - msw) / n0
    icc = case / (case + msw) if case + msw else None
    return {"msb": msb, "msw": msw, "n0": n0, "case": case, "epoch": msw, "icc": icc}


def pass_over_cases(epochs: dict[object, list[int]], k: int) -> dict[str, float | int | None]:
    """The mean over cases with at least k epochs of each case's pass@k and pass^k, and its SE s/sqrt(N)."""
    at = [pass_at(len(v), sum(v), k) for v in epochs.values() if len(v) >= k]
    hat = [pass_hat(len(v), sum(v), k) for v in epochs.values() if len(v) >= k]
    n = len(at)
    return {
        "cases": n,
        "pass@k": mean(at) if n else None,
        "pass^k": mean(hat) if n else None,
        "se_pass@k": stdev(at) / math.sqrt(n) if n >= 2 else None,
        "se_pass^k": stdev(hat) / math.sqrt(n) if n >= 2 else None,
    }
