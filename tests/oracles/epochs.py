"""Statistics over epochs, literally: plain Python over a list of runs, read next to the formulas.

A run is a dict with ``system``, ``case_id``, ``epoch``, ``ok`` (0/1), ``tokens``, ``cost`` and
``score``. Binomial coefficients are ``math.comb`` and ratios exact ``Fraction``s; each case's
epochs are walked in epoch order one by one.
"""

from __future__ import annotations

import math
from collections import defaultdict
from fractions import Fraction
from statistics import mean, variance

Run = dict[str, object]


def pass_at(n: int, c: int, k: int) -> float | None:
    """Chen et al. (2021): 1 - C(n - c, k) / C(n, k); None when k > n."""
    if k > n:
        return None
    return float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))


def pass_hat(n: int, c: int, k: int) -> float | None:
    """Yao et al. (2024, tau-bench): C(c, k) / C(n, k); None when k > n."""
    if k > n:
        return None
    return float(Fraction(math.comb(c, k), math.comb(n, k)))


def by_case(runs: list[Run]) -> dict[tuple[object, object], list[Run]]:
    """(system, case) -> its runs in epoch order."""
    cases: dict[tuple[object, object], list[Run]] = defaultdict(list)
    for run in runs:
        cases[(run["system"], run["case_id"])].append(run)
    return {key: sorted(value, key=lambda r: r["epoch"]) for key, value in cases.items()}


def case_stats(runs: list[Run], ks: list[int]) -> dict[tuple[object, object], dict[str, object]]:
    """Per (system, case): n, passed, mean, majority, majority_tie, pass_at_<k>, pass_hat_<k>."""
    out = {}
    for key, epochs in by_case(runs).items():
        n = len(epochs)
        c = sum(int(r["ok"]) for r in epochs)
        row: dict[str, object] = {
            "n": n, "passed": c, "mean": mean(float(r["ok"]) for r in epochs),
            "majority": c > n - c, "majority_tie": c == n - c,
        }  # fmt: skip
        for k in ks:
            row[f"pass_at_{k}"] = pass_at(n, c, k)
            row[f"pass_hat_{k}"] = pass_hat(n, c, k)
        out[key] = row
    return out


def system_stats(runs: list[Run], ks: list[int]) -> dict[object, dict[str, object]]:
    """Per system: the means over its cases (pass@k over the cases with at least k epochs)."""
    grouped: dict[object, list[dict[str, object]]] = defaultdict(list)
    for (system, _), row in case_stats(runs, ks).items():
        grouped[system].append(row)
    out = {}
    for system, rows in grouped.items():
        summary: dict[str, object] = {
            "cases": len(rows),
            "runs": sum(r["n"] for r in rows),
            "mean": mean(r["mean"] for r in rows),
            "majority_rate": mean(1.0 if r["majority"] else 0.0 for r in rows),
            "majority_ties": sum(1 for r in rows if r["majority_tie"]),
        }
        for k in ks:
            for kind in ("pass_at", "pass_hat"):
                values = [r[f"{kind}_{k}"] for r in rows if r[f"{kind}_{k}"] is not None]
                summary[f"{kind}_{k}"] = mean(values) if values else None
        out[system] = summary
    return out


def cost_per_correct(runs: list[Run]) -> dict[object, dict[str, object]]:
    """Per system: tokens and cost per run and per correct answer (None when nothing passed)."""
    out = {}
    for system in {r["system"] for r in runs}:
        mine = [r for r in runs if r["system"] == system]
        passed = sum(int(r["ok"]) for r in mine)
        row: dict[str, object] = {"runs": len(mine), "passed": passed}
        for name in ("tokens", "cost"):
            total = math.fsum(float(r[name]) for r in mine)
            row[f"{name}_per_run"] = total / len(mine)
            row[f"{name}_per_correct"] = total / passed if passed else None
        out[system] = row
    return out


def control_answer(epochs: list[Run], k: int, rule: str) -> tuple[int, bool | None]:
    """The control's answer over its first k epochs, and whether its vote tied."""
    first = epochs[:k]
    if rule == "majority":
        passed = sum(int(r["ok"]) for r in first)
        return int(2 * passed > k), 2 * passed == k
    best = first[0]
    for run in first[1:]:
        if run["score"] > best["score"]:  # strictly: the earliest epoch wins among equals
            best = run
    return int(best["ok"]), None


def compute_matched(
    runs: list[Run], treatment: str, control: str, budget: str, rule: str, treatment_runs: str
) -> dict[object, dict[str, object]]:
    """Per case: k, the budgets and the outcomes, walking the control's epochs until it has spent enough."""
    cases = by_case(runs)
    out = {}
    for case in {c for (_, c) in cases}:
        mine, theirs = cases.get((treatment, case)), cases.get((control, case))
        row: dict[str, object] = {"k": None, "matched": False}
        if mine:
            if treatment_runs == "first":
                row["treatment_outcome"] = float(mine[0]["ok"])
                row["treatment_budget"] = float(mine[0][budget])
            else:
                row["treatment_outcome"] = mean(float(r["ok"]) for r in mine)
                row["treatment_budget"] = mean(float(r[budget]) for r in mine)
        if mine and theirs:
            row["control_outcome_1"] = control_answer(theirs, 1, rule)[0]
            spent = 0.0
            for k, run in enumerate(theirs, start=1):
                spent += float(run[budget])
                if spent >= row["treatment_budget"]:
                    row.update(k=k, matched=True, control_budget=spent)
                    row["control_outcome"], row["control_tie"] = control_answer(theirs, k, rule)
                    break
        out[case] = row
    return out


def matched_summary(cases: dict[object, dict[str, object]]) -> dict[str, dict[str, float]]:
    """The mean difference and its SD over matched cases, for k = 1 and compute-matched."""
    matched = [row for row in cases.values() if row["matched"]]
    out = {}
    for label, column in (("k=1", "control_outcome_1"), ("compute-matched", "control_outcome")):
        d = [row["treatment_outcome"] - row[column] for row in matched]
        out[label] = {
            "cases": len(d),
            "difference": mean(d) if d else None,
            "sd": math.sqrt(variance(d)) if len(d) > 1 else None,
            "treatment_only": sum(1 for r in matched if r["treatment_outcome"] == 1 and r[column] == 0),
            "control_only": sum(1 for r in matched if r["treatment_outcome"] == 0 and r[column] == 1),
        }
    return out


def frontier(runs: list[Run], ks: list[int]) -> dict[tuple[object, int], dict[str, object]]:
    """Per (system, k): the means over cases with at least k epochs of majority-of-first-k and spending."""
    grouped: dict[tuple[object, int], list[dict[str, float]]] = defaultdict(list)
    for (system, _), epochs in by_case(runs).items():
        n, c = len(epochs), sum(int(r["ok"]) for r in epochs)
        for k in ks:
            if k > n:
                continue
            first = epochs[:k]
            passed = sum(int(r["ok"]) for r in first)
            grouped[(system, k)].append({
                "majority": 1.0 if 2 * passed > k else 0.0,
                "pass_at": pass_at(n, c, k),
                "tokens": math.fsum(float(r["tokens"]) for r in first),
                "cost": math.fsum(float(r["cost"]) for r in first),
            })  # fmt: skip
    return {
        key: {
            "cases": len(rows),
            "majority_rate": mean(r["majority"] for r in rows),
            "pass_at_k": mean(r["pass_at"] for r in rows),
            "tokens_per_case": mean(r["tokens"] for r in rows),
            "cost_per_case": mean(r["cost"] for r in rows),
        }
        for key, rows in grouped.items()
    }
